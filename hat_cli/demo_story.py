"""The weeks of `hat demo`: a HAT champion beside a fixed-harness model, through three edits.

- week 1 (v1): the retrain flow trains the champion with the HAT recipe while a child process
  (`hat_cli.demo_fixed`) trains the fixed-harness model on the same SFT budget; both are
  scored on v1 (T1) and on held-out harness variants (T2), paired on the same cases;
- week 2 (v2, a rename week): the service's zero-shot check of the champion, and the same
  check (`hat_core.release.gates.evaluate_zero_shot`) of the fixed-harness model on v2;
- week 3 (v3, a new skill and tool): the service reacts (zero-shot check, retrain, gates);
  the candidate against the champion on v3's cases, paired;
- the challenger behind the A/B gateway (sticky arms, exposures in the store), and one bad
  case reviewed and sent to training.

Every week's numbers go into `DemoState.story`, which `hat demo --summary FILE` writes as
JSON (`write_summary`) and the closing table shows (`week_table`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from rich.table import Table

from hat_cli import demo_retrain

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "harnesses"
METRICS = ("first_call_exact", "passed")  # what the week tables show, per suite
LABELS = {"first_call_exact": "exact first call", "passed": "pass rate"}
SUMMARY_FORMAT = "hat-demo-summary/1"


# --- numbers from case rows --------------------------------------------------------------------

def rates(rows: Sequence[Mapping], suites: Sequence[str] = ("t1", "t2")) -> dict:
    """Per suite and metric: the share of cases, its Wilson 95% interval and the case count."""
    from hat_core.evaluation.call_metrics import wilson

    out: dict[str, dict] = {}
    for suite in suites:
        mine = [r for r in rows if r.get("suite") == suite]
        if not mine:
            continue
        out[suite] = {}
        for metric in METRICS:
            good = sum(bool(r.get(metric) if metric == "passed"
                            else (r.get("calls") or {}).get(metric)) for r in mine)
            low, high = wilson(good, len(mine))
            out[suite][metric] = {"value": good / len(mine), "interval": [low, high],
                                  "cases": len(mine)}
    return out


def paired(rows_a: Sequence[Mapping], rows_b: Sequence[Mapping], suite: str,
           metric: str) -> dict | None:
    """`b` against `a` on the cases of `suite` both played: the difference with its paired
    (Bonett-Price) 95% interval, the discordant counts and McNemar's p (None: no shared
    cases)."""
    from hat_core.evaluation.call_metrics import paired_difference_interval
    from hat_core.evaluation.errors import EvalInputError
    from hat_core.evaluation.paired import compare_cases

    try:
        cmp = compare_cases(rows_a, rows_b, metric=metric, suite=suite, resamples=1)
    except EvalInputError:
        return None
    interval = paired_difference_interval(cmp.b_only, cmp.a_only, cmp.n)
    return {"suite": suite, "metric": metric, "cases": cmp.n, "a": cmp.a, "b": cmp.b,
            "diff": cmp.diff, "interval": list(interval), "a_only": cmp.a_only,
            "b_only": cmp.b_only, "p_value": cmp.p_value}


def _pct(cell: Mapping | None) -> str:
    if not cell:
        return "-"
    low, high = cell["interval"]
    return f"{100 * cell['value']:.0f} ({100 * low:.0f}-{100 * high:.0f})"


def _diff(p: Mapping | None) -> str:
    if not p:
        return "-"
    low, high = p["interval"]
    return (f"{100 * p['diff']:+.1f} ({100 * low:+.1f}, {100 * high:+.1f}), "
            f"{p['b_only']} vs {p['a_only']}, p = {p['p_value']:.2g}")


def rates_table(title: str, arms: Mapping[str, Mapping]) -> Table:
    """One row per arm: each suite's exact first call and pass rate with their intervals."""
    table = Table(title=title)
    table.add_column("model")
    suites = sorted({s for a in arms.values() for s in a})
    for suite in suites:
        for metric in METRICS:
            table.add_column(f"{suite} {LABELS[metric]} %", justify="right")
    for name, arm in arms.items():
        table.add_row(name, *[_pct(arm.get(s, {}).get(m)) for s in suites for m in METRICS])
    return table


# --- the fixed-harness arm ---------------------------------------------------------------------

FIXED_WEEKS = ("v1", "v2")  # the weeks the fixed-harness model is played on


