"""Concurrent submissions: numbers 1..N without gaps or duplicates, identical content once.

Threads share nothing but the URL (each submit is its own transaction on a pooled engine);
processes (spawn, 4 workers for 20 submissions) each build their own engine; those are
marked `slow` (spawning and importing dominate their time).
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import pytest
from sqlalchemy import func, select
from store_helpers import submit_variant

from db.harness_repo import list_versions
from db.models import AuditRow, OutboxEvent

N = 20


def stored(sessions) -> tuple[list[int], int, int]:
    with sessions() as s:
        numbers = sorted(v.number for v in list_versions(s, limit=1000))
        events = s.scalar(select(func.count()).select_from(OutboxEvent))
        audits = s.scalar(select(func.count()).select_from(AuditRow))
    return numbers, events, audits


def run_threads(url: str, indexes: list[int]) -> list[tuple[int, int]]:
    with ThreadPoolExecutor(max_workers=len(indexes)) as pool:
        return list(pool.map(lambda i: submit_variant(url, i), indexes))


def run_processes(url: str, indexes: list[int]) -> list[tuple[int, int]]:
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=4, mp_context=ctx) as pool:
        return list(pool.map(submit_variant, [url] * len(indexes), indexes))


def test_threads_number_distinct_content_without_gaps(db_url, sessions):
    results = run_threads(db_url, list(range(N)))
    assert sorted(number for _, number in results) == list(range(1, N + 1))
    assert stored(sessions) == (list(range(1, N + 1)), N, N)


def test_threads_store_identical_content_once(db_url, sessions):
    results = run_threads(db_url, [7] * N)
    assert set(results) == {results[0]} and results[0][1] == 1
    assert stored(sessions) == ([1], 1, 1)


@pytest.mark.slow
def test_processes_number_distinct_content_without_gaps(db_url, sessions):
    results = run_processes(db_url, list(range(N)))
    assert sorted(number for _, number in results) == list(range(1, N + 1))
    assert len({vid for vid, _ in results}) == N
    assert stored(sessions) == (list(range(1, N + 1)), N, N)


@pytest.mark.slow
def test_processes_store_identical_content_once(db_url, sessions):
    results = run_processes(db_url, [3] * N)
    assert set(results) == {results[0]}
    assert stored(sessions) == ([1], 1, 1)
