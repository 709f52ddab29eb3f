"""SFT throughput: `hat train sft` with packed rows against today's path and a plain torch loop.

    .venv/bin/python benchmarks/train_throughput.py [--base DIR] [--arch toy] [--rows 96]
        [--max-length 2048] [--batch 4] [--steps 8] [--warmup 3] [--repeats 2] [--threads 1]
        [--arms today,packed,packed-compiled,loop,loop-compiled]

Five arms on the same model weights, the same oracle rows (v1 harness, compact render
profile) and the same batch size, in one process, one after the other, in an order that
alternates between repeats:
- `today`: `run_sft` on one episode per row (what `hat train sft` did before packing);
- `packed`: `run_sft` with `pack: true` (episodes of one surface per row, fixed length);
- `packed-compiled`: the same with `torch_compile: true` (TRL's Trainer compiles the model);
- `loop`: the pre-training loop's step (`hat_core.basemodel.pretrain.causal_lm_loss`,
  AdamW, clipping) eager, on the packed fixed-length rows;
- `loop-compiled`: the same step under `torch.compile`.
bf16 follows the device default of `hat_core.training.device` (autocast only where the CPU
computes bf16 natively), the same for every arm. Per arm: the median over repeats of tokens/s
(every token a step processes, padding included) and assistant tokens/s (the tokens that
carry loss), each over the timed steps (after `--warmup` steps). Ratios, for the faster of
the two `hat train sft` arms measured (compiled first): against loop-compiled on tokens/s (goal
>= 0.8) and against today on assistant tokens/s (goal >= 4).
`--arch toy` trains a freshly initialised model of the `toy` size on the base's tokenizer
(throughput does not depend on trained weights); without `--base` the `toy-test` base is
built (about 90 s) into benchmarks/out/. Results also go to benchmarks/out/train_throughput.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from machine import one_core

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
ARMS = ("today", "packed", "packed-compiled", "loop", "loop-compiled")


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--base", type=Path, help="a model dir (default: build toy-test)")
    p.add_argument("--arch", default="", help="train a fresh model of this base size instead")
    p.add_argument("--rows", type=int, default=96)
    p.add_argument("--max-length", type=int, default=2048)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--arms", default=",".join(ARMS), help="a subset of " + ",".join(ARMS))
    args = p.parse_args(argv)
    args.arms = tuple(a for a in ARMS if a in args.arms.split(","))
    return args


def model_dir(args: argparse.Namespace, work: Path) -> Path:
    """The base dir, or (`--arch`) a fresh model of that size saved with the base's tokenizer."""
    from hat_core.basemodel import build_base_model, load_tokenizer
    from hat_core.basemodel.model import make_model
    from hat_core.basemodel.sizes import get_size

    base = args.base or build_base_model(OUT / "toy-test-base", size="toy-test", seed=0).path
    if not args.arch:
        return base
    tokenizer = load_tokenizer(base)
    out = work / f"fresh-{args.arch}"
    make_model(get_size(args.arch), tokenizer, seed=0).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def oracle_file(n: int, work: Path) -> Path:
    from hat_core.harness.render import use_profile
    from hat_core.training.rows import oracle_rows

    with use_profile("compact"):
        rows = oracle_rows(ROOT / "examples" / "harnesses" / "v1.yaml", n, seed=0)
    path = work / "rows.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return path


class StepClock:
    """Per-step wall times from the Trainer's callbacks, tokens from the collator."""

    def __init__(self):
        self.times: list[float] = []
        self.tokens: list[tuple[int, int]] = []
        self._start = 0.0

    def collator(self, inner):
        def collate(features):
            batch = inner(features)
            self.tokens.append((batch["input_ids"].numel(),
                                int((batch["labels"] != -100).sum())))
            return batch
        return collate

    def callback(self):
        from transformers import TrainerCallback

        clock = self

        class Clock(TrainerCallback):
            def on_step_begin(self, args, state, control, **kwargs):
                clock._start = time.perf_counter()

            def on_step_end(self, args, state, control, **kwargs):
                clock.times.append(time.perf_counter() - clock._start)
        return Clock()


def rates(times: list[float], tokens: list[tuple[int, int]], warmup: int) -> tuple[float, float]:
    """(tokens/s, assistant tokens/s) over the steps after the warm-up ones."""
    t, n = times[warmup:], tokens[warmup:len(times)]
    seconds = sum(t)
    return sum(a for a, _ in n) / seconds, sum(b for _, b in n) / seconds


