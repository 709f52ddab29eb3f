"""A checkpoint folder as an MLflow transformers model (task `llm/v1/chat`), so that a
registered version loads anywhere as `models:/hat-agent@champion`:

    mlflow.transformers.load_model("models:/hat-agent@champion", return_type="components")

`save_chat_model(model_dir, dst)` writes the MLflow model (MLmodel, weights under `model/`,
the tokenizer under `components/tokenizer/`) or returns None when the folder is no loadable
causal LM (then the bare folder is what gets registered). The requirements are given, not
inferred: MLflow's inference imports optional packages (torchvision) the stack lacks.
"""

from __future__ import annotations

from pathlib import Path

CHAT_TASK = "llm/v1/chat"


def loadable(model_dir: Path) -> bool:
    """A folder with a config and weights (the stage outputs; test stand-ins have neither)."""
    return (model_dir / "config.json").is_file() and any(model_dir.glob("*.safetensors"))


def save_chat_model(model_dir: Path, dst: Path) -> Path | None:
    """The MLflow transformers model of `model_dir` at `dst`, or None (not loadable)."""
    if not loadable(model_dir):
        return None
    import mlflow.transformers
    import torch
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        model = AutoModelForCausalLM.from_pretrained(str(model_dir))
        tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    except (OSError, ValueError):
        return None
    mlflow.transformers.save_model(
        transformers_model={"model": model, "tokenizer": tokenizer}, path=str(dst),
        task=CHAT_TASK, pip_requirements=[f"transformers=={transformers.__version__}",
                                          f"torch=={torch.__version__.split('+')[0]}"])
    return dst
