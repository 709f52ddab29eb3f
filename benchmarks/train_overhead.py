"""Training overhead: tokens per second of each HAT stage through the project's wrappers
(`hat_core.training`) vs a bare TRL script, same model, data and TRL config values.

    .venv/bin/python benchmarks/train_overhead.py [--base DIR | --size test|tiny]
        [--repeats 3] [--warmup 1] [--sft-steps 16] [--opd-steps 8] [--rl-steps 6]
        [--goal 0.95]

Per stage and repeat, both variants run in the same process, one after the other, in an
order that alternates between repeats. Each builds its model and trainer, trains and saves
(the wrapper also validates its config, writes its manifest and, for RL, draws the HSA
variant pool; the regression probe is off: it is timed separately). Reported per stage:
median training tokens/s (TRL's `num_tokens` over `train_runtime`), median end-to-end tokens/s
(over the whole call: load, build, train, save), and the wrapper/bare ratios: the median of
the per-repeat ratios (the pair runs back to back, so load drifts on a shared machine
cancel), with the ratio of the medians beside it. One CPU
thread; the rows are built once outside the timed region; `--warmup` repeats (imports,
first-call caches) are run and not counted. Exits 1 when a median training
ratio is below `--goal`. Results also go to benchmarks/out/train_overhead.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from machine import one_core

ROOT = Path(__file__).resolve().parent.parent
MINI = ROOT / "examples" / "configs" / "rl_mini_harness.yaml"
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


@dataclass
class Measure:
    tokens: float
    train_s: float
    wall_s: float

    @property
    def train_tps(self) -> float:
        return self.tokens / self.train_s

    @property
    def wall_tps(self) -> float:
        return self.tokens / self.wall_s


def _tokens(history: list[dict]) -> float:
    return max(h.get("num_tokens", 0.0) for h in history)


def _runtime(history: list[dict]) -> float:
    return next(h["train_runtime"] for h in reversed(history) if "train_runtime" in h)


COMMON = dict(learning_rate=1e-4, per_device_train_batch_size=2, gradient_accumulation_steps=1,
              warmup_steps=0, logging_steps=1, save_total_limit=2, seed=0, bf16=False,
              gradient_checkpointing=False, use_cpu=True, report_to="none", disable_tqdm=True)


def _load(base: Path):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(str(base), dtype=torch.float32)
    return model, AutoTokenizer.from_pretrained(str(base), padding_side="left")


def bare_sft(base: Path, rows: list[dict], steps: int, out: Path) -> Measure:
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    start = time.perf_counter()
    model, tok = _load(base)
    args = SFTConfig(output_dir=str(out / "checkpoints"), max_steps=steps, save_steps=steps,
                     max_length=768, assistant_only_loss=True, **COMMON)
    trainer = SFTTrainer(model=model, args=args, train_dataset=Dataset.from_list(rows),
                         processing_class=tok)
    trainer.train()
    trainer.save_model(str(out))
    tok.save_pretrained(str(out))
    history = trainer.state.log_history
    return Measure(_tokens(history), _runtime(history), time.perf_counter() - start)


def bare_opd(base: Path, prompts: list[dict], steps: int, out: Path) -> Measure:
    from datasets import Dataset
    from trl import DistillationConfig, DistillationTrainer

    start = time.perf_counter()
    model, tok = _load(base)
    teacher, _ = _load(base)
    args = DistillationConfig(output_dir=str(out / "checkpoints"), max_steps=steps,
                              save_steps=steps, beta=1.0, max_completion_length=32,
                              temperature=1.0, use_vllm=False, **COMMON)
    trainer = DistillationTrainer(model=model, teacher_model=teacher, args=args,
                                  train_dataset=Dataset.from_list(prompts), processing_class=tok)
    trainer.train()
    trainer.save_model(str(out))
    tok.save_pretrained(str(out))
    history = trainer.state.log_history
    return Measure(_tokens(history), _runtime(history), time.perf_counter() - start)


def bare_rl(base: Path, data, steps: int, out: Path) -> Measure:
    """GRPO with the same environments, rows and reward functions, called directly."""
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from hat_core.training.rewards_adapter import reward_functions
    from hat_core.training.rl_env import environment_factories, use_harness_tool_schemas

    pool, catalog, rows, weights = data
    start = time.perf_counter()
    model, tok = _load(base)
    common = COMMON | {"per_device_train_batch_size": 4}
    args = GRPOConfig(output_dir=str(out / "checkpoints"), max_steps=steps, save_steps=steps,
                      num_generations=4, max_completion_length=32, max_tool_calling_iterations=2,
                      reward_weights=list(weights.values()),
                      multi_objective_aggregation="normalize_then_sum", scale_rewards="group",
                      beta=0.0, temperature=1.0, use_vllm=False, **common)
    trainer = GRPOTrainer(model=model, reward_funcs=reward_functions(weights), args=args,
                          train_dataset=Dataset.from_list(rows), processing_class=tok,
                          environment_factory=environment_factories(pool, catalog))
    use_harness_tool_schemas(trainer, pool)
    trainer.train()
    trainer.save_model(str(out))
    tok.save_pretrained(str(out))
    history = trainer.state.log_history
    return Measure(_tokens(history), _runtime(history), time.perf_counter() - start)


def wrapped(stage: str, overrides: dict) -> Measure:
    from hat_core.training import load_stage_config, run_stage_named

    start = time.perf_counter()
    result = run_stage_named(stage, load_stage_config(stage, None, overrides))
    return Measure(_tokens(result.history), _runtime(result.history),
                   time.perf_counter() - start)


def overrides(stage: str, base: Path, sft_file: Path, steps: int, out: Path) -> dict:
    common = {"base": str(base), "output_dir": str(out), "max_steps": steps, "save_steps": steps,
              "learning_rate": 1e-4, "per_device_train_batch_size": 2, "logging_steps": 1,
              "probe.enabled": False, "device": "cpu"}
    if stage == "sft":
        return common | {"dataset": str(sft_file), "max_length": 768}
    if stage == "opd":
        return common | {"teacher": str(base), "prompts_size": 16, "max_completion_length": 32}
    return common | {"harness": str(MINI), "variants": 2, "scenarios": 60,
                     "scenario_kinds": ["price", "comment", "compliance_absolute"],
                     "num_generations": 4, "per_device_train_batch_size": 4,
                     "max_completion_length": 32, "max_tool_calling_iterations": 2}


def build_base(size: str, cache: Path, tmp: Path) -> Path:
    """The base model of `size` (seed 0), built once into `cache` and copied to `tmp`."""
    from hat_core.basemodel import build_base_model

    return build_base_model(tmp / f"base-{size}", size=size, seed=0,
                            cache_dir=cache / "base-models").path


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", type=Path)
    parser.add_argument("--size", default="test", choices=["test", "tiny", "small"])
    parser.add_argument("--cache-dir", type=Path,
                        default=Path(os.environ.get("HAT_CACHE_DIR",
                                                    Path.home() / ".cache" / "hat-ops")))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1, help="uncounted first repeats")
    parser.add_argument("--sft-steps", type=int, default=16)
    parser.add_argument("--opd-steps", type=int, default=8)
    parser.add_argument("--rl-steps", type=int, default=6)
    parser.add_argument("--stages", default="sft,opd,rl")
    parser.add_argument("--goal", type=float, default=0.95)
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    pinned = one_core()
    from hat_core.training.config import load_stage_config
    from hat_core.training.rl import rl_data
    from hat_core.training.rows import load_opd_prompts, oracle_rows

    tmp = Path(tempfile.mkdtemp(prefix="train-overhead-"))
    base = args.base or build_base(args.size, args.cache_dir, tmp)
    sft_file = tmp / "sft.jsonl"
    rows = oracle_rows(MINI, 32, seed=0)
    sft_file.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n")
    prompts = load_opd_prompts("builtin", 16, 0)
    rl_cfg = load_stage_config("rl", None, overrides("rl", base, sft_file, 1, tmp / "x"))
    pool, catalog, rl_rows = rl_data(rl_cfg)
    steps = {"sft": args.sft_steps, "opd": args.opd_steps, "rl": args.rl_steps}
    bare = {"sft": lambda o: bare_sft(base, rows, steps["sft"], o),
            "opd": lambda o: bare_opd(base, prompts, steps["opd"], o),
            "rl": lambda o: bare_rl(base, (pool, catalog, rl_rows, rl_cfg.rewards),
                                    steps["rl"], o)}
    stages = args.stages.split(",")
    results: dict[str, dict[str, list[Measure]]] = {s: {"wrapper": [], "bare": []} for s in stages}
    for repeat in range(-args.warmup, args.repeats):
        for stage in stages:
            order = ["wrapper", "bare"] if repeat % 2 == 0 else ["bare", "wrapper"]
            label = "warmup" if repeat < 0 else f"repeat {repeat}"
            for kind in order:
                out = tmp / f"{stage}-{kind}-{repeat}"
                if kind == "wrapper":
                    m = wrapped(stage, overrides(stage, base, sft_file, steps[stage], out))
                else:
                    m = bare[stage](out)
                if repeat >= 0:
                    results[stage][kind].append(m)
                print(f"{label} {stage:3s} {kind:7s} tokens {m.tokens:7.0f} "
                      f"train {m.train_s:6.2f} s wall {m.wall_s:6.2f} s", file=sys.stderr)
    return report(results, steps, f"base {base}; 1 thread, {pinned}; {args.repeats} repeats",
                  args.goal)


def paired(runs: dict[str, list[Measure]], attr: str) -> list[float]:
    """wrapper/bare per repeat: the two ran back to back, so load drifts on a shared machine
    largely cancel."""
    return [getattr(w, attr) / getattr(b, attr)
            for w, b in zip(runs["wrapper"], runs["bare"], strict=True)]


def report(results, steps, header: str, goal: float) -> int:
    rows, ok = [], True
    print(f"\n{header}; tokens/s are medians; ratios are medians of the per-repeat "
          f"wrapper/bare ratios (ratio of the medians in brackets)\n")
    print("| stage | steps | tokens | bare train tok/s | wrapper train tok/s | train ratio | "
          "bare e2e tok/s | wrapper e2e tok/s | e2e ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for stage, runs in results.items():
        med = {k: (statistics.median(m.train_tps for m in v),
                   statistics.median(m.wall_tps for m in v)) for k, v in runs.items()}
        ratio = statistics.median(paired(runs, "train_tps"))
        e2e = statistics.median(paired(runs, "wall_tps"))
        ok &= ratio >= goal
        tokens = statistics.median(m.tokens for m in runs["wrapper"])
        print(f"| {stage} | {steps[stage]} | {tokens:.0f} | {med['bare'][0]:.0f} | "
              f"{med['wrapper'][0]:.0f} | {ratio:.3f} ({med['wrapper'][0] / med['bare'][0]:.3f})"
              f" | {med['bare'][1]:.0f} | {med['wrapper'][1]:.0f} | {e2e:.3f} "
              f"({med['wrapper'][1] / med['bare'][1]:.3f}) |")
        rows.append({"stage": stage, "steps": steps[stage], "tokens": tokens,
                     "bare_train_tps": med["bare"][0], "wrapper_train_tps": med["wrapper"][0],
                     "train_ratio": ratio, "paired_train_ratios": paired(runs, "train_tps"),
                     "bare_e2e_tps": med["bare"][1], "wrapper_e2e_tps": med["wrapper"][1],
                     "e2e_ratio": e2e, "runs": {k: [vars(m) for m in v] for k, v in runs.items()}})
    out = ROOT / "benchmarks" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / "train_overhead.json").write_text(json.dumps(rows, indent=2))
    print(f"\ngoal: training ratio >= {goal}: {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
