"""The long commands' terminal (`hat_cli.terminal`): library logs and output into the log file
under HAT_HOME, HAT Ops' own warnings on the terminal, no wrapping when piped, stages with
their key numbers, the log path and hints at the end."""

from __future__ import annotations

import io
import logging
import sys
import warnings

import pytest

from hat_cli.terminal import long_command


class Piped(io.StringIO):
    def isatty(self) -> bool:
        return False


@pytest.fixture
def pipe(monkeypatch):
    """Call it in the test body (pytest's capture resets sys.stdout after fixture setup)."""
    def piped() -> Piped:
        out = Piped()
        monkeypatch.setattr(sys, "stdout", out)
        monkeypatch.delenv("COLUMNS", raising=False)
        return out
    return piped


def test_library_chatter_goes_to_the_log_file_and_own_warnings_to_the_terminal(pipe,
                                                                               tmp_path):
    piped = pipe()
    home = tmp_path / "home"
    with long_command("demo", home=home) as term:
        logging.getLogger("mlflow.store.db.utils").info("Creating initial MLflow database tables")
        logging.getLogger("prefect.flow_runs").warning("Concurrency limits do not exist")
        warnings.warn("gradient_checkpointing is deprecated", FutureWarning, stacklevel=1)
        print({"loss": "5.576", "grad_norm": "1.004"})
        sys.stderr.write("Token indices sequence length is longer than the maximum\n")
        logging.getLogger("hat_core.training.stage").warning("skipping incomplete checkpoint")
        term.print("the command's own line")
    shown = piped.getvalue()
    logs = list((home / "logs").glob("demo-*.log"))
    assert len(logs) == 1
    written = logs[0].read_text(encoding="utf-8")
    for noise in ("Creating initial MLflow database tables", "Concurrency limits",
                  "gradient_checkpointing is deprecated", "'loss': '5.576'",
                  "Token indices sequence length"):
        assert noise in written and noise not in shown, noise
    assert "warning: skipping incomplete checkpoint" in shown
    assert "the command's own line" in shown
    assert f"library logs: {logs[0].resolve()}" in shown
    assert sys.stdout is piped


def test_warnings_reach_the_log_file_when_a_library_left_capture_state_on(pipe, tmp_path):
    """Great Expectations calls `logging.captureWarnings(True)` at import; once the hook it set
    is put back (pytest does so after each test), logging still believes it captures and a
    second `captureWarnings(True)` does nothing. The command must route warnings regardless."""
    before = warnings.showwarning
    logging.captureWarnings(True)
    warnings.showwarning = before      # the hook put back, logging's state left on
    try:
        piped = pipe()
        home = tmp_path / "home"
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            with long_command("demo", home=home):
                warnings.warn("a library's deprecation", FutureWarning, stacklevel=1)
            assert warnings.showwarning is before
        written = next((home / "logs").glob("demo-*.log")).read_text(encoding="utf-8")
        assert "a library's deprecation" in written
        assert "a library's deprecation" not in piped.getvalue()
    finally:
        logging.captureWarnings(False)
        warnings.showwarning = before


def test_streams_and_logging_are_restored_after_the_command(pipe, tmp_path):
    piped = pipe()
    root = logging.getLogger()
    before = (list(root.handlers), root.level, sys.stderr)
    with pytest.raises(RuntimeError), long_command("train-sft", home=tmp_path):
        raise RuntimeError("boom")
    assert (list(root.handlers), root.level, sys.stderr) == before and sys.stdout is piped
    assert "library logs: " in piped.getvalue()


def test_piped_output_is_not_wrapped_mid_phrase(pipe, tmp_path):
    piped = pipe()
    line = "a model that memorised v1's names breaks when the harness changes: " * 4
    with long_command("demo", home=tmp_path) as term:
        term.print(line.strip())
        with term.stage("10/13 Train the first champion on v1 (retrain flow)", heading=True):
            pass
    shown = piped.getvalue().splitlines()
    assert line.strip() in shown
    assert shown[1].startswith("── 10/13 Train the first champion") and len(shown[1]) == 80
    assert shown[2].startswith("done in ") and shown[2].endswith(" s")


def test_stages_show_progress_key_numbers_and_time_and_hints_come_last(pipe, tmp_path):
    piped = pipe()
    with long_command("train-sft", home=tmp_path) as term:
        with term.stage("HSA-SFT", total=8) as stage:
            for step in range(1, 9):
                stage.update(step, loss=1.0 / step)
            stage.done(steps=8, train_loss=0.3333)
        steps = term.named_steps()
        steps("t1", 1, 2)
        steps("t2", 2, 2)
        steps.finish()
        term.hint("MLflow UI: `mlflow ui --backend-store-uri sqlite:///x/mlflow.db`")
    shown = piped.getvalue().splitlines()
    assert [s for s in shown if s.startswith("  HSA-SFT: ")] == [
        "  HSA-SFT: 2/8 loss 0.5", "  HSA-SFT: 4/8 loss 0.25", "  HSA-SFT: 6/8 loss 0.1667"]
    assert any(s.startswith("done HSA-SFT (") and s.endswith("s): steps 8, train_loss 0.3333")
               for s in shown)
    assert [s.split(" (")[0] for s in shown if s.startswith("done t")] == ["done t1", "done t2"]
    assert shown[-2].startswith("library logs: ")
    assert shown[-1] == "next: MLflow UI: `mlflow ui --backend-store-uri sqlite:///x/mlflow.db`"


def test_a_stage_that_raises_is_reported_failed(pipe, tmp_path):
    piped = pipe()
    with pytest.raises(ValueError), long_command("eval", home=tmp_path) as term, \
            term.stage("t1"):
        raise ValueError("bad")
    assert any(s.startswith("failed t1 (") for s in piped.getvalue().splitlines())


def test_a_library_handler_made_during_a_command_outlives_its_log_file(pipe, tmp_path):
    piped = pipe()
    chatty = logging.getLogger("chatty_library")
    chatty.propagate = False
    try:
        with long_command("data-build", home=tmp_path / "a"):
            chatty.addHandler(logging.StreamHandler(sys.stderr))   # as transformers does
        with long_command("eval", home=tmp_path / "b"):
            chatty.warning("second command")
        second = next((tmp_path / "b" / "logs").glob("eval-*.log")).read_text(encoding="utf-8")
        assert "WARNING chatty_library: second command" in second
        assert "Logging error" not in second and "second command" not in piped.getvalue()
    finally:
        chatty.handlers.clear()
