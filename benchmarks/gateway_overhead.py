"""The A/B gateway's added latency: the same requests to a loopback backend directly and
through the gateway (sticky assignment, routing, exposure queued), at concurrency 1, 8, 32.

Run (one command that prints the table; 5 to 6 minutes here on 2 cores at load average 4 to 8):

    .venv/bin/python benchmarks/gateway_overhead.py --requests 400 --repeat 5

Three kinds of process, so that no two costs share an interpreter: the backend (a minimal
OpenAI-style server that answers at once), the gateway processes (`running_gateway` with a
fixed slot, exposures into a migrated SQLite store per configuration) and a fresh client
process per measurement (aiohttp, `concurrency` requests in flight). The gateway runs in
every configuration of `--gateways`, side by side in the same run on the same backend:
`asyncio+h11 x1` (uvicorn's pure-Python loop and parser, the gateway before uvloop),
`uvloop+httptools x1` (the default engine) and `uvloop+httptools x2` (two processes on one
port, SO_REUSEPORT, as `hat gateway --workers 2`). With `--before DIR` one more gateway runs
the code of another checkout (e.g. `git worktree add /tmp/before HEAD~1`). Each repetition
measures direct, then each gateway, per level; the table gives the median over repetitions
of each run's P50 and P95, the added ms and the ratio gateway/direct, and each configuration
checks that every request it was sent became a stored exposure (the run fails if one is
lost). The load average is printed at the start and the end: on a loaded machine compare
the ratios of one run, not absolute numbers across runs. `--profile DIR` samples each
gateway process with py-spy (raw stacks) during the last repetition at the highest level.
Goal (issue #23): at most 5 ms added at P50.

Options: [--requests 400] [--concurrency 1,8,32] [--repeat 3] [--warm 40]
         [--gateways NAME,...] [--before DIR] [--profile DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
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


def serve_gateway(port: int, backend: str, store: str, experiment_id: int, engine: str,
                  ready: Path) -> None:
    """One gateway process of whatever tree PYTHONPATH names, on the experiment the parent
    created in `store`, until SIGTERM (which writes every queued exposure). `engine` is
    `LOOP/PARSER` and `reuse` when the port is shared with other gateway processes;
    `ready` is written once it listens."""
    import inspect
    import threading

    from db.engine import make_engine, make_session_factory
    from db.experiments_repo import find_experiment
    from hat_cli.gateway_cmd import running_gateway
    from hat_core.serving.arms import ArmTarget, HttpBackend

    sessions = make_session_factory(make_engine(store))
    with sessions() as s:
        exp = find_experiment(s, ref=str(experiment_id))
    target = ArmTarget("bench", "1", None, "1")
    options = {}
    if "engine" in inspect.signature(running_gateway).parameters:  # a --before tree may lack it
        from hat_core.serving.runner import Engine

        loop, http, *shared = engine.split("/")
        options["engine"] = Engine(loop, http, reuse_port=bool(shared))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with running_gateway(sessions, exp, open_backend=lambda t: HttpBackend(backend),
                         port=port, follow_every_s=3600, **options,
                         read=lambda: {"control": target, "treatment": target}):
        ready.write_text("up")
        stop.wait()


def new_store(path: Path) -> tuple[str, int]:
    """A migrated SQLite store with one experiment: its URL and the experiment's id."""
    from db.engine import in_transaction, make_engine, make_session_factory
    from db.experiments_repo import create_experiment
    from db.migrate import upgrade

    url = f"sqlite:///{path}"
    upgrade(url)
    exp = in_transaction(make_session_factory(make_engine(url)), lambda s: create_experiment(
        s, name="bench", treatment_share=0.5, actor="bench"))
    return url, exp.id


def stored_exposures(url: str, experiment_id: int) -> tuple[int, int]:
    """(exposures stored, of which failed) for the experiment."""
    from db.engine import make_engine, make_session_factory
    from db.exposures_repo import arm_counts

    with make_session_factory(make_engine(url))() as s:
        counts = arm_counts(s, experiment_id=experiment_id)
    return sum(a.requests for a in counts), sum(a.errors for a in counts)


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


