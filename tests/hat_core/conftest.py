"""A tiny randomly initialised Qwen3 model with the project's tokenizer, built once per
session (about 10 s on 2 cores), for the inference, latency and evaluation tests."""

from __future__ import annotations

from pathlib import Path

import pytest

TEXTS = ["hello world, how are you today? the price is 99 yuan.",
         "你好，欢迎来到直播间！这款保温杯多少钱？包邮吗？",
         '<tool_call>\n{"name": "get_price", "arguments": {"id": "A1"}}\n</tool_call>']


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    from hat_core.basemodel.model import make_model
    from hat_core.basemodel.sizes import get_size
    from hat_core.basemodel.tokenizer import train_tokenizer

    out = tmp_path_factory.mktemp("tiny-qwen3")
    tokenizer = train_tokenizer(TEXTS * 20, 400)
    make_model(get_size("test"), tokenizer, seed=0).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out
