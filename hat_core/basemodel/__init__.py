"""The embedded default base model: a tiny Qwen3-architecture model the project builds itself
from a seed (nothing can be downloaded), and loading of any other model directory.

    from hat_core.basemodel import build_base_model, load_base
    result = build_base_model(Path("models/base"), size="tiny", seed=0, cache_dir=cache)
    model, tokenizer = load_base(result.path)

Modules: `sizes` (named configs), `names`/`tool_domains`/`tool_corpus` (tool-use samples),
`instructions`/`instruction_corpus` (verifiable instructions), `sample` and `corpus` (mixing,
rendering, packing), `tokenizer` (byte-level BPE + qwen3 chat template), `model`, `pretrain`,
`probe`, `build` (cache + manifest) and `loading`.
"""

import importlib

# Loaded on first use (PEP 562), so that `hat_core.basemodel.sizes` (the CLI's help text)
# does not pull in torch and transformers.
_EXPORTS = {
    "CODE_VERSION": "build", "MANIFEST": "build", "BuildResult": "build",
    "build_base_model": "build", "config_hash": "build", "read_manifest": "build",
    "check_model_dir": "loading", "load_base": "loading",
    "ProbeResult": "probe", "parse_tool_call": "probe",  # the function: `.probe.probe`
    "SIZES": "sizes", "BaseSize": "sizes", "get_size": "sizes",
    "load_tokenizer": "tokenizer", "qwen3_chat_template": "tokenizer",
    "train_tokenizer": "tokenizer",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value
