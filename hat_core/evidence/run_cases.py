"""The per-case rows of an evaluation run, read from MLflow (its `*.cases.jsonl` artifact).

    cases = load_run_cases("sqlite:///.hat/mlflow.db", run_id)   # the run's only cases file
    cases = load_run_cases(uri, run_id, "reports/champion.cases.jsonl")   # one of several
    cases.rows, cases.source

`hat eval run ... --mlflow-uri URI` logs `<report>.cases.jsonl` at its run's root; the retrain
flow's `eval` stage run logs `reports/{candidate,champion,base}.cases.jsonl`
(`db.eval_runs`). A run, file or line that cannot be read raises a `HatError` naming it.
Importing mlflow takes seconds, so it happens on the first call.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hat_core.errors import ConfigError, NotFoundError, Problem

CASES_SUFFIX = ".cases.jsonl"


@dataclass(frozen=True)
class RunCases:
    """One run's case rows and where they came from."""

    run_id: str
    artifact: str
    rows: tuple[dict, ...]

    @property
    def source(self) -> str:
        """`run <id>/<artifact>`, the prefix of every problem about these rows."""
        return f"run {self.run_id}/{self.artifact}"


def parse_run_ref(text: str) -> tuple[str, str | None]:
    """`RUN_ID` or `RUN_ID:ARTIFACT_PATH` -> (run id, artifact path or None)."""
    run_id, _, artifact = text.strip().partition(":")
    if not run_id:
        raise ConfigError(f"bad run {text!r}", [Problem("run", "RUN_ID or RUN_ID:ARTIFACT")])
    return run_id, artifact or None


def load_run_cases(uri: str, run_id: str, artifact: str | None = None) -> RunCases:
    """The rows of the run's cases file `artifact` (default: its only one)."""
    client = _client(uri)
    _run(client, uri, run_id)
    path = _choose(_find(client, run_id, None), artifact, run_id)
    from mlflow.exceptions import MlflowException

    with tempfile.TemporaryDirectory() as tmp:
        try:
            local = Path(client.download_artifacts(run_id, path, tmp))
        except MlflowException as exc:
            raise NotFoundError(f"cannot read run {run_id}/{path}",
                                [Problem(f"run {run_id}/{path}", exc.message)]) from None
        text = local.read_text(encoding="utf-8")
    return RunCases(run_id, path, parse_case_lines(text, f"run {run_id}/{path}"))


def parse_case_lines(text: str, source: str) -> tuple[dict, ...]:
    """Every line of a cases JSONL as an object; bad lines raise, each named `source:N`."""
    rows, problems = [], []
    for n, line in enumerate(text.splitlines(), start=1):
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(Problem(f"{source}:{n}", f"not JSON ({exc.msg})"))
            continue
        if not isinstance(data, dict):
            problems.append(Problem(f"{source}:{n}", "a row must be a JSON object"))
            continue
        rows.append(data)
    if problems:
        raise ConfigError(f"{source}: {len(problems)} malformed line(s)", problems)
    return tuple(rows)


def _client(uri: str):
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri=uri)


def _run(client, uri: str, run_id: str) -> None:
    from mlflow.exceptions import MlflowException

    try:
        client.get_run(run_id)
    except MlflowException as exc:
        raise NotFoundError(f"no MLflow run {run_id} at {uri}",
                            [Problem(f"run {run_id}", exc.message)]) from None


def _find(client, run_id: str, folder: str | None) -> list[str]:
    out = []
    for entry in client.list_artifacts(run_id, folder):
        if entry.is_dir:
            out += _find(client, run_id, entry.path)
        elif entry.path.endswith(CASES_SUFFIX):
            out.append(entry.path)
    return sorted(out)


def _choose(found: list[str], artifact: str | None, run_id: str) -> str:
    where = f"run {run_id}"
    if not found:
        raise NotFoundError(f"{where} has no per-case rows (*{CASES_SUFFIX})", [Problem(
            where, "log the evaluation with its cases file (`hat eval run --mlflow-uri`)")])
    if artifact is None and len(found) == 1:
        return found[0]
    if artifact in found:
        return artifact
    what = "has several cases files; name one" if artifact is None else \
        f"has no cases file {artifact!r}"
    raise NotFoundError(f"{where} {what}", [Problem(where, f"valid: {', '.join(found)}")])
