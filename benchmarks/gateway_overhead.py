"""The A/B gateway's added latency: the same requests to a loopback backend directly and
through the gateway (sticky assignment, routing, exposure queued), at concurrency 1, 8, 32.

Three kinds of process, so that no two costs share an interpreter: the backend (a minimal
OpenAI-style server that answers at once), one gateway process per source tree measured
(`running_gateway` with a fixed slot, exposures into its own migrated SQLite store), and a
fresh client process per measurement (aiohttp, `concurrency` requests in flight). With
`--before DIR` a second gateway runs the code of another checkout (e.g. `git worktree add
/tmp/before HEAD~1`), so before and after are measured in the same run, interleaved, on the
same backend. Each repetition measures direct, then each gateway, per level; the table gives
the median over repetitions of each run's P50 and P95, the added ms and the ratio
through/direct, and each gateway checks that every request it answered became a row (none
lost under load). The load average is printed at the start and the end. Goal (issue #23):
at most 5 ms added at P50.

Run: .venv/bin/python benchmarks/gateway_overhead.py [--requests 400] [--concurrency 1,8,32]
         [--repeat 3] [--before DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BODY = {"messages": [{"role": "user", "content": "多少钱？"}]}


def serve_backend(port: int) -> None:
    """An OpenAI-style chat endpoint that answers at once (the upstream of both paths)."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from hat_core.serving.arms import completion

    async def chat(request):
        await request.body()
        return JSONResponse(completion("echo", {"role": "assistant", "content": "好的"}))
    app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def serve_gateway(port: int, backend: str, store: Path, result: Path) -> None:
    """The gateway of whatever tree PYTHONPATH names, until SIGTERM; then the exposures it
    stored against the requests it answered go to `result` (JSON)."""
    import threading

    from db.engine import in_transaction, make_engine, make_session_factory
    from db.experiments_repo import create_experiment
    from db.exposures_repo import arm_counts
    from db.migrate import upgrade
    from hat_cli.gateway_cmd import running_gateway
    from hat_core.serving.arms import ArmTarget, HttpBackend

    url = f"sqlite:///{store}"
    upgrade(url)
    sessions = make_session_factory(make_engine(url))
    exp = in_transaction(sessions, lambda s: create_experiment(
        s, name="bench", treatment_share=0.5, actor="bench"))
    target = ArmTarget("bench", "1", None, "1")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with running_gateway(sessions, exp, open_backend=lambda t: HttpBackend(backend),
                         port=port, follow_every_s=3600,
                         read=lambda: {"control": target, "treatment": target}):
        stop.wait()
    with sessions() as s:
        stored = sum(a.requests for a in arm_counts(s, experiment_id=exp.id))
    result.write_text(json.dumps({"stored": stored}))


async def _timed(url: str, n: int, concurrency: int, tag: str) -> list[float]:
    import aiohttp

    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(url, connector=connector) as client:
        gate, out = asyncio.Semaphore(concurrency), []

        async def one(i: int) -> None:
            async with gate:
                started = time.perf_counter()
                async with client.post("/v1/chat/completions",
                                       json={**BODY, "user": f"{tag}{i}"}) as answer:
                    await answer.read()
                out.append((time.perf_counter() - started) * 1000)
                if answer.status != 200:
                    raise SystemExit(f"{url}: HTTP {answer.status}")
        await asyncio.gather(*(one(i) for i in range(n)))
    return out


def client(url: str, n: int, concurrency: int, warm: int) -> None:
    """Warm up, then time `n` requests at `concurrency`; the latencies (ms) as JSON."""
    asyncio.run(_timed(url, warm, concurrency, "w"))
    print(json.dumps(asyncio.run(_timed(url, n, concurrency, "u"))))


def _python(args: list[str], tree: Path, **kw) -> subprocess.Popen:
    from hat_core.children import spawn

    env = {**os.environ, "PYTHONPATH": str(tree)}
    return spawn([sys.executable, str(ROOT / "benchmarks" / "gateway_overhead.py"), *args],
                 env=env, **kw)


