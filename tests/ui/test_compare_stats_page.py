"""The Compare page's intervals and paired tests, in a Streamlit AppTest on the seeded console
store with real evaluations logged to the console's MLflow store: two evaluation runs (the
oracle and a policy that memorised v1, on the same cases) give each rate with its Wilson
interval and the paired difference with its interval and McNemar p; runs on other cases are
not paired, and say so; two checkpoints whose eval results carry a cases URI show the same;
a `repro aggregate` run shows the pooled table and the paired tests between arms."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from console_helpers import texts

from db.engine import in_transaction
from hat_core.evaluation.call_metrics import paired_difference_interval
from hat_core.evaluation.evaluate import EvalOptions, evaluate, write_cases
from hat_core.evaluation.paired import compare_cases
from hat_core.harness.io import load_harness
from hat_core.sim.policy import MemorisingPolicy, OraclePolicy
from ui.views.case_stats import case_stats, outcome_rows, rate_cell, verdict_cell

HARNESSES = Path(__file__).resolve().parents[2] / "examples" / "harnesses"


def _eval(policy, tmp: Path, name: str, episodes: int = 6) -> tuple[Path, list[dict]]:
    report = evaluate(policy, load_harness(HARNESSES / "v2.yaml"), ["t1"],
                      EvalOptions(episodes=episodes, variants=1))
    path = tmp / f"{name}.cases.jsonl"
    write_cases(report, path)
    return path, [json.loads(line) for line in path.read_text().splitlines()]


def _log(uri: str, tmp: Path, path: Path) -> str:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    found = client.get_experiment_by_name("hat-eval-test")
    exp = found.experiment_id if found else client.create_experiment(
        "hat-eval-test", artifact_location=(tmp / "art").as_uri())
    run = client.create_run(exp)
    client.log_artifact(run.info.run_id, str(path))
    return run.info.run_id


def _frame(at, column: str):
    """The first table of the page with `column` (AppTest keeps no key on a dataframe)."""
    found = [d.value for d in at.dataframe if column in d.value.columns]
    assert found, f"no table with {column!r}: {[list(d.value.columns) for d in at.dataframe]}"
    return found[0]


def test_case_stats_against_the_statistics_of_hat_core(tmp_path):
    _, oracle = _eval(OraclePolicy(), tmp_path, "oracle")
    _, memo = _eval(MemorisingPolicy(load_harness(HARNESSES / "v1.yaml")), tmp_path, "memo")
    rates, paired, notes = case_stats(memo, oracle, a_label="A", b_label="B")
    assert not notes
    passed = next(r for r in rates if (r["suite"], r["outcome"]) == ("t1", "passed"))
    k = sum(r["passed"] for r in oracle)
    assert passed["B"] == rate_cell(k, len(oracle)) and passed["B"].startswith(f"{k}/6 = ")
    row = next(r for r in paired if (r["suite"], r["outcome"]) == ("t1", "passed"))
    cmp = compare_cases(outcome_rows(memo, "t1", "passed"), outcome_rows(oracle, "t1", "passed"),
                        metric="passed")
    lo, hi = paired_difference_interval(cmp.b_only, cmp.a_only, cmp.n)
    assert row["paired cases"] == 6 and row["b − a (points)"] == round(100 * cmp.diff, 1)
    assert row["95% interval"] == f"{100 * lo:+.1f} to {100 * hi:+.1f}"
    assert row["McNemar p"] == round(cmp.p_value, 4)
    assert {r["outcome"] for r in paired} == {"passed", "first_tool_right", "first_call_exact",
                                             "all_calls_exact"}
    # 6 paired cases are fewer than the gates' 30: inconclusive whatever the counts
    assert {r["verdict"] for r in paired} == {"inconclusive: 6 cases < 30"}
    # other cases (fewer episodes): rates, but no paired test, and a note why
    _, other = _eval(OraclePolicy(), tmp_path, "other", episodes=4)
    rates, paired, notes = case_stats(memo, other, a_label="A", b_label="B")
    assert rates and not paired and "t1: not paired" in notes[0]


@pytest.mark.parametrize("n, a_only, b_only, min_cases, alpha, want", [
    (40, 1, 12, 30, 0.05, "b better"),        # p = 0.0034
    (40, 12, 1, 30, 0.05, "a better"),
    (20, 1, 12, 30, 0.05, "inconclusive: 20 cases < 30"),
    (40, 0, 0, 30, 0.05, "inconclusive: no case tells them apart"),
    (40, 3, 8, 30, 0.05, "inconclusive: p ≥ 0.05"),  # p = 0.227
    (40, 3, 8, 30, 0.25, "b better"),
])
def test_the_paired_verdict_follows_the_release_gates_rule(n, a_only, b_only, min_cases, alpha,
                                                          want):
    from scipy.stats import binomtest

    from hat_core.release.evidence import Outcome, paired_evidence

    p = binomtest(b_only, a_only + b_only).pvalue if a_only + b_only else 1.0
    assert verdict_cell(n, a_only, b_only, p, min_cases=min_cases, alpha=alpha) == want
    # the same cases through the gates' own evidence (candidate b, reference a, no tolerance)
    both = n - a_only - b_only
    a = [1] * a_only + [0] * b_only + [1] * both
    b = [0] * a_only + [1] * b_only + [1] * both
    rows = lambda bits: [{"suite": "t1", "case_id": f"t1/{i}", "passed": bool(x)}  # noqa: E731
                         for i, x in enumerate(bits)]
    ev = paired_evidence(rows(b), rows(a), Outcome("t1", "pass_rate", "passed"), tolerance=0.0,
                         min_cases=min_cases, alpha=alpha)
    assert ev.verdict == {"b better": "passed", "a better": "failed"}.get(want, "inconclusive")


def test_two_runs_and_two_checkpoints_show_intervals_and_paired_tests(
        console, console_db, console_sessions, tmp_path):
    from db.release_repo import add_eval_result
    from hat_core.settings import load_settings

    uri = load_settings().resolved_mlflow_uri()
    memo_path, memo = _eval(MemorisingPolicy(load_harness(HARNESSES / "v1.yaml")), tmp_path,
                            "memo")
    oracle_path, oracle = _eval(OraclePolicy(), tmp_path, "oracle")
    run_a, run_b = _log(uri, tmp_path, memo_path), _log(uri, tmp_path, oracle_path)
    _, want, _ = case_stats(memo, oracle, a_label="A", b_label="B")

    at = console("viewer", "compare")
    at.radio(key="compare_mode").set_value("two MLflow evaluation runs").run()
    at.text_input(key="compare_run_a").set_value(run_a).run()
    at.text_input(key="compare_run_b").set_value(run_b).run()
    assert not at.exception, at.exception
    rates = _frame(at, f"B: {run_b}")
    assert f"B: {run_b}" in rates.columns and len(rates) == 4
    paired = _frame(at, "McNemar p")
    assert paired.to_dict("records") == want

    at.text_input(key="compare_run_b").set_value("no-such-run").run()
    assert "no MLflow run no-such-run" in at.error[0].value

    # checkpoints: the eval results of mv_weak (A) and mv_good (B) point at the runs' rows
    _, ids = console_db
    for mv, run, name in ((ids["mv_weak"], run_a, "memo"), (ids["mv_good"], run_b, "oracle")):
        in_transaction(console_sessions, lambda s, mv=mv, run=run, name=name: add_eval_result(
            s, model_version_id=mv, suite="t1", metric="first_call_exact", value=0.5,
            cases_uri=f"runs:/{run}/{name}.cases.jsonl"))
    at = console("viewer", "compare")
    at.radio(key="compare_mode").set_value("two checkpoints").run()
    at.selectbox(key="compare_b").set_value(ids["mv_good"]).run()
    at.selectbox(key="compare_a").set_value(ids["mv_weak"]).run()
    assert not at.exception, at.exception
    assert _frame(at, "McNemar p").to_dict("records") == want
    # against the champion (v1, no cases URI): no paired table, and the page says why
    at.radio(key="compare_mode").set_value("against the champion").run()
    assert not at.exception, at.exception
    assert "A has none." in texts(at)
    assert all("McNemar p" not in d.value.columns for d in at.dataframe)


def test_a_repro_aggregate_run_shows_pooled_rates_and_paired_tests(console, console_db,
                                                                    tmp_path):
    from hat_core.repro.tracking import log_aggregates
    from hat_core.settings import load_settings

    at = console("viewer", "compare")
    at.radio(key="compare_mode").set_value("a repro aggregate run").run()
    assert "No `repro aggregate` run" in texts(at)

    def arm(bits: str) -> dict:
        return {"outcomes": {"t2": {"case_ids": [f"t2/s{i}" for i in range(len(bits))],
                                    "first_call_exact": bits}}}
    results = {"seeds": {
        "0": {"eval": {"fixed_sft": arm("1110000000"), "hat": arm("1011110000")}},
        "1": {"eval": {"fixed_sft": arm("1111100000"), "hat": arm("1111011111")}}}}
    log_aggregates(results, load_settings().resolved_mlflow_uri(),
                   artifacts=tmp_path / "art")
    at = console("viewer", "compare")
    at.radio(key="compare_mode").set_value("a repro aggregate run").run()
    assert not at.exception, at.exception
    pooled = _frame(at, "mean ± std (%)").to_dict("records")
    hat = next(r for r in pooled if r["arm"].startswith("HAT"))
    assert hat["rate"] == "t2.first_call_exact" and hat["seeds"] == 2
    assert hat["mean ± std (%)"] == "70.0 ± 28.3" and hat["pooled"].startswith("14/20 = 70.0% (")
    [test] = _frame(at, "a → b").to_dict("records")
    lo, hi = paired_difference_interval(8, 2, 20)
    assert test["a → b"] == "Fixed-Harness SFT → HAT (HSA-SFT → OPD → HSA-RL)"
    assert test["b − a (points)"] == 30.0
    assert test["95% interval"] == f"{100 * lo:+.1f} to {100 * hi:+.1f}"
    assert (test["a only"], test["b only"], test["McNemar p"]) == (2, 8, round(2 * 56 / 1024, 4))
    # the verdict follows the page's decision rule: 20 pooled cases are below the gates' 30;
    # with 10 the p of 0.109 decides (inconclusive at 0.05, b better at 0.2)
    assert test["verdict"] == "inconclusive: 20 cases < 30"
    at.number_input(key="compare_min_cases").set_value(10).run()
    assert _frame(at, "a → b").to_dict("records")[0]["verdict"] == "inconclusive: p ≥ 0.05"
    at.number_input(key="compare_alpha").set_value(0.2).run()
    assert not at.exception, at.exception
    assert _frame(at, "a → b").to_dict("records")[0]["verdict"] == "b better"
