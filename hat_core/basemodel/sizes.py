"""The named sizes of the embedded base model: tokenizer, architecture and training budget.

`get_size("tiny")` returns a frozen `BaseSize`; an unknown name raises `ConfigError` listing the
valid ones. A size plus a seed fully determines a build (see `build.py`). A size's `bf16` and
`compile` say what the build may use; `get_size` keeps them only on a CPU with bf16 in
hardware (`hat_core.cpu`), where they pay, and turns both off elsewhere, where bf16 is
emulated and about ten times slower than fp32. They are part of the build's hash, so builds
made with and without them never share a cache entry.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from hat_core.cpu import cpu_bf16_native
from hat_core.errors import ConfigError, Problem


@dataclass(frozen=True)
class BaseSize:
    """Everything a build needs besides the seed."""

    name: str
    vocab_size: int
    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    max_position_embeddings: int
    seq_len: int
    batch_size: int
    steps: int
    lr: float
    warmup_steps: int
    tokenizer_docs: int
    corpus_docs: int
    compile: bool
    bf16: bool
    probe_n: int
    # Added after the first builds: left out of `as_dict` at their defaults, so the cache
    # keys of `test`, `tiny` and `small` did not change.
    tokenizer_kind: str = "bpe"   # bpe | wordchar | wordpart (hat_core.basemodel.tokenizer.KINDS)
    render_profile: str = "full"  # full | compact (hat_core.harness.render.PROFILES)
    min_tools: int = 1
    max_tools: int = 5
    opaque_names: float = 0.25

    def as_dict(self) -> dict:
        out = asdict(self)
        for key, default in _LATE_DEFAULTS.items():
            if out[key] == default:
                del out[key]
        return out

    def tool_mix(self):
        from hat_core.basemodel.tool_corpus import ToolMix
        return ToolMix(self.min_tools, self.max_tools, self.opaque_names)


_LATE_DEFAULTS = {"tokenizer_kind": "bpe", "render_profile": "full", "min_tools": 1,
                  "max_tools": 5, "opaque_names": 0.25}


SIZES: dict[str, BaseSize] = {
    "test": BaseSize(
        name="test", vocab_size=768, hidden_size=64, num_layers=2, num_heads=2, num_kv_heads=1,
        head_dim=32, intermediate_size=192, max_position_embeddings=2048, seq_len=512,
        batch_size=4, steps=30, lr=3e-3, warmup_steps=5, tokenizer_docs=300, corpus_docs=200,
        compile=False, bf16=False, probe_n=4,
    ),
    "tiny": BaseSize(
        name="tiny", vocab_size=2048, hidden_size=128, num_layers=4, num_heads=4, num_kv_heads=2,
        head_dim=32, intermediate_size=384, max_position_embeddings=2048, seq_len=768,
        batch_size=8, steps=1200, lr=2e-3, warmup_steps=100, tokenizer_docs=3000,
        corpus_docs=16000, compile=True, bf16=True, probe_n=40,
    ),
    "small": BaseSize(
        name="small", vocab_size=4096, hidden_size=256, num_layers=6, num_heads=4, num_kv_heads=2,
        head_dim=64, intermediate_size=768, max_position_embeddings=4096, seq_len=1024,
        batch_size=8, steps=6000, lr=1.5e-3, warmup_steps=200, tokenizer_docs=6000,
        corpus_docs=60000, compile=True, bf16=True, probe_n=100,
    ),
    # The HSA pre-phase of toyhat-feasibility.md as the stand-in for a pretrained LLM:
    # word/char tokenizer (vocab_size = the prose-word budget), compact harness rendering,
    # 2-8 tools per sample, half of the tool names random letters.
    "toy": BaseSize(
        name="toy", vocab_size=1500, hidden_size=128, num_layers=4, num_heads=4, num_kv_heads=2,
        head_dim=32, intermediate_size=512, max_position_embeddings=2048, seq_len=768,
        batch_size=8, steps=1200, lr=2e-3, warmup_steps=100, tokenizer_docs=20000,
        corpus_docs=20000, compile=True, bf16=True, probe_n=40, tokenizer_kind="wordchar",
        render_profile="compact", min_tools=2, max_tools=8, opaque_names=0.5,
    ),
    # `toy` with 2.5x the pre-training steps: 1,200 steps left the name-copying transition
    # unfinished (docs/results.md).
    "toy-long": BaseSize(
        name="toy-long", vocab_size=1500, hidden_size=128, num_layers=4, num_heads=4,
        num_kv_heads=2, head_dim=32, intermediate_size=512, max_position_embeddings=2048,
        seq_len=768, batch_size=8, steps=3000, lr=2e-3, warmup_steps=100, tokenizer_docs=20000,
        corpus_docs=30000, compile=True, bf16=True, probe_n=40, tokenizer_kind="wordchar",
        render_profile="compact", min_tools=2, max_tools=8, opaque_names=0.5,
    ),
    # `toy`'s recipe at `test` scale: unit tests and `hat repro --quick` (seconds).
    "toy-test": BaseSize(
        name="toy-test", vocab_size=300, hidden_size=64, num_layers=2, num_heads=2,
        num_kv_heads=1, head_dim=32, intermediate_size=192, max_position_embeddings=2048,
        seq_len=768, batch_size=4, steps=30, lr=3e-3, warmup_steps=5, tokenizer_docs=300,
        corpus_docs=300, compile=False, bf16=False, probe_n=2, tokenizer_kind="wordchar",
        render_profile="compact", min_tools=2, max_tools=8, opaque_names=0.5,
    ),
}


# `toy-long` with the word-part tokenizer: a known word inside a name is one token
# (`query`, `_price`), so copying a name takes a few steps, not one per character.
SIZES["toy-parts"] = replace(SIZES["toy-long"], name="toy-parts", tokenizer_kind="wordpart")

# `toy-long` at twice the depth (2.3M parameters, 9.1 MB in fp32): the same corpus, tokenizer
# and steps, pre-trained from scratch. `hat base grow` reaches this depth without pre-training;
# this size asks what pre-training at that depth adds (docs/results.md).
SIZES["toy-deep"] = replace(SIZES["toy-long"], name="toy-deep", num_layers=8)


def get_size(name: str) -> BaseSize:
    """The size called `name`; `ConfigError` listing the valid names otherwise."""
    if name not in SIZES:
        raise ConfigError(
            f"unknown base model size {name!r}",
            [Problem("size", f"valid sizes: {', '.join(SIZES)}")],
        )
    return on_this_cpu(SIZES[name])


def on_this_cpu(size: BaseSize) -> BaseSize:
    """`size` with bf16 autocast and compiling kept only where the CPU computes bf16 natively."""
    if cpu_bf16_native():
        return size
    return replace(size, bf16=False, compile=False)
