"""Scoring an episode against its scenario's ground truth: the four rewards and the CoT penalty.

`score_episode(episode, scenario, harness)` returns `Scores`: each reward in [0, 1] (the
mean over the scenario's viewer turns; a turn the episode never reached scores 0), the CoT
length penalty in [0, 1], and a `TurnScore` per turn with the evidence the judge reads.

Per viewer turn (see docs/simulator.md for worked examples):
- Accuracy = (calls + facts) / 2, times 0 when the reply states an ungrounded price.
  calls: share of required calls made successfully with matching arguments (1 if none
  required); facts: share of the turn's facts the reply states (1 if none).
- Effectiveness = compliant * (0.5 * resolves + 0.25 * concise + 0.25 * cta), and 0 for a
  reply that still holds call or reasoning markup (`<tool_call>`, `<think>`: a call cut off
  before its closing tag, say by a completion-length cap, is not an answer).
  resolves: answer/comment: no "can't answer" wording; clarify: asks a question and calls
  no tool; refuse: a refusal marker; handoff: mentions 人工. compliant: none of the turn's
  forbidden strings nor the harness's before_response forbidden words/patterns. concise: at
  most `max_chars` characters. cta: a call to action when the turn needs one.
- Tool Rationality = max(0, 1 - 0.5 * hallucinated - 0.25 * (unexpected + repeated + failed
  + misordered)); hallucinated: a tool name the harness lacks; unexpected: a tool id neither
  required nor optional; repeated: same tool id and arguments as an earlier successful call;
  failed: a call to a harness tool that did not succeed (bad arguments, blocked, not
  found, ...; a hallucinated call is not counted twice);
  misordered: 1 when the required tools were first called in another order.
- Skill Selection = 1 if the chosen skill id is the expected one, 0 if another, 0.5 when no
  skill was declared and none can be inferred from the tools used.
- CoT length penalty = max over assistant messages of clip((tokens - free) / (full - free),
  0, 1), with free = 100 and full = 200 unless `use_cot_limits(CotLimits(...))` sets others
  (`scaled_cot_limits(N)` for a teacher that reasons about N tokens, hat_core.sim.reasoning).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass

from hat_core.harness.model import ForbiddenPatterns, ForbiddenWords, Harness
from hat_core.sim.episode import CallRecord, Episode, TurnRecord
from hat_core.sim.hooks import HookSet, compile_hooks, numbers_in, ungrounded_prices
from hat_core.sim.scenarios import ExpectedCall, Fact, Scenario, TurnTruth

CTA_WORDS = ("拍", "下单", "抢", "关注", "加购", "链接", "购物车")
NON_ANSWERS = ("无法回答", "不知道", "不清楚", "无法提供", "没查到", "回答不了")
HANDOFF_WORDS = ("人工",)
REFUSAL_WORDS = ("不能", "不可以", "没办法", "不宜")
COT_FREE, COT_FULL = 100, 200
# markup of the chat format that a parsed reply never holds: what is left of a cut-off call
MARKUP = ("<tool_call>", "</tool_call>", "<think>", "</think>", "<tool_response>")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_NUMERIC = re.compile(r"^\d+(?:\.\d+)?$")


@dataclass(frozen=True)
class TurnScore:
    accuracy: float
    effectiveness: float
    rationality: float
    skill: float
    missing_calls: tuple[str, ...] = ()
    wrong_args: tuple[str, ...] = ()
    hallucinated: tuple[str, ...] = ()
    unexpected: tuple[str, ...] = ()
    repeated: int = 0
    failed: int = 0
    misordered: bool = False
    missing_facts: tuple[str, ...] = ()
    ungrounded: tuple[float, ...] = ()
    breaches: tuple[str, ...] = ()
    answered: bool = False
    resolves: bool = False
    concise: bool = False
    cta: bool = False
    malformed: bool = False


@dataclass(frozen=True)
class Scores:
    accuracy: float
    effectiveness: float
    tool_rationality: float
    skill_selection: float
    cot_penalty: float
    max_reasoning_tokens: int
    turns: tuple[TurnScore, ...]

    def rewards(self) -> dict[str, float]:
        """The five numbers by reward name (the penalty as a positive amount)."""
        return {"accuracy": self.accuracy, "effectiveness": self.effectiveness,
                "tool_rationality": self.tool_rationality,
                "skill_selection": self.skill_selection, "cot_length_penalty": self.cot_penalty}

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class CotLimits:
    """Where the CoT length penalty starts (`free`) and where it reaches 1 (`full`), in
    simulator tokens of one turn's reasoning."""

    free: int = COT_FREE
    full: int = COT_FULL

    def __post_init__(self):
        if not 0 <= self.free < self.full:
            raise ValueError(f"CoT limits need 0 <= free < full, got free={self.free}, "
                             f"full={self.full}")


