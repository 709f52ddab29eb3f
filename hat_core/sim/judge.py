"""The judge: a verdict per episode, pass or a bad case with its failure type.

`RuleJudge` reads the scores (`hat_core.sim.scoring`) and names every failure; the first in
`FAILURE_TYPES` order (upstream causes first) is the verdict's `failure`:
- `wrong_tool`: a required tool never called successfully, or a hallucinated, unneeded,
  repeated or mis-ordered call;
- `wrong_arguments`: a required tool called, but never with the right arguments;
- `hallucinated_fact`: a reply that misses a fact or states a price no tool result gave;
- `compliance_breach`: forbidden wording (the turn's or the harness's hooks');
- `wrong_skill`: the chosen skill is not the expected one;
- `over_long_reasoning`: a reasoning over 100 tokens (the CoT penalty is above 0);
- `no_answer`: a viewer turn got no reply, an empty one, a "can't answer" where an answer was
  possible, no question where one was needed, no refusal or no handoff where due.

`LLMJudge` asks any OpenAI-compatible endpoint for the same verdict (same interface);
`calibrate(predicted, human)` gives accuracy, Cohen's kappa and the confusion matrix of a
judge against human review labels.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx

from hat_core.harness.model import Harness
from hat_core.sim.episode import Episode
from hat_core.sim.scenarios import Scenario
from hat_core.sim.scoring import Scores, TurnScore, score_episode

FAILURE_TYPES = ("wrong_tool", "wrong_arguments", "hallucinated_fact", "compliance_breach",
                 "wrong_skill", "over_long_reasoning", "no_answer")
LABELS = ("pass", *FAILURE_TYPES)


@dataclass(frozen=True)
class Verdict:
    """`failure` is None when `passed`; `error` says why a judge could not decide."""

    passed: bool
    failure: str | None = None
    failures: tuple[str, ...] = ()
    reason: str = ""
    error: str | None = None

    @property
    def label(self) -> str:
        return "pass" if self.passed else (self.failure or "error")


class Judge(Protocol):
    def judge(self, episode: Episode, scenario: Scenario, harness: Harness) -> Verdict: ...


def failures_of(scores: Scores) -> tuple[str, ...]:
    """Every failure type the scores show, in `FAILURE_TYPES` order."""
    found = set()
    for t in scores.turns:
        found |= _turn_failures(t)
    if scores.cot_penalty > 0:
        found.add("over_long_reasoning")
    return tuple(f for f in FAILURE_TYPES if f in found)


def _turn_failures(t: TurnScore) -> set[str]:
    found = set()
    if not t.answered or not t.resolves:
        found.add("no_answer")
    if t.breaches:
        found.add("compliance_breach")
    if t.missing_calls or t.hallucinated or t.unexpected or t.repeated or t.misordered:
        found.add("wrong_tool")
    if t.wrong_args:
        found.add("wrong_arguments")
    if t.answered and (t.missing_facts or t.ungrounded):
        found.add("hallucinated_fact")
    if t.skill == 0.0:
        found.add("wrong_skill")
    return found


def verdict_of(scores: Scores) -> Verdict:
    """The rule verdict of already computed scores."""
    failures = failures_of(scores)
    if not failures:
        return Verdict(passed=True, reason="all checks pass")
    return Verdict(passed=False, failure=failures[0], failures=failures,
                   reason=_reason(scores, failures[0]))


def _reason(scores: Scores, failure: str) -> str:
    for i, t in enumerate(scores.turns):
        details = {"wrong_tool": t.missing_calls + t.hallucinated + t.unexpected,
                   "wrong_arguments": t.wrong_args, "compliance_breach": t.breaches,
                   "hallucinated_fact": t.missing_facts + tuple(map(str, t.ungrounded))}
        if failure in details and details[failure]:
            return f"turn {i}: {failure}: {', '.join(details[failure])}"
    if failure == "over_long_reasoning":
        return f"{scores.max_reasoning_tokens} reasoning tokens"
    return failure


class RuleJudge:
    """The rule-based judge over the simulator's ground truth."""

    def judge(self, episode: Episode, scenario: Scenario, harness: Harness) -> Verdict:
        return verdict_of(score_episode(episode, scenario, harness))


