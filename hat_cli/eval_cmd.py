"""`hat eval ...`: score IFEval responses and BFCL-format tool calls; run named suites.

`hat eval MODEL --suites ...` is short for `hat eval run MODEL --suites ...` (the contract in
architecture.md): a first argument that is not a subcommand is taken as `run`'s MODEL.
"""

from __future__ import annotations

import os
from pathlib import Path

import typer
from typer.core import TyperGroup

from hat_cli.errors import exits_on_error
from hat_cli.terminal import Terminal, long_command
from hat_core.errors import ConfigError
from hat_core.evaluation.jsonl import write_jsonl


class _RunByDefault(TyperGroup):
    """A group whose first non-option argument, when not a subcommand, means `run`."""

    def resolve_command(self, ctx, args):
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["run", *args]
        return super().resolve_command(ctx, args)


app = typer.Typer(help="Offline evaluation: IFEval, tool-call matching, named suites. "
                       "`hat eval MODEL --suites ...` runs suites (same as `hat eval run`).",
                  no_args_is_help=True, cls=_RunByDefault)

NLTK_DATA = typer.Option(None, "--nltk-data",
                         help="nltk data root with tokenizers/punkt_tab/english "
                              "(default: $HAT_NLTK_DATA, else an untrained Punkt splitter)")


def nltk_data_dir(option: Path | None) -> Path | None:
    """`--nltk-data`, else `$HAT_NLTK_DATA`, else None (the untrained splitter)."""
    env = os.environ.get("HAT_NLTK_DATA")
    return option or (Path(env) if env else None)


def _pct(share: float) -> str:
    return f"{100 * share:.2f}%"


@app.command("score-ifeval")
@exits_on_error
def score_ifeval(
    inputs: Path = typer.Option(..., "--inputs", help="IFEval-format prompts (JSONL)"),
    responses: Path = typer.Option(..., "--responses", help="{key or prompt, response} rows"),
    out: Path | None = typer.Option(None, "--out", help="write per-prompt verdicts (JSONL)"),
    nltk_data: Path | None = NLTK_DATA,
) -> None:
    """Score responses with the official IFEval checker, offline."""
    from hat_core.evaluation.ifeval import (
        verdicts as ifeval,  # imports nltk: keep `hat --help` fast
    )
    from hat_core.evaluation.ifeval.checker import load_splitter

    prompts = ifeval.load_prompts(inputs)
    result = ifeval.score(prompts, ifeval.load_responses(responses, prompts),
                          load_splitter(nltk_data_dir(nltk_data)))
    if out:
        write_jsonl(out, (v.to_dict() for v in result.verdicts))
    s = result.summary
    typer.echo(f"prompts {s.prompts}   instructions {s.instructions}   "
               f"sentence splitter {s.sentence_splitter}")
    typer.echo(f"prompt-level strict (IFE-P)  {_pct(s.prompt_strict)}  "
               f"({s.strict_count}/{s.prompts})")
    typer.echo(f"prompt-level loose           {_pct(s.prompt_loose)}  "
               f"({s.loose_count}/{s.prompts})")
    typer.echo(f"instruction-level strict     {_pct(s.instruction_strict)}")
    typer.echo(f"instruction-level loose      {_pct(s.instruction_loose)}")
    typer.echo(f"random-dependent prompts     {s.random_dependent}")
    typer.echo(f"missing_response             {s.missing_responses}")
    for u in result.unmatched:
        typer.echo(f"unmatched response at {u.where}", err=True)


@app.command("score-tool-calls")
@exits_on_error
def score_tool_calls(
    questions: Path = typer.Option(..., "--questions", help="BFCL-format questions (JSONL)"),
    answers: Path = typer.Option(..., "--answers", help="BFCL possible answers (JSONL)"),
    candidates: Path = typer.Option(..., "--candidates", help="{id, calls} rows (JSONL)"),
    out: Path | None = typer.Option(None, "--out", help="write per-case verdicts (JSONL)"),
) -> None:
    """Match candidate tool calls against BFCL-format possible answers."""
    from hat_core.evaluation.bfcl import calls as tool_calls

    result = tool_calls.score(tool_calls.load_cases(questions, answers),
                              tool_calls.load_candidates(candidates))
    if out:
        write_jsonl(out, (v.to_dict() for v in result.verdicts))
    s = result.summary
    typer.echo(f"cases {s.cases}   valid {s.valid}   accuracy {_pct(s.accuracy)}")
    for name, count in s.errors.items():
        typer.echo(f"  {name:<22} {count}")
    for cid in s.unmatched_candidates:
        typer.echo(f"candidate for unknown id {cid!r}", err=True)


