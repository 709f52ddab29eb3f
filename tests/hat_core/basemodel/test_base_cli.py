"""`hat base build` and `hat base probe` through the command line."""

from __future__ import annotations

from typer.testing import CliRunner

from hat_cli.main import app

runner = CliRunner()


def test_build_reuses_cached_model(test_build, base_cache, tmp_path):
    result = runner.invoke(app, ["base", "build", "--out", str(tmp_path / "m"), "--size", "test",
                                 "--seed", "0", "--cache-dir", str(base_cache)])
    assert result.exit_code == 0, result.output
    assert "reused cached base model at" in result.output
    assert "probe:" in result.output and (tmp_path / "m" / "config.json").is_file()


def test_build_unknown_size_exits_2(tmp_path):
    result = runner.invoke(app, ["base", "build", "--out", str(tmp_path), "--size", "huge"])
    assert result.exit_code == 2
    assert "valid sizes" in result.output


def test_probe_missing_dir_exits_2(tmp_path):
    result = runner.invoke(app, ["base", "probe", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert "does not exist" in result.output


def test_probe_prints_shares(test_build):
    result = runner.invoke(app, ["base", "probe", str(test_build.path), "--n", "2", "--json",
                                 "--max-new-tokens", "16"])
    assert result.exit_code == 0, result.output
    assert '"tool_call_valid"' in result.output and '"tool_call_wellformed"' in result.output
