"""HSA throughput: variants per second, and re-mapped trajectories per second.

    .venv/bin/python benchmarks/hsa_throughput.py                  # the defaults below
    .venv/bin/python benchmarks/hsa_throughput.py --trajectories 2000 --repeats 1

The trajectories are real oracle episodes from the live-stream simulator under the harness
(`--unique` distinct ones, cycled up to `--trajectories`); building them is not timed. The
goal of the issue: 10,000 trajectories re-mapped onto 8 variants in under 10 s on one core
(the remap timing includes building each variant's `Remapper`). Medians over `--repeats`.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
from pathlib import Path

from hat_core.harness.io import load_harness
from hat_core.hsa.augment import augment_many
from hat_core.hsa.config import HsaConfig
from hat_core.hsa.remap import Remapper
from hat_core.sim.batch import world
from hat_core.sim.policy import OraclePolicy
from hat_core.sim.runner import run_episode

ROOT = Path(__file__).resolve().parent.parent
GOAL_S = 10.0


def trajectories(harness, unique: int, total: int, seed: int) -> list[list[dict]]:
    """`total` oracle trajectories: `unique` simulated episodes, cycled."""
    catalog, scenarios = world(seed, unique)
    policy = OraclePolicy()
    distinct = [list(run_episode(harness, s, catalog, policy).messages) for s in scenarios]
    return [list(t) for t in itertools.islice(itertools.cycle(distinct), total)]


def time_variants(harness, n: int, seed: int, config: HsaConfig) -> float:
    start = time.perf_counter()
    augment_many(harness, n, seed, config)
    return time.perf_counter() - start


def time_remap(harness, variants, rows) -> float:
    start = time.perf_counter()
    for v in variants:
        remapper = Remapper(v, harness)
        for messages in rows:
            remapper.messages(messages)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--harness", default=str(ROOT / "examples/harnesses/v1.yaml"))
    parser.add_argument("--variants", type=int, default=8, help="variants to re-map onto")
    parser.add_argument("--trajectories", type=int, default=10_000)
    parser.add_argument("--unique", type=int, default=500, help="distinct simulated episodes")
    parser.add_argument("--augment-n", type=int, default=200, help="variants timed for variants/s")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    harness = load_harness(args.harness)
    config = HsaConfig()
    rows = trajectories(harness, min(args.unique, args.trajectories), args.trajectories,
                        args.seed)
    messages = sum(len(r) for r in rows)
    variants = augment_many(harness, args.variants, args.seed, config)
    aug = [time_variants(harness, args.augment_n, args.seed + r, config)
           for r in range(args.repeats)]
    remap = [time_remap(harness, variants, rows) for _ in range(args.repeats)]
    aug_s, remap_s = statistics.median(aug), statistics.median(remap)
    done = args.variants * len(rows)
    print(f"harness {Path(args.harness).name}, {len(rows)} trajectories "
          f"({messages} messages), {args.variants} variants, median of {args.repeats}")
    print(f"{'measure':<40} {'value':>12}")
    print(f"{'variants/s (augment + validate)':<40} {args.augment_n / aug_s:>12,.1f}")
    print(f"{'re-mapped trajectories/s':<40} {done / remap_s:>12,.0f}")
    print(f"{f'{len(rows)} x {args.variants} re-map time (s)':<40} {remap_s:>12.2f}")
    if args.trajectories == 10_000 and args.variants == 8:
        verdict = "meets" if remap_s < GOAL_S else "misses"
        print(f"goal: under {GOAL_S:.0f} s on one core -> {verdict}")


if __name__ == "__main__":
    main()
