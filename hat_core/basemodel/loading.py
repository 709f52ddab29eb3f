"""Loading any Hugging Face causal-LM directory as a base model, with errors that say what is
missing instead of a transformers traceback."""

from __future__ import annotations

import json
from pathlib import Path

from hat_core.basemodel.tokenizer import load_tokenizer
from hat_core.errors import ConfigError, NotFoundError, Problem

WEIGHTS = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
           "pytorch_model.bin.index.json")
TOKENIZER = ("tokenizer.json", "tokenizer.model", "vocab.json")


def _has_chat_template(path: Path) -> bool:
    if (path / "chat_template.jinja").is_file() or (path / "chat_template.json").is_file():
        return True
    config = path / "tokenizer_config.json"
    return config.is_file() and bool(json.loads(config.read_text()).get("chat_template"))


def check_model_dir(path: Path) -> list[Problem]:
    """Every file a usable base model directory lacks (empty if it looks complete)."""
    problems = []
    if not (path / "config.json").is_file():
        problems.append(Problem("config.json", "missing (not a Hugging Face model directory)"))
    if not any((path / name).is_file() for name in WEIGHTS):
        problems.append(Problem("weights", f"none of {', '.join(WEIGHTS)}"))
    if not any((path / name).is_file() for name in TOKENIZER):
        problems.append(Problem("tokenizer", f"none of {', '.join(TOKENIZER)}"))
    if not (path / "tokenizer_config.json").is_file():
        problems.append(Problem("tokenizer_config.json", "missing"))
    elif not _has_chat_template(path):
        problems.append(Problem("chat_template", "the tokenizer has no chat template; tool "
                                                 "calling needs one (e.g. TRL's qwen3.jinja)"))
    return problems


def load_base(path: str | Path):
    """Load the model dir `path` as `(model, tokenizer)`; the tokenizer pads on the left.

    Raises `NotFoundError` if `path` does not exist and `ConfigError` listing every missing
    piece if it is not a complete model directory or fails to load.
    """
    from transformers import AutoModelForCausalLM

    path = Path(path)
    if not path.is_dir():
        raise NotFoundError(f"base model directory {path} does not exist",
                            [Problem("--base", "build one with `hat base build --out DIR` or "
                                               "pass a Hugging Face model directory")])
    problems = check_model_dir(path)
    if problems:
        raise ConfigError(f"{path} is not a usable base model directory", problems)
    try:
        model = AutoModelForCausalLM.from_pretrained(str(path))
        tokenizer = load_tokenizer(path)
    except (OSError, ValueError, KeyError) as exc:
        raise ConfigError(f"{path} could not be loaded", [Problem(str(path), str(exc))]) from exc
    model.eval()
    return model, tokenizer
