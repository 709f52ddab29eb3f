"""Serving an ASGI app with uvicorn in a background thread (the gateway, tests, benchmarks).

    with serve_in_thread(app, port=8080) as base_url:   # port 0: a free one
        ...

Startup waits until uvicorn listens; leaving the block asks it to exit, which lets requests
under way finish (uvicorn's graceful shutdown) and runs the app's lifespan shutdown (the
gateway closes its backends' connections there) before the thread ends.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

from hat_core.errors import HatError
from hat_core.inference.server import HOST, free_port


@contextlib.contextmanager
def serve_in_thread(app, *, host: str = HOST, port: int = 0,
                    startup_timeout_s: float = 30.0) -> Iterator[str]:
    """Run `app` on `host:port` until the block ends; yields the base URL."""
    import uvicorn

    port = port or free_port()
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning",
                                           lifespan="auto", access_log=False))
    thread = threading.Thread(target=server.run, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_timeout_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise HatError(f"the server on {host}:{port} did not start (port taken?)")
        time.sleep(0.02)
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
