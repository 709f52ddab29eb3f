"""Splits by scenario and product: train / validation / test, with nothing held out in train.

`choose_heldout(product_ids, scenario_ids, config, seed)` draws the held-out products and
scenarios. `assign_splits` then puts every trajectory of a scenario in one split: `test` when
the scenario is held out or any of its conversations mentions a held-out product (its own
product, a search hit, a product id in a tool result); otherwise `validation` for a seeded
hash share of scenarios, else `train`. Trajectories on held-out-pool surfaces are always
`test`. Held-out HSA variants (the held-out pool) are reserved for evaluation and written to
`heldout_variants/` with their rename maps; `HeldOut` records all of it for the leakage check.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from hat_core.data.config import SplitConfig
from hat_core.data.trajectory import Trajectory, products_in
from hat_core.hsa.variant import Variant

SPLITS = ("train", "validation", "test")


@dataclass(frozen=True)
class HeldOut:
    """What must never reach training: products, scenarios and held-out variant surfaces."""

    products: frozenset[str] = frozenset()
    scenarios: frozenset[str] = frozenset()
    variant_hashes: frozenset[str] = frozenset()

    def to_dict(self) -> dict:
        return {"products": sorted(self.products), "scenarios": sorted(self.scenarios),
                "variant_hashes": sorted(self.variant_hashes)}

    @classmethod
    def from_dict(cls, data: dict) -> HeldOut:
        return cls(frozenset(data.get("products", ())), frozenset(data.get("scenarios", ())),
                   frozenset(data.get("variant_hashes", ())))


def _draw(ids: Sequence[str], share: float, rng: random.Random) -> frozenset[str]:
    k = round(share * len(ids))
    if share > 0 and len(ids) > 1:
        k = max(1, k)
    return frozenset(rng.sample(sorted(ids), min(k, len(ids))))


def choose_heldout(product_ids: Iterable[str], scenario_ids: Iterable[str],
                   config: SplitConfig, seed: int,
                   variant_hashes: Iterable[str] = ()) -> HeldOut:
    """Seeded held-out products and scenarios."""
    rng = random.Random(f"splits:{seed}")
    return HeldOut(_draw(list(product_ids), config.heldout_products, rng),
                   _draw(list(scenario_ids), config.heldout_scenarios, rng),
                   frozenset(variant_hashes))


def scenario_products(trajectories: Iterable[Trajectory]) -> dict[str, set[str]]:
    """Every product id each scenario's conversations mention."""
    out: dict[str, set[str]] = {}
    for t in trajectories:
        found = out.setdefault(t.scenario_id, set())
        found |= products_in(t.text())
        if t.product_id:
            found.add(t.product_id)
    return out


def _hash_share(text: str) -> float:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big") / 2**32


def split_of(scenario_id: str, products: set[str], heldout: HeldOut, validation: float,
             seed: int) -> str:
    """The split of one scenario."""
    if scenario_id in heldout.scenarios or products & heldout.products:
        return "test"
    return "validation" if _hash_share(f"{seed}|{scenario_id}") < validation else "train"


def assign_splits(trajectories: Sequence[Trajectory], heldout: HeldOut, config: SplitConfig,
                  seed: int) -> list[Trajectory]:
    """Each trajectory with its split (one split per scenario)."""
    mentioned = scenario_products(trajectories)
    by_scenario = {sid: split_of(sid, prods, heldout, config.validation, seed)
                   for sid, prods in mentioned.items()}
    return [t.with_split("test" if t.pool == "heldout" or t.harness_hash in
                         heldout.variant_hashes else by_scenario[t.scenario_id])
            for t in trajectories]


def harness_yaml(harness) -> str:
    """`dump_harness`'s YAML, emitted by libyaml when available (ten times faster)."""
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(harness.model_dump(mode="json"), Dumper=dumper, allow_unicode=True,
                     sort_keys=False, width=100)


def write_heldout_variants(directory: Path, variants: Sequence[Variant]) -> list[dict]:
    """`variant_000.yaml` + `variant_000.rename.json` per held-out variant; index rows."""
    directory.mkdir(parents=True, exist_ok=True)
    index = []
    for i, v in enumerate(variants):
        stem = f"variant_{i:03d}"
        (directory / f"{stem}.yaml").write_text(harness_yaml(v.harness), encoding="utf-8")
        (directory / f"{stem}.rename.json").write_text(
            json.dumps(v.to_dict(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        index.append({"file": f"{stem}.yaml", "rename_map": f"{stem}.rename.json",
                      "hash": v.harness.content_hash(), "pool": v.pool,
                      "transforms": list(v.transforms)})
    return index
