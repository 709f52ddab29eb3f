"""Run several suites on one model and harness: the engine behind `hat eval run`.

    report = evaluate(policy, harness, ["t1", "t2", "cot_length"], EvalOptions(episodes=30),
                      model_name="oracle", bad_cases=JsonlBadCaseSink("bad.jsonl"))
    write_report(report, "report.json"); write_cases(report, "report.cases.jsonl")

T1 cases are played once and shared: `t2` gets T1's pass rate for its gap, `cot_length`
reads T1's episodes. Simulator suites take `episodes` scenarios of the held-out evaluation
world (`cases.eval_world(seed, ...)`); `t2` plays `variants` held-out HSA variants, the
robustness suites `robustness_variants` per family; `new` plays `new_cases` scenarios of the
kinds the harness adds over `options.previous` (`suites.new_kinds`). `ifeval` and
`tool_calls` need a language model (`model` an `InferenceBackend` or a `BackendPolicy`);
`limit` caps their items. `progress(suite, done, total)` is called after every case.

`options.judge` (`judging.JudgeConfig`) names the judge of the simulator cases: the rule judge
by default; an LLM judge (`kind: llm`, or a `judge` object passed in) only with the judge
gate's allowing decision (`gate`, from `judging.gate_decision` on the store's calibration),
else `JudgeGateError` before any case is played. The decision goes into the report (`judge`).

Every bad case it files carries the world it was played in (`episode["world"]`,
`cases.world_ref`), so a reviewed case sent to training can be replayed in its own shop
(`hat_core.data.feedback`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from hat_core.errors import ConfigError
from hat_core.evaluation.badcases import BadCaseRecord, BadCaseSink
from hat_core.evaluation.cases import Progress, cap, world_ref
from hat_core.evaluation.errors import JudgeGateError
from hat_core.evaluation.jsonl import write_jsonl
from hat_core.evaluation.judging import JudgeConfig, JudgeDecision, make_judge, require_allowed
from hat_core.evaluation.policy import backend_of
from hat_core.evaluation.report import EvalReport
from hat_core.evaluation.suites.qa import T1Suite, need_harness
from hat_core.evaluation.suites.registry import SuiteResult, get_suite
from hat_core.harness.model import Harness
from hat_core.inference.protocol import InferenceBackend
from hat_core.sim.judge import Judge
from hat_core.sim.policy import Policy
from hat_core.sim.runner import MAX_STEPS

SIM_SUITES = ("t1", "t2", "tool_robustness", "prompt_robustness", "cot_length", "new")


@dataclass(frozen=True)
class EvalOptions:
    """Sizes and inputs of one evaluation run."""

    episodes: int = 30
    variants: int = 4
    robustness_variants: int = 2
    seed: int = 0
    max_steps: int = MAX_STEPS
    max_tokens: int = 512
    limit: int | None = None
    nltk_data: Path | None = None
    bfcl_questions: Path | None = None
    bfcl_answers: Path | None = None
    judge: JudgeConfig = JudgeConfig()
    previous: Harness | None = None  # `new`: the harness the kinds are new over
    new_cases: int = 30  # `new`: its cases


def evaluate(model: Policy | InferenceBackend, harness: Harness | None, suites: Sequence[str],
             options: EvalOptions = EvalOptions(), *, model_name: str | None = None,
             progress: Progress | None = None, bad_cases: BadCaseSink | None = None,
             judge: Judge | None = None, gate: JudgeDecision | None = None) -> EvalReport:
    """The named suites' results, in the order given (see module doc)."""
    names = list(dict.fromkeys(suites))
    chosen = {n: get_suite(n) for n in names}  # unknown names fail before anything runs
    judge = judged_by(options.judge, judge, gate)
    if bad_cases is not None:
        bad_cases = WorldTaggedSink(bad_cases, world_ref(options.seed))
    t1_cases = _t1_cases(model, harness, names, options, progress, judge)
    results: dict[str, SuiteResult] = {}
    for name in sorted(names, key=lambda n: n != "t1"):
        results[name] = _run_one(name, chosen[name], model, harness, options, t1_cases,
                                 results, progress, bad_cases, judge)
    label = model_name or getattr(model, "name", type(model).__name__)
    return EvalReport(label, harness.content_hash() if harness else None,
                      tuple(results[n] for n in names),
                      judge=gate.to_dict() if judge is not None and gate else None)


