"""Evaluation throughput: cases per second of each suite, with the oracle and a tiny model.

    .venv/bin/python benchmarks/eval_throughput.py [--episodes 60] [--repeats 3]
        [--size tiny | --model DIR] [--model-episodes 2] [--model-repeats 3] [--max-tokens 16]
        [--max-steps 1] [--skip-model] [--out benchmarks/out/eval_throughput.json]

Each suite runs `--repeats` times (median reported; the first run of each suite, which also
fills the per-harness caches, is timed like the rest and is part of the median) on the v1
harness, pinned to one CPU. A *case* is one judged episode (t1, t2, the robustness suites),
one episode read (cot_length, which plays T1 itself here), one prompt (ifeval) or one
question (tool_calls). The oracle plays the simulator suites only. The model is the project's
base model of `--size` (`hat_core.basemodel`: the newest build of that size in
`~/.cache/hat-ops/base-models`, else built; or any `--model DIR`) behind
`TransformersBackend` + `BackendPolicy`, greedy, with `--max-tokens` new tokens per step and
`--max-steps` steps per viewer turn.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from machine import one_core

from hat_core.evaluation.suites.registry import get_suite
from hat_core.harness.io import load_harness
from hat_core.sim.policy import OraclePolicy

ROOT = Path(__file__).resolve().parent.parent
HARNESS = ROOT / "examples" / "harnesses" / "v1.yaml"
BFCL = ROOT / "examples" / "bfcl"
SIM_SUITES = ("t1", "t2", "tool_robustness", "prompt_robustness", "cot_length")
MODEL_ONLY = ("ifeval", "tool_calls")


def options(suite: str, episodes: int, args) -> dict:
    if suite in SIM_SUITES:
        return {"episodes": episodes, "variants": args.variants, "seed": 0,
                "max_steps": args.max_steps, "max_tokens": args.max_tokens}
    if suite == "tool_calls":
        return {"questions": BFCL / "questions.jsonl", "answers": BFCL / "possible_answers.jsonl",
                "max_tokens": args.max_tokens}
    return {"limit": args.ifeval_prompts, "max_tokens": args.max_tokens}


def cases_of(result) -> int:
    return result.summary.get("episodes") or len(result.rows)


def measure(suite: str, model, harness, episodes: int, repeats: int, args) -> tuple[int, list]:
    """Cases per run and cases/s of each repeat."""
    rates, cases = [], 0
    for _ in range(repeats):
        start = time.perf_counter()
        result = get_suite(suite).run(model, harness, **options(suite, episodes, args))
        cases = cases_of(result)
        rates.append(cases / (time.perf_counter() - start))
    return cases, rates


def model_dir(size: str, given: Path | None) -> Path:
    """`--model`, else the newest cached base model of `size`, else a fresh build."""
    if given is not None:
        return given
    cache = Path.home() / ".cache" / "hat-ops" / "base-models"
    found = sorted(cache.glob(f"{size}-seed0-*/config.json"), key=lambda p: p.stat().st_mtime)
    if found:
        return found[-1].parent
    import tempfile

    from hat_core.basemodel import build_base_model

    out = Path(tempfile.mkdtemp(prefix="hat-eval-bench-")) / f"base-{size}"
    return build_base_model(out, size=size, seed=0, cache_dir=cache).path


def tiny_model(path: Path, max_tokens: int):
    from hat_core.evaluation.policy import BackendPolicy
    from hat_core.inference.backends import TransformersBackend

    return BackendPolicy(TransformersBackend(path, device="cpu"), max_tokens=max_tokens)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--variants", type=int, default=2)
    parser.add_argument("--size", default="tiny")
    parser.add_argument("--model", type=Path, help="a model directory instead of --size")
    parser.add_argument("--model-episodes", type=int, default=2)
    parser.add_argument("--model-repeats", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--max-steps", type=int, default=1)
    parser.add_argument("--ifeval-prompts", type=int, default=4)
    parser.add_argument("--skip-model", action="store_true")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    harness = load_harness(HARNESS)
    print(f"python {sys.version.split()[0]}, {one_core()}, v1 harness, {args.variants} "
          f"variants (per robustness family), medians of {args.repeats} (oracle) / "
          f"{args.model_repeats} (model) repeats")
    rows = []
    print_header()
    for suite in SIM_SUITES:
        cases, rates = measure(suite, OraclePolicy(), harness, args.episodes, args.repeats, args)
        rows.append(print_row({"suite": suite, "policy": "oracle", "cases": cases,
                               "rates": rates}))
    if not args.skip_model:
        import torch

        torch.set_num_threads(1)
        path = model_dir(args.size, args.model)
        print(f"model {path}", flush=True)
        model = tiny_model(path, args.max_tokens)
        for suite in (*SIM_SUITES, *MODEL_ONLY):
            cases, rates = measure(suite, model, harness, args.model_episodes,
                                   args.model_repeats, args)
            rows.append(print_row({"suite": suite, "policy": f"base-{args.size}",
                                   "cases": cases, "rates": rates}))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()},
                                        "rows": rows}, indent=2) + "\n", encoding="utf-8")
    return 0


def print_header() -> None:
    print(f"{'suite':<18} {'policy':<12} {'cases/run':>9} {'median/s':>10} {'min/s':>9} "
          f"{'max/s':>9}", flush=True)


def print_row(r: dict) -> dict:
    rates = r["rates"]
    print(f"{r['suite']:<18} {r['policy']:<12} {r['cases']:>9} "
          f"{statistics.median(rates):>10.2f} {min(rates):>9.2f} {max(rates):>9.2f}", flush=True)
    return r


if __name__ == "__main__":
    sys.exit(main())
