"""The arms' model folders on a writable volume, kept in step with the A/B slot.

    sync = ModelSync(root, read=lambda: slot_targets(session),          # what each arm serves
                     download=lambda t, dst: registry.download(t.registry_name, t.version, dst))
    sync.sync_once()      # {"control": ArmModel(...)} for the arms that changed
    sync.run(every_s=5)   # until stop()

Production serving (docker compose, `gpu` profile) runs one vLLM server per arm. After a
promotion or rollback the slot names a new version for an arm; `sync_once` downloads that
version from the MLflow registry (the version the `champion` / `challenger` alias points
at) to `ROOT/NAME/VERSION/`, then replaces the arm's pointer file `ROOT/ARM.json` in one
rename. The arm's server (`hat_core.serving.arm_server`) watches its pointer and restarts
vLLM on the new folder, served under the name `NAME/VERSION`; the gateway moves an arm to a
version once a server lists it. Folders no pointer names are removed, except the newest
`keep` others (a rollback then needs no download). `run` touches `ROOT/.alive` after each
pass that succeeded, for a health check.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from hat_core.errors import HatError
from hat_core.serving.arms import ArmTarget
from hat_core.serving.switch import effective_targets

Download = Callable[[ArmTarget, Path], Path]
HEARTBEAT = ".alive"  # touched after every pass that succeeded (the container's health check)


@dataclass(frozen=True)
class ArmModel:
    """An arm's pointer: the version it serves, under which name, from which folder
    (`model`, relative to the pointer's directory, so every container can mount it anywhere)."""

    arm: str
    registry_name: str
    version: str
    label: str
    model: str

    def folder(self, pointer_dir: Path) -> Path:
        return pointer_dir / self.model


def pointer_path(root: Path, arm: str) -> Path:
    return root / f"{arm}.json"


def read_pointer(path: Path) -> ArmModel | None:
    """The arm's pointer file, or None while there is none; a damaged one raises `HatError`
    naming the file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return ArmModel(**data)
    except FileNotFoundError:
        return None
    except (ValueError, TypeError) as exc:
        raise HatError(f"{path}: not an arm pointer ({exc})") from None


def write_pointer(path: Path, model: ArmModel) -> None:
    """Replace the pointer in one rename: a reader sees the old or the new one, never half."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(asdict(model), indent=1), encoding="utf-8")
    os.replace(tmp, path)


class ModelSync:
    """Downloads each arm's version and points the arm at it (see the module)."""

    def __init__(self, root: Path, *, read: Callable[[], Mapping[str, ArmTarget | None]],
                 download: Download, keep: int = 2,
                 on_error: Callable[[Exception], None] | None = None,
                 say: Callable[[str], None] = lambda line: None):
        self.root, self._read, self._download, self.keep = Path(root), read, download, keep
        self._on_error = on_error or (lambda exc: None)
        self._say = say
        self._stop = threading.Event()

    def _folder(self, target: ArmTarget) -> Path:
        return self.root / target.registry_name / target.version

    def _fetch(self, target: ArmTarget) -> Path:
        """The version's model folder under ROOT (downloaded once; a half download is
        removed and tried again next time)."""
        dst = self._folder(target)
        done = dst.with_name(f"{dst.name}.complete")
        if done.is_file():
            return self.root / done.read_text(encoding="utf-8")
        shutil.rmtree(dst, ignore_errors=True)
        folder = Path(self._download(target, dst)).resolve()
        done.write_text(str(folder.relative_to(self.root.resolve())), encoding="utf-8")
        return folder

    def sync_once(self) -> dict[str, ArmModel]:
        """Point every arm whose version changed at its downloaded folder; the arms changed."""
        self.root.mkdir(parents=True, exist_ok=True)
        changed = {}
        for arm, target in effective_targets(self._read()).items():
            path = pointer_path(self.root, arm)
            current = read_pointer(path)
            if current and (current.registry_name, current.version) == (
                    target.registry_name, target.version):
                continue
            folder = self._fetch(target)
            model = ArmModel(arm, target.registry_name, target.version, target.label,
                             str(folder.relative_to(self.root.resolve())))
            write_pointer(path, model)
            self._say(f"model sync: arm {arm} now {target.label} ({folder})")
            changed[arm] = model
        if changed:
            self._prune()
        return changed

    def _prune(self) -> None:
        pointed = {(p.registry_name, p.version) for p in map(read_pointer,
                                                            self.root.glob("*.json")) if p}
        for name_dir in (d for d in self.root.iterdir() if d.is_dir()):
            others = sorted((d for d in name_dir.iterdir() if d.is_dir()
                             and (name_dir.name, d.name) not in pointed),
                            key=lambda d: d.stat().st_mtime, reverse=True)
            for old in others[self.keep:]:
                old.with_name(f"{old.name}.complete").unlink(missing_ok=True)
                shutil.rmtree(old, ignore_errors=True)

    def run(self, every_s: float = 5.0) -> None:
        """`sync_once` every `every_s` seconds until `stop`; a failure (store, registry or
        disk) is reported and tried again, the pointers staying as they were."""
        while True:
            try:
                self.sync_once()
                (self.root / HEARTBEAT).touch()
            except Exception as exc:  # noqa: BLE001  (keep the arms as they are, retry)
                self._on_error(exc)
            if self._stop.wait(every_s):
                return

    def stop(self) -> None:
        self._stop.set()