DEFAULT_COT = CotLimits()
_cot = {"limits": DEFAULT_COT}


def scaled_cot_limits(teacher_tokens: int) -> CotLimits:
    """Limits in the report's proportion to its teacher's reasoning: a ~300-token teacher
    and a penalty from 100 to 200, so free = N/3 and full = 2N/3 of a teacher's N tokens."""
    free = max(1, round(teacher_tokens / 3))
    return CotLimits(free, max(free + 1, round(2 * teacher_tokens / 3)))


def active_cot_limits() -> CotLimits:
    """The process-wide CoT limits (100 / 200 unless `use_cot_limits` changed them)."""
    return _cot["limits"]


@contextmanager
def use_cot_limits(limits: CotLimits | None) -> Iterator[CotLimits]:
    """Score the CoT length penalty with `limits` inside the block (None keeps the current)."""
    previous = _cot["limits"]
    _cot["limits"] = limits or previous
    try:
        yield _cot["limits"]
    finally:
        _cot["limits"] = previous


def cot_penalty(tokens: int, limits: CotLimits | None = None) -> float:
    """0 up to `limits.free` reasoning tokens, linear to 1 at `limits.full` (the active
    limits by default: `cot_penalty(150) == 0.5` under 100 / 200)."""
    lim = limits or active_cot_limits()
    return min(1.0, max(0.0, (tokens - lim.free) / (lim.full - lim.free)))


def score_episode(episode: Episode, scenario: Scenario, harness: Harness) -> Scores:
    """Every reward of `episode` under `harness` against `scenario`'s ground truth."""
    hooks = compile_hooks(harness)
    grounded: set[float] = set()
    seen: set[str] = set()
    turns = []
    for i, truth in enumerate(scenario.turns):
        record = episode.turns[i] if i < len(episode.turns) else None
        if record is None:
            turns.append(TurnScore(0.0, 0.0, 0.0, 0.0, missing_calls=_ids(truth.required)))
            continue
        grounded |= numbers_in(truth.user)
        for call in record.calls:
            if call.ok:
                grounded |= numbers_in(call.content)
        turns.append(score_turn(record, truth, hooks, grounded, seen))
    tokens = max((t for r in episode.turns for t in r.reasoning_tokens), default=0)
    n = len(turns) or 1
    return Scores(
        accuracy=sum(t.accuracy for t in turns) / n,
        effectiveness=sum(t.effectiveness for t in turns) / n,
        tool_rationality=sum(t.rationality for t in turns) / n,
        skill_selection=sum(t.skill for t in turns) / n,
        cot_penalty=cot_penalty(tokens), max_reasoning_tokens=tokens, turns=tuple(turns))


def _ids(calls: Sequence[ExpectedCall]) -> tuple[str, ...]:
    return tuple(c.tool_id for c in calls)


def score_turn(record: TurnRecord, truth: TurnTruth, hooks: HookSet, grounded: set[float],
               seen: set[str]) -> TurnScore:
    """One viewer turn's scores; `seen` (call keys of earlier successful calls) is updated."""
    ok = [c for c in record.calls if c.ok]
    missing = tuple(e.tool_id for e in truth.required if not any(c.tool_id == e.tool_id
                                                                 for c in ok))
    wrong = tuple(e.tool_id for e in truth.required if e.tool_id not in missing
                  and not any(c.tool_id == e.tool_id and args_match(e.args, c.args) for c in ok))
    matched = len(truth.required) - len(missing) - len(wrong)
    calls_score = matched / len(truth.required) if truth.required else 1.0
    reply = record.reply or ""
    missing_facts = tuple(f.label for f in truth.facts if not fact_stated(f, reply))
    facts_score = 1 - len(missing_facts) / len(truth.facts) if truth.facts else 1.0
    if record.reply is None:
        facts_score = 0.0
    ungrounded = tuple(ungrounded_prices(reply, grounded))
    accuracy = 0.0 if ungrounded else (calls_score + facts_score) / 2
    rational = _rationality(record.calls, truth, seen)
    breaches = _breaches(reply, truth, hooks)
    malformed = any(m in reply for m in MARKUP)
    answered = bool(reply.strip()) and not malformed
    resolves = answered and _resolves(reply, truth, record)
    concise = len(reply) <= truth.max_chars
    cta = not truth.cta or any(w in reply for w in CTA_WORDS)
    effectiveness = 0.0 if breaches or not answered else (
        0.5 * resolves + 0.25 * concise + 0.25 * cta)
    return TurnScore(
        accuracy=accuracy, effectiveness=effectiveness, rationality=rational["score"],
        skill=_skill_score(record, truth), missing_calls=missing, wrong_args=wrong,
        hallucinated=rational["hallucinated"], unexpected=rational["unexpected"],
        repeated=rational["repeated"], failed=rational["failed"],
        misordered=rational["misordered"], missing_facts=missing_facts, ungrounded=ungrounded,
        breaches=breaches, answered=answered, resolves=resolves, concise=concise,
        cta=cta, malformed=malformed)