class FixedArm:
    """The fixed-harness model: trained in a child process beside the champion, then scored
    with the flow's own evaluation settings."""

    def __init__(self, state):
        self.state = state
        self.out = state.home / "runs" / "demo-fixed-harness"
        self.log = state.home / "logs" / f"fixed-harness-{time.strftime('%Y%m%d-%H%M%S')}.log"
        self.proc: subprocess.Popen | None = None
        self.started = 0.0
        self.seconds: float | None = None
        self.rows: dict[str, list[dict]] = {}

    @property
    def model(self) -> Path:
        return self.out / "sft"

    def done(self) -> bool:
        return (self.out / "result.json").is_file()

    def start(self, base: Path) -> None:
        """Start training (nothing to do when this home already holds the model)."""
        if self.done():
            return
        from hat_core.children import spawn

        self.log.parent.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "hat_cli.demo_fixed", "--config",
               str(self.state.config_path), "--harness", str(EXAMPLES / "v1.yaml"),
               "--base", str(base), "--out", str(self.out),
               "--tracking-uri", self.state.tracking.tracking_uri,
               # its reports on v1 and v2, played in the child while the flow trains
               *[a for week in FIXED_WEEKS for a in ("--evaluate", str(EXAMPLES /
                                                                        f"{week}.yaml"))]]
        self.started = time.perf_counter()
        with self.log.open("w", encoding="utf-8") as log:
            self.proc = spawn(cmd, stdout=log, stderr=subprocess.STDOUT,
                              env={**os.environ, "PYTHONUNBUFFERED": "1"})

    def wait(self, console) -> None:
        """Wait for the child; `RuntimeError` naming its log when it failed."""
        if self.proc is None:
            console.print(f"fixed-harness model: already trained in {self.model}")
            return
        if self.proc.poll() is None:
            console.print("waiting for the fixed-harness model to finish training ...")
        code = self.proc.wait()
        self.seconds = time.perf_counter() - self.started
        if code != 0 or not self.done():
            raise RuntimeError(f"the fixed-harness arm failed (exit {code}); its log: "
                               f"{self.log}")
        console.print(f"fixed-harness model trained in {self.seconds:.0f} s: {self.model} "
                      f"(log {self.log})", soft_wrap=True)

    def stop(self) -> None:
        from hat_core.children import stop_group

        if self.proc is not None:
            stop_group(self.proc)

    def evaluate(self, week: str) -> list[dict]:
        """Its case rows on `week`'s harness, with the zero-shot check's suites and settings."""
        from hat_cli.demo_fixed import play, report_path
        from hat_core.evaluation.paired import read_case_rows

        if week not in self.rows:
            report = report_path(self.out, week)
            if not report.with_suffix(".cases.jsonl").is_file():
                play(self.out, self.state.harnesses[week], self.state.config.eval, week)
            self.rows[week] = read_case_rows(report)
        return self.rows[week]


# --- the weeks ---------------------------------------------------------------------------------

def week1(state, console) -> None:
    """Train the champion (retrain flow) with the fixed-harness model beside it; score both."""
    from hat_core.evaluation.paired import read_case_rows

    started = time.perf_counter()
    demo_retrain.submit(state, console, "v1")
    fixed = state.fixed = FixedArm(state)
    fixed.start(Path(state.artefacts["base model"]))
    console.print(f"fixed-harness model training beside the flow (log {fixed.log})",
                  soft_wrap=True)
    try:
        outcome = demo_retrain.run_retrain(state, console, "v1")
        fixed.wait(console)
    except BaseException:
        fixed.stop()
        raise
    state.artefacts["v1 job (data, stages, eval reports)"] = str(outcome.work)
    state.artefacts["fixed-harness model"] = str(fixed.model)
    hat_rows = read_case_rows(outcome.work / "eval" / "candidate.json")
    fixed_rows = fixed.evaluate("v1")
    arms = {"HAT champion": rates(hat_rows), "fixed-harness": rates(fixed_rows)}
    console.print(rates_table("week 1: both models on v1 (t1) and held-out variants (t2)",
                              arms))
    versus = {f"{s}.{m}": paired(fixed_rows, hat_rows, s, m)
              for s in ("t1", "t2") for m in METRICS}
    for key, p in versus.items():
        console.print(f"  HAT - fixed, {key}: {_diff(p)}")
    state.story["weeks"].append({
        "week": "v1", "edit": "the first harness", "retrained": True,
        "job": _job(outcome), "model_version": _version(outcome),
        "arms": {"hat": arms["HAT champion"], "fixed": arms["fixed-harness"]},
        "hat_vs_fixed": versus, "fixed_train_seconds": fixed.seconds,
        "seconds": time.perf_counter() - started})


