"""`hat promote` / `hat rollback` as commands (exit 2 with the reasons when refused)."""

from __future__ import annotations

import typer
from flow_helpers import add_role, registered_version
from typer.testing import CliRunner

from hat_cli import release_cmd

app = typer.Typer()
app.command("promote")(release_cmd.promote)
app.command("rollback")(release_cmd.rollback)


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def test_promote_and_rollback_commands(store, tracking, registry_name, tmp_path, hat_env,
                                       mlflow_uri):
    add_role(store, "olga", "operator")
    v1 = registered_version(store, tracking, registry_name, tmp_path, 1, passed=True)
    v2 = registered_version(store, tracking, registry_name, tmp_path, 2, passed=False)
    named = ("--registry-name", registry_name)
    out = invoke("promote", v1, "--slot", "ab", "--actor", "olga", *named)
    assert out.exit_code == 0, out.output
    assert f"promoted version {v1} in slot ab" in out.output
    refused = invoke("promote", v2, "--actor", "olga", *named)
    assert refused.exit_code == 2 and "failed its gates" in refused.output
    stranger = invoke("promote", v1, "--actor", "mallory", *named)
    assert stranger.exit_code == 2 and "may not promote" in stranger.output
    add_role(store, "ada", "admin")
    forced = invoke("promote", v2, "--actor", "ada", "--override-reason", "approved", *named)
    assert forced.exit_code == 0 and f"previous champion {v1}" in forced.output
    back = invoke("rollback", "--slot", "ab", "--actor", "olga", *named)
    assert back.exit_code == 0 and f"rolled back slot ab to version {v1}" in back.output
