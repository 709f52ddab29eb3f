"""Console hygiene (AppTest on the seeded SQLite store): a non-UTF-8 upload is refused with
where it breaks and nothing is stored (harness and pairwise items), the MLflow links use
`HAT_MLFLOW_UI_URL`, and `hat ui` hides the developer toolbar and error details."""

from __future__ import annotations

from console_helpers import EXAMPLES, texts

from db.harness_repo import count_versions
from db.pairwise_repo import list_pairwise_reviews
from hat_cli.ui_cmd import command
from ui.views.mlflow_links import mlflow_ui_base, run_link

LATIN1 = (EXAMPLES / "v1.yaml").read_text(encoding="utf-8").replace(
    "description: ", "description: caf\u00e9 ", 1).encode("latin-1", errors="replace")


def test_a_non_utf8_harness_upload_is_refused(console, console_sessions):
    with console_sessions() as s:
        before = count_versions(s)
    at = console("operator", "harness_submit")
    at.file_uploader[0].set_value(("week.yaml", LATIN1, "application/yaml"))
    at.button(key="submit_harness").click().run()
    assert not at.exception
    shown = texts(at)
    assert "week.yaml: not UTF-8 text" in shown and "line " in shown
    assert "Stored version" not in shown
    with console_sessions() as s:
        assert count_versions(s) == before


def test_a_non_utf8_pairwise_upload_is_refused(console, console_sessions):
    at = console("operator", "pairwise")
    at.radio(key="pw_mode").set_value("New review").run()
    at.text_input(key="pw_title").set_value("latin-1 items")
    at.file_uploader(key="pw_file").set_value(
        ("items.jsonl", '{"scenario_id": "s1", "prompt": "caf\u00e9"}\n'.encode("latin-1"),
         "application/json"))
    at.button(key="pw_create").click().run()
    assert "items.jsonl: not UTF-8 text" in texts(at)
    with console_sessions() as s:
        assert list_pairwise_reviews(s) == []


def test_mlflow_links_use_the_browser_address():
    inside = "http://mlflow:5000"
    assert mlflow_ui_base(inside, "http://localhost:5000/") == "http://localhost:5000"
    assert mlflow_ui_base(inside, None) == inside
    assert mlflow_ui_base("sqlite:///x.db", None) is None
    assert run_link(mlflow_ui_base(inside, "https://ml.example.org"), "r1") == \
        "https://ml.example.org/#/runs/r1"


def test_hat_ui_hides_the_toolbar_and_error_details():
    cmd = command("127.0.0.1", 8600)
    assert {"--client.toolbarMode=viewer", "--client.showErrorDetails=none"} <= set(cmd)
