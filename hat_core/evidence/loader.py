"""Reading and writing A/B data files (CSV or Parquet): the I/O edge of the evidence package.

`load_ab(path)` reads the file with every cell as text (so a bad value can be named, not
silently coerced) and hands it to the pure `validate_ab_frame`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from hat_core.errors import Problem
from hat_core.evidence.ab_data import AbData, RowNames, validate_ab_frame
from hat_core.evidence.errors import AbDataError

FORMATS = (".csv", ".parquet", ".pq")


def read_table(path: Path) -> tuple[pd.DataFrame, RowNames]:
    """The raw table and how its rows are named in problems."""
    path = Path(path)
    if not path.is_file():
        raise AbDataError(f"{path}: no such file", [Problem(str(path), "not found")])
    suffix = path.suffix.lower()
    try:
        if suffix == ".csv":
            frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[])
            return frame, RowNames("line", 2)
        if suffix in (".parquet", ".pq"):
            return pd.read_parquet(path), RowNames("row", 0)
    except (ValueError, OSError, UnicodeDecodeError) as exc:  # pyarrow errors subclass these
        raise AbDataError(f"{path}: cannot read", [Problem(str(path), str(exc))]) from None
    raise AbDataError(f"{path}: unknown format",
                      [Problem(str(path), f"expected one of {', '.join(FORMATS)}")])


def load_ab(path: Path, *, control: str = "control", treatment: str = "treatment",
            metrics: Sequence[str] | None = None) -> AbData:
    """A validated A/B file; `AbDataError` lists every problem (column, line) otherwise."""
    raw, rows = read_table(path)
    return validate_ab_frame(raw, control=control, treatment=treatment, metrics=metrics,
                             source=str(path), rows=rows)


def write_table(frame: pd.DataFrame, path: Path) -> Path:
    """Write a table as CSV or Parquet, chosen by the suffix; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() in (".parquet", ".pq"):
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, index=False)
    return path
