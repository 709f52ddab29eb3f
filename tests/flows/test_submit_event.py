"""`hat harness submit` and the console's submit page emit the harness-change event after the
commit (real Prefect test harness, the real deployment trigger): one submit gives exactly one
event and one triggered retrain run; with the Prefect API down the version is stored, the user
gets a warning and the outbox row waits for the reconciler."""

from __future__ import annotations

import socket
import time
import uuid
from pathlib import Path

import pytest
import typer
from flow_helpers import V1, add_role
from typer.testing import CliRunner

from db.outbox_repo import list_outbox_events
from flows.serve import retrain_deployment
from hat_core.events import resource_id
from hat_core.harness.io import dump_harness, load_harness

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def deployment(prefect_harness):
    return retrain_deployment().apply()


@pytest.fixture
def api_url(prefect_harness) -> str:
    from prefect.settings import PREFECT_API_URL

    return PREFECT_API_URL.value()


def harness_text(line: str) -> str:
    """v1 as a new harness line of this test only (the Prefect API is shared)."""
    return dump_harness(load_harness(V1).model_copy(update={"harness": line}), "yaml")


def submit_cli(store, tmp_path: Path, line: str):
    """`hat harness submit` of `line` v1 by the operator `ann` (proven by her password)."""
    from db.users_repo import get_user
    from hat_cli import store_cmd

    with store() as s:
        missing = get_user(s, name="ann") is None
    if missing:  # after the read session ends (a SQLite transaction holds the write lock)
        add_role(store, "ann", "operator")
    app = typer.Typer()
    app.command("submit")(store_cmd.submit)
    path = tmp_path / f"{line}.yaml"
    path.write_text(harness_text(line), encoding="utf-8")
    return CliRunner().invoke(app, [str(path), "--author", "ann", "--note", "test",
                                    "--password-stdin"], input="correct horse\n")


def events_of(line: str, number: int, expect: int, wait_s: float = 30) -> list:
    """The harness-change events of one version (waits up to `wait_s` for `expect` of them)."""
    from prefect.client.orchestration import get_client
    from prefect.events.filters import EventFilter, EventNameFilter, EventResourceFilter

    deadline = time.monotonic() + wait_s
    while True:
        query = EventFilter(event=EventNameFilter(name=["harness.version.created"]),
                            resource=EventResourceFilter(id=[resource_id(line, number)]))
        with get_client(sync_client=True) as client:
            found = client.read_events(filter=query, limit=50).events
        if len(found) >= expect or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


def triggered_runs(deployment_id, line: str, wait_s: float = 60) -> list:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId

    deadline = time.monotonic() + wait_s
    while True:
        with get_client(sync_client=True) as client:
            runs = client.read_flow_runs(
                deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[deployment_id])))
        mine = [r for r in runs if r.parameters.get("line") == line]
        if mine or time.monotonic() > deadline:
            return mine
        time.sleep(0.5)


def test_cli_submit_emits_one_event_and_one_triggered_run(deployment, api_url, store, hat_env,
                                                          tmp_path, monkeypatch):
    monkeypatch.setenv("HAT_PREFECT_API_URL", api_url)
    line = f"cli-{uuid.uuid4().hex[:8]}"
    out = submit_cli(store, tmp_path, line)
    assert out.exit_code == 0, out.output
    assert "Emitted harness.version.created" in out.output
    assert submit_cli(store, tmp_path, line).exit_code == 0  # identical content: no new event
    (event,) = events_of(line, 1, expect=1)
    assert event.payload == {"line": line, "number": 1}
    assert event.resource["hat.emitter"] == "cli"
    (run,) = triggered_runs(deployment, line)
    assert str(run.parameters["harness_version"]) == "1"
    time.sleep(2)
    assert len(events_of(line, 1, expect=2, wait_s=0)) == 1
    with store() as s:                      # the outbox row stays for the reconciler
        assert [e.harness_version_id for e in list_outbox_events(s, pending_only=True)]


def test_console_submit_emits_one_event(deployment, api_url, store, store_url, tmp_path,
                                        monkeypatch):
    line = f"console-{uuid.uuid4().hex[:8]}"
    page = console_submit(store, store_url, tmp_path, monkeypatch, api_url, line)
    assert not page.exception and not page.warning
    assert "Stored version 1" in page.success[0].value
    assert any("Emitted harness.version.created" in c.value for c in page.caption)
    (event,) = events_of(line, 1, expect=1)
    assert event.resource["hat.emitter"] == "console"
    assert len(triggered_runs(deployment, line)) == 1


def test_prefect_down_stores_and_warns(store, store_url, tmp_path, monkeypatch, hat_env):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/api"
    monkeypatch.setenv("HAT_PREFECT_API_URL", dead)
    out = submit_cli(store, tmp_path, "cli-down")
    assert out.exit_code == 0, out.output
    assert f"warning: The Prefect API at {dead} is not reachable" in out.output
    assert "reconciler" in out.output
    page = console_submit(store, store_url, tmp_path, monkeypatch, dead, "console-down")
    assert not page.exception and "Stored version 1" in page.success[0].value
    assert "not reachable" in page.warning[0].value and not page.error
    with store() as s:
        assert len(list_outbox_events(s, pending_only=True)) == 2


def console_submit(store, store_url, tmp_path, monkeypatch, api_url: str, line: str):
    """The console's submit page (AppTest) storing `line` v1 as the operator `ann`."""
    from streamlit.testing.v1 import AppTest

    from db.engine import in_transaction
    from db.sessions_repo import open_session
    from db.users_repo import get_user

    monkeypatch.setenv("HAT_DATABASE_URL", store_url)
    monkeypatch.setenv("HAT_HOME", str(tmp_path / "console-home"))
    monkeypatch.setenv("HAT_PREFECT_API_URL", api_url)
    with store() as s:
        user = get_user(s, name="ann")
    if user is None:
        add_role(store, "ann", "operator")
        with store() as s:
            user = get_user(s, name="ann")
    at = AppTest.from_file(str(ROOT / "ui" / "app.py"), default_timeout=60)
    at.session_state["session_token"] = in_transaction(
        store, lambda s: open_session(s, user_id=user.id, client="console"))
    at.run()
    at.switch_page("pages/harness_submit.py").run()
    at.text_area(key="harness_text").set_value(harness_text(line))
    at.button(key="submit_harness").click().run()
    return at
