"""Evaluation's torch threads on a small CPU, alone and beside a training process.

    .venv/bin/python benchmarks/eval_threads.py [--model examples/models/toy-long]
        [--episodes 6] [--repeats 3] [--max-tokens 160] [--threads 1,2]
        [--out benchmarks/out/eval_threads.json]

Plays the T1 suite (v1 harness, compact prompts, greedy, `--max-tokens` new tokens per step)
with the model behind `TransformersBackend`, the flow's evaluation path, at each thread count
of `--threads`: first alone, then beside a *neighbour*, a second process training the same
model on one thread (forward, backward and AdamW step on 2 x 512 random tokens, in a loop) as
`hat demo`'s fixed-harness child does while the flow evaluates. Prints episodes per second
(the median of `--repeats` plays, each of the same `--episodes` scenarios, so the work is the
same in every cell), generated tokens per second, and each cell's ratio to one thread alone,
all measured in this one run. The neighbour's own steps per second are printed too: a setting
that slows it down costs the other arm's training. Not pinned: the point is how two processes
share the cores.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

HARNESS = ROOT / "examples" / "harnesses" / "v1.yaml"

NEIGHBOUR = """
import sys, time, torch
from transformers import AutoModelForCausalLM
from transformers.utils import logging
logging.disable_progress_bar()
torch.set_num_threads(1)
model = AutoModelForCausalLM.from_pretrained(sys.argv[1])
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
ids = torch.randint(5, model.config.vocab_size, (2, 512))
steps, start = 0, time.perf_counter()
print("ready", flush=True)
while True:
    loss = model(input_ids=ids, labels=ids).loss
    loss.backward(); opt.step(); opt.zero_grad()
    steps += 1
    if steps % 5 == 0:
        print(f"{steps / (time.perf_counter() - start):.3f}", flush=True)
"""


class Neighbour:
    """A one-thread training loop in its own process; it prints its mean steps per second
    every 5 steps."""

    def __init__(self, model: Path):
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        self.proc = subprocess.Popen([sys.executable, "-c", NEIGHBOUR, str(model)],
                                     stdout=subprocess.PIPE, text=True, env=env)
        assert self.proc.stdout.readline().strip() == "ready"

    def finish(self) -> float | None:
        """Stop it; its last printed rate (None if it printed none). Safe to call twice."""
        if self.proc.poll() is None:
            self.proc.kill()
        lines = self.proc.stdout.read().split()
        self.proc.wait()
        return float(lines[-1]) if lines else None


def play(model_dir: Path, threads: int, args) -> tuple[float, float]:
    """(episodes/s, generated tokens/s) of one T1 play at `threads` torch threads."""
    import torch
    from transformers.utils import logging as hf_logging

    from hat_core.evaluation.suites.registry import get_suite
    from hat_core.harness.io import load_harness
    from hat_core.harness.render import use_profile
    from hat_core.inference.backends import TransformersBackend

    hf_logging.disable_progress_bar()
    torch.set_num_threads(threads)
    backend = TransformersBackend(model_dir, device="cpu")
    generated = []
    original = backend.model.generate

    def counting(**kwargs):  # the new tokens of every step
        out = original(**kwargs)
        generated.append(out.shape[1] - kwargs["input_ids"].shape[1])
        return out
    backend.model.generate = counting
    harness = load_harness(HARNESS)
    with use_profile("compact"):
        start = time.perf_counter()
        get_suite("t1").run(backend, harness, episodes=args.episodes, seed=0,
                            max_tokens=args.max_tokens)
        seconds = time.perf_counter() - start
    return args.episodes / seconds, sum(generated) / seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=ROOT / "examples" / "models" / "toy-long")
    parser.add_argument("--episodes", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=160)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    counts = [int(t) for t in args.threads.split(",")]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, model {args.model}, "
          f"T1 x {args.episodes} episodes, max {args.max_tokens} new tokens, medians of "
          f"{args.repeats}", flush=True)
    print(f"{'threads':>7} {'beside training':>15} {'episodes/s':>10} {'tokens/s':>9} "
          f"{'x 1 alone':>9} {'neighbour steps/s':>17}", flush=True)
    rows = []
    for beside in (False, True):
        for threads in counts:
            neighbour = Neighbour(args.model) if beside else None
            try:
                rates = [play(args.model, threads, args) for _ in range(args.repeats)]
            finally:
                neighbour_rate = neighbour.finish() if neighbour else None
            rows.append({"threads": threads, "beside_training": beside,
                         "episodes_per_s": statistics.median(r[0] for r in rates),
                         "tokens_per_s": statistics.median(r[1] for r in rates),
                         "neighbour_steps_per_s": neighbour_rate})
            print_row(rows[-1], rows[0]["episodes_per_s"])
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()},
                                        "rows": rows}, indent=2) + "\n", encoding="utf-8")
    return 0


def print_row(r: dict, reference: float) -> None:
    neighbour = r["neighbour_steps_per_s"]
    print(f"{r['threads']:>7} {'yes' if r['beside_training'] else 'no':>15} "
          f"{r['episodes_per_s']:>10.3f} {r['tokens_per_s']:>9.0f} "
          f"{r['episodes_per_s'] / reference:>9.2f} "
          f"{'-' if neighbour is None else f'{neighbour:.2f}':>17}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
