"""Benchmark the operator console: render time of each page on the store benchmark's data.

Fills a fresh database with `benchmarks/db_scale.py`'s fill (1,000 harness versions, 2,000
jobs, 20 model versions, 100,000 bad cases) plus a champion promotion, stage runs with
curves and eval results, and evidence (a saved A/B analysis of `examples/ab/sample.csv`, an
open and a closed blind pairwise review with votes and judge verdicts, 150 labelled bad cases
for the judge calibration), then renders every page with Streamlit's AppTest (the whole
script: login restore, navigation, the page's queries and elements) `--repeat` times after
one warm-up run, and prints P50 / P95 milliseconds per page. Goal: every P95 under 1.0 s.

    .venv/bin/python benchmarks/console_pages.py             # new PostgreSQL db, dropped after
    .venv/bin/python benchmarks/console_pages.py --sqlite    # a temporary SQLite file
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from db_scale import fill, target  # noqa: E402
from sqlalchemy import select  # noqa: E402

from db import migrate  # noqa: E402
from db.ab_repo import save_ab_analysis  # noqa: E402
from db.badcases_repo import label_bad_case  # noqa: E402
from db.engine import in_transaction, make_engine, make_session_factory  # noqa: E402
from db.jobs_repo import add_stage_run  # noqa: E402
from db.models import BadCaseRow  # noqa: E402
from db.pairwise_repo import (  # noqa: E402
    cast_vote,
    close_pairwise_review,
    create_pairwise_review,
    list_blind_items,
)
from db.release_repo import add_eval_result, promote  # noqa: E402
from db.sessions_repo import open_session  # noqa: E402
from db.users_repo import add_user, get_user  # noqa: E402

APP = str(HERE.parent / "ui" / "app.py")
AB_SAMPLE = HERE.parent / "examples" / "ab" / "sample.csv"
PAGES = ("harness_versions", "harness_submit", "harness_diff", "runs", "job", "compare",
         "bad_cases", "release", "audit", "users", "ab_tests", "pairwise", "judge")
GOAL_MS = 1000.0


def main() -> None:
    args = parse_args()
    url, cleanup = target(argparse.Namespace(url=args.url, sqlite=args.sqlite))
    try:
        migrate.upgrade(url)
        engine = make_engine(url)
        t0 = time.perf_counter()
        fill(engine, random.Random(args.seed), versions=args.versions, bad_cases=args.bad_cases)
        sessions = make_session_factory(engine)
        in_transaction(sessions, extras)
        in_transaction(sessions, evidence)
        print(f"filled {engine.dialect.name} in {time.perf_counter() - t0:.1f} s")
        timings = {page: time_page(url, page, args.repeat) for page in PAGES}
        engine.dispose()
    finally:
        cleanup()
    report(timings)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="an empty database to fill (default: a new PostgreSQL one)")
    parser.add_argument("--sqlite", action="store_true", help="use a temporary SQLite file")
    parser.add_argument("--versions", type=int, default=1000)
    parser.add_argument("--bad-cases", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=20, help="timed renders per page")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def extras(session) -> None:
    """What the pages show beyond the fill: an admin, a champion, stages, eval results."""
    add_user(session, name="admin", role="admin", password="bench-password", actor="bench")
    promote(session, slot="ab", model_version_id=1, actor="bench", reason="bench")
    curve = [round(0.4 + i / 50, 3) for i in range(20)]
    for stage in ("hsa_sft", "general_opd", "hsa_rl"):
        add_stage_run(session, job_id=2, stage=stage, metrics={
            "steps": 200, "loss": 0.3, "loss_curve": curve, "rewards/accuracy/mean": curve})
    for mv in range(1, 21):
        for suite, metric in (("t1", "accuracy"), ("t2", "accuracy"), ("ifeval", "strict"),
                              ("latency", "p50_s"), ("latency", "p95_s")):
            add_eval_result(session, model_version_id=mv, suite=suite, metric=metric,
                            value=0.5 + mv / 100)


def evidence(session) -> None:
    """What the evidence pages show: an A/B analysis, pairwise reviews, labelled bad cases."""
    save_ab(session)
    rng = random.Random(1)
    for title, close in (("open review", False), ("closed review", True)):
        pairwise(session, rng, title=title, close=close)
    label_bad_cases(session, rng, n=150)


def save_ab(session) -> None:
    """The analysis `hat ab analyze examples/ab/sample.csv --save` stores."""
    import hashlib

    from hat_core.evidence.ab import analyze
    from hat_core.evidence.ab_data import USER
    from hat_core.evidence.loader import load_ab

    data = load_ab(AB_SAMPLE)
    save_ab_analysis(session, name="sample", source_name=AB_SAMPLE.name,
                     source_sha256=hashlib.sha256(AB_SAMPLE.read_bytes()).hexdigest(),
                     result=analyze(data).to_dict(), n_rows=len(data.frame),
                     n_users=int(data.frame[USER].nunique()), actor="bench")


def pairwise(session, rng: random.Random, *, title: str, close: bool) -> None:
    """A review of 20 items with a judge verdict each and three reviewers' votes."""
    from hat_core.evidence.review_items import ReviewItem

    items = [ReviewItem(scenario_id=f"s{i:03d}", prompt=f"这件有 M 码吗？({i})",
                        response_a=f"有的，M 码还有 {i} 件。", response_b="请稍等。",
                        judge=rng.choice(("a", "a", "b", "tie"))) for i in range(20)]
    review = create_pairwise_review(session, title=title, system_a="hat-agent v2",
                                    system_b="hat-agent v1", items=items, actor="bench",
                                    seed=7)
    for item in list_blind_items(session, review_id=review.id):
        for reviewer in ("rita", "rob", "ria"):
            cast_vote(session, item_id=item.id, reviewer=reviewer,
                      choice=rng.choice(("left", "left", "right", "tie")))
    if close:
        close_pairwise_review(session, review_id=review.id, actor="bench")