class WorldTaggedSink:
    """Adds `world` (the catalog's recipe) to each bad case's episode, then passes it on."""

    def __init__(self, sink: BadCaseSink, world: dict):
        self.sink, self.world = sink, world

    def add(self, record: BadCaseRecord) -> None:
        self.sink.add(replace(record, episode={**record.episode, "world": self.world}))

    def close(self) -> None:
        self.sink.close()


def judged_by(config: JudgeConfig, judge: Judge | None,
              gate: JudgeDecision | None) -> Judge | None:
    """The simulator cases' judge: None (the rule judge), or an LLM judge the gate allows."""
    if judge is None and config.kind == "rule":
        return None
    if gate is None or gate.judge == "rule":
        raise JudgeGateError("an LLM judge scores an evaluation only after the judge gate: "
                             "pass the gate's decision (`judging.gate_decision` on the "
                             "store's calibration), or use the rule judge")
    require_allowed(gate)
    return judge if judge is not None else make_judge(config)


def _t1_cases(model, harness, names, options: EvalOptions, progress, judge):
    if not ({"t1", "cot_length"} <= set(names)):
        return None
    return T1Suite().play(model, need_harness("t1", harness),
                          episodes=cap(options.episodes, options.limit), seed=options.seed,
                          max_steps=options.max_steps, max_tokens=options.max_tokens,
                          progress=progress, judge=judge)


def _run_one(name: str, suite, model, harness, options: EvalOptions, t1_cases,
             done: dict[str, SuiteResult], progress, bad_cases, judge) -> SuiteResult:
    if name == "new":
        return suite.run(model, harness, previous=options.previous, cases=options.new_cases,
                         seed=options.seed, limit=options.limit, max_steps=options.max_steps,
                         max_tokens=options.max_tokens, progress=progress,
                         bad_cases=bad_cases, judge=judge)
    if name in SIM_SUITES:
        kwargs = {"episodes": options.episodes, "seed": options.seed, "limit": options.limit,
                  "max_steps": options.max_steps, "max_tokens": options.max_tokens,
                  "progress": progress, "bad_cases": bad_cases,
                  "variants": options.robustness_variants if "robustness" in name
                  else options.variants}
        if name != "cot_length" and judge is not None:  # cot_length reads no verdict
            kwargs["judge"] = judge
        if name in ("t1", "cot_length") and t1_cases is not None:
            kwargs["outcomes"] = t1_cases
        if name == "t2" and "t1" in done:
            kwargs["t1_pass_rate"] = done["t1"].metrics["pass_rate"]
        return suite.run(model, harness, **kwargs)
    if name == "tool_calls":
        return suite.run(model, None, questions=options.bfcl_questions,
                         answers=options.bfcl_answers, limit=options.limit,
                         max_tokens=options.max_tokens, progress=progress)
    backend = backend_of(model)
    if backend is None:
        raise ConfigError(f"suite {name} needs a language model (a model directory or an "
                          f"endpoint); a scripted policy plays only {', '.join(SIM_SUITES)}")
    if name == "ifeval":
        return suite.run(backend, harness, nltk_data=options.nltk_data, limit=options.limit,
                         max_tokens=options.max_tokens)
    return suite.run(backend, harness, limit=options.limit, max_tokens=options.max_tokens)


def case_rows(report: EvalReport) -> list[dict]:
    """Every suite's per-case rows, each with its suite."""
    return [{"suite": r.suite, **row} for r in report.suites for row in r.rows]


def write_cases(report: EvalReport, path: str | Path) -> Path:
    """The per-case rows as JSONL (`report.cases.jsonl` beside `report.json` by convention)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_jsonl(path, case_rows(report))
    return path


def flat_metrics(report: EvalReport) -> dict[str, float]:
    """`{"suite.metric": value}` for trackers and gates."""
    return {f"{r.suite}.{k}": float(v) for r in report.suites for k, v in r.metrics.items()}