MODEL_HELP = ("a local model directory, an endpoint URL (with --model-name), `oracle`, or "
              "`memorising:HARNESS_FILE` (the oracle of a fixed harness)")


@app.command("run")
@exits_on_error
def run(
    model: str = typer.Argument(..., help=MODEL_HELP),
    suites: str = typer.Option("ifeval", "--suites",
                               help="comma-separated: t1,t2,ifeval,tool_robustness,"
                                    "prompt_robustness,cot_length,tool_calls,new"),
    out: Path = typer.Option(Path("report.json"), "--out",
                             help="report JSON (+ .md and .cases.jsonl beside)"),
    harness: str | None = typer.Option(None, "--harness",
                                       help="harness file or stored version (N, LINE:N)"),
    served_model: str | None = typer.Option(None, "--model-name",
                                            help="model name at the endpoint"),
    limit: int | None = typer.Option(None, "--limit", min=1, help="items per suite"),
    max_tokens: int = typer.Option(512, "--max-tokens", min=1),
    nltk_data: Path | None = NLTK_DATA,
    episodes: int = typer.Option(30, "--episodes", min=1, help="held-out scenarios"),
    variants: int = typer.Option(4, "--variants", min=1, help="held-out HSA variants (t2)"),
    robustness_variants: int = typer.Option(2, "--robustness-variants", min=1,
                                            help="variants per robustness family"),
    seed: int = typer.Option(0, "--seed", help="evaluation world and variant seed"),
    previous: str | None = typer.Option(None, "--previous",
                                        help="new: the harness the kinds are new over "
                                             "(file or stored version)"),
    new_cases: int = typer.Option(30, "--new-cases", min=1, help="cases of the new suite"),
    max_steps: int = typer.Option(6, "--max-steps", min=1,
                                  help="assistant messages per viewer turn"),
    bfcl_questions: Path | None = typer.Option(None, "--bfcl-questions",
                                               help="BFCL-format questions (tool_calls)"),
    bfcl_answers: Path | None = typer.Option(None, "--bfcl-answers",
                                             help="BFCL possible answers (tool_calls)"),
    bad_cases_out: Path | None = typer.Option(None, "--bad-cases-out",
                                              help="bad cases JSONL (default: beside --out)"),
    store: bool = typer.Option(False, "--store",
                               help="also queue bad cases in the SQL store for review"),
    model_version_id: int | None = typer.Option(None, "--model-version-id",
                                                help="store id of the evaluated model"),
    mlflow_uri: str | None = typer.Option(None, "--mlflow-uri",
                                          help="log to MLflow (default: $HAT_MLFLOW_TRACKING_URI "
                                               "when set, else no logging)"),
    render_profile: str = typer.Option("full", "--render-profile",
                                       help="how the harness is shown: full, or compact (the "
                                            "toy models of `hat repro`, docs/evaluation.md)"),
    constrain_tools: bool = typer.Option(False, "--constrain-tools",
                                         help="a local model: hold tool-call names and "
                                              "argument keys to the offered tools "
                                              "(constrained decoding, docs/evaluation.md)"),
    batch_size: int | None = typer.Option(None, "--batch-size",
                                          help="a local model: cases played side by side, "
                                               "their turns answered in one batch (default "
                                               "8; 1: one at a time; docs/evaluation.md)"),
    judge: str = typer.Option("rule", "--judge",
                              help="judge of the simulator cases: rule, or llm (only when the "
                                   "judge gate passes; docs/operations.md)"),
    judge_url: str | None = typer.Option(None, "--judge-url",
                                         help="llm judge: OpenAI-compatible endpoint "
                                              "(default: $HAT_TEACHER_ENDPOINT)"),
    judge_model: str | None = typer.Option(None, "--judge-model",
                                           help="llm judge: model name at the endpoint"),
    judge_api_key_env: str | None = typer.Option(None, "--judge-api-key-env",
                                                 help="llm judge: variable holding the API key"),
    judge_source: str = typer.Option("bad_cases", "--judge-source",
                                     help="calibration the gate reads: bad_cases or pairwise"),
    judge_override: str | None = typer.Option(None, "--judge-override",
                                              help="use the llm judge although the gate "
                                                   "refuses it: the reason (audit log, MLflow)"),
) -> None:
    """Run named suites on a model; write a JSON report, a markdown summary, per-case rows
    and the bad cases."""
    from hat_core.evaluation.evaluate import EvalOptions, evaluate
    from hat_core.evaluation.judging import JudgeConfig, check_judge_config
    from hat_core.evaluation.suites.registry import get_suite
    from hat_core.harness.render import check_profile, use_profile

    names = [n.strip() for n in suites.split(",") if n.strip()]
    for name in names:  # unknown names fail before any file is written
        get_suite(name)
    check_profile(render_profile)
    h = _harness(harness)
    judge_config = check_judge_config(JudgeConfig(
        kind=judge, base_url=judge_url or _configured().teacher_endpoint, model=judge_model,
        api_key_env=judge_api_key_env, source=judge_source), where="--judge")
    options = EvalOptions(episodes=episodes, variants=variants,
                          robustness_variants=robustness_variants, seed=seed,
                          max_steps=max_steps, max_tokens=max_tokens, limit=limit,
                          nltk_data=nltk_data_dir(nltk_data), bfcl_questions=bfcl_questions,
                          bfcl_answers=bfcl_answers, judge=judge_config,
                          previous=_harness(previous) if previous else None,
                          new_cases=new_cases)
    gate = judge_gate(judge_config, judge_override)  # refuses before anything is written
    policy = _model(model, served_model, max_tokens, constrain_tools=constrain_tools,
                    batch_size=batch_size)
    bad_path = bad_cases_out or out.with_suffix(".bad_cases.jsonl")
    sink = _sink(bad_path, store, harness, h, model_version_id)
    with long_command("eval") as term:
        suites_shown = term.named_steps()
        try:
            with use_profile(render_profile):
                report = evaluate(policy, h, names, options, model_name=model,
                                  progress=suites_shown, bad_cases=sink, gate=gate)
            suites_shown.finish()
        finally:
            sink.close()
        _finish(term, report, out, bad_path, sink, mlflow_uri, gate)