def week2(state, console) -> None:
    """The rename week: the service's zero-shot check of the champion, and the same check of
    the fixed-harness model."""
    from hat_core.release.gates import evaluate_zero_shot
    from hat_core.release.rules import gates_verdict

    started = time.perf_counter()
    demo_retrain.submit(state, console, "v2")
    outcome = demo_retrain.run_retrain(state, console, "v2")
    state.artefacts["v2 job (zero-shot, stages, eval reports)"] = str(outcome.work)
    fixed = state.fixed
    check = evaluate_zero_shot(fixed.evaluate("v2"), fixed.evaluate("v1"), state.config.gates)
    demo_retrain.gate_table(console, "zero-shot check of the fixed-harness model on v2",
                            check.to_dict())
    hat = (outcome.zero_shot or {}).get("verdict", {})
    hat_verdict = gates_verdict(hat) if hat else "not run"
    console.print(f"zero-shot on v2: HAT champion [bold]{hat_verdict}[/], fixed-harness "
                  f"model [bold]{check.verdict}[/]")
    state.story["weeks"].append({
        "week": "v2", "edit": _edit_kind(state, "v1", "v2"),
        "retrained": outcome.model is not None, "job": _job(outcome),
        "model_version": _version(outcome),
        "zero_shot": {"hat": {"verdict": hat_verdict, "gates": hat},
                      "fixed": {"verdict": check.verdict, "gates": check.to_dict()}},
        "arms": {"hat": _zero_shot_rates(outcome), "fixed": rates(fixed.evaluate("v2"))},
        "seconds": time.perf_counter() - started})


def week3(state, console) -> None:
    """The semantic week: the service reacts to v3; a retrained candidate against the
    champion on v3's cases, paired."""
    from hat_core.evaluation.paired import read_case_rows
    from hat_core.release.rules import gates_verdict

    started = time.perf_counter()
    demo_retrain.submit(state, console, "v3")
    outcome = demo_retrain.run_retrain(state, console, "v3")
    state.artefacts["v3 job (zero-shot, stages, eval reports)"] = str(outcome.work)
    hat = (outcome.zero_shot or {}).get("verdict", {})
    entry = {"week": "v3", "edit": _edit_kind(state, "v2", "v3"),
             "retrained": outcome.model is not None, "job": _job(outcome),
             "model_version": _version(outcome),
             "zero_shot": {"hat": {"verdict": gates_verdict(hat) if hat else "not run",
                                   "gates": hat}}}
    eval_dir = outcome.work / "eval"
    if outcome.model is not None and (eval_dir / "candidate.cases.jsonl").is_file():
        cand = read_case_rows(eval_dir / "candidate.json")
        champ = read_case_rows(eval_dir / "champion.json")
        suites = sorted({r.get("suite") for r in cand} - {"ifeval", None})
        arms = {"champion": rates(champ, suites), "candidate": rates(cand, suites)}
        console.print(rates_table("week 3: champion and candidate on v3", arms))
        versus = {f"{s}.{m}": paired(champ, cand, s, m) for s in suites for m in METRICS}
        for key, p in versus.items():
            console.print(f"  candidate - champion, {key}: {_diff(p)}")
        entry |= {"arms": arms, "candidate_vs_champion": versus,
                  "gates_verdict": gates_verdict(outcome.model.gate_results)}
    demo_retrain.show_registry(state, console)
    entry["seconds"] = time.perf_counter() - started
    state.story["weeks"].append(entry)


def _zero_shot_rates(outcome) -> dict:
    from hat_core.evaluation.paired import read_case_rows

    path = outcome.work / "zero_shot" / "report.cases.jsonl"
    return rates(read_case_rows(path)) if path.is_file() else {}


def _edit_kind(state, old: str, new: str) -> str:
    from hat_core.diff.api import diff_harness

    d = diff_harness(state.harnesses[old], state.harnesses[new])
    return "surface (rename)" if d.is_surface_only else "semantic"


def _job(outcome) -> dict:
    job = outcome.job
    return {"id": job.id, "state": job.state, "reason": job.reason}


def _version(outcome) -> str | None:
    return outcome.model.version if outcome.model is not None else None


# --- the A/B slot and a review -----------------------------------------------------------------

