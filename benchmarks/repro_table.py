"""The reproduction table: Base, Fixed SFT, HSA-SFT, HSA-SFT + OPD and HAT on one CPU budget.

    .venv/bin/python benchmarks/repro_table.py --config examples/configs/repro_full.yaml \
        [--seeds 0,1,2] [--threads N] [--out docs/results] [--work /tmp/hat-repro] \
        [--tracking-uri URI]
    .venv/bin/python benchmarks/repro_table.py --quick      # a smoke run in minutes
    .venv/bin/python benchmarks/repro_table.py --merge a/results.json b/results.json --out DIR

Trains every arm with the project's own base model, data build and stages, evaluates it with
the project's suites (each seed on its own eval world), and writes `results.json`, `table.md`
(mean ± std over seeds, pooled rates with Wilson intervals, paired tests pooled over seeds,
per-family breakdowns, and the wall time of every step), `bars.png` and `curves.png` to
`--out`. Stage runs, evaluation
reports and one parent run per seed go to MLflow (`--tracking-uri`, default a SQLite store
in `--work`). Same as `hat repro`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from hat_core.errors import HatError
from hat_core.repro.config import load_repro_config
from hat_core.repro.report import markdown_table, merge_results, write_outputs
from hat_core.repro.run import run_repro

ROOT = Path(__file__).resolve().parent.parent
FULL = ROOT / "examples" / "configs" / "repro_full.yaml"
QUICK = ROOT / "examples" / "configs" / "repro_quick.yaml"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=None)
    parser.add_argument("--quick", action="store_true", help="the smoke-run config")
    parser.add_argument("--seeds", default=None, help="comma-separated, e.g. 0,1,2")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch CPU threads (default: the config's)")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--work", type=Path, default=Path("/tmp/hat-repro"))
    parser.add_argument("--cache-dir", type=Path, default=Path("~/.cache/hat-ops/base-models"))
    parser.add_argument("--tracking-uri", default=None)
    parser.add_argument("--merge", type=Path, nargs="+", default=None,
                        help="results.json files of runs with different seeds: one table")
    args = parser.parse_args(argv)
    if args.merge:
        return _merge(args.merge, args.out or ROOT / "docs" / "results")
    config_path = args.config or (QUICK if args.quick else FULL)
    overrides = {"seeds": [int(s) for s in args.seeds.split(",")]} if args.seeds else {}
    if args.threads:
        overrides["threads"] = args.threads
    config = load_repro_config(config_path, overrides)
    out = args.out or (args.work / "results" if args.quick else ROOT / "docs" / "results")
    args.work.mkdir(parents=True, exist_ok=True)
    uri = args.tracking_uri or f"sqlite:///{args.work.resolve()}/mlflow.db"
    results = run_repro(config, args.work, cache_dir=args.cache_dir.expanduser(),
                        tracking_uri=uri, log=_log)
    results["mlflow_uri"] = uri
    files = write_outputs(results, out)
    print(markdown_table(results))
    print("\n".join(f"{k}: {v}" for k, v in files.items()))
    return 0


def _merge(paths: list[Path], out: Path) -> int:
    """One table from several runs (seeds run as separate processes); see `merge_results`."""
    try:
        merged = merge_results(paths)
    except HatError as exc:
        print(exc.report(), file=sys.stderr)
        return 2
    files = write_outputs(merged, out)
    print(markdown_table(merged))
    print("\n".join(f"{k}: {v}" for k, v in files.items()))
    return 0


def _log(line: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {line}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
