"""The quick regression probe run after each stage: a small T1 sample and a small IFE-P sample.

    result = run_probe(model, tokenizer, ProbeConfig(t1_episodes=4, ifeval_prompts=4))
    result.to_dict()  # {"t1_pass_rate", "t1_accuracy", ..., "ifeval_prompt_strict", ...}

T1 plays simulator episodes on the original harness with the model as the policy
(`ModelPolicy`: the tokenizer's chat template over messages + tools, greedy decoding, Qwen3
`<think>` / `<tool_call>` parsing into the simulator's `AssistantTurn`). IFE-P answers the
first prompts of the project's IFEval-format file and scores them with the official checker.
A missing harness or IFEval file skips that half (recorded in `skipped`), so a stage never
fails because of its probe. Numbers on a few episodes are noisy: they flag a broken model
(everything at 0 after a stage that had signal before), they do not replace `hat eval`.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from hat_core.sim.episode import AssistantTurn, ToolCall
from hat_core.sim.policy import Observation, Policy
from hat_core.training.config import ProbeConfig


class ModelPolicy(Policy):
    """A causal LM with a Qwen3 chat template as a simulator policy (greedy)."""

    name = "model"

    def __init__(self, model, tokenizer, max_new_tokens: int = 96):
        self.model, self.tokenizer, self.max_new_tokens = model, tokenizer, max_new_tokens

    def act(self, obs: Observation) -> AssistantTurn:
        text = generate(self.model, self.tokenizer, list(obs.messages), list(obs.tools),
                        self.max_new_tokens)
        return assistant_turn(text, call_prefix=f"call_{len(obs.messages)}")


def generate(model, tokenizer, messages: list[dict], tools: list[dict] | None,
             max_new_tokens: int) -> str:
    """Greedy completion of `messages` (special tokens removed, markup kept)."""
    import torch

    ids = tokenizer.apply_chat_template(messages, tools=tools or None, add_generation_prompt=True,
                                        return_tensors="pt", return_dict=True)
    ids = {k: v.to(model.device) for k, v in ids.items()}
    with torch.no_grad():
        out = model.generate(**ids, max_new_tokens=max_new_tokens, do_sample=False,
                             pad_token_id=tokenizer.pad_token_id)
    return tokenizer.decode(out[0, ids["input_ids"].shape[1]:], skip_special_tokens=True)


def assistant_turn(text: str, call_prefix: str = "call") -> AssistantTurn:
    """Raw Qwen3 output as the simulator's `AssistantTurn`."""
    from hat_core.inference.protocol import parse_qwen3

    out = parse_qwen3(text)
    calls = tuple(ToolCall(f"{call_prefix}_{i}", c.name, c.arguments)
                  for i, c in enumerate(out.tool_calls))
    return AssistantTurn(content=out.content, reasoning=out.reasoning_content, tool_calls=calls)


@dataclass(frozen=True)
class ProbeResult:
    t1_episodes: int = 0
    t1_pass_rate: float = 0.0
    t1_rewards: dict[str, float] = field(default_factory=dict)
    ifeval_prompts: int = 0
    ifeval_prompt_strict: float = 0.0
    seconds: float = 0.0
    skipped: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        data = asdict(self)
        data |= {f"t1_{k}": v for k, v in self.t1_rewards.items()}
        data.pop("t1_rewards")
        data["skipped"] = list(self.skipped)
        return data


def probe_t1(policy: Policy, harness_path: Path, episodes: int, seed: int,
             max_steps: int = 3) -> tuple[float, dict[str, float]]:
    """Pass rate and mean rewards of `episodes` T1 episodes on the harness."""
    from hat_core.harness.io import load_harness
    from hat_core.sim.batch import world
    from hat_core.sim.judge import verdict_of
    from hat_core.sim.runner import run_episode
    from hat_core.sim.scoring import score_episode

    harness = load_harness(harness_path)
    catalog, scenarios = world(seed, episodes)
    scores = [score_episode(run_episode(harness, s, catalog, policy, max_steps=max_steps,
                                        max_retries=1), s, harness) for s in scenarios]
    passed = sum(verdict_of(s).passed for s in scores) / len(scores)
    names = scores[0].rewards().keys()
    means = {n: sum(s.rewards()[n] for s in scores) / len(scores) for n in names}
    return passed, means


def probe_ifeval(model, tokenizer, path: Path, n: int, max_new_tokens: int) -> float:
    """IFE-P (prompt-level strict accuracy) on the first `n` prompts of `path`."""
    from hat_core.evaluation.ifeval import checker as ifeval_checker
    from hat_core.evaluation.ifeval import verdicts as ifeval
    from hat_core.inference.protocol import parse_qwen3

    prompts = ifeval.load_prompts(path)[:n]
    responses = {}
    for p in prompts:
        text = generate(model, tokenizer, [{"role": "user", "content": p.prompt}], None,
                        max_new_tokens)
        responses[p.key] = parse_qwen3(text).content
    with ifeval_checker.offline(ifeval_checker.load_splitter()):
        verdicts = [ifeval.judge(p, responses[p.key]) for p in prompts]
    return sum(v.strict for v in verdicts) / len(verdicts)


def run_probe(model, tokenizer, config: ProbeConfig) -> ProbeResult:
    """Both halves of the probe on `model` (put in eval mode, restored afterwards)."""
    started, was_training = time.perf_counter(), model.training
    model.eval()
    skipped, t1, ife, n_ife = [], (0.0, {}), 0.0, 0
    harness, ifeval_file = Path(config.harness), Path(config.ifeval_file)
    try:
        if config.t1_episodes and harness.is_file():
            policy = ModelPolicy(model, tokenizer, config.max_new_tokens)
            t1 = probe_t1(policy, harness, config.t1_episodes, config.seed)
        elif config.t1_episodes:
            skipped.append(f"t1: no harness at {harness}")
        if config.ifeval_prompts and ifeval_file.is_file():
            ife = probe_ifeval(model, tokenizer, ifeval_file, config.ifeval_prompts,
                               config.max_new_tokens)
            n_ife = config.ifeval_prompts
        elif config.ifeval_prompts:
            skipped.append(f"ifeval: no prompts at {ifeval_file}")
    finally:
        model.train(was_training)
    return ProbeResult(t1_episodes=config.t1_episodes if t1[1] else 0, t1_pass_rate=t1[0],
                       t1_rewards=t1[1], ifeval_prompts=n_ife, ifeval_prompt_strict=ife,
                       seconds=round(time.perf_counter() - started, 2), skipped=tuple(skipped))

