"""A quick check of what a base model can do: tool calls on unseen names, simple instructions.

`probe(model, tokenizer, n=..., seed=...)` generates greedily for `n` held-out tool prompts
(tool names built from verbs the corpus never uses, or random letters) and `n` instruction
prompts, and returns the shares that are right. Pure apart from running the model; usable by
the training stages to compare checkpoints.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import asdict, dataclass

import torch

from hat_core.basemodel import names
from hat_core.basemodel.instruction_corpus import instruction_sample
from hat_core.basemodel.instructions import passes, strip_reasoning
from hat_core.basemodel.sample import Sample, render_text
from hat_core.basemodel.tool_corpus import tool_sample

TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


@dataclass(frozen=True)
class ToolCallParse:
    """The first `<tool_call>` block of a generation: name and arguments, or None if the block
    is missing or its JSON does not parse as {"name": str, "arguments": dict}."""

    name: str | None
    arguments: dict | None


@dataclass(frozen=True)
class ProbeResult:
    n_tool: int
    tool_call_wellformed: float
    tool_call_valid: float
    tool_name_correct: float
    tool_args_exact: float
    n_instruction: int
    instruction_followed: float
    examples: list[str]

    def as_dict(self) -> dict:
        return asdict(self)


def parse_tool_call(text: str) -> ToolCallParse:
    """Parse the first tool-call block of `text`."""
    match = TOOL_CALL.search(text)
    if not match:
        return ToolCallParse(None, None)
    try:
        call = json.loads(match.group(1))
    except ValueError:
        return ToolCallParse(None, None)
    if not isinstance(call, dict) or not isinstance(call.get("name"), str) \
            or not isinstance(call.get("arguments"), dict):
        return ToolCallParse(None, None)
    return ToolCallParse(call["name"], call["arguments"])


def probe_samples(n: int, seed: int) -> tuple[list[Sample], list[Sample]]:
    """`n` held-out tool samples (unseen name verbs) and `n` instruction samples."""
    rng = random.Random(f"hat-base-probe-{seed}")
    tools = [tool_sample(rng, verbs=names.HELDOUT_VERBS) for _ in range(n)]
    return tools, [instruction_sample(rng) for _ in range(n)]


@torch.no_grad()
def generate(model, tokenizer, samples: list[Sample], max_new_tokens: int,
             batch_size: int = 8, profile: str = "full") -> list[str]:
    """Greedy completions of each sample's first user turn (left padding, no special tokens);
    with the `compact` profile the tools are folded into the system message."""
    prompts = [render_text(s.prompt_messages(), s.tools, add_generation_prompt=True,
                           profile=profile) for s in samples]
    tokenizer.padding_side = "left"
    outputs: list[str] = []
    for i in range(0, len(prompts), batch_size):
        enc = tokenizer(prompts[i:i + batch_size], return_tensors="pt", padding=True,
                        add_special_tokens=False)
        out = model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=False)
        new = out[:, enc["input_ids"].shape[1]:]
        outputs += tokenizer.batch_decode(new, skip_special_tokens=True)
    return outputs


def _expected_call(sample: Sample) -> dict:
    call = next(m for m in sample.messages if m.get("tool_calls"))["tool_calls"][0]["function"]
    return {"name": call["name"], "arguments": call["arguments"]}


def _share(flags: list[bool]) -> float:
    return round(sum(flags) / len(flags), 4) if flags else 0.0


def probe(model, tokenizer, n: int = 20, seed: int = 0, max_new_tokens: int = 160,
          profile: str = "full") -> ProbeResult:
    """Score `model` on `n` held-out tool prompts and `n` instruction prompts."""
    model.eval()
    tool_samples, instr_samples = probe_samples(n, seed)
    tool_out = generate(model, tokenizer, tool_samples, max_new_tokens, profile=profile)
    instr_out = generate(model, tokenizer, instr_samples, max_new_tokens, profile=profile)
    formed, valid, right, exact = [], [], [], []
    for sample, text in zip(tool_samples, tool_out, strict=True):
        call, want = parse_tool_call(text), _expected_call(sample)
        offered = {t["function"]["name"] for t in sample.tools or []}
        formed.append(call.name is not None)
        valid.append(call.name in offered)
        right.append(call.name == want["name"])
        exact.append(right[-1] and call.arguments == want["arguments"])
    followed = [all(passes(c, strip_reasoning(text)) for c in sample.checks)
                for sample, text in zip(instr_samples, instr_out, strict=True)]
    return ProbeResult(n, _share(formed), _share(valid), _share(right), _share(exact), n,
                       _share(followed), [t[:400] for t in tool_out[:2] + instr_out[:2]])
