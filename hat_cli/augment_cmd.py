"""`hat augment FILE --variants N --seed S --out DIR`: write HSA variants of a harness.

For each variant i it writes `variant_{i:03d}.yaml` (the harness) and
`variant_{i:03d}.rename.json` (seed, pool, transforms, distractor ids and the rename map), plus
`manifest.json`, and prints which transforms each variant received. `--pool heldout` draws
from the held-out pool (evaluation only); `--config` reads an HSA config (YAML);
`--edit-aware LIVE` weights the transforms toward the changes from LIVE to FILE.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import typer

from hat_cli.errors import exits_on_error
from hat_core.diff.api import diff_harness
from hat_core.harness.io import dump_harness, load_harness
from hat_core.hsa.augment import augment_many
from hat_core.hsa.config import TRANSFORMS, HsaConfig, load_config
from hat_core.hsa.edit_aware import edit_aware_config
from hat_core.hsa.variant import Variant

SHORT = {"describe": "desc", "hooks": "hook", "prompt_template": "tmpl", "rename_tools": "rn-t",
         "rename_skills": "rn-s", "rename_params": "rn-p", "reorder": "ord",
         "distractors": "dist"}


@exits_on_error
def augment(
    file: Path = typer.Argument(..., help="harness file (.yaml or .json)"),
    variants: int = typer.Option(8, "--variants", "-n", min=1, max=10_000,
                                 help="how many variants"),
    seed: int = typer.Option(0, "--seed", "-s", help="run seed (variant i is reproducible)"),
    out: Path = typer.Option(..., "--out", "-o", help="output directory"),
    pool: str | None = typer.Option(None, "--pool", help="train or heldout (overrides config)"),
    config: Path | None = typer.Option(None, "--config", help="HSA config (YAML)"),
    edit_aware: Path | None = typer.Option(None, "--edit-aware",
                                           help="live harness: weight toward LIVE -> FILE"),
) -> None:
    """Write N surface variants of FILE with their rename maps; print their transforms."""
    cfg = load_config(config) if config else HsaConfig()  # a bad config exits 2 first
    harness = load_harness(file)
    if pool is not None:
        cfg = replace(cfg, pool=pool)
    if edit_aware is not None:
        cfg = edit_aware_config(cfg, diff_harness(load_harness(edit_aware), harness))
    produced = augment_many(harness, variants, seed, cfg)
    out.mkdir(parents=True, exist_ok=True)
    manifest = [_write(out, i, v) for i, v in enumerate(produced)]
    (out / "manifest.json").write_text(json.dumps(
        {"source": str(file), "source_hash": harness.content_hash(), "seed": seed,
         "config": cfg.to_dict(), "variants": manifest}, ensure_ascii=False, indent=2) + "\n",
        encoding="utf-8")
    typer.echo(format_table(produced))
    typer.echo(f"wrote {len(produced)} variants ({cfg.pool} pool) to {out}")


def _write(out: Path, index: int, variant: Variant) -> dict:
    stem = f"variant_{index:03d}"
    (out / f"{stem}.yaml").write_text(dump_harness(variant.harness), encoding="utf-8")
    (out / f"{stem}.rename.json").write_text(
        json.dumps(variant.to_dict(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return {"file": f"{stem}.yaml", "rename_map": f"{stem}.rename.json",
            "hash": variant.harness.content_hash(), "transforms": list(variant.transforms)}


def format_table(variants: list[Variant]) -> str:
    """One row per variant: an `x` under each transform it received, and its hash."""
    head = ["variant", *(SHORT[t] for t in TRANSFORMS), "renamed", "hash"]
    rows = [head]
    for i, v in enumerate(variants):
        rm = v.rename_map
        renamed = len(rm.tools) + len(rm.skills) + sum(len(m) for m in rm.params.values())
        rows.append([f"{i:03d}", *("x" if t in v.transforms else "." for t in TRANSFORMS),
                     str(renamed), v.harness.content_hash()[:12]])
    widths = [max(len(r[c]) for r in rows) for c in range(len(head))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True))
                     for r in rows)
