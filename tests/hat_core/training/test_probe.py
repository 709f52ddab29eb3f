"""The regression probe: Qwen3 output parsed into simulator turns, and both halves run on a
real (tiny, untrained) model without failing the stage."""

from __future__ import annotations

import json

from hat_core.basemodel import load_base
from hat_core.training.config import ProbeConfig
from hat_core.training.probe import ModelPolicy, assistant_turn, run_probe
from tests.hat_core.training.conftest import MINI_HARNESS, ROOT


def test_raw_output_becomes_an_assistant_turn():
    text = ('<think>\n查价格\n</think>\n\n<tool_call>\n{"name": "get_price", "arguments": '
            '{"product_id": "P1001"}}\n</tool_call>')
    turn = assistant_turn(text, call_prefix="c")
    assert turn.reasoning == "查价格" and turn.content == ""
    assert turn.tool_calls[0].id == "c_0" and turn.tool_calls[0].name == "get_price"
    assert json.loads(turn.tool_calls[0].arguments) == {"product_id": "P1001"}
    reply = assistant_turn("<think>\nok\n</think>\n\n活动价89.9元")
    assert reply.content == "活动价89.9元" and not reply.tool_calls


def test_probe_runs_both_halves_on_a_real_model(base_model):
    model, tokenizer = load_base(base_model)
    model.train()
    config = ProbeConfig(harness=str(MINI_HARNESS), t1_episodes=2, ifeval_prompts=2,
                         max_new_tokens=8,
                         ifeval_file=str(ROOT / "examples" / "ifeval" / "hat_ifeval_small.jsonl"))
    result = run_probe(model, tokenizer, config).to_dict()
    assert result["t1_episodes"] == 2 and result["ifeval_prompts"] == 2
    assert 0 <= result["t1_pass_rate"] <= 1 and "t1_accuracy" in result
    assert model.training, "the probe restores training mode"
    assert isinstance(ModelPolicy(model, tokenizer).name, str)


def test_missing_probe_inputs_are_skipped_not_fatal(base_model, tmp_path):
    model, tokenizer = load_base(base_model)
    config = ProbeConfig(harness=str(tmp_path / "no.yaml"), ifeval_file=str(tmp_path / "no.jsonl"))
    result = run_probe(model, tokenizer, config)
    assert result.t1_episodes == 0 and result.ifeval_prompts == 0 and len(result.skipped) == 2
