"""The base model's architecture: a small `Qwen3ForCausalLM` with tied embeddings, randomly
initialised from the seed and sized by a `BaseSize`."""

from __future__ import annotations

import torch
from transformers import GenerationConfig, Qwen3Config, Qwen3ForCausalLM

from hat_core.basemodel.sizes import BaseSize
from hat_core.basemodel.tokenizer import PAD


def model_config(size: BaseSize, tokenizer) -> Qwen3Config:
    """The Qwen3 config for `size`, with the vocabulary and token ids of `tokenizer`."""
    return Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=size.hidden_size,
        intermediate_size=size.intermediate_size,
        num_hidden_layers=size.num_layers,
        num_attention_heads=size.num_heads,
        num_key_value_heads=size.num_kv_heads,
        head_dim=size.head_dim,
        max_position_embeddings=size.max_position_embeddings,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )


def make_model(size: BaseSize, tokenizer, seed: int) -> Qwen3ForCausalLM:
    """A freshly initialised model; the same seed gives the same weights."""
    torch.manual_seed(seed)
    model = Qwen3ForCausalLM(model_config(size, tokenizer))
    model.generation_config = GenerationConfig(
        eos_token_id=[tokenizer.eos_token_id, tokenizer.convert_tokens_to_ids(PAD)],
        pad_token_id=tokenizer.pad_token_id,
        do_sample=False,
    )
    return model
