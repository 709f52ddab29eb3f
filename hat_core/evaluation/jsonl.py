"""JSONL files: each row an object, with its line number kept for error reports."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from hat_core.errors import NotFoundError, Problem
from hat_core.evaluation.errors import EvalInputError


@dataclass(frozen=True)
class Row:
    """One JSON object of a JSONL file and where it came from (`where` is `file:line`)."""

    where: str
    data: dict


def read_jsonl(path: str | Path) -> list[Row]:
    """Every non-blank line of `path` as a JSON object; all malformed lines raise at once."""
    path = Path(path)
    if not path.is_file():
        raise NotFoundError(f"no such file: {path}")
    rows, problems = [], []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                problems.append(Problem(where, f"not JSON ({exc.msg})"))
                continue
            if not isinstance(data, dict):
                problems.append(Problem(where, "a row must be a JSON object"))
                continue
            rows.append(Row(where, data))
    if problems:
        raise EvalInputError(f"{path}: {len(problems)} malformed row(s)", problems)
    return rows


def write_jsonl(path: str | Path, rows: Iterable[dict]) -> None:
    """Write one JSON object per line (UTF-8, non-ASCII kept)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
