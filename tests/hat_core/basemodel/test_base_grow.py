"""Block expansion (`hat base grow`): more layers, the same logits, and new blocks that learn;
bad requests refused before anything is written."""

from __future__ import annotations

import json

import pytest
import torch
from tiny_model import build_tiny_model
from transformers import AutoModelForCausalLM
from typer.testing import CliRunner

from hat_cli.main import app
from hat_core.basemodel.grow import ZEROED, grow_depth, placement
from hat_core.errors import ConfigError, NotFoundError


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


def _logits(path, ids):
    model = AutoModelForCausalLM.from_pretrained(str(path), dtype=torch.float32).eval()
    with torch.no_grad():
        return model(ids).logits, model


@pytest.mark.parametrize("layers", [3, 4])
def test_the_grown_model_computes_what_the_original_does(tiny, tmp_path, layers):
    report = grow_depth(tiny, tmp_path / "grown", layers=layers)
    ids = torch.randint(0, 300, (3, 40), generator=torch.Generator().manual_seed(7))
    before, _ = _logits(tiny, ids)
    after, grown = _logits(tmp_path / "grown", ids)
    assert grown.config.num_hidden_layers == layers == report.layers_after
    assert len(grown.config.layer_types) == layers
    assert torch.allclose(before, after, atol=1e-5)
    assert report.parameters_after > report.parameters_before
    copies = [i + n + 1 for n, i in enumerate(report.inserted_after)]
    for i in copies:
        for name in ZEROED:
            assert grown.state_dict()[f"model.layers.{i}.{name}"].abs().sum() == 0
    # the copies are real blocks: the loss reaches their output projections
    grown.train()
    grown(ids, labels=ids).loss.backward()
    layer = grown.model.layers[copies[0]]
    assert layer.self_attn.o_proj.weight.grad.abs().sum() > 0
    assert layer.mlp.down_proj.weight.grad.abs().sum() > 0
    assert json.loads((tmp_path / "grown" / "grown.json").read_text())["layers_after"] == layers
    assert (tmp_path / "grown" / "tokenizer.json").is_file()


def test_copies_are_spread_over_the_original_blocks():
    assert placement(4, 8) == (0, 1, 2, 3)
    assert placement(4, 6) == (0, 2)
    assert placement(4, 5) == (0,)


@pytest.mark.parametrize("layers", [2, 1, 5])
def test_a_depth_block_expansion_cannot_reach_is_refused(tiny, tmp_path, layers):
    with pytest.raises(ConfigError, match="cannot grow 2 layers"):
        grow_depth(tiny, tmp_path / "grown", layers=layers)
    assert not (tmp_path / "grown").exists()


def test_a_missing_model_or_a_used_folder_is_refused(tiny, tmp_path):
    with pytest.raises(NotFoundError, match="not a usable model directory"):
        grow_depth(tmp_path / "nothing", tmp_path / "grown", layers=3)
    used = tmp_path / "used"
    used.mkdir()
    (used / "keep.txt").write_text("mine\n")
    with pytest.raises(ConfigError, match="not empty"):
        grow_depth(tiny, used, layers=3)
    assert [p.name for p in used.iterdir()] == ["keep.txt"]


def test_the_cli_grows_and_reports(tiny, tmp_path):
    result = CliRunner().invoke(app, ["base", "grow", str(tiny), "--layers", "4", "--out",
                                      str(tmp_path / "g")])
    assert result.exit_code == 0, result.output
    assert "2 -> 4 layers" in result.output and "logit difference 0.0e+00" in result.output
    bad = CliRunner().invoke(app, ["base", "grow", str(tiny), "--layers", "9", "--out",
                                   str(tmp_path / "h")])
    assert bad.exit_code == 2 and "cannot grow 2 layers to 9" in bad.output
