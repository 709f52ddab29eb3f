"""The terminal of a long command (`hat demo`, `train`, `data build`, `eval run`, `repro`,
`retrain`, `base build`): one rich console, a progress display per stage with its key numbers,
library logs in a file under `HAT_HOME`, and closing hints.

    with long_command("train-sft") as term:
        with term.stage("HSA-SFT", total=60) as stage:
            stage.update(12, loss=1.234)          # a bar on a TTY, a line per quarter when piped
            stage.done(steps=60, train_loss=0.9)  # the stage's closing line: "done HSA-SFT ..."
        term.hint("mlflow ui --backend-store-uri sqlite:///.hat/mlflow.db")

Inside the block, every log record at INFO or above and whatever Python code writes to
`sys.stdout`/`sys.stderr` (a library's print, log dict, progress bar or warning) go to
`<HAT_HOME>/logs/<command>-<time>.log`. The terminal shows the command's own display, and
WARNING or worse from HAT Ops' own loggers, the warnings a user can act on. Piped, the console
does not wrap a line mid-phrase. At the end it prints the log file's path and the hints.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
import warnings
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import IO

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

OWN = ("hat_core", "hat_cli", "flows", "db", "ui", "migrations")
# explicit variables win: no progress bars or handlers of the libraries' own, and nothing
# written under ~ (MLflow's telemetry id in ~/.config; the PyPI version check that the
# latency step's `transformers serve` marks in ~/.cache/huggingface)
QUIET_ENV = {"TQDM_DISABLE": "1", "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
             "MLFLOW_CONFIGURE_LOGGING": "false", "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
             "MLFLOW_DISABLE_TELEMETRY": "true", "HF_HUB_DISABLE_UPDATE_CHECK": "1"}
# loggers that turn chatty (SQL statements, file locks) when the root logger is at INFO
LOUD = ("sqlalchemy", "aiosqlite", "filelock", "urllib3", "asyncio")
PIPED_WIDTH = 120
RULE_WIDTH = 80
PIPED_EVERY_S = 30.0


def make_console(stream: IO[str] | None = None, *, stderr: bool = False) -> Console:
    """A rich console on `stream` (default the current stdout, or stderr): on a TTY as rich
    makes it; piped, `PIPED_WIDTH` columns (or `$COLUMNS`) and no wrapping of printed text."""
    stream = stream or (sys.stderr if stderr else sys.stdout)
    probe = Console(file=stream)
    if probe.is_terminal:
        return probe
    width = int(os.environ.get("COLUMNS") or PIPED_WIDTH)
    return Console(file=stream, width=width, soft_wrap=True)


def key_numbers(values: dict) -> str:
    """`{"loss": 1.23456, "steps": 60}` -> `loss 1.235, steps 60` (None values left out)."""
    def show(v) -> str:
        if isinstance(v, float):
            return f"{v:.4g}"
        return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)

    return ", ".join(f"{k} {show(v)}" for k, v in values.items() if v is not None)


class Stage:
    """One stage's progress: `update(done, total, **numbers)` while it runs, `done(**numbers)`
    for its closing line."""

    def __init__(self, terminal: Terminal, title: str, total: int | None, heading: bool):
        self.terminal, self.title, self.total, self.heading = terminal, title, total, heading
        self.started = self._last_line = time.perf_counter()
        self.numbers: dict = {}
        self._quarter = 0
        self._task = None
        if terminal.live is not None:
            self._task = terminal.live.add_task(title, total=total, numbers="")

    def update(self, completed: int | None = None, total: int | None = None,
               **numbers) -> None:
        """Show progress (`completed` of `total`) and the running key numbers."""
        self.total = total or self.total
        self.numbers.update(numbers)
        if self._task is not None:
            self.terminal.live.update(self._task, completed=completed, total=self.total,
                                      numbers=key_numbers(self.numbers))
        elif completed is not None:
            self._piped_line(completed)

    def _piped_line(self, completed: int) -> None:
        quarter = 4 * completed // self.total if self.total else 0
        now = time.perf_counter()
        finished = self.total is not None and completed >= self.total  # the done line says it
        if not finished and (quarter > self._quarter or now - self._last_line >= PIPED_EVERY_S):
            self._quarter, self._last_line = max(quarter, self._quarter), now
            of = f"/{self.total}" if self.total else ""
            extra = f" {key_numbers(self.numbers)}" if self.numbers else ""
            self.terminal.console.print(f"  {self.title}: {completed}{of}{extra}",
                                        markup=False, highlight=False)

    def done(self, **numbers) -> None:
        """The key numbers of the closing line (replacing the running ones)."""
        self.numbers = dict(numbers)

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.started

    def end(self, failed: bool = False) -> None:
        """Print the closing line (once): done or failed, seconds, key numbers."""
        if self not in self.terminal.open:
            return
        self.terminal.open.remove(self)
        if self._task is not None:
            self.terminal.live.remove_task(self._task)
            if not self.terminal.open:
                self.terminal.live.stop()
        mark = "[red]failed[/]" if failed else "[green]done[/]"
        what = "in " if self.heading else f"{escape(self.title)} ("
        extra = f": {key_numbers(self.numbers)}" if self.numbers else ""
        self.terminal.console.print(f"{mark} {what}{self.seconds:.1f} s"
                                    f"{'' if self.heading else ')'}{extra}", highlight=False)


class Terminal:
    """The console of a long command, its stages, its log file and its closing hints."""

    def __init__(self, console: Console, log_file: Path):
        self.console, self.log_file = console, log_file
        self.hints: list[str] = []
        self.open: list[Stage] = []
        self.live: Progress | None = None
        if console.is_terminal:
            self.live = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TextColumn("{task.fields[numbers]}"),
                                 TimeElapsedColumn(), console=console, transient=True,
                                 redirect_stdout=False, redirect_stderr=False)

    def print(self, *objects, **kwargs) -> None:
        """`Console.print` on the command's terminal."""
        self.console.print(*objects, **kwargs)

    def rule(self, title: str) -> None:
        """A section heading (fixed width, so that a piped one stays one short line)."""
        text = f"── {title} "
        self.console.print(text + "─" * max(3, RULE_WIDTH - len(text)), style="bold",
                           highlight=False, markup=False)

    def begin(self, title: str, *, total: int | None = None, heading: bool = False) -> Stage:
        """Start a stage (end it with `Stage.end`; `stage()` does both). With `heading`, the
        title is printed first as a section heading."""
        if heading:
            self.rule(title)
        if self.live is not None and not self.live.live.is_started:
            self.live.start()
        stage = Stage(self, title, total, heading)
        self.open.append(stage)
        return stage

    @contextlib.contextmanager
    def stage(self, title: str, *, total: int | None = None,
              heading: bool = False) -> Iterator[Stage]:
        """A stage with a progress display; its closing line says how long it took."""
        stage = self.begin(title, total=total, heading=heading)
        failed = True
        try:
            yield stage
            failed = False
        finally:
            stage.end(failed)

    def named_steps(self) -> NamedSteps:
        """`progress(name, done, total)` for a run of named steps (the data build's steps,
        the evaluation's suites): each name is a stage; `finish()` ends the last one."""
        return NamedSteps(self)

    def hint(self, text: str) -> None:
        """A line for the end of the command: where to look next."""
        if text not in self.hints:
            self.hints.append(text)

    def close(self) -> None:
        for stage in reversed(self.open):
            stage.end(failed=True)
        if self.live is not None:
            self.live.stop()
        self.console.print(f"library logs: {self.log_file}", highlight=False, markup=False)
        for text in self.hints:
            self.console.print(f"next: {text}", highlight=False, markup=False)