JUDGE_PROMPT = (
    "你是直播间数字人主播回复的评审。根据场景真值和对话轨迹，判断这次回复是否合格。"
    "只输出一个 JSON 对象：{\"verdict\": \"pass\" 或失败类型之一, \"reason\": \"简短理由\"}。"
    "失败类型：" + ", ".join(FAILURE_TYPES) + "。"
)


@dataclass
class LLMJudge:
    """A judge behind any OpenAI-compatible `/chat/completions` endpoint."""

    base_url: str
    model: str
    api_key: str | None = None
    timeout_s: float = 30.0
    client: httpx.Client | None = field(default=None, repr=False)

    def judge(self, episode: Episode, scenario: Scenario, harness: Harness) -> Verdict:
        messages = [{"role": "system", "content": JUDGE_PROMPT},
                    {"role": "user", "content": _case(episode, scenario)}]
        try:
            text = self.complete(messages)
        except (httpx.HTTPError, KeyError, IndexError, ValueError) as exc:
            return Verdict(passed=False, error=f"judge endpoint failed: {exc}")
        return parse_verdict(text)

    def complete(self, messages: list[dict]) -> str:
        """The endpoint's answer to `messages` (the one network call; fakes override it)."""
        response = self._client().post(
            self.base_url.rstrip("/") + "/chat/completions",
            json={"model": self.model, "temperature": 0, "messages": messages},
            headers={"Authorization": f"Bearer {self.api_key}"} if self.api_key else {},
            timeout=self.timeout_s)
        response.raise_for_status()
        return response.json()["choices"][0]["message"]["content"]

    def _client(self) -> httpx.Client:
        if self.client is None:
            self.client = httpx.Client()
        return self.client


def _case(episode: Episode, scenario: Scenario) -> str:
    return json.dumps({"scenario": scenario.to_dict(),
                       "trajectory": [m for m in episode.messages if m["role"] != "system"]},
                      ensure_ascii=False)


def parse_verdict(text: str) -> Verdict:
    """A verdict from a judge model's answer (the first JSON object in it)."""
    start, end = text.find("{"), text.rfind("}")
    try:
        data = json.loads(text[start:end + 1]) if start >= 0 else None
    except ValueError:
        data = None
    label = data.get("verdict") if isinstance(data, dict) else None
    if label not in LABELS:
        return Verdict(passed=False, error=f"unparseable judge answer: {text[:200]!r}")
    reason = str(data.get("reason", ""))
    if label == "pass":
        return Verdict(passed=True, reason=reason)
    return Verdict(passed=False, failure=label, failures=(label,), reason=reason)


@dataclass(frozen=True)
class Calibration:
    """A judge against human labels: agreement, Cohen's kappa, confusion (rows: human)."""

    n: int
    accuracy: float
    kappa: float
    labels: tuple[str, ...]
    confusion: tuple[tuple[int, ...], ...]

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "accuracy": self.accuracy, "kappa": self.kappa,
                "labels": list(self.labels), "confusion": [list(r) for r in self.confusion]}


def calibrate(predicted: Sequence[str], human: Sequence[str],
              labels: Sequence[str] | None = None) -> Calibration:
    """Agreement of judge labels with human labels (`pass` or a failure type each)."""
    import warnings

    from sklearn.metrics import cohen_kappa_score, confusion_matrix

    if len(predicted) != len(human) or not human:
        raise ValueError(f"need equally many labels, got {len(predicted)} and {len(human)}")
    used = list(labels) if labels else [x for x in LABELS if x in set(predicted) | set(human)]
    used += sorted((set(predicted) | set(human)) - set(used))
    agree = sum(p == h for p, h in zip(predicted, human, strict=True)) / len(human)
    with warnings.catch_warnings():  # one label only: kappa is undefined (NaN), handled below
        warnings.simplefilter("ignore")
        matrix = confusion_matrix(list(human), list(predicted), labels=used)
        kappa = float(cohen_kappa_score(list(human), list(predicted), labels=used))
    if kappa != kappa:  # NaN: one label only on both sides
        kappa = 1.0 if agree == 1 else 0.0
    return Calibration(n=len(human), accuracy=agree, kappa=kappa,
                       labels=tuple(used), confusion=tuple(tuple(int(v) for v in row)
                                                           for row in matrix))
