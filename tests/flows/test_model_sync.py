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
from test_gateway import ask, control_user, gateway, stored

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


def blue_green_servers(root: Path, ports: dict[str, tuple[int, int]], load_s: float):
    """One arm server per arm, each with two ports (blue-green), running the stand-in
    vLLM, which takes `load_s` to load before it listens."""
    return {arm: ArmServer(pointer_path(root, arm), [
        sys.executable, str(STAND_IN), "{model}", "--served-model-name", "{name}",
        "--port", "{port}", "--load-s", str(load_s)], ports=pair, every_s=0.2, grace_s=10,
        drain_s=1.0, say=lambda line: None) for arm, pair in ports.items()}


def version_in(answer, registry_name: str, versions: list[str]) -> str:
    """The version whose folder the stand-in that answered serves."""
    content = answer.json()["choices"][0]["message"]["content"]
    return next(f"{registry_name}/{v}" for v in versions if f"/{registry_name}/{v}/" in content)


def test_a_switch_keeps_answering_from_the_old_version_until_the_new_one_is_loaded(
        store, tracking, registry_name, tmp_path, versions):
    """Blue-green per arm: after a rollback to a version no server holds, the control
    arm's server loads it beside the one serving; every request meanwhile is answered
    (none 503) and stored with the version that answered it; then control moves."""
    v1, v2 = (f"{registry_name}/{v}" for v in versions)
    root = tmp_path / "serving-models"
    sync = model_sync(store, tracking, root)
    sync.sync_once()
    ports = {arm: (free_port(), free_port()) for arm in ("control", "treatment")}
    servers = blue_green_servers(root, ports, load_s=6.0)
    threads = [threading.Thread(target=s.run, daemon=True) for s in servers.values()]
    for t in threads:
        t.start()
    urls = [f"http://127.0.0.1:{p}" for pair in ports.values() for p in pair]
    asked, stop = [], threading.Event()
    try:
        assert until(lambda: all(s.current and s.pending is None and served_models(
            f"http://127.0.0.1:{s.current.port}") for s in servers.values()))
        with gateway(store, url_backends(urls)) as (g, client, exp):
            assert until(lambda: g.table.labels() == {"control": v1, "treatment": v2})
            control = control_user(exp)

            def load():  # each answer, and whether v1 was loading when it was asked
                while not stop.is_set():
                    loading = servers["control"].pending is not None
                    asked.append((loading, ask(client, control)))
            asking = [threading.Thread(target=load, daemon=True) for _ in range(3)]
            for t in asking:
                t.start()
            promote_slot(store, tracking, registry_name=registry_name, version=versions[1],
                         actor="olga")
            sync.sync_once()  # control -> v2: the treatment's server has it already
            assert until(lambda: servers["control"].serving.label == v2
                         and servers["control"].draining is None)
            assert until(lambda: g.table.labels()["control"] == v2)
            assert not any(v1 in served_models(u) for u in urls)  # nobody holds v1 now
            rollback_slot(store, tracking, registry_name=registry_name, actor="olga",
                          reason="wk49 regression")
            sync.sync_once()  # control -> v1, loaded beside v2 (6 s)
            assert until(lambda: servers["control"].pending is not None)  # then 6 s of it
            assert until(lambda: g.table.labels()["control"] == v1)
            assert until(lambda: servers["control"].draining is None)
            stop.set()
            for t in asking:
                t.join(30)
            after = [ask(client, control) for _ in range(5)]
            assert g.exposures.flush() == 0
    finally:
        stop.set()
        for s in servers.values():
            s.stop()
        for t in threads:
            t.join(timeout=30)
    assert sum(loading for loading, _ in asked) >= 2, "too few asked while v1 loaded"
    answers = [answer for _, answer in asked]
    assert [r.status_code for r in answers + after] == [200] * (len(answers) + len(after))
    answered = {r.headers["x-request-id"]: version_in(r, registry_name, versions)
                for r in answers + after}
    assert all(r.headers["x-hat-model-version"] == answered[r.headers["x-request-id"]]
               for r in answers + after)
    rows = stored(store, exp, len(answered))
    assert len(rows) == len(answered)
    assert {r.request_id: r.model_version for r in rows} == answered
    assert {answered[r.headers["x-request-id"]] for r in after} == {v1}
    assert servers["control"].starts == 3  # v1, v2 beside it, v1 beside that
    assert all(s.process.poll() is not None for s in servers.values())


def test_hat_gateway_workers_share_one_port_and_store_every_exposure(
        hat_env, store, registry_name, versions):
    """`hat gateway --workers 2`: two processes answer on one port (SO_REUSEPORT), each
    writes its own exposures, and a SIGTERM to the first stops both with none lost."""
    import signal

    import httpx
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route as Endpoint

    from db.experiments_repo import list_experiments
    from hat_core.children import spawn, stop_group
    from hat_core.serving.arms import completion
    from hat_core.serving.runner import serve_in_thread

    async def chat(request):
        return JSONResponse(completion((await request.json())["model"],
                                       {"role": "assistant", "content": "好的"}))
    upstream = Starlette(routes=[Endpoint("/v1/chat/completions", chat, methods=["POST"])])
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with serve_in_thread(upstream) as upstream_url:
        gateway_proc = spawn([sys.executable, "-m", "hat_cli", "gateway", "--workers", "2",
                              "--port", str(port), "--backend-url", upstream_url])
        try:
            def processes() -> set[int]:
                seen = set()
                for _ in range(20):  # a new connection each: the kernel picks a process
                    try:
                        seen.add(httpx.get(f"{url}/health", trust_env=False).json()["process"])
                    except httpx.HTTPError:
                        pass
                return seen
            assert until(lambda: len(processes()) == 2, 240), "not two processes answering"
            answers = [httpx.post(f"{url}/v1/chat/completions", trust_env=False, timeout=60,
                                  json={"messages": [{"role": "user", "content": "hi"}],
                                        "user": f"viewer-{i}"}) for i in range(40)]
            gateway_proc.send_signal(signal.SIGTERM)
            assert gateway_proc.wait(timeout=180) == 0
        finally:
            stop_group(gateway_proc)
    assert {r.status_code for r in answers} == {200}
    with store() as s:
        exp = next(e for e in list_experiments(s) if e.slot == "ab")
    assert len(stored(store, exp, 40)) == 40