def judge_gate(config, override: str | None):
    """`db.calibration_repo.judge_gate` with the settings' thresholds; the store is opened
    only for an LLM judge, and an override is said on stderr."""
    from db.calibration_repo import judge_gate as gate
    from hat_cli.db_cmd import open_store, whoami

    settings = _configured()
    decision = gate(open_store() if config.kind != "rule" else None, config=config,
                    min_kappa=settings.judge_min_kappa, min_n=settings.judge_min_items,
                    override=override, actor=whoami())
    if decision.override:
        typer.echo(f"judge gate overridden ({decision.override}): {decision.reason}", err=True)
    return decision


def _harness(arg: str | None):
    from hat_cli.harness_args import load_harness_arg

    return load_harness_arg(arg) if arg else None


def _sink(path: Path, store: bool, harness_arg: str | None, harness, model_version_id):
    from hat_core.evaluation.badcases import JsonlBadCaseSink, TeeBadCaseSink

    sinks = []
    if store:
        from hat_cli.badcase_sink import StoreBadCaseSink, stored_version_id
        from hat_cli.db_cmd import open_store

        if harness is None:
            raise ConfigError("--store files bad cases under a harness version: give --harness")
        sessions = open_store()
        sinks.append(StoreBadCaseSink(sessions, model_version_id=model_version_id,
                                      harness_version_id=stored_version_id(
                                          sessions, harness_arg, harness)))
    return TeeBadCaseSink([JsonlBadCaseSink(path), *sinks])


def _finish(term: Terminal, report, out: Path, bad_path: Path, sink, mlflow_uri: str | None,
            gate) -> None:
    from hat_core.evaluation.evaluate import write_cases
    from hat_core.evaluation.report import write_report

    json_path, md_path = write_report(report, out)
    cases_path = write_cases(report, out.with_suffix(".cases.jsonl"))
    _summary_table(term, report)
    n_bad = sink.sinks[0].count
    stored = sum(len(getattr(s, "ids", ())) for s in sink.sinks[1:])
    term.print(f"bad cases: {n_bad} in {bad_path}" + (f", {stored} queued in the store"
                                                       if len(sink.sinks) > 1 else ""),
               highlight=False)
    uri = mlflow_uri or _configured_mlflow()
    if uri:
        from hat_core.evaluation.tracking import log_report

        run_id = log_report(report, uri=uri, artifacts=[json_path, md_path, cases_path],
                            params=gate.params())
        term.print(f"mlflow run {run_id}", highlight=False)
        term.hint(f"MLflow UI: `mlflow ui --backend-store-uri {uri}`")
    term.print(f"wrote {json_path}, {md_path} and {cases_path}", highlight=False)


