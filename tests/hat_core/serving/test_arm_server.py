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


def blue_green(tmp_path, ready: set[str], **kw) -> ArmServer:
    """A server on ports 1 and 2 whose versions count as loaded once in `ready`."""
    return ArmServer(pointer_path(tmp_path, "control"), [*SLEEPER, "--port", "{port}"],
                     ports=(1, 2), grace_s=5, drain_s=kw.pop("drain_s", 0.0),
                     ready=lambda port, name: name in ready, say=lambda line: None, **kw)


def test_a_new_version_starts_beside_the_old_one_which_stops_once_it_is_loaded(tmp_path):
    ready: set[str] = set()
    server = blue_green(tmp_path, ready)
    write_pointer(server.pointer, model("1"))
    assert server.step() is True and server.current.port == 1
    old = server.process
    write_pointer(server.pointer, model("2"))
    assert server.step() is True  # the new one starts on the other port ...
    assert server.pending.port == 2 and server.pending.process.args[-3:] == [
        "hat-agent/2", "--port", "2"]
    assert server.step() is False and server.step() is False
    assert old.poll() is None and server.serving == model("1")  # ... the old one answers
    ready.add("hat-agent/2")
    assert server.step() is False and server.serving == model("2") and server.pending is None
    server.step()  # drained (drain_s=0): the old one is stopped
    assert old.poll() is not None and server.process.poll() is None
    write_pointer(server.pointer, model("3"))
    assert server.step() is True and server.pending.port == 1  # blue, green, blue
    write_pointer(server.pointer, model("2"))  # back before 3 loaded: 3 is dropped
    loading = server.pending.process
    assert server.step() is False and server.pending is None and loading.poll() is not None
    server.stop()
    server.run()  # stop() first: run stops what is left
    assert server.process.poll() is not None and server.starts == 3


def test_the_old_one_keeps_running_while_it_drains(tmp_path):
    ready = {"hat-agent/2"}
    server = blue_green(tmp_path, ready, drain_s=60)
    write_pointer(server.pointer, model("1"))
    server.step()
    old = server.process
    write_pointer(server.pointer, model("2"))
    server.step()
    server.step()
    assert server.serving == model("2") and server.draining[0].process is old
    assert server.step() is False and old.poll() is None  # still draining
    write_pointer(server.pointer, model("3"))
    assert server.step() is True and old.poll() is not None  # its port is needed: stopped
    server.stop()
    server.run()


def test_when_two_do_not_fit_the_old_one_stops_first(tmp_path):
    """The new server exits while loading (a GPU too small for two copies): stop the old
    one and start the new one alone on the port it was given."""
    server = blue_green(tmp_path, set())
    write_pointer(server.pointer, model("1"))
    server.step()
    old = server.process
    write_pointer(server.pointer, model("2"))
    server.step()
    server.pending.process.kill()
    server.pending.process.wait()
    assert server.step() is True
    assert old.poll() is not None and server.serving == model("2")
    assert server.current.port == 2 and server.pending is None and server.starts == 3
    server.stop()
    server.run()


def test_port_placeholder_and_ports_go_together(tmp_path):
    with pytest.raises(ValueError, match="two ports"):
        ArmServer(tmp_path / "control.json", [*SLEEPER, "{port}"])
    with pytest.raises(ValueError, match="two ports"):
        ArmServer(tmp_path / "control.json", SLEEPER, ports=(1, 2))
