"""Benchmark the SQL store at scale: the console's main queries on a filled database.

Fills a freshly migrated store with 1,000 harness versions, 2,000 retrain jobs and 100,000
bad cases (bulk inserts, bypassing the repository), then times each query through the
repository functions and prints median and P95 milliseconds. Goal: every median under
50 ms on PostgreSQL.

    .venv/bin/python benchmarks/db_scale.py             # a new PostgreSQL database, dropped after
    .venv/bin/python benchmarks/db_scale.py --sqlite    # a temporary SQLite file
    .venv/bin/python benchmarks/db_scale.py --url postgresql+psycopg://u@host/db  # empty db
    .venv/bin/python benchmarks/db_scale.py --without-indexes   # what the indexes buy
"""

from __future__ import annotations

import argparse
import hashlib
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
from sqlalchemy import insert, text

from db import migrate
from db.badcases_repo import BadCaseFilter, count_bad_cases, list_bad_cases
from db.engine import make_engine, make_session_factory
from db.harness_repo import get_version, list_versions
from db.jobs_repo import list_jobs
from db.models import BadCaseRow, HarnessLine, HarnessVersionRow, ModelVersionRow, RetrainJob
from hat_core.harness.io import load_harness

V1 = Path(__file__).resolve().parent.parent / "examples" / "harnesses" / "v1.yaml"
LINE = "live-stream-avatar"
FAILURES = ("wrong_tool", "hallucinated_price", "compliance", "missed_skill", "bad_args",
            "retry_exhausted", "too_long", "off_topic")
STATES = ("new", "confirmed", "dismissed", "fixed")
STATE_WEIGHTS = (60, 20, 15, 5)
JOB_STATES = ("succeeded", "failed", "skipped", "queued", "running")
# Secondary indexes the console's queries rely on (dropped by --without-indexes, to compare).
QUERY_INDEXES = ("ix_harness_versions_created_at", "ix_retrain_jobs_state_id",
                 "ix_bad_cases_state_type_id", "ix_bad_cases_type_id",
                 "ix_bad_cases_harness_id", "ix_bad_cases_model_id")
PG_ADMIN = {"host": "127.0.0.1", "port": 5432, "user": "postgres", "dbname": "postgres"}


def main() -> None:
    args = parse_args()
    url, cleanup = target(args)
    try:
        migrate.upgrade(url)
        engine = make_engine(url)
        rng = random.Random(args.seed)
        t0 = time.perf_counter()
        fill(engine, rng, versions=args.versions, bad_cases=args.bad_cases)
        if args.without_indexes:
            drop_query_indexes(engine)
        print(f"filled {engine.dialect.name} in {time.perf_counter() - t0:.1f} s: "
              f"{args.versions} versions, {2 * args.versions} jobs, {args.bad_cases} bad cases")
        report(time_queries(make_session_factory(engine), rng, args.versions, args.repeat))
        engine.dispose()
    finally:
        cleanup()


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="an empty database to fill (default: a new PostgreSQL one)")
    parser.add_argument("--sqlite", action="store_true", help="use a temporary SQLite file")
    parser.add_argument("--versions", type=int, default=1000)
    parser.add_argument("--bad-cases", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=50, help="timed runs per query")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--without-indexes", action="store_true",
                        help="drop the query indexes after the fill, to see what they buy")
    return parser.parse_args()