GATEWAYS = {  # name: (engine LOOP/PARSER[/reuse], processes on one port)
    "asyncio+h11 x1": ("asyncio/h11", 1),  # the gateway before uvloop (uvicorn's pure Python)
    "uvloop+httptools x1": ("uvloop/httptools", 1),
    "uvloop+httptools x2": ("uvloop/httptools/reuse", 2),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warm", type=int, default=40)
    parser.add_argument("--gateways", default=",".join(GATEWAYS),
                        help=f"which of {list(GATEWAYS)}, comma-separated")
    parser.add_argument("--before", type=Path, help="a checkout whose gateway to compare")
    parser.add_argument("--profile", type=Path, help="py-spy each gateway process at the "
                                                     "highest concurrency, into this folder")
    parser.add_argument("--backend-port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--gateway", nargs=6, help=argparse.SUPPRESS)
    parser.add_argument("--client", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.backend_port:
        return serve_backend(args.backend_port)
    if args.gateway:
        port, backend, store, exp, engine, ready = args.gateway
        return serve_gateway(int(port), backend, store, int(exp), engine, Path(ready))
    if args.client:
        return client(args.client, args.requests, int(args.concurrency), args.warm)
    names = [n.strip() for n in args.gateways.split(",")]
    if unknown := set(names) - set(GATEWAYS):
        parser.error(f"unknown gateways {sorted(unknown)}: choose from {list(GATEWAYS)}")
    setups = {n: (ROOT, *GATEWAYS[n]) for n in names}
    if args.before:
        setups["before"] = (args.before.resolve(), "asyncio/h11", 1)
    with tempfile.TemporaryDirectory() as tmp:
        run(args, [int(x) for x in args.concurrency.split(",")], setups, Path(tmp))


def _start_gateway(name: str, setup, backend: str, tmp: Path, procs: list) -> tuple:
    """The gateway processes of one setup on one port: (url, store URL, experiment id,
    its processes)."""
    from hat_core.inference.server import free_port

    tree, engine, count = setup
    slug = "".join(c if c.isalnum() else "-" for c in name)
    store, exp = new_store(tmp / f"{slug}.db")
    port = free_port()
    mine = []
    for i in range(count):
        ready = tmp / f"{slug}-{i}.ready"
        mine.append(_python(["--gateway", str(port), backend, store, str(exp), engine,
                             str(ready)], tree))
        procs.append(mine[-1])
        deadline = time.monotonic() + 120
        while not ready.exists():
            if mine[-1].poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"gateway {name} ({i + 1} of {count}) did not start")
            time.sleep(0.1)
    return f"http://127.0.0.1:{port}", store, exp, mine


def _profiled(args, name: str, gateway: tuple, measure):
    """`measure()` while py-spy samples each of the gateway's processes (raw stacks)."""
    if not args.profile:
        return measure()
    args.profile.mkdir(parents=True, exist_ok=True)
    slug = "".join(c if c.isalnum() else "-" for c in name)
    spy_bin = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    spies = [subprocess.Popen([spy_bin, "record", "--pid", str(p.pid), "--rate", "200",
                               "--format", "raw", "--nonblocking",
                               "-o", str(args.profile / f"{slug}-{i}.txt")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for i, p in enumerate(gateway[3])]
    try:
        return measure()
    finally:
        for spy in spies:
            spy.send_signal(signal.SIGINT)
            spy.wait(timeout=60)


def run(args, levels: list[int], setups: dict, tmp: Path) -> None:
    from hat_core.children import stop_group
    from hat_core.inference.server import free_port

    print(f"load average at start: {os.getloadavg()}")
    backend = f"http://127.0.0.1:{free_port()}"
    procs = [_python(["--backend-port", backend.rsplit(":", 1)[1]], ROOT)]
    gateways = {}
    try:
        _wait_up(backend, procs[0], "/v1/chat/completions")
        for name, setup in setups.items():
            gateways[name] = _start_gateway(name, setup, backend, tmp, procs)
        results = {(c, path): [] for c in levels for path in ["direct", *gateways]}
        for rep in range(args.repeat):
            for c in levels:
                results[(c, "direct")].append(_measure(backend, args.requests, c, args.warm))
                for name, gateway in gateways.items():
                    def measure(url=gateway[0], c=c):
                        return _measure(url, args.requests, c, args.warm)
                    profile = rep == args.repeat - 1 and c == max(levels)
                    results[(c, name)].append(_profiled(args, name, gateway, measure)
                                              if profile else measure())
    finally:
        for gateway in gateways.values():  # a clean stop writes the queued exposures
            for proc in gateway[3]:
                proc.send_signal(signal.SIGTERM)
            for proc in gateway[3]:
                proc.wait(timeout=120)
        for proc in procs:
            stop_group(proc)
    print(f"load average at end: {os.getloadavg()}")
    stored = {name: stored_exposures(g[1], g[2]) for name, g in gateways.items()}
    report(args, levels, list(gateways), results, stored)


def report(args, levels, names, results, stored: dict) -> None:
    def med(runs, q):
        return statistics.median(_p(r, q) for r in runs)

    width = max(len(n) for n in ["direct", *names])
    print(f"medians over {args.repeat} repetitions of {args.requests} requests each "
          "(each repetition's P50/P95 in ms; ratio = gateway / direct, same run)")
    print(f"{'conc':>4} {'path':>{width}} {'P50':>8} {'P95':>8} {'added P50':>9} "
          f"{'added P95':>9} {'ratio P50':>9}  P50 of each repetition")
    for c in levels:
        d50, d95 = med(results[(c, "direct")], 50), med(results[(c, "direct")], 95)
        for path in ["direct", *names]:
            runs = results[(c, path)]
            p50, p95 = med(runs, 50), med(runs, 95)
            each = " ".join(f"{_p(r, 50):.2f}" for r in runs)
            print(f"{c:>4} {path:>{width}} {p50:>8.2f} {p95:>8.2f} {p50 - d50:>9.2f} "
                  f"{p95 - d95:>9.2f} {p50 / d50:>9.2f}  {each}")
    sent = args.repeat * len(levels) * (args.requests + args.warm)
    lost = 0
    for name in names:
        rows, failed = stored[name]
        lost += sent - rows
        print(f"exposures ({name}): {rows} stored of {sent} gateway requests, "
              f"{failed} with a failed status")
    if lost:
        raise SystemExit(f"{lost} exposure(s) lost")


if __name__ == "__main__":
    main()
