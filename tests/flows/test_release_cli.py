"""`hat promote` / `hat rollback` as commands (exit 2 with the reasons when refused): the
actor proves who they are (a password here), `--actor` alone is refused, a rollback carries
its reason into the promotion row."""

from __future__ import annotations

import typer
from flow_helpers import add_role, registered_version
from typer.testing import CliRunner

from db.release_repo import current_promotion, list_promotions
from hat_cli import release_cmd

app = typer.Typer()
app.command("promote")(release_cmd.promote)
app.command("rollback")(release_cmd.rollback)
PASSWORD = "correct horse"  # flow_helpers.add_role's
PW = ("--password-stdin",)


def invoke(*args: str, password: str | None = PASSWORD):
    return CliRunner().invoke(app, list(args), input=None if password is None else password + "\n")


def test_promote_and_rollback_commands(store, tracking, registry_name, tmp_path, hat_env,
                                       mlflow_uri):
    add_role(store, "olga", "operator")
    add_role(store, "vic", "viewer")
    v1 = registered_version(store, tracking, registry_name, tmp_path, 1, passed=True)
    v2 = registered_version(store, tracking, registry_name, tmp_path, 2, passed=False)
    named = ("--registry-name", registry_name)
    out = invoke("promote", v1, "--slot", "ab", "--actor", "olga", *PW, *named)
    assert out.exit_code == 0, out.output
    assert f"promoted version {v1} in slot ab" in out.output
    refused = invoke("promote", v2, "--actor", "olga", *PW, *named)
    assert refused.exit_code == 2 and "failed its gates" in refused.output
    viewer = invoke("promote", v1, "--actor", "vic", *PW, *named)
    assert viewer.exit_code == 2 and "may not promote" in viewer.output
    stranger = invoke("promote", v1, "--actor", "mallory", *PW, *named)
    assert stranger.exit_code == 2 and "not acting as mallory" in stranger.output
    add_role(store, "ada", "admin")
    impostor = invoke("promote", v2, "--actor", "ada", "--override-reason", "trust me", *PW,
                      *named, password="a guess at it")
    assert impostor.exit_code == 2 and "wrong password" in impostor.output
    unproven = invoke("promote", v2, "--actor", "ada", "--override-reason", "trust me", *named,
                      password=None)
    assert unproven.exit_code == 2 and "no terminal to ask on" in unproven.output
    with store() as s:
        assert len(list_promotions(s, slot="ab")) == 1  # neither got through
    forced = invoke("promote", v2, "--actor", "ada", "--override-reason", "approved", *PW,
                    *named)
    assert forced.exit_code == 0 and f"previous champion {v1}" in forced.output
    reasonless = invoke("rollback", "--slot", "ab", "--actor", "olga", *PW, *named)
    assert reasonless.exit_code == 2 and "--reason" in reasonless.output
    back = invoke("rollback", "--slot", "ab", "--actor", "olga", "--reason",
                  "v2 answers in English", *PW, *named)
    assert back.exit_code == 0 and f"rolled back slot ab to version {v1}" in back.output
    with store() as s:
        row = current_promotion(s, slot="ab")
    assert (row.actor, row.reason) == ("olga", f"rollback from version {v2}: "
                                               "v2 answers in English")
