"""The embedded default base model: a tiny Qwen3-architecture model the project builds itself
from a seed (nothing can be downloaded), and loading of any other model directory.

    from hat_core.basemodel import build_base_model, load_base, probe
    result = build_base_model(Path("models/base"), size="tiny", seed=0, cache_dir=cache)
    model, tokenizer = load_base(result.path)

Modules: `sizes` (named configs), `names`/`tool_domains`/`tool_corpus` (tool-use samples),
`instructions`/`instruction_corpus` (verifiable instructions), `sample` and `corpus` (mixing,
rendering, packing), `tokenizer` (byte-level BPE + qwen3 chat template), `model`, `pretrain`,
`probe`, `build` (cache + manifest) and `loading`.
"""

from hat_core.basemodel.build import (
    CODE_VERSION,
    MANIFEST,
    BuildResult,
    build_base_model,
    config_hash,
    read_manifest,
)
from hat_core.basemodel.loading import check_model_dir, load_base
from hat_core.basemodel.probe import ProbeResult, parse_tool_call, probe
from hat_core.basemodel.sizes import SIZES, BaseSize, get_size
from hat_core.basemodel.tokenizer import load_tokenizer, qwen3_chat_template, train_tokenizer

__all__ = [
    "CODE_VERSION", "MANIFEST", "SIZES", "BaseSize", "BuildResult", "ProbeResult",
    "build_base_model", "check_model_dir", "config_hash", "get_size", "load_base",
    "load_tokenizer", "parse_tool_call", "probe", "qwen3_chat_template", "read_manifest",
    "train_tokenizer",
]
