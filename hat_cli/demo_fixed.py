"""The fixed-harness arm of `hat demo`: what most teams train, beside the HAT champion.

The same data settings and the same SFT budget (steps, batch, rows) as the champion's HSA-SFT,
but every episode on the live harness only (`variants: 0`): the model that memorises v1. The
demo runs it as a child process while the retrain flow trains the champion (one thread each),
then puts both through the same zero-shot check on v2.

    python -m hat_cli.demo_fixed --config examples/configs/retrain_demo.yaml \
        --harness examples/harnesses/v1.yaml --base DIR --out DIR [--tracking-uri URI]

It writes OUT/data (the build), OUT/sft (the model) and OUT/result.json (the stage's result);
the fixed arm is logged to MLflow as experiment `demo-fixed-harness`. With `--evaluate
HARNESS` (repeatable) it then plays the model on each harness with the config's zero-shot
suites and evaluation settings, into OUT/eval/<harness file stem>.json: the reports `hat demo`
reads, made here while the flow still trains the champion on the other core.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

EXPERIMENT = "demo-fixed-harness"


def fixed_data(data: dict) -> dict:
    """The retrain config's data overrides with HSA switched off: the live harness only, every
    scenario played on it (one surface dedupes the comment replies to a handful of texts, so
    the skill-share floor is lower, as in `examples/configs/data_cpu_fixed.yaml`)."""
    out = {**data, "variants": 0, "scenarios_per_surface": 0}
    validation = dict(out.get("validation") or {})
    validation["min_skill_share"] = min(validation.get("min_skill_share", 0.01), 0.001)
    out["validation"] = validation
    return out


def train_fixed(config_path: Path, harness_path: Path, base: Path, out: Path,
                tracking_uri: str | None) -> dict:
    """Build the fixed-harness data and train SFT on it with the config's `sft` settings."""
    from flows.config import load_retrain_config
    from flows.stages import build_dataset, train_stage
    from hat_core.harness.io import load_harness

    config = load_retrain_config(config_path)
    dataset = build_dataset(load_harness(harness_path), None, fixed_data(config.data),
                            out / "data")
    return train_stage("sft", config.sft, base=base, output_dir=out / "sft",
                       inputs={"dataset": str(dataset)}, tracking_uri=tracking_uri,
                       experiment=EXPERIMENT)


def report_path(out: Path, week: str) -> Path:
    """Where the model trained into `out` has its report on `week` (`v1`, `v2`, ...): the
    child writes it, `hat demo`'s `FixedArm.evaluate` reads it (or writes it when missing)."""
    return out / "eval" / f"{week}.json"


def play(out: Path, harness, ev, week: str) -> Path:
    """The model in `out/sft` played on `harness` with the zero-shot check's suites and the
    evaluation settings `ev`; returns the report's path."""
    from flows.stages import evaluate_model

    report = report_path(out, week)
    evaluate_model(out / "sft", harness, ev.zero_shot_suites, report, settings=ev)
    return report


def evaluate_fixed(config_path: Path, harnesses: list[Path], out: Path) -> list[Path]:
    """The trained model's reports on each harness file (its week is the file's stem)."""
    from flows.config import load_retrain_config
    from hat_core.harness.io import load_harness

    ev = load_retrain_config(config_path).eval
    return [play(out, load_harness(path), ev, path.stem) for path in harnesses]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--config", type=Path, required=True)
    p.add_argument("--harness", type=Path, required=True)
    p.add_argument("--base", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--tracking-uri", default=None)
    p.add_argument("--evaluate", type=Path, action="append", default=[],
                   help="a harness to play the trained model on (repeatable)")
    args = p.parse_args(argv)
    result = train_fixed(args.config, args.harness, args.base, args.out, args.tracking_uri)
    evaluate_fixed(args.config, args.evaluate, args.out)
    (args.out / "result.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
