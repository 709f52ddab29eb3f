"""The Compare page in a real browser: Debian chromium (Playwright) against `streamlit run`, on
the seeded console store with real evaluations in the console's MLflow store.

The data is the project's own: simulator policies evaluated on the v2 harness's T1 cases
(`hat_core.evaluation.evaluate`), logged with `log_report` (the memorising policy and the
oracle on the same 10 cases; the oracle on 6 of them; a run without its case rows), two
checkpoints whose eval results point at those runs' case rows, and a `repro aggregate` run
logged by `log_aggregates` from repro results whose arms are simulator policies standing in
for trained models (per-case outcomes by `hat_core.repro.outcomes`; training an arm is too
slow for a test). A viewer drives the page's widgets; every number the page shows is checked
against the same outcomes counted here with scipy (Wilson interval, exact binomial McNemar)
and the Bonett-Price formula. Screenshots go to `test-artifacts/ui/compare-*.png`.
Needs `/usr/bin/chromium` (`make browser`); marked `browser`.
"""

from __future__ import annotations

import math
import os
import shutil
import statistics
import time
from pathlib import Path

import pytest
from console_helpers import (
    CHROMIUM,
    CHROMIUM_ARGS,
    ROOT,
    click_nav,
    console_server,
    home_with_registry,
    log_in,
    require_chromium,
    settled,
)

pytestmark = pytest.mark.browser
HARNESSES = ROOT / "examples" / "harnesses"
ARTIFACTS = ROOT / "test-artifacts" / "ui"
REPRO_ARMS = {"fixed_sft": "Fixed-Harness SFT", "hat": "HAT (HSA-SFT → OPD → HSA-RL)"}
SLOW = 120_000  # ms: a loaded machine may take a minute for the server's first MLflow read
OUTCOMES = ("passed", "first_tool_right", "first_call_exact", "all_calls_exact")
# data grids of the current run (Streamlit marks an earlier run's elements stale until it
# has redrawn or removed them)
LIVE_GRIDS = ("[data-testid='stElementContainer']:not([data-stale='true']) "
              "[data-testid='stDataFrame'] table[role='grid']")


def _evaluate(policy, episodes: int, seed: int = 0, suite: str = "t1"):
    from hat_core.evaluation.evaluate import EvalOptions, evaluate
    from hat_core.harness.io import load_harness

    return evaluate(policy, load_harness(HARNESSES / "v2.yaml"), [suite],
                    EvalOptions(episodes=episodes, variants=1, seed=seed))


def _memorising():
    from hat_core.harness.io import load_harness
    from hat_core.sim.policy import MemorisingPolicy

    return MemorisingPolicy(load_harness(HARNESSES / "v1.yaml"))


def _log_eval(uri: str, tmp: Path, name: str, policy, episodes: int, *, cases: bool = True,
              suite: str = "t1") -> tuple[str, list[dict]]:
    """A `hat eval run --mlflow-uri` style run (`log_report`, the cases file at its root)."""
    from hat_core.evaluation.evaluate import case_rows, write_cases
    from hat_core.evaluation.tracking import log_report

    report = _evaluate(policy, episodes, suite=suite)
    files = [write_cases(report, tmp / f"{name}.cases.jsonl")] if cases else []
    return log_report(report, uri=uri, artifacts=files, run_name=name), case_rows(report)


def _repro_results() -> dict:
    """Two seeds of three arms (8 and 10 T1 cases), condensed as `run_repro` condenses them."""
    from hat_core.evaluation.evaluate import case_rows
    from hat_core.repro.outcomes import case_outcomes, family_counts
    from hat_core.sim.policy import OraclePolicy

    seeds = {}
    for seed, episodes in ((0, 8), (1, 10)):
        evals = {}
        for arm, policy in (("fixed_sft", _memorising()), ("hat", OraclePolicy())):
            rows = case_rows(_evaluate(policy, episodes, seed))
            evals[arm] = {"eval_seed": seed, "outcomes": case_outcomes(rows),
                          "families": family_counts(rows)}
        seeds[str(seed)] = {"eval_seed": seed, "eval": evals}
    return {"seeds": seeds}


