"""One arm's model server, restarted on the version its pointer names (production: vLLM).

    python -m hat_core.serving.arm_server --pointer /serving/control.json -- \\
        vllm serve {model} --served-model-name {name} --host 0.0.0.0 --port 8000

Waits for the pointer (`hat_core.serving.model_sync`), starts the command with `{model}`
(the pointer's folder) and `{name}` (`NAME/VERSION`) filled in, and polls the pointer every
`--every` seconds: when it names another version, the server is stopped (SIGTERM to its
process group, SIGKILL after `--grace` s) and started on the new folder. The gateway moves
an arm to a version only once a server lists it under `/v1/models`, so requests never ask
a server for a model it does not hold. A server that exits on its own is started again.
Standard library only: it runs in the GPU image, which installs hat-ops without its
dependencies.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from hat_core.children import spawn, stop_group
from hat_core.errors import HatError
from hat_core.serving.model_sync import ArmModel, read_pointer


def command_for(template: list[str], model: ArmModel, pointer_dir: Path) -> list[str]:
    """The server's command line with `{model}` and `{name}` filled in."""
    folder = str(model.folder(pointer_dir))
    return [part.replace("{model}", folder).replace("{name}", model.label)
            for part in template]


class ArmServer:
    """Keeps `template` running on the pointer's version (see the module)."""

    def __init__(self, pointer: Path, template: list[str], *, every_s: float = 2.0,
                 grace_s: float = 30.0, say: Callable[[str], None] = print):
        if not any("{model}" in part for part in template):
            raise ValueError(f"the server command must contain {{model}}: {template}")
        self.pointer, self.template = Path(pointer), template
        self.every_s, self.grace_s, self._say = every_s, grace_s, say
        self.serving: ArmModel | None = None
        self.process: subprocess.Popen | None = None
        self.starts = 0
        self._stop = threading.Event()

    def step(self) -> bool:
        """Read the pointer once; (re)start the server when it names another version or
        the server has exited. True when it started one."""
        wanted = read_pointer(self.pointer)
        if wanted is None:
            return False
        alive = self.process is not None and self.process.poll() is None
        if alive and wanted == self.serving:
            return False
        if self.process is not None:
            self._say(f"arm server: stopping {self.serving.label if self.serving else '?'}")
            stop_group(self.process, grace=self.grace_s)
        command = command_for(self.template, wanted, self.pointer.parent)
        self._say(f"arm server: serving {wanted.label}: {' '.join(command)}")
        self.process, self.serving = spawn(command), wanted
        self.starts += 1
        return True

    def run(self) -> None:
        """`step` every `every_s` seconds until `stop` (a damaged pointer is reported and
        the server kept); then the server is stopped."""
        try:
            while True:
                try:
                    self.step()
                except HatError as exc:  # a damaged pointer: keep what runs, read it again
                    self._say(f"arm server: {exc}")
                if self._stop.wait(self.every_s):
                    return
        finally:
            if self.process is not None:
                stop_group(self.process, grace=self.grace_s)

    def stop(self) -> None:
        self._stop.set()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pointer", type=Path, required=True, help="the arm's pointer file")
    parser.add_argument("--every", type=float, default=2.0, help="seconds between reads")
    parser.add_argument("--grace", type=float, default=30.0,
                        help="seconds a stopping server gets before SIGKILL")
    parser.add_argument("command", nargs=argparse.REMAINDER,
                        help="-- the server command, with {model} and {name}")
    args = parser.parse_args(argv)
    template = args.command[1:] if args.command[:1] == ["--"] else args.command
    try:
        server = ArmServer(args.pointer, template, every_s=args.every, grace_s=args.grace,
                           say=lambda line: print(line, flush=True))
    except ValueError as exc:
        parser.error(str(exc))
    signal.signal(signal.SIGTERM, lambda *_: server.stop())
    server.run()


if __name__ == "__main__":
    main(sys.argv[1:])