class NamedSteps:
    """Named steps as stages, one after the other (`Terminal.named_steps`)."""

    def __init__(self, terminal: Terminal):
        self.terminal = terminal
        self.current: Stage | None = None

    def __call__(self, name: str, done: int, total: int) -> None:
        if self.current is None or self.current.title != name:
            self.finish()
            self.current = self.terminal.begin(name, total=total)
        self.current.update(done, total)

    def finish(self) -> None:
        if self.current is not None:
            self.current.end()
            self.current = None


class _OwnWarnings(logging.Handler):
    """WARNING or worse from HAT Ops' own loggers, printed on the command's console."""

    def __init__(self, console: Console):
        super().__init__(logging.WARNING)
        self.console = console
        self.setFormatter(logging.Formatter("%(message)s"))

    def filter(self, record: logging.LogRecord) -> bool:
        return record.name.split(".")[0] in OWN and super().filter(record)

    def emit(self, record: logging.LogRecord) -> None:
        level = record.levelname.lower()
        self.console.print(f"[yellow]{level}:[/] ", end="", highlight=False)
        self.console.print(self.format(record), markup=False, highlight=False)


def _warning_to_log(message, category, filename, lineno, file=None, line=None) -> None:
    """`warnings.showwarning` during a long command: the warning goes to the `py.warnings`
    logger (the log file), as `logging.captureWarnings` would send it."""
    text = warnings.formatwarning(message, category, filename, lineno, line)
    logging.getLogger("py.warnings").warning("%s", text.rstrip())


