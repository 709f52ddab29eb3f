"""Production serving on loopback: the model sync downloads each arm's version from the real
registry to a serving folder and points the arm at it; one server per arm
(`hat_core.serving.arm_server`, running a stand-in for `vllm serve`) restarts on the new
version; the gateway forwards each arm to the server that lists its version. A promotion
and a rollback reach the servers and the gateway without restarting either."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

import pytest
from flow_helpers import add_role, registered_version
from test_gateway import ask, gateway

from db.promotion import promote_slot, rollback_slot
from db.serving_slot import slot_targets
from hat_cli.gateway_cmd import url_backends
from hat_core.errors import HatError
from hat_core.inference.server import free_port
from hat_core.serving.arm_server import ArmServer
from hat_core.serving.arms import served_models
from hat_core.serving.model_sync import ModelSync, pointer_path, read_pointer

pytestmark = pytest.mark.timeout(600)
STAND_IN = Path(__file__).with_name("stand_in_vllm.py")


@pytest.fixture
def versions(store, tracking, registry_name, tmp_path):
    """v1 the champion, v2 the challenger: folders with a config.json each."""
    add_role(store, "olga", "operator")
    labels = []
    for i in (1, 2):
        (tmp_path / f"model-{i}").mkdir()
        (tmp_path / f"model-{i}" / "config.json").write_text(json.dumps({"hat_test": i}))
        labels.append(registered_version(store, tracking, registry_name, tmp_path, i,
                                         passed=True))
    promote_slot(store, tracking, registry_name=registry_name, version=labels[0],
                 actor="olga")
    return labels


def model_sync(store, tracking, root: Path) -> ModelSync:
    def read():
        with store() as s:
            return slot_targets(s)
    return ModelSync(root, read=read, keep=1, download=lambda t, dst: tracking.download(
        t.registry_name, t.version, dst))


def until(check, timeout_s: float = 60.0):
    deadline = time.monotonic() + timeout_s
    while not (result := check()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return result


def answered_by(client) -> set[str]:
    """The ports of the stand-in servers that answered ten users."""
    return {ask(client, f"viewer-{i}").json()["choices"][0]["message"]["content"]
            .rsplit(" on ", 1)[1] for i in range(10)}


def test_the_sync_points_each_arm_at_its_downloaded_version(store, tracking, registry_name,
                                                            tmp_path, versions):
    root = tmp_path / "serving-models"
    sync = model_sync(store, tracking, root)
    changed = sync.sync_once()
    assert {arm: m.label for arm, m in changed.items()} == {
        "control": f"{registry_name}/{versions[0]}",
        "treatment": f"{registry_name}/{versions[1]}"}
    for arm, model in changed.items():
        assert read_pointer(pointer_path(root, arm)) == model
        folder = model.folder(root)
        assert json.loads((folder / "config.json").read_text())["hat_test"] == int(
            model.version) - int(versions[0]) + 1
    assert sync.sync_once() == {}  # nothing moved: nothing downloaded, no pointer written
    (root / "control.json").write_text("{not json")
    with pytest.raises(HatError, match="control.json: not an arm pointer"):
        sync.sync_once()


def test_promotion_and_rollback_reach_the_per_arm_servers_and_the_gateway(
        store, tracking, registry_name, tmp_path, versions):
    v1, v2 = (f"{registry_name}/{v}" for v in versions)
    root = tmp_path / "serving-models"
    sync = model_sync(store, tracking, root)
    sync.sync_once()
    ports = {"control": free_port(), "treatment": free_port()}
    urls = {arm: f"http://127.0.0.1:{port}" for arm, port in ports.items()}
    servers = {arm: ArmServer(pointer_path(root, arm), [
        sys.executable, str(STAND_IN), "{model}", "--served-model-name", "{name}",
        "--port", str(port)], every_s=0.2, grace_s=10, say=lambda line: None)
        for arm, port in ports.items()}
    threads = [threading.Thread(target=s.run, daemon=True) for s in servers.values()]
    for t in threads:
        t.start()
    try:
        assert until(lambda: served_models(urls["control"]) == {v1}
                     and served_models(urls["treatment"]) == {v2})
        with gateway(store, url_backends(list(urls.values()))) as (g, client, exp):
            answers = [ask(client, f"viewer-{i}") for i in range(20)]
            assert {r.status_code for r in answers} == {200}
            assert {r.headers["x-hat-arm"]: r.headers["x-hat-model-version"]
                    for r in answers} == {"control": v1, "treatment": v2}
            assert all(f"/{r.json()['model'].rsplit('/', 1)[1]}/" in
                       r.json()["choices"][0]["message"]["content"] for r in answers)

            promote_slot(store, tracking, registry_name=registry_name, version=versions[1],
                         actor="olga")
            assert set(sync.sync_once()) == {"control"}  # the treatment arm already has v2
            assert until(lambda: served_models(urls["control"]) == {v2})
            assert until(lambda: g.table.labels() == {"control": v2, "treatment": v2})
            assert servers["control"].starts == 2 and servers["treatment"].starts == 1
            assert until(lambda: answered_by(client) == {str(p) for p in ports.values()})

            rollback_slot(store, tracking, registry_name=registry_name, actor="olga",
                          reason="wk49 regression")
            assert set(sync.sync_once()) >= {"control"}
            assert until(lambda: served_models(urls["control"]) == {v1})
            assert until(lambda: g.table.labels()["control"] == v1)
            after = [ask(client, f"viewer-{i}") for i in range(20)]
            assert g.exposures.flush() == 0
        assert {r.headers["x-hat-model-version"] for r in after
                if r.headers["x-hat-arm"] == "control"} == {v1}
        assert all(r.status_code == 200 for r in after)
        assert sorted(p.name for p in (root / registry_name).iterdir() if p.is_dir()) == \
            sorted(versions)  # both kept: pointed at, or the newest other (keep=1)
    finally:
        for s in servers.values():
            s.stop()
        for t in threads:
            t.join(timeout=30)
    assert all(s.process.poll() is not None for s in servers.values())


def test_hat_model_sync_once_from_the_settings(hat_env, store, registry_name, versions):
    from typer.testing import CliRunner

    from hat_cli.main import app

    first = CliRunner().invoke(app, ["model-sync", "--once"])
    again = CliRunner().invoke(app, ["model-sync", "--once"])
    assert first.exit_code == 0, first.output
    assert "2 arm(s) changed: ['control', 'treatment']" in first.output
    assert "0 arm(s) changed" in again.output
    pointer = read_pointer(pointer_path(hat_env / "serving-models", "control"))
    assert pointer.label == f"{registry_name}/{versions[0]}"
    assert (pointer.folder(hat_env / "serving-models") / "config.json").is_file()