def _configured_mlflow() -> str | None:
    return _configured().mlflow_tracking_uri


def _configured():
    from hat_core.settings import load_settings

    return load_settings()


def _progress_bar():
    """A context manager yielding `progress(suite, done, total)` drawn as rich bars."""
    import contextlib

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    @contextlib.contextmanager
    def bar():
        tasks: dict[str, int] = {}
        with Progress(TextColumn("{task.description:<18}"), BarColumn(), MofNCompleteColumn(),
                      console=Console(stderr=True), transient=False) as p:
            def update(suite: str, done: int, total: int) -> None:
                if suite not in tasks:
                    tasks[suite] = p.add_task(suite, total=total)
                p.update(tasks[suite], completed=done, total=total)
            yield update
    return bar()


def _summary_table(term: Terminal, report) -> None:
    from rich.table import Table

    table = Table(title=f"evaluation of {report.model}")
    for col in ("suite", "metric", "value"):
        table.add_column(col)
    for r in report.suites:
        for k, v in r.metrics.items():
            table.add_row(r.suite, k, f"{v:.3f}")
    term.print(table)
    for r in report.suites:
        term.print(f"{r.suite}: " + "  ".join(f"{k}={v:.3f}" for k, v in r.metrics.items()),
                   markup=False, highlight=False)


@app.command("compare")
@exits_on_error
def compare_cmd(
    first: Path = typer.Argument(..., help="report JSON or .cases.jsonl of the first model (a)"),
    second: Path = typer.Argument(..., help="the second model's (b), same cases"),
    suites: str = typer.Option("t1,t2", "--suites", help="comma-separated suites to compare"),
    metrics: str = typer.Option("first_tool_right,first_call_exact,all_calls_exact,passed",
                                "--metrics", help="per-case outcomes to compare, and rewards: "
                                "`reward` (HSA-RL's weighted sum) or `reward.NAME`"),
    reward_weights: str = typer.Option("", "--reward-weights",
                                       help="NAME=W,... for `reward` (default: HSA-RL's "
                                            "defaults, every reward 1)"),
    out: Path | None = typer.Option(None, "--out", help="write the comparisons as JSON"),
    by: str = typer.Option("case", "--by",
                           help="the independent unit of the rates' test: `case` (McNemar), "
                                "or `kind`: would the gain hold on other kinds? (sign-flip "
                                "over scenario kinds)"),
) -> None:
    """Two models on the same cases: each rate with its interval, b - a with a bootstrap
    interval, and McNemar's exact test (paired by case; `--by kind`: the kinds as the units);
    rewards as means, with the Wilcoxon signed-rank test."""
    import json

    from rich.console import Console
    from rich.table import Table

    from hat_core.evaluation.errors import EvalInputError
    from hat_core.evaluation.paired import (
        compare_cases,
        compare_rewards,
        parse_weights,
        read_case_rows,
    )

    if by not in ("case", "kind"):
        raise EvalInputError(f"--by {by!r}: write `case` or `kind`")
    weights = parse_weights(reward_weights)
    a, b = read_case_rows(first), read_case_rows(second)
    table = Table(title=f"b = {second.name} against a = {first.name} (paired by case"
                        f"{', kinds as the units' if by == 'kind' else ''})")
    for col in ("suite", "metric", "cases", *(("kinds",) if by == "kind" else ()), "a", "b",
                "b - a (95% CI)", "a ahead", "b ahead", "p"):
        table.add_column(col)
    results = []
    for suite in [s for s in suites.split(",") if s]:
        for metric in [m for m in metrics.split(",") if m]:
            if metric.startswith("reward"):
                c = compare_rewards(a, b, metric=metric, suite=suite, weights=weights)
                scale, ahead = 1, (c.a_better, c.b_better)
            else:
                c = compare_cases(a, b, metric=metric, suite=suite,
                                  cluster="kind" if by == "kind" else None)
                scale, ahead = 100, (c.a_only, c.b_only)
            results.append(c.to_dict())
            digits = ".1f" if scale == 100 else ".3f"
            low, high = (scale * x for x in c.diff_interval)
            kinds = ((f"{c.clusters} (deff {c.design_effect:.1f})" if scale == 100 else "-",)
                     if by == "kind" else ())
            table.add_row(suite, metric, str(c.n), *kinds, f"{scale * c.a:{digits}}",
                          f"{scale * c.b:{digits}}",
                          f"{scale * c.diff:+{digits}} ({low:+{digits}}, {high:+{digits}})",
                          str(ahead[0]), str(ahead[1]), f"{c.p_value:.3g} ({c.test})")
    Console(width=150).print(table)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        typer.echo(f"wrote {out}")


