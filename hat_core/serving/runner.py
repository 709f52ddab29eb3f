"""Serving an ASGI app with uvicorn in a background thread (the gateway, tests, benchmarks).

    with serve_in_thread(app, port=8080) as base_url:   # port 0: a free one
        ...
    with serve_in_thread(app, port=8080, engine=Engine("asyncio", "h11", reuse_port=True)):
        ...                                             # stdlib loop; a port shared by processes

Startup waits until uvicorn listens; leaving the block asks it to exit, which lets requests
under way finish (uvicorn's graceful shutdown) and runs the app's lifespan shutdown (the
gateway closes its backends' connections there) before the thread ends. The event loop and
HTTP parser are named, never uvicorn's "auto" (which picks whatever is installed), so a
measurement says what it measured. `reuse_port` binds with SO_REUSEPORT: several processes
listen on one port and the kernel spreads the connections over them (the gateway's
`--workers`).
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

from hat_core.errors import HatError
from hat_core.inference.server import HOST, free_port

LOOPS, PARSERS = ("uvloop", "asyncio"), ("httptools", "h11")


@dataclass(frozen=True)
class Engine:
    """uvicorn's event loop and HTTP parser; the default is the faster pair (uvloop and
    httptools, measured in benchmarks/gateway_overhead.py)."""

    loop: str = "uvloop"
    http: str = "httptools"
    reuse_port: bool = False

    def __post_init__(self) -> None:
        if self.loop not in LOOPS or self.http not in PARSERS:
            raise ValueError(f"engine {self.loop}/{self.http}: the loop is one of {LOOPS}, "
                             f"the parser one of {PARSERS}")


def _socket(host: str, port: int, reuse_port: bool) -> socket.socket:
    # IPPROTO_TCP spelt out: asyncio sets TCP_NODELAY only on sockets whose proto says TCP;
    # with proto 0 each answer waited for a delayed ACK (40 ms and more on loopback)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise HatError(f"cannot listen on {host}:{port}: {exc}") from None
    sock.set_inheritable(True)
    return sock


@contextlib.contextmanager
def serve_in_thread(app, *, host: str = HOST, port: int = 0, engine: Engine = Engine(),
                    startup_timeout_s: float = 30.0) -> Iterator[str]:
    """Run `app` on `host:port` until the block ends; yields the base URL."""
    import uvicorn

    port = port or free_port()
    sock = _socket(host, port, engine.reuse_port)
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning",
                                           lifespan="auto", access_log=False,
                                           loop=engine.loop, http=engine.http))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]},
                              name=f"uvicorn-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_timeout_s
    try:
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                server.should_exit = True
                raise HatError(f"the server on {host}:{port} did not start")
            time.sleep(0.02)
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()
