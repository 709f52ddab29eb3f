"""The CPU recipe's learning run: HSA-SFT against fixed-harness SFT, side by side, same budget.

    .venv/bin/python benchmarks/learning_run.py --work runs/learning [--base DIR]
        [--steps 1800] [--episodes 45] [--variants 4] [--eval-only] [--models hsa,fixed]
        [--then opd,rl | --then rl] [--arms hsa,fixed] [--opd-steps 100] [--rl-steps 60]

From one base (the shipped `examples/models/toy-long`, or `hat base build --size toy-long`),
on 2 cores:
1. two data builds from the same scenarios and teacher (`examples/configs/data_cpu.yaml`:
   a fresh training-pool surface every 6 scenarios; `data_cpu_fixed.yaml`: the original
   harness only), skipped when WORK already holds them;
2. two `hat train sft --config examples/configs/sft_cpu.yaml` processes at once, one thread
   each, the same steps, batch and row length (the budget rule: equal steps; the wall time of
   each arm is printed beside), logged to MLflow (`--tracking-uri`, default a SQLite store in
   WORK);
3. `hat eval run` of each model (two at a time): `t1` (held-out scenarios, all 15 kinds, on
   v1) and `t2` (the same scenarios under `--variants` held-out-pool variants), compact
   rendering, greedy;
4. `hat eval compare` of the two on the same cases (McNemar, bootstrap interval of the
   difference).
With `--then opd,rl` the HSA arm goes on through the other two stages, one after the other on
both threads: General OPD from the HSA-SFT model (`opd_cpu.yaml`, the pre-SFT base as teacher,
the build's general prompts) -> WORK/opd-hsa, the HSA-SFT + OPD checkpoint; then HSA-RL from
it (`rl_cpu.yaml`) -> WORK/rl-hsa. `--then rl` runs HSA-RL straight from the HSA-SFT model
(RL isolated from OPD); `--arms hsa` trains (and by default evaluates) the HSA arm only.
Those are evaluated too (`ifeval` beside `t1`, `t2`), and
each is compared with the checkpoint it started from on the same cases: OPD on the IFEval
prompts and exact first calls, RL on the mean reward (HSA-RL's weights, the Wilcoxon
signed-rank test) and exact first calls.
It prints the table (each rate with its Wilson 95% interval) and writes WORK/results.json and
WORK/results.md. Every step is a real command of the project; the printed commands are the
ones to rerun by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HAT = str(Path(sys.executable).parent / "hat")
CONFIGS = ROOT / "examples" / "configs"
V1 = ROOT / "examples" / "harnesses" / "v1.yaml"
ARMS = {"hsa": "data_cpu.yaml", "fixed": "data_cpu_fixed.yaml"}
METRICS = ("first_tool_right", "first_call_exact", "all_calls_exact", "pass_rate")
# later stages of the HSA arm: name -> config (OPD starts from HSA-SFT; RL from OPD when it
# runs, else from HSA-SFT: `rl_start`)
STAGES = {"opd": "opd_cpu.yaml", "rl": "rl_cpu.yaml"}
# rl_cpu.yaml's reward weights, for the RL comparison's `reward`
RL_WEIGHTS = ("accuracy=1,effectiveness=1,tool_rationality=0.5,skill_selection=0.5,"
              "cot_length_penalty=1")
# what each comparison looks at: (a, b, suites, metrics); "start" is the model RL started from
COMPARISONS = (("fixed", "hsa", "t1,t2",
                "first_tool_right,first_call_exact,all_calls_exact,passed"),
               ("hsa", "opd", "t1,t2", "first_call_exact"),
               ("hsa", "opd", "ifeval", "passed"),
               ("start", "rl", "t1,t2", "reward,reward.accuracy,first_call_exact"))


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--base", type=Path, default=ROOT / "examples" / "models" / "toy-long",
                   help="the toy-long base model dir (default: the shipped one)")
    p.add_argument("--work", type=Path, required=True)
    p.add_argument("--steps", type=int, default=1800)
    p.add_argument("--episodes", type=int, default=45)
    p.add_argument("--variants", type=int, default=4)
    p.add_argument("--max-tokens", type=int, default=160)
    p.add_argument("--models", default="hsa,fixed", help="arms to evaluate (and base)")
    p.add_argument("--eval-only", action="store_true", help="evaluate what WORK holds")
    p.add_argument("--tracking-uri", default=None)
    p.add_argument("--then", default="", help="later stages of the HSA arm: opd, rl or opd,rl")
    p.add_argument("--arms", default="hsa,fixed", help="SFT arms to build and train")
    p.add_argument("--opd-steps", type=int, default=None, help="default: opd_cpu.yaml's")
    p.add_argument("--rl-steps", type=int, default=None, help="default: rl_cpu.yaml's")
    args = p.parse_args(argv)
    args.then = [s for s in args.then.split(",") if s]
    if args.then not in ([], ["opd"], ["rl"], ["opd", "rl"]):
        p.error("--then takes opd, rl or opd,rl")
    args.arms = [a for a in args.arms.split(",") if a]
    if not args.arms or any(a not in ARMS for a in args.arms):
        p.error(f"--arms takes {' and/or '.join(ARMS)}")
    return args


def run(cmd: list[str], log: Path, threads: int = 1) -> subprocess.Popen:
    """Start `cmd` with its output to `log`, torch and BLAS held to `threads` threads."""
    print("$", " ".join(cmd), f"> {log}", flush=True)
    env = os.environ | {"OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    log.parent.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT, env=env)


def wait_all(procs: dict[str, subprocess.Popen], started: float) -> dict[str, float]:
    """Wait for every process; their wall times; a failed one stops the run."""
    walls: dict[str, float] = {}
    while len(walls) < len(procs):
        for name, proc in procs.items():
            if name in walls or proc.poll() is None:
                continue
            if proc.returncode != 0:
                raise SystemExit(f"{name} failed (exit {proc.returncode}); see its log")
            walls[name] = time.monotonic() - started
        time.sleep(1)
    return walls


def data(args: argparse.Namespace) -> dict[str, Path]:
    out = {arm: args.work / f"data-{arm}" for arm in ARMS}
    procs = {arm: run([HAT, "data", "build", "--harness", str(V1), "--config",
                       str(CONFIGS / cfg), "--out", str(out[arm])],
                      args.work / "logs" / f"data-{arm}.log")
             for arm, cfg in ARMS.items()
             if arm in args.arms and not (out[arm] / "manifest.json").exists()}
    wait_all(procs, time.monotonic())
    return out


def done(model: Path) -> bool:
    """A stage's output is complete once its manifest is written (after the final weights)."""
    return (model / "hat_stage.json").is_file()


