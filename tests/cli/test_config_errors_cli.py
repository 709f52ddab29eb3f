"""A broken config file, of every kind the CLI reads, exits 2 at once: the report names the
file and the reason, there is no traceback, and nothing was started or created first (no
Prefect environment, work folder, output or model directory).

Kinds: retrain (`hat retrain --config`), the gates file a retrain config names, repro
(`hat repro --config`), training (`hat train sft --config`), data (`hat data build --config`)
and HSA (`hat augment --config`); cases: malformed YAML, a list, an empty file, non-UTF-8
bytes, 200 levels of nesting and a "billion laughs" alias bomb of a few hundred bytes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hat_cli import retrain_cmd
from hat_cli.main import app

ROOT = Path(__file__).resolve().parents[2]
V1 = str(ROOT / "examples" / "harnesses" / "v1.yaml")


def _bomb() -> str:
    names = "abcdefghi"
    lines = [f'{names[0]}: &{names[0]} ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, name in zip(names, names[1:], strict=False):
        lines.append(f"{name}: &{name} [{', '.join(['*' + prev] * 8)}]")
    return "\n".join(lines) + "\n"


CASES = {
    "malformed": ("seed: 1\nlora: {r: 4\nname: x\n", "not valid YAML"),
    "list": ("- seed: 1\n- seed: 2\n", "must be a mapping"),
    "empty": ("", "the document is empty"),
    "not_utf8": (b"seed: 1\nname: caf\xe9\n", "not UTF-8"),
    "deep": ("a: " + "[" * 200 + "]" * 200 + "\n", "nesting is deeper than"),
    "alias_bomb": (_bomb(), "expands to over"),
}


def _retrain(tmp: Path, bad: Path) -> tuple[list[str], Path]:
    return ["retrain", "--harness-version", "1", "--config", str(bad)], tmp / "none"


def _gates(tmp: Path, bad: Path) -> tuple[list[str], Path]:
    config = tmp / "retrain.yaml"
    config.write_text(f"registry_name: hat-agent\ngates: {bad.name}\n", encoding="utf-8")
    return ["retrain", "--harness-version", "1", "--config", str(config)], tmp / "none"


def _repro(tmp: Path, bad: Path) -> tuple[list[str], Path]:
    return ["repro", "--config", str(bad), "--work", str(tmp / "work")], tmp / "work"


def _train(tmp: Path, bad: Path) -> tuple[list[str], Path]:
    return ["train", "sft", "--config", str(bad), "--output-dir", str(tmp / "out")], tmp / "out"


def _data(tmp: Path, bad: Path) -> tuple[list[str], Path]:
    return ["data", "build", "--harness", V1, "--config", str(bad), "--out",
            str(tmp / "out"), "--quiet"], tmp / "out"


def _hsa(tmp: Path, bad: Path) -> tuple[list[str], Path]:
    return ["augment", V1, "--config", str(bad), "--out", str(tmp / "out")], tmp / "out"


KINDS = {"retrain": _retrain, "gates": _gates, "repro": _repro, "training": _train,
         "data": _data, "hsa": _hsa}


@pytest.fixture
def no_prefect(monkeypatch, tmp_path):
    """`hat retrain` must not touch Prefect's environment before its config is valid."""
    def refuse(settings) -> None:
        raise AssertionError("Prefect was prepared before the config was validated")

    monkeypatch.setattr(retrain_cmd, "prepare_prefect_env", refuse)
    monkeypatch.setenv("HAT_HOME", str(tmp_path / "home"))


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_broken_config_exits_2_naming_the_file_and_the_reason(kind, case, tmp_path,
                                                                 no_prefect):
    text, reason = CASES[case]
    bad = tmp_path / f"{kind}_{case}.yaml"
    bad.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    args, must_not_exist = KINDS[kind](tmp_path, bad)
    started = time.monotonic()
    result = CliRunner().invoke(app, args)
    elapsed = time.monotonic() - started
    assert result.exit_code == 2, (result.output, result.exception)
    assert str(bad) in result.output and reason in result.output, result.output
    assert "Traceback" not in result.output
    assert elapsed < 10, f"took {elapsed:.1f} s"
    assert not must_not_exist.exists()
    assert not (tmp_path / "home").exists()


def test_hat_retrain_refuses_a_broken_config_without_importing_prefect(tmp_path):
    """The real command line: exit 2 with the report, and Prefect was never imported (it used
    to start a temporary server, then print a Prefect traceback)."""
    bad = tmp_path / "retrain.yaml"
    bad.write_text(_bomb(), encoding="utf-8")
    probe = ("import atexit, sys; atexit.register(lambda: print('prefect imported' if "
             "'prefect' in sys.modules else 'prefect not imported', file=sys.stderr)); "
             "from hat_cli.main import app; app()")
    env = {**os.environ, "HAT_HOME": str(tmp_path / "home"),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", probe, "retrain", "--harness-version", "1",
                           "--config", str(bad)], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    assert f"{bad}: the document expands to over" in done.stderr
    assert "Traceback" not in done.stderr
    assert "prefect not imported" in done.stderr