def target(args: argparse.Namespace) -> tuple[str, Callable[[], None]]:
    """The database URL to use and how to remove it afterwards."""
    if args.url:
        return args.url, lambda: None
    if args.sqlite:
        tmp = tempfile.TemporaryDirectory(prefix="hat_bench_")
        return f"sqlite:///{tmp.name}/bench.db", tmp.cleanup
    name = f"hat_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(**PG_ADMIN, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")

    def drop() -> None:
        with psycopg.connect(**PG_ADMIN, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    return f"postgresql+psycopg://{PG_ADMIN['user']}@127.0.0.1:5432/{name}", drop


def fill(engine, rng: random.Random, *, versions: int, bad_cases: int) -> None:
    """Bulk-insert versions, two jobs per version, 20 model versions and the bad cases."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    with engine.begin() as conn:
        conn.execute(insert(HarnessLine), [{"id": 1, "name": LINE, "last_number": versions,
                                             "created_at": start}])
        conn.execute(insert(HarnessVersionRow), version_rows(versions, start))
        conn.execute(insert(RetrainJob), job_rows(rng, versions, start))
        conn.execute(insert(ModelVersionRow), [
            {"id": i, "registry_name": "avatar", "version": str(i), "job_id": 2 * i,
             "mlflow_run_id": uuid.UUID(int=i).hex, "gate_results": {"t1": True},
             "created_at": start} for i in range(1, 21)])
        for chunk in range(0, bad_cases, 10_000):
            rows = bad_case_rows(rng, range(chunk, min(chunk + 10_000, bad_cases)), versions, start)
            conn.execute(insert(BadCaseRow), rows)
    with engine.connect() as conn:
        conn.execution_options(isolation_level="AUTOCOMMIT").execute(text("ANALYZE"))


def drop_query_indexes(engine) -> None:
    with engine.begin() as conn:
        for name in QUERY_INDEXES:
            conn.execute(text(f"DROP INDEX {name}"))
        conn.execute(text("ANALYZE"))


def version_rows(versions: int, start: datetime) -> list[dict]:
    base = load_harness(V1)
    rows = []
    for n in range(1, versions + 1):
        document = base.model_copy(update={"description": f"bench version {n}"}).canonical_json()
        rows.append({
            "id": n, "line_id": 1, "number": n, "parent_id": n - 1 if n > 1 else None,
            "content_hash": hashlib.sha256(document.encode()).hexdigest(), "document": document,
            "author": f"op{n % 7}", "note": f"weekly edit {n}",
            "created_at": start + timedelta(hours=n),
        })
    return rows


def job_rows(rng: random.Random, versions: int, start: datetime) -> list[dict]:
    return [
        {"harness_version_id": n, "trigger": trigger, "state": rng.choice(JOB_STATES),
         "reason": "", "attempts": rng.randint(0, 3), "created_at": start + timedelta(hours=n),
         "updated_at": start + timedelta(hours=n)}
        for n in range(1, versions + 1) for trigger in ("harness_change", "weekly")
    ]


def bad_case_rows(rng: random.Random, ids: range, versions: int, start: datetime) -> list[dict]:
    rows = []
    for i in ids:
        failure = rng.choice(FAILURES)
        rows.append({
            "episode": {"turns": [{"role": "user", "content": f"question {i}"},
                                  {"role": "assistant", "content": f"answer {i}"}]},
            "harness_version_id": rng.randint(1, versions),
            "model_version_id": rng.choice([None, *range(1, 21)]),
            "failure_type": failure,
            "judge_scores": {"accuracy": rng.random(), "tool_rationality": rng.random()},
            "review_state": rng.choices(STATES, STATE_WEIGHTS)[0],
            "label": "", "comment": "", "send_to_training": False, "reviewer": "",
            "reviewed_at": None, "created_at": start + timedelta(seconds=i),
        })
    return rows


def queries(rng: random.Random, versions: int) -> dict[str, Callable]:
    """The console's main queries, each a function of a session (parameters vary per run)."""
    new_wrong = BadCaseFilter(review_state="new", failure_type="wrong_tool")

    def version_with_jobs(s):
        version = get_version(s, number=rng.randint(1, versions), line=LINE)
        return version, list_jobs(s, harness_version_id=version.id)

    def deep_page(s):
        first = list_bad_cases(s, where=new_wrong, limit=50)
        return list_bad_cases(s, where=new_wrong, after_id=first[-1].id - 50_000, limit=50)

    return {
        "latest 50 versions": lambda s: list_versions(s, limit=50),
        "one version + its jobs": version_with_jobs,
        "jobs of a version": lambda s: list_jobs(s, harness_version_id=rng.randint(1, versions)),
        "queued jobs (50)": lambda s: list_jobs(s, state="queued", limit=50),
        "bad cases new+type, page 1": lambda s: list_bad_cases(s, where=new_wrong, limit=50),
        "bad cases new+type, deep page": deep_page,
        "bad cases new+type, count": lambda s: count_bad_cases(s, where=new_wrong),
        "bad cases of a version": lambda s: list_bad_cases(
            s, where=BadCaseFilter(harness_version_id=rng.randint(1, versions)), limit=50),
        "bad cases of a model, confirmed": lambda s: list_bad_cases(
            s, where=BadCaseFilter(model_version_id=rng.randint(1, 20),
                                   review_state="confirmed"), limit=50),
    }


def time_queries(factory, rng: random.Random, versions: int, repeat: int) -> dict[str, list]:
    timings: dict[str, list[float]] = {}
    for name, query in queries(rng, versions).items():
        with factory() as session:
            query(session)  # warm-up: plan cache, pool
            timings[name] = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                query(session)
                session.rollback()
                timings[name].append((time.perf_counter() - t0) * 1000)
    return timings


def report(timings: dict[str, list[float]]) -> None:
    print(f"\n| {'query':<34} | {'median ms':>9} | {'P95 ms':>8} |")
    print(f"|{'-' * 36}|{'-' * 11}|{'-' * 10}|")
    for name, ms in timings.items():
        p95 = statistics.quantiles(ms, n=20)[-1] if len(ms) > 1 else ms[0]
        print(f"| {name:<34} | {statistics.median(ms):>9.2f} | {p95:>8.2f} |")


if __name__ == "__main__":
    main()
