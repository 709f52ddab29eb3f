"""Simulator throughput: oracle episodes per second with full scoring, on one core.

    .venv/bin/python benchmarks/sim_throughput.py [--episodes 2000] [--repeats 5]
        [--harness examples/harnesses/v1.yaml ...] [--goal 1000]

Each repeat plays `--episodes` scenarios of a fresh seed's bank with the oracle, scores every
episode (the four rewards and the CoT penalty) and judges it (rule judge). The catalog and
scenario bank are built outside the timed region; the first (cold) repeat, which also
builds the per-harness caches, is reported separately. Prints a table of the median, min and
max over the warm repeats per harness; exits 1 when a median is below `--goal`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from machine import one_core

from hat_core.harness.io import load_harness
from hat_core.sim.batch import play, world
from hat_core.sim.policy import OraclePolicy

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_HARNESSES = [ROOT / "examples" / "harnesses" / f"v{i}.yaml" for i in range(1, 5)]


def measure(harness_path: Path, episodes: int, seed: int) -> tuple[float, int]:
    """Episodes per second for one repeat, and how many passed."""
    harness = load_harness(harness_path)
    catalog, scenarios = world(seed, episodes)
    policy = OraclePolicy()
    start = time.perf_counter()
    passed = sum(play(harness, s, catalog, policy).verdict.passed for s in scenarios)
    return episodes / (time.perf_counter() - start), passed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--harness", type=Path, action="append")
    parser.add_argument("--goal", type=float, default=1000.0)
    args = parser.parse_args(argv)
    harnesses = [p for p in (args.harness or DEFAULT_HARNESSES) if p.is_file()]
    print(f"python {sys.version.split()[0]}, {one_core()}, {args.episodes} episodes x "
          f"{args.repeats} repeats (+1 cold)")
    print(f"{'harness':<10} {'cold/s':>8} {'median/s':>9} {'min/s':>8} {'max/s':>8} {'pass':>6}")
    ok = True
    for path in harnesses:
        cold, _ = measure(path, args.episodes, seed=0)
        runs = [measure(path, args.episodes, seed=r + 1) for r in range(args.repeats)]
        rates = [r for r, _ in runs]
        pass_rate = sum(p for _, p in runs) / (args.episodes * args.repeats)
        median = statistics.median(rates)
        ok &= median >= args.goal
        print(f"{path.stem:<10} {cold:>8.0f} {median:>9.0f} {min(rates):>8.0f} "
              f"{max(rates):>8.0f} {pass_rate:>6.3f}")
    print(f"goal: median >= {args.goal:.0f} episodes/s: {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
