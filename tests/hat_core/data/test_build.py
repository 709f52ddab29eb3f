"""The pipeline end to end: a versioned dataset directory, its manifest, and its refusals."""

from __future__ import annotations

import pytest
from data_helpers import ROOT, V1, tiny_config
from datasets import load_from_disk

from hat_core.data.build import DataValidationError, build
from hat_core.data.logs_import import import_logs
from hat_core.data.manifest import content_hash, read_manifest, require_ready
from hat_core.errors import ConfigError

LOGS = ROOT / "examples" / "logs" / "live_sample.jsonl"


def test_the_directory_layout_and_manifest(built, harness):
    out = built.out
    for name in ("manifest.json", "harness.yaml", "heldout.json", "dataset", "opd",
                 "heldout_variants", "validation/report.md", "validation/report.json"):
        assert (out / name).exists(), name
    m = read_manifest(out)
    assert m["status"] == "ready" and require_ready(out) == m
    assert m["version"] == m["content_hash"][:12] == built.version
    assert m["harness_hash"] == harness.content_hash()
    assert m["config"]["scenarios"] == 30 and m["config"]["teacher"]["kind"] == "oracle"
    stats = m["stats"]
    assert stats["rollouts"] == (30 - stats["duplicate_scenarios"]) * 3
    assert stats["kept"] == sum(m["counts"]["splits"].values())
    assert stats["retries"]["retried"] == stats["retries"]["full"] + stats["retries"][
        "final_only"]
    data = load_from_disk(str(out / "dataset"))
    assert {s: len(data[s]) for s in data} == m["counts"]["splits"]
    rows = {s: data[s].to_list() for s in data}
    assert content_hash(rows, m["config"], m["harness_hash"]) == m["content_hash"]
    assert len(load_from_disk(str(out / "opd"))) == 20


def test_the_same_config_gives_the_same_version(built, harness, tmp_path):
    again = build(harness, tiny_config(), tmp_path / "again")
    assert again.version == built.version
    other = build(harness, tiny_config(seed=1), tmp_path / "other")
    assert other.version != built.version


def test_progress_is_reported_through_the_callback(harness, tmp_path):
    seen = []
    build(harness, tiny_config(scenarios=15, variants=0), tmp_path / "p",
          progress=lambda step, done, total: seen.append((step, done, total)))
    steps = [s for s, _, _ in seen]
    assert steps.index("rollout") < steps.index("rejection") < steps.index("validate")
    assert ("rollout", 15, 15) in seen


def test_extra_trajectories_and_logs_join_the_build(harness, tmp_path):
    extra = import_logs(LOGS, harness, accepted_versions=["v1"]).trajectories[:4]
    result = build(harness, tiny_config(logs=[str(LOGS)]), tmp_path / "x",
                   extra_trajectories=extra, harness_ref=str(V1))
    counts = result.manifest["counts"]["source"]
    assert result.stats.imported == 30 and result.stats.extra == 4
    # The extra trajectories duplicate four imported ones: dropped as duplicates, counted.
    assert counts["import"] + counts.get("extra", 0) == 30
    assert result.stats.rejected["duplicate"] == 4


def test_bad_log_rows_stop_a_build(harness, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(LOGS.read_text(encoding="utf-8") + "{oops\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        build(harness, tiny_config(logs=[str(bad)]), tmp_path / "y", harness_ref=str(V1))
    assert [p.path for p in err.value.problems] == [f"{bad}:31"]


def test_a_failed_validation_stops_the_build_with_a_report(harness, tmp_path):
    out = tmp_path / "z"
    with pytest.raises(DataValidationError) as err:
        build(harness, tiny_config(**{"validation.max_skill_share": 0.05}), out)
    assert err.value.report_path == out / "validation" / "report.md"
    assert "skill balance (train)" in err.value.report_path.read_text()
    assert read_manifest(out)["status"] == "failed"
    assert not (out / "dataset").exists()
    with pytest.raises(ConfigError):
        require_ready(out)