def _wait_up(url: str, proc: subprocess.Popen, path: str) -> None:
    import httpx

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            httpx.request("GET" if path == "/health" else "POST", url + path, json={},
                          timeout=2, trust_env=False)
            return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise SystemExit(f"{url} did not start")


def _measure(url: str, n: int, c: int, warm: int) -> list[float]:
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gateway_overhead.py"),
                          "--client", url, "--requests", str(n), "--concurrency", str(c),
                          "--warm", str(warm)], check=True, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    return json.loads(out.stdout)


def _p(values: list[float], q: int) -> float:
    from hat_core.latency.percentile import percentile

    return float(percentile(values, q))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warm", type=int, default=40)
    parser.add_argument("--before", type=Path, help="a checkout whose gateway to compare")
    parser.add_argument("--backend-port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--gateway", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--client", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.backend_port:
        return serve_backend(args.backend_port)
    if args.gateway:
        port, backend, store, result = args.gateway
        return serve_gateway(int(port), backend, Path(store), Path(result))
    if args.client:
        return client(args.client, args.requests, int(args.concurrency), args.warm)
    trees = {"after": ROOT} | ({"before": args.before.resolve()} if args.before else {})
    with tempfile.TemporaryDirectory() as tmp:
        run(args, [int(x) for x in args.concurrency.split(",")], trees, Path(tmp))


def run(args, levels: list[int], trees: dict[str, Path], tmp: Path) -> None:
    from hat_core.children import stop_group
    from hat_core.inference.server import free_port

    print(f"load average at start: {os.getloadavg()}")
    backend = f"http://127.0.0.1:{free_port()}"
    procs = [_python(["--backend-port", backend.rsplit(":", 1)[1]], ROOT)]
    gateways = {}
    try:
        _wait_up(backend, procs[0], "/v1/chat/completions")
        for name, tree in trees.items():
            url = f"http://127.0.0.1:{free_port()}"
            procs.append(_python(["--gateway", url.rsplit(":", 1)[1], backend,
                                  str(tmp / f"{name}.db"), str(tmp / f"{name}.json")], tree))
            _wait_up(url, procs[-1], "/health")
            gateways[name] = (url, procs[-1])
        results = {(c, path): [] for c in levels for path in ["direct", *gateways]}
        for _ in range(args.repeat):
            for c in levels:
                results[(c, "direct")].append(_measure(backend, args.requests, c, args.warm))
                for name, (url, _proc) in gateways.items():
                    results[(c, name)].append(_measure(url, args.requests, c, args.warm))
    finally:
        for _url, proc in gateways.values():  # a clean stop writes the queued exposures
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=120)
        for proc in procs:
            stop_group(proc)
    print(f"load average at end: {os.getloadavg()}")
    report(args, levels, list(gateways), results, tmp)


def report(args, levels, names, results, tmp: Path) -> None:
    def med(runs, q):
        return statistics.median(_p(r, q) for r in runs)

    print(f"medians over {args.repeat} repetitions of {args.requests} requests each "
          "(each repetition's P50/P95 in ms)")
    print(f"{'conc':>4} {'path':>7} {'P50':>8} {'P95':>8} {'added P50':>9} {'added P95':>9} "
          f"{'ratio P50':>9}  P50 of each repetition")
    for c in levels:
        d50, d95 = med(results[(c, "direct")], 50), med(results[(c, "direct")], 95)
        for path in ["direct", *names]:
            runs = results[(c, path)]
            p50, p95 = med(runs, 50), med(runs, 95)
            each = " ".join(f"{_p(r, 50):.2f}" for r in runs)
            print(f"{c:>4} {path:>7} {p50:>8.2f} {p95:>8.2f} {p50 - d50:>9.2f} "
                  f"{p95 - d95:>9.2f} {p50 / d50:>9.2f}  {each}")
    sent = args.repeat * len(levels) * (args.requests + args.warm)
    for name in names:
        stored = json.loads((tmp / f"{name}.json").read_text())["stored"]
        print(f"exposures ({name}): {stored} stored of {sent} gateway requests")


if __name__ == "__main__":
    main()