def label_bad_cases(session, rng: random.Random, *, n: int) -> None:
    """Review `n` bad cases: mostly agreeing with the judge, some other labels or dismissed."""
    from hat_core.sim.judge import FAILURE_TYPES

    cases = session.execute(select(BadCaseRow.id, BadCaseRow.failure_type)
                            .order_by(BadCaseRow.id).limit(n)).all()
    for case_id, failure in cases:
        label = failure if rng.random() < 0.8 else rng.choice(("pass", *FAILURE_TYPES))
        label_bad_case(session, bad_case_id=case_id, reviewer="rita", label=label,
                       review_state="dismissed" if label == "pass" else "confirmed")


def time_page(url: str, page: str, repeat: int) -> list[float]:
    """Milliseconds of `repeat` full renders of one page (after a warm-up render)."""
    from streamlit.testing.v1 import AppTest

    os.environ.update(HAT_DATABASE_URL=url,
                      HAT_HOME=tempfile.mkdtemp(prefix="hat_console_bench_"))
    engine = make_engine(url)
    token = in_transaction(make_session_factory(engine), lambda s: open_session(
        s, user_id=get_user(s, name="admin").id, client="console"))
    engine.dispose()
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["session_token"] = token
    at.session_state["job_id"] = 2
    at.run()
    at.switch_page(f"pages/{page}.py").run()  # warm-up: imports, caches, connection pool
    if at.exception:
        raise RuntimeError(f"{page}: {at.exception[0].message}")
    ms = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        at.run()
        ms.append((time.perf_counter() - t0) * 1000)
    return ms


def report(timings: dict[str, list[float]]) -> None:
    print(f"\n| {'page':<18} | {'P50 ms':>8} | {'P95 ms':>8} |")
    print(f"|{'-' * 20}|{'-' * 10}|{'-' * 10}|")
    worst = 0.0
    for page, ms in timings.items():
        p95 = statistics.quantiles(ms, n=20)[-1] if len(ms) > 1 else ms[0]
        worst = max(worst, p95)
        print(f"| {page:<18} | {statistics.median(ms):>8.1f} | {p95:>8.1f} |")
    verdict = "meets" if worst < GOAL_MS else "MISSES"
    print(f"\nworst P95 {worst:.0f} ms: {verdict} the goal (every page P95 < {GOAL_MS:.0f} ms)")


if __name__ == "__main__":
    main()
