"""`hat data build|import|validate`: training datasets from teacher rollouts and real logs.

    hat data build --harness examples/harnesses/v1.yaml \
        --config examples/configs/data_tiny.yaml --out runs/data
    hat data import examples/logs/live_sample.jsonl \
        --harness examples/harnesses/v1.yaml --out runs/logs
    hat data validate runs/data

`--harness` is a file or a stored version (`N`, `LINE:N`); so is `--previous`, the live harness
it edits (the scenario kinds it adds, e.g. v3's `bundle`, then make `new_kind_share` of the
bank). `--set key.sub=value` overrides any config key (defaults < YAML < command line). A
failed validation, a bad config or bad input exits 2 with a readable report.

With a stored version (`--harness N`), the reviewed bad cases sent to training for it (and
earlier versions of its line) go into the build, `bad_case_copies` surfaces each, and a ready
dataset marks them consumed by its version (`flows/sent_cases.py`); a case that cannot be
rebuilt is skipped with a warning naming its id. `--no-bad-cases` leaves the store alone. A
harness file reads no bad cases (a file is not a stored version).
"""

from __future__ import annotations

from pathlib import Path

import typer

from hat_cli.errors import exits_on_error
from hat_cli.harness_args import is_version_ref, load_harness_arg, load_stored_version
from hat_cli.terminal import Terminal, long_command
from hat_core.config_file import parse_overrides
from hat_core.data.config import load_data_config

app = typer.Typer(help="Build, import and validate training datasets.", no_args_is_help=True)

HARNESS = typer.Option(..., "--harness", help="harness file or stored version (N, LINE:N)")
CONFIG = typer.Option(None, "--config", help="data config (YAML)")
OUT = typer.Option(..., "--out", "-o", help="dataset directory to write")
SET = typer.Option(None, "--set", help="override a config key: key.sub=value (repeatable)")


@app.command("build")
@exits_on_error
def build_cmd(
    harness: str = HARNESS,
    config: Path | None = CONFIG,
    out: Path = OUT,
    set_: list[str] | None = SET,
    seed: int | None = typer.Option(None, "--seed", help="overrides `seed`"),
    previous: str | None = typer.Option(None, "--previous",
                                        help="the live harness this one edits (file or stored "
                                             "version): its new scenario kinds make "
                                             "`new_kind_share` of the bank"),
    quiet: bool = typer.Option(False, "--quiet", help="no progress bar"),
    no_bad_cases: bool = typer.Option(False, "--no-bad-cases",
                                      help="leave out the bad cases sent to training (a "
                                           "stored --harness only reads them)"),
) -> None:
    """Rollouts + rejection sampling + retry policy + splits + validation -> DIR."""
    overrides = parse_overrides(set_ or ())
    if seed is not None:
        overrides["seed"] = seed
    cfg = load_data_config(config, overrides)  # before the store, the build or DIR
    from flows.sent_cases import read_sent_cases, record_consumed, sent_cases
    from hat_core.data.build import build, summary_counts

    h = load_harness_arg(harness)
    before = load_harness_arg(previous) if previous else None
    store = _stored(harness) if cfg.bad_case_copies and not no_bad_cases else None
    cases = sent_cases(read_sent_cases(store[0], harness_version_id=store[1])) if store else []
    with long_command("data-build") as term:
        steps = term.named_steps()
        result = build(h, cfg, out, progress=None if quiet else steps, harness_ref=harness,
                       previous=before, bad_cases=cases)
        steps.finish()
        _summary(term, summary_counts(result.stats), result.stats.timings)
        if store:
            record_consumed(store[0], result.manifest, actor="hat data build")
            _bad_case_lines(term, result.manifest["bad_cases"], len(cases))
        term.print(f"dataset {result.version} ready: {out}", highlight=False)


def _stored(harness: str):
    """(sessions, version id) when `harness` names a stored version, else None."""
    if not is_version_ref(harness) or Path(harness).exists():
        return None
    from hat_cli.db_cmd import open_store

    return open_store(), load_stored_version(harness).id


def _bad_case_lines(term: Terminal, fed: dict, read: int) -> None:
    """The closing summary's bad-case line (each skipped case was warned about above)."""
    ids = ", ".join(str(i) for i in fed["ids"]) or "none"
    skipped = ", ".join(str(s["id"]) for s in fed["skipped"])
    term.print(f"bad cases         {read} sent, {len(fed['ids'])} in ({ids}), {fed['rows']} "
               "rows, consumed by this build" + (f"; skipped {skipped}" if skipped else ""),
               markup=False, highlight=False)


def _summary(term: Terminal, counts: dict, timings: dict[str, float]) -> None:
    lines = [f"rollouts          {counts['rollouts']}"
             + (f"  ({counts['duplicate_scenarios']} repeated scenarios not played)"
                if counts["duplicate_scenarios"] else ""),
             f"kept              {counts['kept']}  "
             + "  ".join(f"{k} {v}" for k, v in counts["splits"].items())]
    rejected = counts["rejected"]
    lines.append(f"rejected          {counts['rejected_total']}"
                 + ("  (" + ", ".join(f"{k} {v}" for k, v in sorted(rejected.items())) + ")"
                    if rejected else ""))
    lines.append(f"retries kept      full {counts['retries_full']}, "
                 f"final only {counts['retries_final_only']}")
    if counts["imported"] or counts["extra"]:
        lines.append(f"imported          {counts['imported']}  extra {counts['extra']}")
    total = sum(timings.values()) or 1.0
    lines.append("time              " + ", ".join(
        f"{k} {v:.2f}s" for k, v in timings.items() if v / total >= 0.01))
    for line in lines:
        term.print(line, markup=False, highlight=False)


@app.command("import")
@exits_on_error
def import_cmd(
    file: Path = typer.Argument(..., help="JSONL of logged conversations"),
    harness: str = HARNESS,
    out: Path = OUT,
    config: Path | None = CONFIG,
    set_: list[str] | None = SET,
    strict: bool = typer.Option(False, "--strict", help="exit 2 on any bad row, write nothing"),
) -> None:
    """Import real conversations into a validated dataset directory; report bad rows."""
    cfg = load_data_config(config, parse_overrides(set_ or ()))
    from hat_core.data.build import build_from_logs
    from hat_core.data.logs_import import version_names

    h = load_harness_arg(harness)
    result, problems = build_from_logs(h, cfg, out, file, accepted_versions=version_names(harness),
                                       strict=strict, harness_ref=harness)
    if problems:
        lines = sorted({p.path for p in problems})
        typer.echo(f"{len(lines)} bad row(s) left out:", err=True)
        for p in problems:
            typer.echo(f"  - {p}", err=True)
    typer.echo(f"imported {result.stats.imported} conversation(s); "
               + ", ".join(f"{k} {v}" for k, v in result.stats.splits.items()))
    typer.echo(f"dataset {result.version} ready: {out}")


@app.command("validate")
@exits_on_error
def validate_cmd(directory: Path = typer.Argument(..., help="dataset directory")) -> None:
    """Run the Great Expectations suite on DIR; exit 2 when it fails."""
    from hat_core.data.validate import validate_dir

    report = validate_dir(directory)
    for check in report.checks:
        mark = "ok    " if check.success else "FAILED"
        typer.echo(f"{mark} {check.name}: {check.observed}")
    typer.echo(f"report: {directory / 'validation' / 'report.md'}")
    if not report.success:
        typer.echo(f"dataset {directory} failed validation ({len(report.failed)} checks)",
                   err=True)
        raise typer.Exit(code=2)
