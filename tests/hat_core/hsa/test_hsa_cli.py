"""`hat augment`: files, rename maps, the transform table, exit code 2 on bad input."""

from __future__ import annotations

import json

from hsa_examples import EXAMPLES
from typer.testing import CliRunner

from hat_cli.main import app
from hat_core.diff.api import diff_harness
from hat_core.harness.io import load_harness
from hat_core.hsa.fingerprint import map_back, semantic_fingerprint
from hat_core.hsa.heldout import uses_heldout
from hat_core.hsa.variant import RenameMap, Variant

runner = CliRunner()
V1 = str(EXAMPLES / "v1.yaml")


def _variant(out, i: int) -> Variant:
    meta = json.loads((out / f"variant_{i:03d}.rename.json").read_text(encoding="utf-8"))
    rmap = RenameMap.from_dict({k: meta[k] for k in ("tools", "skills", "params", "terms")})
    return Variant(load_harness(out / f"variant_{i:03d}.yaml"), rmap, tuple(meta["transforms"]),
                   meta["seed"], meta["pool"], tuple(meta["distractors"]))


def test_augment_writes_variants_maps_and_a_table(tmp_path):
    out = tmp_path / "variants"
    result = runner.invoke(app, ["augment", V1, "--variants", "4", "--seed", "7", "--out",
                                 str(out)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0].split()[:3] == ["variant", "desc", "hook"]
    assert "wrote 4 variants (train pool)" in result.output
    original = load_harness(V1)
    for i in range(4):
        v = _variant(out, i)
        assert semantic_fingerprint(map_back(v)) == semantic_fingerprint(original)
        assert not uses_heldout(v)
        row = result.output.splitlines()[i + 1]
        assert row.startswith(f"{i:03d}") and v.harness.content_hash()[:12] in row
        shown = runner.invoke(app, ["harness", "diff", V1, str(out / f"variant_{i:03d}.yaml"),
                                    "--json"])
        changes = json.loads(shown.output)["changes"]
        assert changes and all(c["classification"] == "surface"
                               or c["element_id"] in v.distractors for c in changes)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert len(manifest["variants"]) == 4 and manifest["seed"] == 7
    again = tmp_path / "again"
    runner.invoke(app, ["augment", V1, "-n", "4", "-s", "7", "-o", str(again)])
    assert (again / "variant_003.yaml").read_bytes() == (out / "variant_003.yaml").read_bytes()


def test_heldout_pool_and_edit_aware(tmp_path):
    out = tmp_path / "held"
    cfg = tmp_path / "hsa.yaml"
    cfg.write_text("transforms:\n  rename_tools: {weight: 1.0}\n", encoding="utf-8")
    result = runner.invoke(app, ["augment", V1, "-n", "3", "-o", str(out), "--pool", "heldout",
                                 "--config", str(cfg), "--edit-aware", V1])
    assert result.exit_code == 0, result.output
    for i in range(3):
        v = _variant(out, i)
        assert uses_heldout(v)
        d = diff_harness(load_harness(V1), v.harness)
        assert all(c.element_id.startswith("distractor.") for c in d.semantic)


def test_bad_harness_config_or_pool_exit_2(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("harness: x\nskills: []\n", encoding="utf-8")
    result = runner.invoke(app, ["augment", str(bad), "-o", str(tmp_path / "o")])
    assert result.exit_code == 2 and "invalid harness" in result.output
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("transforms:\n  renam: {}\n", encoding="utf-8")
    result = runner.invoke(app, ["augment", V1, "-o", str(tmp_path / "o"), "--config", str(cfg)])
    assert result.exit_code == 2 and "transforms.renam: unknown key; valid keys: describe" in (
        result.output)
    result = runner.invoke(app, ["augment", V1, "-o", str(tmp_path / "o"), "--pool", "dev"])
    assert result.exit_code == 2 and "valid: train, heldout" in result.output
