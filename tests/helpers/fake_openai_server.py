"""A tiny OpenAI-compatible HTTP server on loopback for client tests (no model behind it).

`/v1/chat/completions` streams `tokens` content chunks `delay` seconds apart (SSE, with a
final usage chunk and `[DONE]`) or answers non-streaming with `reply(body)`; the first
`fail_first` requests get HTTP 500. It records every request body and the peak number of
requests in flight.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class FakeState:
    tokens: int = 5
    delay: float = 0.01
    fail_first: int = 0
    reply: Callable[[dict], str] = lambda body: "好的"
    bodies: list = field(default_factory=list)
    in_flight: int = 0
    peak: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def _chunk(delta: dict, **extra) -> bytes:
    data = {"id": "x", "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta}], **extra}
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state: FakeState

    def log_message(self, *args) -> None:  # keep test output quiet
        pass

    def _json(self, status: int, payload: dict) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path == "/v1/models":
            self._json(200, {"data": [{"id": "fake-model"}]})
        else:
            self._json(200, {"status": "ok"})

    def _enter(self, body: dict) -> int:
        with self.state.lock:
            self.state.bodies.append(body)
            self.state.in_flight += 1
            self.state.peak = max(self.state.peak, self.state.in_flight)
            return len(self.state.bodies)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        number = self._enter(body)
        try:
            if number <= self.state.fail_first:
                self._json(500, {"error": "boom"})
            elif body.get("stream"):
                self._stream()
            else:
                message = {"role": "assistant", "content": self.state.reply(body)}
                self._json(200, {"choices": [{"index": 0, "message": message}]})
        finally:
            with self.state.lock:
                self.state.in_flight -= 1

    def _stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(_chunk({"role": "assistant"}))
        for i in range(self.state.tokens):
            time.sleep(self.state.delay)
            self.wfile.write(_chunk({"content": f"字{i}"}))
            self.wfile.flush()
        self.wfile.write(_chunk({}, usage={"completion_tokens": self.state.tokens}))
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


@contextmanager
def fake_server(**settings) -> Iterator[tuple[str, FakeState]]:
    """Serve on 127.0.0.1 and a free port; yields (base URL, state)."""
    state = FakeState(**settings)
    handler = type("Handler", (_Handler,), {"state": state})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", state
    finally:
        server.shutdown()
        server.server_close()
