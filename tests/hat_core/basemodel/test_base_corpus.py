"""The base-model corpus: deterministic, shopping-free, instructions satisfied, masks right."""

from __future__ import annotations

import random
from pathlib import Path

import yaml

from hat_core.basemodel.corpus import IGNORE, encode_corpus, generate_corpus, render_sample
from hat_core.basemodel.instruction_corpus import instruction_sample
from hat_core.basemodel.instructions import passes
from hat_core.basemodel.probe import probe_samples

HARNESSES = Path(__file__).resolve().parents[3] / "examples" / "harnesses"
SHOPPING_WORDS = ("coupon", "stock", "shipping", "product", "cart", "inventory", "直播", "优惠券",
                  "库存", "商品")


def _harness_tool_names() -> set[str]:
    names = set()
    for file in HARNESSES.glob("*.yaml"):
        doc = yaml.safe_load(file.read_text())
        names |= {t["name"] for t in doc.get("tools", [])}
    return names


def test_same_seed_same_corpus_other_seed_differs():
    first = [render_sample(s) for s in generate_corpus(7, 60)]
    assert first == [render_sample(s) for s in generate_corpus(7, 60)]
    assert first != [render_sample(s) for s in generate_corpus(8, 60)]


def test_corpus_mixes_kinds_and_languages():
    samples = generate_corpus(0, 400)
    assert {s.kind for s in samples} == {"tool", "chat", "instruction"}
    assert {s.lang for s in samples} == {"en", "zh"}


def test_corpus_has_no_live_stream_shopping_tools():
    tool_names = _harness_tool_names()
    assert "get_price" in tool_names
    for sample in generate_corpus(0, 1500):
        offered = {t["function"]["name"] for t in sample.tools or []}
        assert not offered & tool_names
        text = render_sample(sample).lower()
        assert not any(word in text for word in SHOPPING_WORDS), text


def test_tool_samples_call_an_offered_tool():
    for sample in generate_corpus(3, 200):
        if sample.kind == "tool":
            assert sample.target in {t["function"]["name"] for t in sample.tools}


def test_instruction_responses_pass_their_checks():
    rng = random.Random(5)
    for _ in range(300):
        sample = instruction_sample(rng)
        reply = sample.messages[-1]["content"]
        assert sample.checks and all(passes(c, reply) for c in sample.checks)


def test_probe_tool_names_are_not_from_the_training_verbs():
    tools, instructions = probe_samples(10, seed=0)
    assert len(tools) == len(instructions) == 10
    train_targets = {s.target for s in generate_corpus(0, 2000) if s.kind == "tool"}
    assert not {s.target for s in tools} & train_targets


def test_labels_cover_only_assistant_replies(small_tokenizer):
    samples = generate_corpus(2, 20)
    data = encode_corpus(samples, small_tokenizer, 1024)
    assert data.input_ids.shape == data.labels.shape
    assert data.input_ids.shape[1] == 1024
    labelled = data.labels[data.labels != IGNORE].tolist()
    text = small_tokenizer.decode(labelled)
    assert "<tool_call>" in text and "<|im_end|>" in text
    assert "<tool_response>" not in text and "# Tools" not in text
