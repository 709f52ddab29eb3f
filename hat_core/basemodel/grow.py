"""Depth growth of a base model by block expansion: more layers, the same function.

    report = grow_depth(Path("examples/models/toy-long"), Path("runs/toy-long-8"), layers=8)

A copy of an original decoder block is inserted after it, with the two projections that write
into the residual stream (`self_attn.o_proj` and `mlp.down_proj`) set to zero. Such a block
adds nothing to the residual, so the grown model computes the same logits as the original
(checked on a sample before anything is written); fine-tuning then starts from the original's
behaviour with twice the layers to spend (block expansion, as in LLaMA Pro). Copies go after
evenly spaced originals: 4 -> 6 layers puts one after blocks 0 and 2.

The tokenizer, its chat template and the generation config are copied unchanged; `grown.json`
records the source, the method, the layers and the check. Any Hugging Face causal LM whose
blocks sit at `model.layers` with those two projections grows (Qwen3, Llama, Qwen2, Mistral).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

from hat_core.basemodel.loading import check_model_dir
from hat_core.errors import ConfigError, NotFoundError, Problem

ZEROED = ("self_attn.o_proj.weight", "mlp.down_proj.weight")
COPIED = ("tokenizer.json", "tokenizer.model", "vocab.json", "merges.txt",
          "tokenizer_config.json", "special_tokens_map.json", "chat_template.jinja",
          "chat_template.json", "generation_config.json")


@dataclass(frozen=True)
class GrowReport:
    """What `grow_depth` did."""

    source: str
    layers_before: int
    layers_after: int
    inserted_after: tuple[int, ...]   # original block indices each copy follows
    parameters_before: int
    parameters_after: int
    max_logit_difference: float       # grown - original on the check sample


def placement(before: int, after: int) -> tuple[int, ...]:
    """The original block indices that get a copy after them, evenly spaced."""
    added = after - before
    if before < 1 or added < 1 or added > before:
        raise ConfigError(f"cannot grow {before} layers to {after}: block expansion adds "
                          f"1 to {before} layers (at most one copy per block)",
                          [Problem("layers", f"{after}; valid {before + 1}..{2 * before}")])
    return tuple(i * before // added for i in range(added))


def _layer_map(before: int, chosen: tuple[int, ...]) -> list[tuple[int, bool]]:
    """For each new layer: (the original block it copies, whether it is an inserted copy)."""
    out = []
    for i in range(before):
        out.append((i, False))
        if i in chosen:
            out.append((i, True))
    return out


def grow_depth(source: Path, out: Path, *, layers: int, atol: float = 1e-4) -> GrowReport:
    """Write `source` grown to `layers` decoder layers into `out` (see the module)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    source, out = Path(source), Path(out)
    if problems := check_model_dir(source):
        raise NotFoundError(f"not a usable model directory: {source}", problems)
    if out.exists() and any(out.iterdir()):
        raise ConfigError(f"the output folder is not empty: {out}",
                          [Problem("out", "give a new or empty folder")])
    original = AutoModelForCausalLM.from_pretrained(str(source), dtype=torch.float32).eval()
    config = AutoConfig.from_pretrained(str(source))
    before = config.num_hidden_layers
    chosen = placement(before, layers)
    plan = _layer_map(before, chosen)
    config.num_hidden_layers = layers
    if getattr(config, "layer_types", None):
        config.layer_types = [config.layer_types[src] for src, _ in plan]
    if getattr(config, "max_window_layers", None) is not None:
        config.max_window_layers = max(config.max_window_layers, layers)
    grown = AutoModelForCausalLM.from_config(config, dtype=torch.float32).eval()

    state = original.state_dict()
    new_state = {}
    for key, value in state.items():
        if not key.startswith("model.layers."):
            new_state[key] = value.clone()
    for new_index, (src, is_copy) in enumerate(plan):
        prefix = f"model.layers.{src}."
        for key, value in state.items():
            if key.startswith(prefix):
                rest = key[len(prefix):]
                tensor = value.clone()
                if is_copy and rest in ZEROED:
                    tensor.zero_()
                new_state[f"model.layers.{new_index}.{rest}"] = tensor
    missing, unexpected = grown.load_state_dict(new_state, strict=False)
    missing = [k for k in missing if k != "lm_head.weight" or not config.tie_word_embeddings]
    if missing or unexpected:
        raise ConfigError(f"cannot grow {source}: its blocks are not laid out as expected",
                          [Problem("missing", ", ".join(missing[:5]) or "-"),
                           Problem("unexpected", ", ".join(unexpected[:5]) or "-")])
    if config.tie_word_embeddings:
        grown.tie_weights()
    zeroed = {f"model.layers.{i}.{name}" for i, (_, c) in enumerate(plan) if c for name in ZEROED}
    found = {k for k in grown.state_dict() if k in zeroed}
    if found != zeroed:
        raise ConfigError(f"cannot grow {source}: its blocks lack {', '.join(ZEROED)}",
                          [Problem("blocks", "block expansion needs both projections")])

    generator = torch.Generator().manual_seed(0)
    sample = torch.randint(0, config.vocab_size, (2, 64), generator=generator)
    with torch.no_grad():
        diff = (grown(sample).logits - original(sample).logits).abs().max().item()
    if diff > atol:
        raise ConfigError(f"the grown model does not compute what {source} does "
                          f"(largest logit difference {diff:.2e} > {atol:g})",
                          [Problem("check", "block expansion must preserve the function")])

    out.mkdir(parents=True, exist_ok=True)
    grown.save_pretrained(str(out))
    for name in COPIED:
        if (source / name).is_file():
            shutil.copy2(source / name, out / name)
    report = GrowReport(
        source=str(source), layers_before=before, layers_after=layers, inserted_after=chosen,
        parameters_before=sum(p.numel() for p in original.parameters()),
        parameters_after=sum(p.numel() for p in grown.parameters()),
        max_logit_difference=diff)
    (out / "grown.json").write_text(json.dumps(
        {"method": "block expansion (zeroed o_proj and down_proj in each copy)",
         **asdict(report)}, indent=2) + "\n")
    return report
