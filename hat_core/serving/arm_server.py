"""One arm's model server, moved to the version its pointer names (production: vLLM).

    python -m hat_core.serving.arm_server --pointer /serving/control.json --ports 8000,8001 \\
        -- vllm serve {model} --served-model-name {name} --host 0.0.0.0 --port {port}

Waits for the pointer (`hat_core.serving.model_sync`), starts the command with `{model}`
(the pointer's folder), `{name}` (`NAME/VERSION`) and `{port}` filled in, and reads the
pointer every `--every` seconds. When it names another version (blue-green):

1. the new server starts on the other port, beside the one serving (which keeps answering);
2. once the new one lists `NAME/VERSION` under `/v1/models` (loaded), the old one is kept
   `--drain` seconds more, for the gateway to move the arm (it moves an arm to a version
   only once a server lists it) and for requests under way to finish; then it is stopped
   (SIGTERM to its process group, SIGKILL after `--grace` s);
3. if the new server exits before it is loaded (the GPU cannot hold two copies), the old one
   is stopped and the new one started again alone: the arm has no server while it loads
   (the gateway answers 503, each an exposure), as with `--no-overlap` or a command with no
   `{port}`, where the old server is always stopped first.

A server that exits on its own is started again. Standard library only: it runs in the GPU
image, which installs hat-ops without its dependencies.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hat_core.children import spawn, stop_group
from hat_core.errors import HatError
from hat_core.serving.model_sync import ArmModel, read_pointer


def command_for(template: list[str], model: ArmModel, pointer_dir: Path,
                port: int | None = None) -> list[str]:
    """The server's command line with `{model}`, `{name}` and `{port}` filled in."""
    folder = str(model.folder(pointer_dir))
    return [part.replace("{model}", folder).replace("{name}", model.label)
            .replace("{port}", str(port)) for part in template]


def lists_model(port: int, name: str, host: str = "127.0.0.1", timeout_s: float = 2.0) -> bool:
    """Whether the server on `port` answers `/v1/models` with `name` among its models."""
    try:
        with urllib.request.urlopen(f"http://{host}:{port}/v1/models",
                                    timeout=timeout_s) as answer:
            return name in {m.get("id") for m in json.load(answer).get("data", [])}
    except (OSError, ValueError, AttributeError):  # refused, timed out, not JSON
        return False


@dataclass
class Running:
    """A server process, the version it serves and its port."""

    model: ArmModel
    process: subprocess.Popen
    port: int | None

    def alive(self) -> bool:
        return self.process.poll() is None


