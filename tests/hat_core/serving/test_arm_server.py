"""The arm server on real child processes: it waits for its pointer, starts the command on
the pointer's folder, restarts it when the pointer names another version or the process
exits, keeps it through a damaged pointer, and stops it at the end."""

from __future__ import annotations

import sys
import threading
import time

import pytest

from hat_core.serving.arm_server import ArmServer, command_for
from hat_core.serving.model_sync import ArmModel, pointer_path, write_pointer

SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)", "{model}", "{name}"]


def model(version: str) -> ArmModel:
    return ArmModel("control", "hat-agent", version, f"hat-agent/{version}",
                    f"hat-agent/{version}/model")


def test_the_command_gets_the_folder_and_the_name(tmp_path):
    line = command_for(["vllm", "serve", "{model}", "--served-model-name", "{name}"],
                       model("3"), tmp_path)
    assert line == ["vllm", "serve", str(tmp_path / "hat-agent/3/model"),
                    "--served-model-name", "hat-agent/3"]
    with pytest.raises(ValueError, match="must contain \\{model\\}"):
        ArmServer(tmp_path / "control.json", ["vllm", "serve"])


def test_restarts_on_a_new_version_and_when_the_server_exits(tmp_path):
    pointer = pointer_path(tmp_path, "control")
    server = ArmServer(pointer, SLEEPER, grace_s=5, say=lambda line: None)
    assert server.step() is False and server.process is None  # no pointer yet
    write_pointer(pointer, model("1"))
    assert server.step() is True
    first = server.process
    assert first.args[-2:] == [str(tmp_path / "hat-agent/1/model"), "hat-agent/1"]
    assert server.step() is False and first.poll() is None  # same version: left alone
    write_pointer(pointer, model("2"))
    assert server.step() is True
    assert first.poll() is not None and server.process.args[-1] == "hat-agent/2"
    server.process.kill()
    server.process.wait()
    assert server.step() is True and server.starts == 3  # exited on its own: started again
    server.process.kill()
    server.process.wait()


def test_a_damaged_pointer_keeps_the_server_and_stop_ends_it(tmp_path):
    pointer = pointer_path(tmp_path, "control")
    write_pointer(pointer, model("1"))
    said = []
    server = ArmServer(pointer, SLEEPER, every_s=0.05, grace_s=5, say=said.append)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while server.process is None and time.monotonic() < deadline:
        time.sleep(0.05)
    pointer.write_text("{half a pointer")
    while not any("not an arm pointer" in line for line in said):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert server.process.poll() is None and server.starts == 1
    server.stop()
    thread.join(timeout=30)
    assert not thread.is_alive() and server.process.poll() is not None