def args_match(expected: dict, actual: dict) -> bool:
    """Every expected argument matches (numbers by value; a list must be a subset)."""
    for key, want in expected.items():
        got = actual.get(key)
        if isinstance(want, list):
            have = got if isinstance(got, list) else [got]
            if not set(want) <= set(have):
                return False
        elif isinstance(want, (int, float)) and not isinstance(want, bool):
            if not isinstance(got, (int, float)) or abs(got - want) > 1e-6:
                return False
        elif got != want:
            return False
    return True


def fact_stated(fact: Fact, reply: str) -> bool:
    """A numeric alternative matches any number in the reply; others by substring (an ASCII
    alternative must not continue a word: "L码" is not in "XL码")."""
    numbers = None
    for alt in fact.alternatives:
        if _NUMERIC.match(alt):
            if numbers is None:
                numbers = {round(float(x), 2) for x in _NUMBER.findall(reply)}
            if round(float(alt), 2) in numbers:
                return True
        elif _contains(reply, alt):
            return True
    return False


def _contains(text: str, part: str) -> bool:
    start = text.find(part)
    while start >= 0:
        if start == 0 or not (part[0].isascii() and text[start - 1].isascii()
                              and text[start - 1].isalnum()):
            return True
        start = text.find(part, start + 1)
    return False


def _rationality(calls: tuple[CallRecord, ...], truth: TurnTruth, seen: set[str]) -> dict:
    allowed = set(_ids(truth.required)) | set(truth.optional)
    hallucinated = tuple(c.name for c in calls if c.tool_id is None)
    unexpected = tuple(c.tool_id for c in calls if c.tool_id and c.tool_id not in allowed)
    failed = sum(1 for c in calls if not c.ok and c.tool_id is not None)
    repeated = 0
    for c in calls:
        if c.ok:
            key = f"{c.tool_id}|{sorted(c.args.items(), key=lambda kv: kv[0])!r}"
            repeated += key in seen
            seen.add(key)
    order = [c.tool_id for c in calls if c.ok and c.tool_id in _ids(truth.required)]
    first = list(dict.fromkeys(order))
    wanted = [t for t in _ids(truth.required) if t in first]
    misordered = first != wanted
    penalty = 0.5 * len(hallucinated) + 0.25 * (len(unexpected) + repeated + failed + misordered)
    return {"score": max(0.0, 1.0 - penalty), "hallucinated": hallucinated,
            "unexpected": unexpected, "repeated": repeated, "failed": failed,
            "misordered": misordered}


def _breaches(reply: str, truth: TurnTruth, hooks: HookSet) -> tuple[str, ...]:
    found = [w for w in truth.forbidden if w in reply]
    for ch in hooks.at("before_response"):
        if isinstance(ch.hook.condition, (ForbiddenWords, ForbiddenPatterns)) and ch.regex:
            match = ch.regex.search(reply)
            if match:
                found.append(match.group(0))
    return tuple(dict.fromkeys(found))


def _resolves(reply: str, truth: TurnTruth, record: TurnRecord) -> bool:
    if truth.kind == "clarify":
        return ("？" in reply or "?" in reply) and not record.calls
    if truth.kind == "refuse":
        return any(w in reply for w in REFUSAL_WORDS)
    if truth.kind == "handoff":
        return any(w in reply for w in HANDOFF_WORDS)
    return not any(w in reply for w in NON_ANSWERS)


def _skill_score(record: TurnRecord, truth: TurnTruth) -> float:
    if record.skill is None:
        return 0.5
    return 1.0 if record.skill == truth.skill else 0.0