class ArmServer:
    """Keeps `template` running on the pointer's version (see the module)."""

    def __init__(self, pointer: Path, template: list[str], *, ports: tuple[int, ...] = (),
                 every_s: float = 2.0, grace_s: float = 30.0, drain_s: float = 15.0,
                 ready: Callable[[int, str], bool] = lists_model,
                 say: Callable[[str], None] = print):
        if not any("{model}" in part for part in template):
            raise ValueError(f"the server command must contain {{model}}: {template}")
        with_port = any("{port}" in part for part in template)
        if with_port != (len(ports) == 2):
            raise ValueError("a command with {port} needs two ports (blue and green), "
                             f"one without none: {template}, ports {list(ports)}")
        self.pointer, self.template, self.ports = Path(pointer), template, tuple(ports)
        self.every_s, self.grace_s, self.drain_s = every_s, grace_s, drain_s
        self._ready, self._say = ready, say
        self.current: Running | None = None   # answering
        self.pending: Running | None = None   # loading the next version beside it
        self.draining: tuple[Running, float] | None = None  # replaced; stopped at the time
        self.starts = 0
        self._stop = threading.Event()

    @property
    def serving(self) -> ArmModel | None:
        return self.current.model if self.current else None

    @property
    def process(self) -> subprocess.Popen | None:
        return self.current.process if self.current else None

    def _start(self, model: ArmModel, port: int | None) -> Running:
        command = command_for(self.template, model, self.pointer.parent, port)
        self._say(f"arm server: starting {model.label}: {' '.join(command)}")
        self.starts += 1
        return Running(model, spawn(command), port)

    def _end(self, running: Running | None) -> None:
        if running is not None:
            self._say(f"arm server: stopping {running.model.label}")
            stop_group(running.process, grace=self.grace_s)

    def _other_port(self) -> int | None:
        return next(p for p in self.ports if p != self.current.port) if self.ports else None

    def step(self) -> bool:
        """Read the pointer once and move one stage (see the module). True when it started
        a server."""
        self._drained()
        wanted = read_pointer(self.pointer)
        if wanted is None:
            return False
        if self.current is None or not self.current.alive():
            return self._replace_current(wanted)
        if wanted == self.current.model:
            self._end(self.pending)
            self.pending = None
            return False
        if not self.ports:  # no second port: stop first (the arm has no server meanwhile)
            self._end(self.current)
            self.current = None
            return self._replace_current(wanted)
        return self._advance(wanted)

    def _replace_current(self, wanted: ArmModel) -> bool:
        port = self.current.port if self.current else (self.ports[0] if self.ports else None)
        if self.pending is not None and self.pending.model == wanted:
            self.current, self.pending = self.pending, None  # it was loading: keep it
            return False
        self._end(self.pending)
        self.pending = None
        self.current = self._start(wanted, port)
        return True

    def _advance(self, wanted: ArmModel) -> bool:
        if self.pending is not None and self.pending.model != wanted:
            self._end(self.pending)  # the pointer moved on while it loaded
            self.pending = None
        if self.pending is None:
            self._end_draining()  # its port is the one the new server needs
            self.pending = self._start(wanted, self._other_port())
            return True
        if not self.pending.alive():  # no room for two: stop the old one, start alone
            self._say(f"arm server: {wanted.label} exited while {self.current.model.label} "
                      "ran beside it; stopping the old one first")
            port, self.pending = self.pending.port, None
            self._end(self.current)
            self.current = self._start(wanted, port)
            return True
        if self._ready(self.pending.port, wanted.label):
            self._say(f"arm server: {wanted.label} is loaded; {self.current.model.label} "
                      f"stops in {self.drain_s:g} s")
            self.draining = (self.current, time.monotonic() + self.drain_s)
            self.current, self.pending = self.pending, None
        return False

    def _drained(self) -> None:
        if self.draining is not None and time.monotonic() >= self.draining[1]:
            self._end_draining()

    def _end_draining(self) -> None:
        if self.draining is not None:
            self._end(self.draining[0])
            self.draining = None

    def run(self) -> None:
        """`step` every `every_s` seconds until `stop` (a damaged pointer is reported and
        the server kept); then every server is stopped."""
        try:
            while True:
                try:
                    self.step()
                except HatError as exc:  # a damaged pointer: keep what runs, read it again
                    self._say(f"arm server: {exc}")
                if self._stop.wait(self.every_s):
                    return
        finally:
            self._end_draining()
            self._end(self.pending)
            self._end(self.current)

    def stop(self) -> None:
        self._stop.set()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pointer", type=Path, required=True, help="the arm's pointer file")
    parser.add_argument("--ports", default="",
                        help="two ports, A,B: the new version starts on the free one beside "
                             "the old (blue-green); the command then has {port}")
    parser.add_argument("--every", type=float, default=2.0, help="seconds between reads")
    parser.add_argument("--drain", type=float, default=15.0,
                        help="seconds the old server keeps running once the new one is "
                             "loaded (more than the gateway's --follow-every)")
    parser.add_argument("--grace", type=float, default=30.0,
                        help="seconds a stopping server gets before SIGKILL")
    parser.add_argument("command", nargs=argparse.REMAINDER,
                        help="-- the server command, with {model}, {name} and {port}")
    args = parser.parse_args(argv)
    template = args.command[1:] if args.command[:1] == ["--"] else args.command
    try:
        ports = tuple(int(p) for p in args.ports.split(",") if p.strip())
        server = ArmServer(args.pointer, template, ports=ports, every_s=args.every,
                           grace_s=args.grace, drain_s=args.drain,
                           say=lambda line: print(line, flush=True))
    except ValueError as exc:
        parser.error(str(exc))
    signal.signal(signal.SIGTERM, lambda *_: server.stop())
    server.run()


if __name__ == "__main__":
    main(sys.argv[1:])