def train(args: argparse.Namespace, datasets: dict[str, Path], uri: str) -> dict[str, float]:
    started = time.monotonic()
    procs = {arm: run([HAT, "train", "sft", "--config", str(CONFIGS / "sft_cpu.yaml"),
                       "--base", str(args.base), "--output-dir", str(args.work / f"sft-{arm}"),
                       "--max-steps", str(args.steps), "--tracking-uri", uri,
                       "--set", f"dataset={datasets[arm]}",
                       "--set", f"tracking.run_name=learning-{arm}"],
                      args.work / "logs" / f"sft-{arm}.log")
             for arm in args.arms if not done(args.work / f"sft-{arm}")}
    return wait_all(procs, started)


def later_stages(args: argparse.Namespace, uri: str) -> dict[str, float]:
    """OPD, then RL, on the HSA arm (each on both threads, one after the other)."""
    walls = {}
    for stage in args.then:
        out = args.work / f"{stage}-hsa"
        if done(out):
            continue
        start = "hsa" if stage == "opd" else rl_start(args)
        cmd = [HAT, "train", stage, "--config", str(CONFIGS / STAGES[stage]),
               "--base", str(model_dirs(args, [start])[start]),
               "--output-dir", str(out), "--tracking-uri", uri,
               "--set", "num_threads=2", "--set", f"tracking.run_name=learning-{stage}"]
        if stage == "opd":
            cmd += ["--set", f"prompts={args.work / 'data-hsa'}"]
        steps = args.opd_steps if stage == "opd" else args.rl_steps
        if steps:
            cmd += ["--max-steps", str(steps)]
        walls |= wait_all({stage: run(cmd, args.work / "logs" / f"{stage}.log", threads=2)},
                          time.monotonic())
    return walls


