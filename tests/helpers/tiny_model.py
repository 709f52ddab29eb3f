"""A tiny randomly initialised Qwen3 model with the project's tokenizer (about 10 s on 2
cores): `build_tiny_model(out)`, and `copy_with_seed(src, out, seed)` for a second
checkpoint with the same tokenizer and other weights (a second arm)."""

from __future__ import annotations

import shutil
from pathlib import Path

TEXTS = ["hello world, how are you today? the price is 99 yuan.",
         "你好，欢迎来到直播间！这款保温杯多少钱？包邮吗？",
         '<tool_call>\n{"name": "get_price", "arguments": {"id": "A1"}}\n</tool_call>']


def build_tiny_model(out: Path, seed: int = 0) -> Path:
    from hat_core.basemodel.model import make_model
    from hat_core.basemodel.sizes import get_size
    from hat_core.basemodel.tokenizer import train_tokenizer

    tokenizer = train_tokenizer(TEXTS * 20, 400)
    make_model(get_size("test"), tokenizer, seed=seed).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def copy_with_seed(src: Path, out: Path, seed: int) -> Path:
    """`src`'s tokenizer with freshly initialised weights from `seed`."""
    from transformers import AutoTokenizer

    from hat_core.basemodel.model import make_model
    from hat_core.basemodel.sizes import get_size

    shutil.copytree(src, out)
    make_model(get_size("test"), AutoTokenizer.from_pretrained(src), seed=seed) \
        .save_pretrained(out)
    return out
