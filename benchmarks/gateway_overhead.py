"""The A/B gateway's added latency: the same requests to a loopback backend directly and
through the gateway (sticky assignment, routing, exposure queued), at concurrency 1, 8, 32.

The backend is a minimal OpenAI-style server that answers at once, in its own process
(this script with `--backend-port`), so what is measured is the gateway itself (one more
loopback hop, JSON in and out, the assignment, the exposure); the exposures go to a real
migrated SQLite store, and the run checks that every request of the gateway became a row
(none lost under load). Goal (issue #23): at most 5 ms added at
P50. Prints a table: P50/P95 direct and through, added ms, and the ratio through/direct.

Run: .venv/bin/python benchmarks/gateway_overhead.py [--requests 400] [--concurrency 1,8,32]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from db.engine import in_transaction, make_engine, make_session_factory
from db.experiments_repo import create_experiment
from db.exposures_repo import arm_counts
from db.migrate import upgrade
from hat_cli.gateway_cmd import running_gateway
from hat_core.inference.server import free_port, stop
from hat_core.latency.percentile import percentile
from hat_core.serving.arms import HttpBackend, completion


def backend_app() -> Starlette:
    async def chat(request):
        await request.body()
        return JSONResponse(completion("echo", {"role": "assistant", "content": "好的"}))
    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


async def timed(url: str, n: int, concurrency: int) -> list[float]:
    limits = httpx.Limits(max_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, limits=limits, trust_env=False,
                                 timeout=30) as client:
        gate, out = asyncio.Semaphore(concurrency), []

        async def one(i: int) -> None:
            async with gate:
                started = time.perf_counter()
                answer = await client.post("/v1/chat/completions", json={
                    "messages": [{"role": "user", "content": "多少钱？"}], "user": f"u{i}"})
                out.append((time.perf_counter() - started) * 1000)
                answer.raise_for_status()
        await asyncio.gather(*(one(i) for i in range(n)))
    return out


def store(tmp: Path):
    url = f"sqlite:///{tmp / 'hat.db'}"
    upgrade(url)
    sessions = make_session_factory(make_engine(url))
    exp = in_transaction(sessions, lambda s: create_experiment(
        s, name="bench", treatment_share=0.5, actor="bench"))
    return sessions, exp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--backend-port", type=int, help="only serve the backend (internal)")
    args = parser.parse_args()
    if args.backend_port:
        import uvicorn

        return uvicorn.run(backend_app(), host="127.0.0.1", port=args.backend_port,
                           log_level="warning", access_log=False)
    levels = [int(x) for x in args.concurrency.split(",")]
    port = free_port()
    backend = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.Popen([sys.executable, __file__, "--backend-port", str(port)],
                                start_new_session=True)
        try:
            wait_ready_chat(proc, backend)
            run(args, levels, backend, Path(tmp))
        finally:
            stop(proc)


def wait_ready_chat(proc, backend: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            httpx.post(f"{backend}/v1/chat/completions", json={}, timeout=2)
            return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise SystemExit("the backend did not start")


def run(args, levels: list[int], backend: str, tmp: Path) -> None:
    sessions, exp = store(tmp)
    fixed = _fixed_slot(backend)
    with running_gateway(sessions, exp, open_backend=lambda t: HttpBackend(backend),
                         follow_every_s=3600, read=fixed) as g:
        rows = []
        for c in levels:
            asyncio.run(timed(backend, 20, c))  # warm both paths
            asyncio.run(timed(g.url, 20, c))
            direct = asyncio.run(timed(backend, args.requests, c))
            through = asyncio.run(timed(g.url, args.requests, c))
            rows.append((c, direct, through))
        lost = g.exposures.flush(timeout_s=60)
    with sessions() as s:
        stored = sum(a.requests for a in arm_counts(s, experiment_id=exp.id))
    sent = sum(args.requests + 20 for _ in levels)
    print(f"{'conc':>4} {'direct p50':>10} {'p95':>7} {'gateway p50':>11} {'p95':>7} "
          f"{'added p50':>9} {'p95':>7} {'ratio p50':>9}")
    for c, direct, through in rows:
        d50, d95 = percentile(direct, 50), percentile(direct, 95)
        t50, t95 = percentile(through, 50), percentile(through, 95)
        print(f"{c:>4} {d50:>10.2f} {d95:>7.2f} {t50:>11.2f} {t95:>7.2f} {t50 - d50:>9.2f} "
              f"{t95 - d95:>7.2f} {t50 / d50:>9.2f}")
    print(f"exposures: {stored} stored of {sent} gateway requests ({lost} unwritten)")


def _fixed_slot(backend: str):
    from hat_core.serving.arms import ArmTarget

    target = ArmTarget("bench", "1", None, "1")
    return lambda: {"control": target, "treatment": target}


if __name__ == "__main__":
    main()
