"""Evaluation with cases played side by side: episodes per second at each batch size.

    .venv/bin/python benchmarks/eval_batching.py [--model examples/models/toy-long]
        [--suites t1] [--harness examples/harnesses/v2.yaml] [--episodes 45] [--variants 1]
        [--batch-sizes 1,4,8,16] [--repeats 3] [--max-tokens 160] [--render-profile compact]
        [--out benchmarks/out/eval_batching.json]

Plays each suite of `--suites` (simulator suites, or `ifeval`, whose `--episodes` prompts are
single turns sent `batch_size` at a time) with the model behind `TransformersBackend`, the flow's
evaluation path (`hat_core.evaluation.evaluate`, greedy, `--max-tokens` new tokens per step),
at every batch size of `--batch-sizes` (`batch_size` = cases played side by side in lockstep,
`hat_core.inference.batching`; 1 = one case at a time). One torch thread, pinned to one CPU.
Prints, per suite and batch size, the median episodes per second of `--repeats` plays (the
same cases each time), its ratio to batch size 1 measured in this run, the lockstep rounds
and requests per round of the last play, and how many cases' transcripts and verdicts are
the same as at batch size 1 (responses for `ifeval`; a batch rounds differently, so a near-tie
can go the other way).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from machine import one_core

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def play(model_dir: Path, suite: str, batch_size: int, args) -> tuple[float, list, dict]:
    """(episodes/s, the case rows, lockstep rounds and requests) of one play of `suite`."""
    from hat_core.evaluation.evaluate import EvalOptions, evaluate
    from hat_core.harness.io import load_harness
    from hat_core.harness.render import use_profile
    from hat_core.inference.backends import TransformersBackend

    class Counting(TransformersBackend):
        rounds = requests = 0

        def chat_batch(self, requests):
            self.rounds, self.requests = self.rounds + 1, self.requests + len(requests)
            return super().chat_batch(requests)

    backend = Counting(model_dir, device="cpu", batch_size=batch_size)
    options = EvalOptions(episodes=args.episodes, variants=args.variants, seed=0,
                          max_tokens=args.max_tokens, limit=args.episodes)
    with use_profile(args.render_profile):
        start = time.perf_counter()
        report = evaluate(backend, load_harness(args.harness), (suite,), options)
        elapsed = time.perf_counter() - start
    rows = report.suites[0].rows
    return len(rows) / elapsed, rows, {"rounds": backend.rounds, "requests": backend.requests}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=ROOT / "examples/models/toy-long")
    parser.add_argument("--suites", default="t1")
    parser.add_argument("--harness", type=Path, default=ROOT / "examples/harnesses/v2.yaml")
    parser.add_argument("--episodes", type=int, default=45)
    parser.add_argument("--variants", type=int, default=1)
    parser.add_argument("--batch-sizes", default="1,4,8,16")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=160)
    parser.add_argument("--render-profile", default="compact")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    import torch
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    torch.set_num_threads(1)
    sizes = [int(s) for s in args.batch_sizes.split(",")]
    if sizes[0] != 1:
        sizes.insert(0, 1)
    print(f"{one_core()}, 1 torch thread, model {args.model}, harness {args.harness.name}, "
          f"{args.episodes} scenarios, medians of {args.repeats} plays")
    print(f"{'suite':<6} {'batch':>5} {'cases':>5} {'cases/s':>8} {'x batch 1':>9} "
          f"{'rounds':>6} {'per round':>9} {'same transcripts':>16} {'same verdicts':>13}",
          flush=True)
    out = []
    for suite in args.suites.split(","):
        reference = None
        base_rate = None
        for size in sizes:
            rates, rows, counts = [], [], {}
            for _ in range(args.repeats):
                rate, rows, counts = play(args.model, suite, size, args)
                rates.append(rate)
            rate = statistics.median(rates)
            if reference is None:
                reference, base_rate = rows, rate
            pairs = list(zip(reference, rows, strict=True))
            said = "transcript" if "transcript" in rows[0] else "response"  # ifeval: response
            same_t = sum(a[said] == b[said] for a, b in pairs)
            same_v = sum(a["passed"] == b["passed"] for a, b in pairs)
            per_round = counts["requests"] / counts["rounds"] if counts.get("rounds") else 1.0
            row = {"suite": suite, "batch_size": size, "cases": len(rows), "cases_per_s": rate,
                   "ratio": rate / base_rate, "rates": rates, "rounds": counts.get("rounds", 0),
                   "requests_per_round": per_round, "same_transcripts": same_t,
                   "same_verdicts": same_v}
            out.append(row)
            print(f"{suite:<6} {size:>5} {len(rows):>5} {rate:>8.2f} {rate / base_rate:>8.2f}x "
                  f"{row['rounds']:>6} {per_round:>9.1f} {same_t:>10} of {len(rows):<3} "
                  f"{same_v:>7} of {len(rows):<3}", flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()},
                                        "rows": out}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