def log_path(home: Path, command: str) -> Path:
    """`<home>/logs/<command>-<YYYYmmdd-HHMMSS>.log` (the folder is created)."""
    folder = Path(home).resolve() / "logs"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{command}-{datetime.now():%Y%m%d-%H%M%S}.log"


def adopt_library_loggers(terminal_streams: tuple) -> None:
    """Libraries' own handlers that write to the terminal are dropped and their loggers
    propagate to the root (the log file): transformers, mlflow and prefect install such
    handlers when imported. Call again after a library is first imported."""
    for logger in [logging.getLogger(n) for n in list(logging.root.manager.loggerDict)]:
        if not isinstance(logger, logging.Logger) or logger.name.split(".")[0] in OWN:
            continue
        for handler in list(logger.handlers):
            if getattr(handler, "stream", None) in terminal_streams:
                logger.removeHandler(handler)
                logger.propagate = True


@contextlib.contextmanager
def long_command(command: str, *, stderr: bool = False,
                 home: Path | None = None) -> Iterator[Terminal]:
    """Run a long command's body with its terminal (on stdout, or stderr when stdout carries
    the command's result) and its log file under `home` (default `HAT_HOME`)."""
    if home is None:
        from hat_core.settings import load_settings

        home = load_settings().home
    for key, value in QUIET_ENV.items():
        os.environ.setdefault(key, value)
    out, err = sys.stdout, sys.stderr
    terminal = Terminal(make_console(err if stderr else out), log_path(home, command))
    with open(terminal.log_file, "a", encoding="utf-8", buffering=1) as log, \
            _routed(log, terminal.console, (out, err, sys.__stdout__, sys.__stderr__)):
        try:
            yield terminal
        finally:
            sys.stdout, sys.stderr = out, err
            terminal.close()


def _repoint_handlers(log: IO[str], stream: IO[str]) -> None:
    """Handlers a library made during the command write to `log` (its `sys.stderr` then):
    point them at `stream` before `log` closes (a later command adopts them again)."""
    loggers = [logging.getLogger(n) for n in list(logging.root.manager.loggerDict)]
    for logger in [logging.getLogger(), *loggers]:
        for handler in getattr(logger, "handlers", ()):
            if getattr(handler, "stream", None) is log:
                handler.setStream(stream)


@contextlib.contextmanager
def _routed(log: IO[str], console: Console, terminal_streams: tuple) -> Iterator[None]:
    """Log records and Python-level stdout/stderr to `log`; own warnings to `console`."""
    root = logging.getLogger()
    saved = (list(root.handlers), root.level, sys.stdout, sys.stderr)
    to_file = logging.StreamHandler(log)
    to_file.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.handlers = [to_file, _OwnWarnings(console)]
    root.setLevel(logging.INFO)
    loud = {name: logging.getLogger(name).level for name in LOUD}
    for name in LOUD:
        logging.getLogger(name).setLevel(logging.WARNING)
    adopt_library_loggers(terminal_streams)
    # The hook is set and restored here rather than with `logging.captureWarnings`: that
    # function does nothing while its module state says capture is on, and a library that
    # calls it at import (Great Expectations does) can leave that state on after the hook
    # itself was put back (pytest restores it after each test), so warnings went nowhere near
    # the log file.
    shown = warnings.showwarning
    warnings.showwarning = _warning_to_log
    sys.stdout = sys.stderr = log
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved[2], saved[3]
        _repoint_handlers(log, saved[3])
        warnings.showwarning = shown
        root.handlers, _ = saved[0], root.setLevel(saved[1])
        for name, level in loud.items():
            logging.getLogger(name).setLevel(level)
