"""The latency tool's own overhead: its end-to-end times against the server's own timing.

A loopback OpenAI-compatible server streams a fixed reply (`--tokens` chunks, `--delay`
seconds apart) and records, per request, the time from reading the request to writing its
last byte. `hat_core.latency.measure.measure` replays the v1 harness requests against it at
each concurrency level; the overhead is median(client e2e) / median(server time) - 1.
Goal: under 5% at every level.

Run: .venv/bin/python benchmarks/latency_overhead.py [--requests 40] [--concurrency 1,4,8]
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from hat_core.harness.io import load_harness
from hat_core.latency.measure import harness_requests, measure
from hat_core.latency.profiles import get_profile

V1 = Path(__file__).resolve().parent.parent / "examples" / "harnesses" / "v1.yaml"


class Recorder:
    """Server-side durations, one list per concurrency level."""

    def __init__(self, tokens: int, delay: float):
        self.tokens, self.delay = tokens, delay
        self.durations: list[float] = []
        self.lock = threading.Lock()


def handler_for(rec: Recorder):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def do_POST(self) -> None:
            start = time.perf_counter()
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for _ in range(rec.tokens):
                time.sleep(rec.delay)
                self._send({"choices": [{"index": 0, "delta": {"content": "好"}}]})
            self._send({"choices": [], "usage": {"completion_tokens": rec.tokens}})
            self._write(b"data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            with rec.lock:
                rec.durations.append(time.perf_counter() - start)

        def _send(self, payload: dict) -> None:
            self._write(f"data: {json.dumps(payload, ensure_ascii=False)}\n\n".encode())

        def _write(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

    return Handler


class QuietServer(ThreadingHTTPServer):
    """Clients closing kept-alive connections at the end is normal, not an error."""

    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        pass


def run(requests: int, levels: list[int], tokens: int, delay: float) -> list[dict]:
    rec = Recorder(tokens, delay)
    server = QuietServer(("127.0.0.1", 0), handler_for(rec))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    specs = harness_requests(load_harness(V1), requests)
    rows = []
    try:
        for level in levels:
            rec.durations.clear()
            report = measure(url, "bench", specs, [level], get_profile("cpu-tiny"), warmup=0)
            client = report.levels[0].e2e.p50
            server_p50 = statistics.median(rec.durations)
            rows.append({"concurrency": level, "client_p50_s": client,
                         "server_p50_s": server_p50, "overhead": client / server_p50 - 1})
    finally:
        server.shutdown()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--concurrency", default="1,4,8")
    parser.add_argument("--tokens", type=int, default=20)
    parser.add_argument("--delay", type=float, default=0.01)
    args = parser.parse_args()
    levels = [int(x) for x in args.concurrency.split(",")]
    rows = run(args.requests, levels, args.tokens, args.delay)
    print(f"{'concurrency':>11} {'client p50 s':>13} {'server p50 s':>13} {'overhead':>9}")
    for r in rows:
        print(f"{r['concurrency']:>11} {r['client_p50_s']:>13.4f} {r['server_p50_s']:>13.4f} "
              f"{r['overhead']:>8.1%}")
    worst = max(r["overhead"] for r in rows)
    print(f"worst overhead {worst:.1%} (goal < 5%): {'met' if worst < 0.05 else 'NOT met'}")


if __name__ == "__main__":
    main()
