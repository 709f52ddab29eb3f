"""`hat eval ...`: score IFEval responses and BFCL-format tool calls; run named suites."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from hat_cli.errors import exits_on_error
from hat_core.errors import ConfigError
from hat_core.evaluation.jsonl import write_jsonl

app = typer.Typer(help="Offline evaluation: IFEval, tool-call matching, named suites.",
                  no_args_is_help=True)

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
    from hat_core.evaluation import ifeval  # imports nltk: keep `hat --help` fast
    from hat_core.evaluation.ifeval_checker import load_splitter

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
    from hat_core.evaluation import tool_calls

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


@app.command("run")
@exits_on_error
def run(
    model: str = typer.Argument(..., help="a local model directory or an endpoint URL"),
    suites: str = typer.Option("ifeval", "--suites", help="comma-separated suite names"),
    out: Path = typer.Option(Path("report.json"), "--out", help="report JSON (+ .md beside)"),
    harness: Path | None = typer.Option(None, "--harness", help="harness file"),
    served_model: str | None = typer.Option(None, "--model-name",
                                            help="model name at the endpoint"),
    limit: int | None = typer.Option(None, "--limit", min=1, help="items per suite"),
    max_tokens: int = typer.Option(512, "--max-tokens", min=1),
    nltk_data: Path | None = NLTK_DATA,
) -> None:
    """Run named suites on a model and write a JSON report and a markdown summary."""
    from hat_core.evaluation.registry import get_suite
    from hat_core.evaluation.report import EvalReport, write_report
    from hat_core.harness_io import load_harness

    chosen = [get_suite(name.strip()) for name in suites.split(",") if name.strip()]
    h = load_harness(harness) if harness else None
    backend = _backend(model, served_model)
    results = tuple(s.run(backend, h, nltk_data=nltk_data_dir(nltk_data), limit=limit,
                          max_tokens=max_tokens) for s in chosen)
    report = EvalReport(model, h.content_hash() if h else None, results)
    json_path, md_path = write_report(report, out)
    for r in results:
        typer.echo(f"{r.suite}: " + "  ".join(f"{k}={v:.3f}" for k, v in r.metrics.items()))
    typer.echo(f"wrote {json_path} and {md_path}")


def _backend(model: str, served_model: str | None):
    from hat_core.evaluation.backends import OpenAIBackend, TransformersBackend

    if model.startswith(("http://", "https://")):
        if not served_model:
            raise ConfigError("an endpoint needs --model-name")
        return OpenAIBackend(model, served_model)
    return TransformersBackend(model)