def _add_cases_uri(url: str, model_id: int, run_id: str, name: str) -> None:
    from db.engine import in_transaction, make_engine, make_session_factory
    from db.release_repo import add_eval_result

    engine = make_engine(url)
    in_transaction(make_session_factory(engine), lambda s: add_eval_result(
        s, model_version_id=model_id, suite="t1", metric="pass_rate", value=0.5,
        cases_uri=f"runs:/{run_id}/{name}.cases.jsonl"))
    engine.dispose()


@pytest.fixture(scope="module")
def world(seeded_template, mlflow_template, tmp_path_factory):
    """The console's store and MLflow store with the runs of the module doc, and its server."""
    from mlflow.tracking import MlflowClient

    from hat_core.sim.policy import OraclePolicy

    require_chromium()
    template, ids = seeded_template
    tmp = tmp_path_factory.mktemp("compare-browser")
    shutil.copyfile(template, tmp / "hat.db")
    home = home_with_registry(tmp / "home", mlflow_template)
    uri, url = f"sqlite:///{home / 'mlflow.db'}", f"sqlite:///{tmp / 'hat.db'}"
    MlflowClient(uri).create_experiment("hat-eval", artifact_location=(tmp / "art").as_uri())
    runs = {"memo": _log_eval(uri, tmp, "memo", _memorising(), 10),
            "oracle": _log_eval(uri, tmp, "oracle", OraclePolicy(), 10),
            "short": _log_eval(uri, tmp, "short", OraclePolicy(), 6),
            "bare": _log_eval(uri, tmp, "bare", OraclePolicy(), 6, cases=False),
            "t2": _log_eval(uri, tmp, "t2", OraclePolicy(), 4, suite="t2")}
    _add_cases_uri(url, ids["mv_weak"], runs["memo"][0], "memo")
    _add_cases_uri(url, ids["mv_good"], runs["oracle"][0], "oracle")
    env = {**os.environ, "HAT_DATABASE_URL": url, "HAT_HOME": str(home)}
    for name in ("HAT_MLFLOW_TRACKING_URI", "PREFECT_API_URL", "HAT_PREFECT_API_URL"):
        env.pop(name, None)
    with console_server(env, tmp / "streamlit.log") as base:
        yield {"base": base, "runs": runs, "uri": uri, "tmp": tmp}


@pytest.fixture(scope="module")
def browser(world):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, world):
    """A new tab, logged in as the viewer, on the Compare page."""
    tab = browser.new_page(viewport={"width": 2000, "height": 1000})  # every column shown
    tab.set_default_timeout(SLOW)
    log_in(tab, world["base"], "viewer", SLOW)
    click_nav(tab, "Compare checkpoints", SLOW)
    yield tab
    tab.close()