@app.command("edit-check")
@exits_on_error
def edit_check_cmd(
    old: str = typer.Option(..., "--old", help="harness before the edit (file or version)"),
    new: str = typer.Option(..., "--new", help="harness after the edit (file or version)"),
    before: str = typer.Option(..., "--before", help="model before retraining: " + MODEL_HELP),
    after: str = typer.Option(..., "--after", help="model after retraining: " + MODEL_HELP),
    served_model: str | None = typer.Option(None, "--model-name",
                                            help="model name at an endpoint"),
    episodes: int = typer.Option(30, "--episodes", min=1, help="held-out scenarios"),
    seed: int = typer.Option(0, "--seed"),
    max_tokens: int = typer.Option(512, "--max-tokens", min=1),
    out: Path | None = typer.Option(None, "--out", help="write the check as JSON"),
    bad_cases_out: Path | None = typer.Option(None, "--bad-cases-out",
                                              help="bad cases of both models (JSONL)"),
) -> None:
    """Bad-case rate on the new harness before and after retraining, and its reduction."""
    import json

    from hat_core.evaluation.badcases import JsonlBadCaseSink
    from hat_core.evaluation.edit_check import edit_check

    sink = JsonlBadCaseSink(bad_cases_out) if bad_cases_out else None
    try:
        with _progress_bar() as progress:
            check = edit_check(_harness(old), _harness(new),
                               before=_model(before, served_model, max_tokens),
                               after=_model(after, served_model, max_tokens),
                               episodes=episodes, seed=seed, max_tokens=max_tokens,
                               progress=progress, bad_cases=sink)
    finally:
        if sink is not None:
            sink.close()
    red = check.relative_reduction
    typer.echo(f"bad-case rate before {_pct(check.before_rate)} ({check.before.bad}/"
               f"{check.before.cases})   after {_pct(check.after_rate)} ({check.after.bad}/"
               f"{check.after.cases})   relative reduction "
               f"{_pct(red) if red is not None else '- (no bad case before)'}")
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(check.to_dict(), ensure_ascii=False, indent=2) + "\n",
                       encoding="utf-8")
        typer.echo(f"wrote {out}")


def _model(model: str, served_model: str | None, max_tokens: int, *,
           constrain_tools: bool = False, batch_size: int | None = None):
    """The model argument as a simulator policy (see MODEL_HELP); `constrain_tools` and
    `batch_size` (default `DEFAULT_BATCH`) only for a local model directory."""
    if batch_size is not None and batch_size < 1:
        raise ConfigError(f"--batch-size must be >= 1, got {batch_size}")
    if batch_size is not None and (model == "oracle" or model.startswith(
            ("memorising:", "http://", "https://"))):
        raise ConfigError(f"--batch-size batches a local model's decoding; {model} is not a "
                          "local model directory")
    from hat_core.evaluation.policy import BackendPolicy
    from hat_core.sim.policy import MemorisingPolicy, OraclePolicy

    if constrain_tools and (model == "oracle" or model.startswith("memorising:")):
        raise ConfigError(f"--constrain-tools holds a language model's decoding; {model} is "
                          "a scripted policy")
    if model == "oracle":
        return OraclePolicy()
    if model.startswith("memorising:"):
        from hat_core.harness.io import load_harness

        return MemorisingPolicy(load_harness(model.split(":", 1)[1]))
    return BackendPolicy(_backend(model, served_model, constrain_tools=constrain_tools,
                                  batch_size=batch_size or DEFAULT_BATCH),
                         max_tokens=max_tokens)


DEFAULT_BATCH = 8  # as the retrain flow's `eval.batch_size`


def _backend(model: str, served_model: str | None, *, constrain_tools: bool = False,
             batch_size: int = 1):
    from hat_core.inference.backends import OpenAIBackend, TransformersBackend

    if model.startswith(("http://", "https://")):
        if not served_model:
            raise ConfigError("an endpoint needs --model-name")
        if constrain_tools:
            raise ConfigError("--constrain-tools holds a local model's decoding; an endpoint "
                              "constrains its own (vLLM: structured outputs)")
        return OpenAIBackend(model, served_model)
    return TransformersBackend(model, constrain_tools=constrain_tools, batch_size=batch_size)
