"""`hat pairwise create`: open a blind pairwise review from a JSONL file or from stored runs.

    hat pairwise create --title "wk49" --items examples/pairwise/sample_items.jsonl \\
        --system-a "hat-agent v7" --system-b "production baseline"
    hat pairwise create --title "wk49" --from-runs RUN_A RUN_B [--limit 20] [--seed 7]
    hat pairwise create --title "wk49" --from-checkpoints 7 production   # or 7 6

`--from-runs` takes two MLflow run ids (each `RUN_ID` or `RUN_ID:ARTIFACT` when the run logged
several cases files) and shows both runs' episodes on the cases they share
(`hat_core.evidence.review_from_runs`); `--from-checkpoints` takes registered versions whose
retrain job evaluated them (`production`: the baseline that version's job evaluated beside
it). `--seed` both samples the `--limit` items and blinds them (drawn when not given; stored).
`--rule-judge` stores the rule judge's pairwise verdicts with the items (off by default: they
would count toward an LLM judge's `pairwise` calibration; see review_from_runs).
Any problem exits 2 with what and where, and stores nothing. Reviewers vote in the console.
The review is opened by a proven actor (`hat_cli.login_cmd.acting_user`: the saved `hat
login`, or the password of `--actor`, default the OS user, at a prompt or on stdin with
`--password-stdin`) with the operator role or above (`pairwise.manage`), checked before any
item is read.
"""

from __future__ import annotations

import random
import secrets
from pathlib import Path

import typer

from hat_cli.errors import exits_on_error
from hat_core.errors import ConfigError, NotFoundError, Problem

app = typer.Typer(help="Blind pairwise reviews of two systems' responses.",
                  no_args_is_help=True)
SOURCES = ("--items FILE", "--from-runs RUN_A RUN_B", "--from-checkpoints VERSION_A VERSION_B")


@app.command("create")
@exits_on_error
def create_cmd(
    title: str = typer.Option(..., "--title", help="what reviewers see as the review's name"),
    items: Path | None = typer.Option(None, "--items", help="JSONL: one {scenario_id, prompt, "
                                      "response_a, response_b[, judge]} per line"),
    from_runs: tuple[str, str] | None = typer.Option(
        None, "--from-runs", help="two MLflow runs: RUN_ID or RUN_ID:ARTIFACT each"),
    from_checkpoints: tuple[str, str] | None = typer.Option(
        None, "--from-checkpoints", help="two registered versions (B may be `production`)"),
    system_a: str | None = typer.Option(None, "--system-a", help="name of system A"),
    system_b: str | None = typer.Option(None, "--system-b", help="name of system B"),
    suites: str = typer.Option("t1,t2", "--suites", help="suites whose episodes to show"),
    limit: int | None = typer.Option(None, "--limit", help="at most N items (a seeded sample)"),
    seed: int | None = typer.Option(None, "--seed", min=0, help="sample + blinding seed"),
    rule_judge: bool = typer.Option(False, "--rule-judge", help="set each item's judge "
                                    "verdict from the rule judge (calibrates the rule judge)"),
    registry_name: str | None = typer.Option(None, "--registry-name",
                                             help="registered model (default: config)"),
    mlflow_uri: str | None = typer.Option(None, "--mlflow-uri", help="default: the settings'"),
    actor: str | None = typer.Option(None, "--actor", help="who opens it (default: the saved "
                                     "`hat login`, else the OS user); proven by a password"),
    password_stdin: bool = typer.Option(False, "--password-stdin",
                                        help="read the actor's password from stdin's first line"),
) -> None:
    """Open a blind review of system A against system B (one source of items)."""
    from db.engine import in_transaction
    from db.pairwise_repo import create_pairwise_review
    from hat_cli.db_cmd import open_store
    from hat_cli.login_cmd import acting_user

    chosen = [s for s, v in zip(SOURCES, (items, from_runs, from_checkpoints), strict=True) if v]
    if len(chosen) != 1:
        raise ConfigError("give exactly one source of items", [Problem(
            "source", f"{'given: ' + ', '.join(chosen) if chosen else 'none given'}; "
                      f"valid: {' | '.join(SOURCES)}")])
    store = open_store()  # an unmigrated store is refused before any reading
    who = acting_user(store, actor=actor, password_stdin=password_stdin,
                      action="pairwise.manage").name
    seed = secrets.randbelow(2**31) if seed is None else seed
    options = {"suites": _suites(suites), "limit": limit, "rng": random.Random(seed),
               "with_judge": rule_judge}
    if items is not None:
        side = _from_file(items, system_a, system_b)
    elif from_runs:
        side = _from_runs(from_runs, _uri(mlflow_uri), options, system_a, system_b)
    else:
        side = _from_checkpoints(store, from_checkpoints, registry_name, _uri(mlflow_uri),
                                 options)
    review_items, name_a, name_b, mv_a, mv_b = side
    review = in_transaction(store, lambda s: create_pairwise_review(
        s, title=title, system_a=name_a, system_b=name_b, items=review_items,
        actor=who, seed=seed, model_version_a_id=mv_a, model_version_b_id=mv_b))
    judged = [i.judge for i in review_items if i.judge]
    typer.echo(f"opened pairwise review {review.id} ({review.title}): {review.n_items} items, "
               f"A = {name_a}, B = {name_b}" + (f"; judge a/b/tie: {judged.count('a')}/"
                                              f"{judged.count('b')}/{judged.count('tie')}"
                                              if judged else ""))