def rl_start(args: argparse.Namespace) -> str:
    """The model HSA-RL starts from: the OPD checkpoint when OPD runs, else HSA-SFT."""
    return "opd" if "opd" in args.then else "hsa"


def model_dirs(args: argparse.Namespace, names: list[str]) -> dict[str, Path]:
    def where(name: str) -> Path:
        if name == "base":
            return args.base
        return args.work / (f"sft-{name}" if name in ARMS else f"{name}-hsa")
    return {n: where(n) for n in names}


def evaluate(args: argparse.Namespace, models: dict[str, Path]) -> dict[str, dict]:
    reports = {name: args.work / "eval" / f"{name}.json" for name in models}
    pending = [n for n in models if not reports[n].exists()]
    while pending:  # two at a time: one thread each on 2 cores
        batch, pending = pending[:2], pending[2:]
        procs = {n: run([HAT, "eval", "run", str(models[n]),
                         "--suites", "t1,t2" if n in ("fixed", "base") else "t1,t2,ifeval",
                         "--harness", str(V1), "--episodes", str(args.episodes),
                         "--variants", str(args.variants), "--render-profile", "compact",
                         "--max-tokens", str(args.max_tokens), "--out", str(reports[n])],
                        args.work / "logs" / f"eval-{n}.log")
                 for n in batch}
        wait_all(procs, time.monotonic())
    return {n: json.loads(reports[n].read_text()) for n in models}


def cell(summary: dict, metrics: dict, name: str) -> str:
    low, high = summary["intervals"][name]
    return f"{100 * metrics[name]:.1f} ({100 * low:.0f}-{100 * high:.0f})"


def table(reports: dict[str, dict]) -> list[str]:
    head = "| model | suite | cases | " + " | ".join(METRICS) + " |"
    lines = [head, "|" + "---|" * (3 + len(METRICS))]
    for name, report in reports.items():
        for suite in report["suites"]:
            if suite["suite"] not in ("t1", "t2"):
                continue
            s, m = suite["summary"], suite["metrics"]
            lines.append(f"| {name} | {suite['suite']} | {s['cases']} | "
                         + " | ".join(cell(s, m, k) for k in METRICS) + " |")
    return lines


def compare_all(args: argparse.Namespace, names: set[str]) -> dict[str, list]:
    """`hat eval compare` of each pair of COMPARISONS whose two models were evaluated."""
    out = {}
    for a, b, suites, metrics in COMPARISONS:
        a = rl_start(args) if a == "start" else a
        if not {a, b} <= names:
            continue
        key = f"{b}-vs-{a}" + ("-ifeval" if suites == "ifeval" else "")
        path = args.work / "eval" / f"compare-{key}.json"
        cmd = [HAT, "eval", "compare", str(args.work / "eval" / f"{a}.json"),
               str(args.work / "eval" / f"{b}.json"), "--suites", suites, "--metrics", metrics,
               "--out", str(path)]
        if b == "rl":
            cmd += ["--reward-weights", RL_WEIGHTS]
        subprocess.run(cmd, check=True)
        out[key] = json.loads(path.read_text())
    return out


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    uri = args.tracking_uri or f"sqlite:///{(args.work / 'mlflow.db').resolve()}"
    walls = {}
    if not args.eval_only:
        datasets = data(args)
        walls = train(args, datasets, uri)
        print("SFT wall time:", {k: f"{v / 60:.1f} min" for k, v in walls.items()})
        walls |= later_stages(args, uri)
    names = [n for n in args.models.split(",") if n and (n == "base" or n in args.arms)]
    names += args.then
    reports = evaluate(args, model_dirs(args, names))
    lines = table(reports)
    compared = compare_all(args, set(names))
    print("\n".join(lines))
    results = {"steps": args.steps, "sft_wall_s": walls, "tracking_uri": uri,
               "reports": {n: {s["suite"]: {"metrics": s["metrics"],
                                            "intervals": s["summary"].get("intervals"),
                                            "by_kind": s["summary"].get("by_kind"),
                                            "variants": s["summary"].get("variants")}
                               for s in r["suites"]} for n, r in reports.items()},
               "compare": compared}
    (args.work / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    (args.work / "results.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {args.work / 'results.json'} and results.md")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