def trl_arm(base: Path, data: Path, args: argparse.Namespace, work: Path, pack: bool,
            compiled: bool = False):
    from hat_core.harness.render import use_profile
    from hat_core.training import load_stage_config
    from hat_core.training.sft import build_sft_trainer
    from hat_core.training.stage import setup

    config = load_stage_config("sft", None, {
        "base": str(base), "dataset": str(data), "output_dir": str(work / "sft"),
        "max_steps": args.warmup + args.steps, "per_device_train_batch_size": args.batch,
        "max_length": args.max_length, "pack": pack, "save_steps": 10_000,
        "probe.enabled": False, "render_profile": "compact", "logging_steps": 1000,
        "torch_compile": compiled})
    clock = StepClock()
    with use_profile("compact"):
        trainer, _ = build_sft_trainer(config, setup(config))
    trainer.data_collator = clock.collator(trainer.data_collator)
    trainer.add_callback(clock.callback())
    trainer.train()
    return rates(clock.times, clock.tokens, args.warmup)


def loop_arm(base: Path, data: Path, args: argparse.Namespace, compiled: bool):
    import torch
    from transformers import AutoModelForCausalLM

    from hat_core.basemodel import load_tokenizer
    from hat_core.basemodel.pretrain import causal_lm_loss
    from hat_core.harness.render import use_profile
    from hat_core.training.device import device_defaults
    from hat_core.training.packing import encode_fixed, pack_episodes
    from hat_core.training.rows import load_sft_rows

    tokenizer = load_tokenizer(base)
    with use_profile("compact"):
        rows = pack_episodes(load_sft_rows(data), tokenizer, max_length=args.max_length)
    enc = encode_fixed(rows, tokenizer, max_length=args.max_length)
    ids, labels = torch.tensor(enc.input_ids), torch.tensor(enc.labels)
    model = AutoModelForCausalLM.from_pretrained(str(base), dtype=torch.float32)
    model.train()
    forward = torch.compile(model) if compiled else model
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    bf16 = device_defaults("cpu").bf16
    times, tokens = [], []
    for step in range(args.warmup + args.steps):
        pick = torch.arange(step * args.batch, (step + 1) * args.batch) % len(ids)
        start = time.perf_counter()
        loss = causal_lm_loss(forward, ids[pick], labels[pick], bf16)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        times.append(time.perf_counter() - start)
        tokens.append((ids[pick].numel(), int((labels[pick] != -100).sum())))
    return rates(times, tokens, args.warmup)


def run_arm(name: str, base: Path, data: Path, args, work: Path) -> tuple[float, float]:
    if name in ("today", "packed", "packed-compiled"):
        return trl_arm(base, data, args, work, pack=name != "today",
                       compiled=name == "packed-compiled")
    return loop_arm(base, data, args, compiled=name == "loop-compiled")


def main(argv: list[str]) -> int:
    import logging
    import warnings

    import torch

    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    pinned = one_core() if args.threads == 1 else f"{args.threads} threads"
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    from hat_core.training.device import device_defaults

    results: dict[str, list[tuple[float, float]]] = {a: [] for a in args.arms}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        base, data = model_dir(args, work), oracle_file(args.rows, work)
        for repeat in range(args.repeats):
            order = args.arms if repeat % 2 == 0 else tuple(reversed(args.arms))
            for name in order:
                results[name].append(run_arm(name, base, data, args, work))
                print(f"repeat {repeat + 1}: {name:14s} {results[name][-1][0]:9.0f} tok/s "
                      f"{results[name][-1][1]:8.0f} assistant tok/s", flush=True)
    med = {a: (statistics.median(r[0] for r in results[a]),
               statistics.median(r[1] for r in results[a])) for a in args.arms}
    print(f"\npython {sys.version.split()[0]}, torch {torch.__version__}, {pinned}, "
          f"bf16 {device_defaults('cpu').bf16}, max_length {args.max_length}, batch "
          f"{args.batch}, {args.steps} timed steps, median of {args.repeats} repeats\n")
    print(f"{'arm':14s} {'tokens/s':>10s} {'assistant tokens/s':>20s}")
    for a in args.arms:
        print(f"{a:14s} {med[a][0]:10.0f} {med[a][1]:20.0f}")
    # `hat train sft`'s best path: compiled where it was measured, else eager packed
    ours = next((a for a in ("packed-compiled", "packed") if a in med), None)
    vs_loop = vs_today = None
    if ours and "loop-compiled" in med:
        vs_loop = med[ours][0] / med["loop-compiled"][0]
        print(f"\n{ours} / loop-compiled, tokens/s: {vs_loop:.2f} (goal >= 0.8)")
    if ours and "today" in med:
        vs_today = med[ours][1] / med["today"][1]
        print(f"{ours} / today, assistant tokens/s: {vs_today:.2f} (goal >= 4)")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "train_throughput.json").write_text(json.dumps(
        {"args": {k: str(v) for k, v in vars(args).items()}, "runs": results,
         "median": med, "packed_vs_loop_compiled": vs_loop, "packed_vs_today": vs_today},
        indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