def _from_file(path: Path, system_a: str | None, system_b: str | None):
    from hat_core.evidence.review_items import parse_review_items

    if not system_a or not system_b:
        raise ConfigError("--items needs the systems' names",
                          [Problem("--system-a/--system-b", "name both systems")])
    if not path.is_file():
        raise NotFoundError(f"no such file: {path}")
    items = parse_review_items(path.read_text(encoding="utf-8"), path.name)
    return items, system_a, system_b, None, None


def _from_runs(runs: tuple[str, str], uri: str, options: dict, system_a: str | None,
               system_b: str | None):
    from hat_core.evidence.review_from_runs import review_items_from_cases
    from hat_core.evidence.run_cases import load_run_cases, parse_run_ref

    refs = [parse_run_ref(r) for r in runs]
    a, b = (load_run_cases(uri, *ref) for ref in refs)
    items = review_items_from_cases(a.rows, b.rows, source_a=a.source, source_b=b.source,
                                    **options)
    names = [f"run {run}" + (f":{artifact}" if artifact else "") for run, artifact in refs]
    return items, system_a or names[0], system_b or names[1], None, None


def _from_checkpoints(store, versions: tuple[str, str], registry_name: str | None, uri: str,
                      options: dict):
    from db.eval_runs import checkpoint_sources
    from hat_core.evidence.review_from_runs import review_items_from_cases
    from hat_core.evidence.run_cases import load_run_cases

    if versions[0] == "production":
        raise ConfigError("system A must be a checkpoint", [Problem(
            "--from-checkpoints", "VERSION_A is a registered version; B may be `production`")])
    name = registry_name or _default_registry()
    with store() as s:
        ids = [_version_id(s, name, v) for v in versions]
        src_a, src_b = checkpoint_sources(s, checkpoint_a=ids[0], checkpoint_b=ids[1])
    a, b = (load_run_cases(uri, src.run_id, src.artifact) for src in (src_a, src_b))
    items = review_items_from_cases(a.rows, b.rows, source_a=f"{src_a.label} ({a.source})",
                                    source_b=f"{src_b.label} ({b.source})", **options)
    return items, src_a.label, src_b.label, src_a.model_version_id, src_b.model_version_id


def _version_id(session, registry_name: str, version: str) -> int | None:
    from db.flow_repo import find_model_version

    if version == "production":
        return None
    found = find_model_version(session, registry_name=registry_name, version=version)
    if found is None:
        raise NotFoundError(f"no stored version {version} of {registry_name}", [Problem(
            "--from-checkpoints", "a registered version number, or `production` for B")])
    return found.id


def _suites(text: str) -> tuple[str, ...]:
    return tuple(s.strip() for s in text.split(",") if s.strip())


def _uri(given: str | None) -> str:
    from hat_core.settings import load_settings

    return given or load_settings().resolved_mlflow_uri()


def _default_registry() -> str:
    from flows.config import load_retrain_config

    return load_retrain_config().registry_name