def _frame(page, column: str, *others: str) -> list[dict[str, str]]:
    """The rows of the page's table with `column` (and `others`), read from the data grid's
    accessible table (the tables here stay under the grid's ten visible rows, and the tab is
    wide enough for every column)."""
    for _ in range(SLOW // 500):  # the page may still be drawing the table
        for grid in page.locator(LIVE_GRIDS).all():
            heads = grid.locator("th").all_text_contents()
            if {column, *others} <= set(heads):
                return [dict(zip(heads, row.locator("td").all_text_contents(), strict=True))
                        for row in grid.locator("tbody tr").all()]
        page.wait_for_timeout(500)
    raise AssertionError(f"no table with {column!r}")


def _no_table_with(page, column: str, timeout: float = 10_000) -> bool:
    """No data frame with `column` once the run ends (a table of the previous run stays in
    the page, marked stale, until Streamlit finishes the current one)."""
    from playwright.sync_api import expect

    heads = page.locator("[data-testid='stDataFrame'] th").filter(has_text=column)
    try:
        expect(heads).to_have_count(0, timeout=timeout)
    except AssertionError:
        return False
    return True


def _choose(page, mode: str) -> None:
    page.get_by_text(mode, exact=True).click()
    settled(page, SLOW)


def _enter_runs(page, run_a: str, run_b: str) -> None:
    for label, ref in (("Run A", run_a), ("Run B", run_b)):
        box = page.get_by_role("textbox", name=label)
        box.fill(ref)
        box.press("Enter")
        settled(page, SLOW)


def _pick(page, label: str, option: str) -> None:
    page.locator("[data-testid='stSelectbox']").filter(has_text=label).click()
    page.get_by_role("option", name=option).click()
    settled(page, SLOW)


def _alert(page, kind: str, text: str) -> str:
    """The text of the page's `st.<kind>` box (error, info, warning) that contains `text`."""
    box = page.locator(f"[data-testid='stAlertContent{kind.title()}']").filter(has_text=text)
    box.wait_for()
    return box.text_content()


def _no_traceback(page) -> None:
    assert page.locator("[data-testid='stException']").count() == 0, \
        page.locator("[data-testid='stException']").first.text_content()


def _shot(page, name: str) -> None:
    settled(page)
    page.screenshot(path=str(ARTIFACTS / f"compare-{name}.png"), full_page=True)


# --- the statistics, counted here from the outcomes (not the page's code) ---

def _rate(bits: list[bool]) -> str:
    """`k/n = x% (lo–hi)`: the rate and its Wilson 95% interval (scipy) in percent."""
    from scipy.stats import binomtest

    k, n = sum(bits), len(bits)
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return f"{k}/{n} = {100 * k / n:.1f}% ({100 * ci.low:.1f}–{100 * ci.high:.1f})"


def _paired(a: list[bool], b: list[bool]) -> dict:
    """b - a on paired outcomes: counts, the Bonett-Price 95% interval, exact McNemar p (a
    two-sided binomial test of the discordant pairs, scipy)."""
    from scipy.stats import binomtest

    a_only = sum(x and not y for x, y in zip(a, b, strict=True))
    b_only = sum(y and not x for x, y in zip(a, b, strict=True))
    n = len(a)
    pb, pa = (b_only + 1) / (n + 2), (a_only + 1) / (n + 2)
    half = 1.959964 * math.sqrt((pb + pa - (pb - pa) ** 2) / (n + 2))
    low, high = max(pb - pa - half, -1), min(pb - pa + half, 1)
    p = binomtest(b_only, a_only + b_only, 0.5).pvalue if a_only + b_only else 1.0
    return {"cases": n, "diff": 100 * (b_only - a_only) / n, "a_only": a_only,
            "b_only": b_only, "interval": f"{100 * low:+.1f} to {100 * high:+.1f}", "p": p}


def _outcome(rows: list[dict], outcome: str) -> dict[str, bool]:
    return {r["case_id"]: bool(r["passed"] if outcome == "passed" else r["calls"][outcome])
            for r in rows}


def _check_two_runs(page, rows_a: list[dict], rows_b: list[dict], a: str, b: str,
                    timeout_s: float = 20.0) -> None:
    """The rates table (columns `a`, `b`) and the paired table against the outcomes, once the
    page shows them: a table of an earlier selection may still be on the page until the run
    for the last one has redrawn it, so the check is retried until `timeout_s` and the last
    failure is raised."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return _two_runs_shown(page, rows_a, rows_b, a, b)
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            page.wait_for_timeout(500)


def _two_runs_shown(page, rows_a: list[dict], rows_b: list[dict], a: str, b: str) -> None:
    rates = {r["outcome"]: r for r in _frame(page, a, "outcome")}
    paired = {r["outcome"]: r for r in _frame(page, "McNemar p")}
    assert sorted(rates) == sorted(paired) == sorted(OUTCOMES)
    for outcome in OUTCOMES:
        xa, xb = _outcome(rows_a, outcome), _outcome(rows_b, outcome)
        ids = sorted(xa)
        assert ids == sorted(xb)
        assert rates[outcome][a] == _rate([xa[i] for i in ids])
        assert rates[outcome][b] == _rate([xb[i] for i in ids])
        want, got = _paired([xa[i] for i in ids], [xb[i] for i in ids]), paired[outcome]
        assert int(got["paired cases"]) == want["cases"]
        assert float(got["b − a (points)"]) == pytest.approx(want["diff"], abs=0.05)
        assert got["95% interval"] == want["interval"]
        assert (int(got["a only"]), int(got["b only"])) == (want["a_only"], want["b_only"])
        assert float(got["McNemar p"]) == pytest.approx(want["p"], abs=5.1e-5)


def test_two_runs_on_the_same_cases_show_wilson_rates_and_the_paired_test(page, world):
    (memo, memo_rows), (oracle, oracle_rows) = world["runs"]["memo"], world["runs"]["oracle"]
    _choose(page, "two MLflow evaluation runs")
    _enter_runs(page, memo, oracle)
    _no_traceback(page)
    _check_two_runs(page, memo_rows, oracle_rows, f"A: {memo}", f"B: {oracle}")
    # 5 cases only the oracle passed, none only the memorising policy: p = 2 / 2^5
    passed = next(r for r in _frame(page, "McNemar p") if r["outcome"] == "passed")
    assert (passed["a only"], passed["b only"], passed["McNemar p"]) == ("0", "5", "0.0625")
    _shot(page, "runs")


def test_two_checkpoints_pair_their_eval_results_case_rows(page, world):
    memo_rows, oracle_rows = world["runs"]["memo"][1], world["runs"]["oracle"][1]
    _choose(page, "two checkpoints")
    _pick(page, "Checkpoint", "live-stream-avatar v2 (harness live-stream-avatar v2)")
    _pick(page, "Baseline", "live-stream-avatar v3 (harness live-stream-avatar v3)")
    _no_traceback(page)
    _check_two_runs(page, memo_rows, oracle_rows,
                    "A: live-stream-avatar v3 (harness live-stream-avatar v3)",
                    "B: live-stream-avatar v2 (harness live-stream-avatar v2)")
    _shot(page, "checkpoints")
    # the champion (v1) kept no case rows: no intervals, and the page says which side lacks them
    _choose(page, "against the champion")
    page.get_by_text("Per-case intervals and paired tests need both checkpoints' case rows"
                     ).wait_for()
    page.get_by_text("A has none.", exact=False).wait_for()
    assert _no_table_with(page, "McNemar p")
    _no_traceback(page)


def test_runs_that_cannot_be_paired_or_read_are_named_without_a_traceback(page, world):
    runs = world["runs"]
    memo, memo_rows = runs["memo"]
    short, short_rows = runs["short"]
    _choose(page, "two MLflow evaluation runs")
    _enter_runs(page, memo, short)  # 10 cases against 6 of them: rates, but no pairs
    rates = {r["outcome"]: r for r in _frame(page, f"B: {short}")}
    assert rates["passed"][f"B: {short}"] == _rate([r["passed"] for r in short_rows])
    assert rates["passed"][f"A: {memo}"] == _rate([r["passed"] for r in memo_rows])
    a_ids, b_ids = {r["case_id"] for r in memo_rows}, {r["case_id"] for r in short_rows}
    note = page.get_by_text("t1: not paired", exact=False)
    note.wait_for()
    assert (f"t1: not paired, the runs do not cover the same cases: {len(a_ids - b_ids)} only "
            f"in the first, {len(b_ids - a_ids)} only in the second, {len(a_ids & b_ids)} shared"
            ) in note.text_content()
    assert _no_table_with(page, "McNemar p")
    _no_traceback(page)
    _shot(page, "not-paired")
    _enter_runs(page, memo, runs["t2"][0])  # T1 against T2: nothing in common
    _alert(page, "info", "The two runs share no suite with per-case outcomes.")
    _enter_runs(page, memo, "no-such-run")
    assert "no MLflow run no-such-run at sqlite:///" in _alert(page, "error", "no-such-run")
    _enter_runs(page, runs["bare"][0], memo)  # logged without its cases file
    _alert(page, "error", f"run {runs['bare'][0]} has no per-case rows")
    _no_traceback(page)
    _shot(page, "missing-run")


def _bits(results: dict, arm: str, outcome: str) -> list[bool]:
    """`arm`'s `outcome` on T1 over every seed, in seed order (the pooled cases)."""
    return [c == "1" for seed in results["seeds"].values()
            for c in seed["eval"][arm]["outcomes"]["t1"][outcome]]


def test_a_repro_aggregate_run_shows_the_pooled_rates_and_the_paired_tests(page, world):
    from hat_core.repro.tracking import log_aggregates

    _choose(page, "a repro aggregate run")
    _alert(page, "info", "run in MLflow yet")
    results = _repro_results()
    log_aggregates(results, world["uri"], artifacts=world["tmp"] / "repro-art")
    _choose(page, "two checkpoints")
    _choose(page, "a repro aggregate run")
    _no_traceback(page)
    pooled = {(r["arm"], r["rate"]): r for r in _frame(page, "mean ± std (%)")}
    assert len(pooled) == len(REPRO_ARMS) * len(OUTCOMES)
    for (arm, label), outcome in ((a, o) for a in REPRO_ARMS.items() for o in OUTCOMES):
        per_seed = [100 * s["eval"][arm]["outcomes"]["t1"][outcome].count("1")
                    / len(s["eval"][arm]["outcomes"]["t1"][outcome])
                    for s in results["seeds"].values()]
        row = pooled[(label, f"t1.{outcome}")]
        assert row["seeds"] == "2"
        assert row["mean ± std (%)"] == (f"{statistics.mean(per_seed):.1f} ± "
                                         f"{statistics.stdev(per_seed):.1f}")
        assert row["pooled"] == _rate(_bits(results, arm, outcome))
    tests = {r["outcome"]: r for r in _frame(page, "a → b")}
    assert sorted(tests) == sorted(OUTCOMES)
    for outcome, row in tests.items():
        a, b = _bits(results, "fixed_sft", outcome), _bits(results, "hat", outcome)
        want = _paired(a, b)
        assert row["a → b"] == f"{REPRO_ARMS['fixed_sft']} → {REPRO_ARMS['hat']}"
        assert (row["suite"], row["paired cases"], row["seeds"]) == ("t1", "18", "2")
        assert float(row["a (%)"]) == pytest.approx(100 * sum(a) / 18, abs=0.05)
        assert float(row["b (%)"]) == pytest.approx(100 * sum(b) / 18, abs=0.05)
        assert float(row["b − a (points)"]) == pytest.approx(want["diff"], abs=0.05)
        assert row["95% interval"] == want["interval"]
        assert (int(row["a only"]), int(row["b only"])) == (want["a_only"], want["b_only"])
        assert float(row["McNemar p"]) == pytest.approx(want["p"], abs=5.1e-5)
    _shot(page, "repro")


def test_a_repro_run_whose_aggregates_are_gone_is_named_without_a_traceback(page, world):
    from hat_core.repro.tracking import log_aggregates

    run_id = log_aggregates(_repro_results(), world["uri"],
                            artifacts=world["tmp"] / "repro-art", run_name="gone")
    for found in (world["tmp"] / "repro-art").glob(f"{run_id}/artifacts/aggregates.json"):
        found.unlink()
    _choose(page, "a repro aggregate run")
    _pick(page, "Run", f"gone (seeds 0,1, run {run_id[:8]})")
    _shot(page, "repro-gone")
    _no_traceback(page)
    assert run_id in _alert(page, "error", "aggregates.json")