def ab_slot(state, console, users: int = 24) -> None:
    """The slot's champion and challenger behind the gateway: simulated viewers, each sent
    twice (sticky arms), their exposures read back from the store."""
    from db.promotion import slot_view
    from hat_cli.gateway_cmd import choose_experiment, registry_backends, running_gateway
    from hat_core.release.registry import ModelRegistry

    with state.sessions()() as s:
        view = slot_view(s, slot="ab")
    entry = {"champion": view.champion.version if view.champion else None,
             "challenger": view.challenger.version if view.challenger else None}
    if view.challenger is None:
        console.print("no challenger in slot ab (no candidate passed its gates this run): "
                      "the gateway would serve the champion to everyone; skipped")
        state.story["ab"] = entry | {"skipped": "no challenger"}
        return
    experiment = choose_experiment(state.sessions(), None, actor="demo")
    registry = ModelRegistry(state.tracking.tracking_uri)
    backends = registry_backends(registry, state.home / "serving")
    arms: dict[str, str] = {}
    with running_gateway(state.sessions(), experiment, open_backend=backends,
                         say=lambda line: console.print(line, markup=False)) as gw:
        for i in range(users):
            user = f"viewer-{i:03d}"
            first = _ask(gw.url, user)
            again = _ask(gw.url, user)
            if first != again:
                raise RuntimeError(f"user {user} was served {first} then {again}: arms must "
                                   "be sticky")
            arms[user] = first
    counts = _exposures(state, experiment.id)
    console.print(f"gateway {gw.url}: experiment {experiment.name} (id {experiment.id}), "
                  f"{users} viewers x 2 requests; arms sticky; exposures in the store: "
                  + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    state.story["ab"] = entry | {"experiment": experiment.id, "users": users,
                                 "exposures": counts, "sticky": True}


def _ask(url: str, user: str) -> str:
    import httpx

    body = {"model": "hat-agent", "user": user, "max_tokens": 8,
            "messages": [{"role": "user", "content": "这件多少钱？"}]}
    reply = httpx.post(f"{url}/v1/chat/completions", json=body, timeout=120)
    reply.raise_for_status()
    return reply.headers.get("x-hat-arm") or reply.json().get("model", "?")


def _exposures(state, experiment_id: int) -> dict[str, int]:
    """Requests per arm, as the store counts them (`db.exposures_repo.arm_counts`)."""
    from db.exposures_repo import arm_counts

    with state.sessions()() as s:
        return {c.arm: c.requests for c in arm_counts(s, experiment_id=experiment_id)}


def review(state, console) -> None:
    """The reviewer labels the newest bad case of the last job and sends it to training."""
    from db.badcases_repo import BadCaseFilter, label_bad_case, list_bad_cases
    from db.engine import in_transaction

    with state.sessions()() as s:
        cases = list_bad_cases(s, where=BadCaseFilter(review_state="new"), limit=1)
    if not cases:
        console.print("no bad case waiting for review")
        state.story["review"] = None
        return
    case = cases[0]
    done = in_transaction(state.sessions(), lambda s: label_bad_case(
        s, bad_case_id=case.id, review_state="confirmed", reviewer="reviewer",
        label=case.failure_type,
        comment="demo: confirmed, the reply misses what the tool returned",
        send_to_training=True))
    console.print(f"bad case {done.id} ({done.failure_type}) reviewed by {done.reviewer}: "
                  f"{done.review_state}, sent to training")
    state.story["review"] = {"bad_case": done.id, "failure_type": done.failure_type,
                             "state": done.review_state,
                             "send_to_training": done.send_to_training}


# --- closing -----------------------------------------------------------------------------------

def week_table(state) -> Table:
    """One row per week: the edit, the zero-shot verdicts, the retrain and the numbers."""
    table = Table(title="hat demo: the weeks")
    for column in ("week", "edit", "zero-shot HAT", "zero-shot fixed", "retrained",
                   "t1 exact first call %", "t2 exact first call %", "seconds"):
        table.add_column(column)
    for w in state.story["weeks"]:
        zs = w.get("zero_shot", {})
        hat = w.get("arms", {}).get("hat") or w.get("arms", {}).get("candidate") or {}
        fixed = w.get("arms", {}).get("fixed", {})
        t1, t2 = (_exact(hat, suite) + (f" / fixed {_exact(fixed, suite)}" if fixed else "")
                  for suite in ("t1", "t2"))
        table.add_row(w["week"], w["edit"], zs.get("hat", {}).get("verdict", "-"),
                      zs.get("fixed", {}).get("verdict", "-"),
                      "yes" if w["retrained"] else "no", t1, t2, f"{w['seconds']:.0f}")
    return table


def _exact(arm: Mapping, suite: str) -> str:
    return _pct(arm.get(suite, {}).get("first_call_exact"))


def write_summary(state, path: Path, seconds: float) -> Path:
    """The story's numbers as JSON (`SUMMARY_FORMAT`)."""
    data = {"format": SUMMARY_FORMAT, "config": str(state.config_path),
            "base_model": state.artefacts.get("base model"), "seconds": seconds,
            **state.story}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, default=str), encoding="utf-8")
    return path
