"""GDPO and GRPO advantages as TRL computes them, against a hand computation.

The trainer's own `_generate_and_score_completions` runs on a tiny hand-made batch (2 prompts
x 3 generations) whose reward functions return a fixed table, so the advantages it returns
are TRL's `multi_objective_aggregation` arithmetic on known numbers."""

from __future__ import annotations

import pytest
import torch

TABLE = {  # rows: completions (groups of 3, consecutive); columns: reward functions
    "r_a": [1.0, 0.0, 0.5, 1.0, 1.0, 0.0],
    "r_b": [0.0, 0.2, 0.4, 3.0, 1.0, 2.0],
}
WEIGHTS = [1.0, 0.5]
G = 3


def _fixed(name):
    def reward(prompts, completions, completion_ids=None, **kwargs):
        return TABLE[name][: len(completions)]

    reward.__name__ = name
    return reward


def _std(values: list[float]) -> float:  # TRL's nanstd: the unbiased (n - 1) estimate
    mean = sum(values) / len(values)
    return (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5


def hand_gdpo() -> list[float]:
    """Per-reward group z-scores, weighted sum, then a z-score over the batch."""
    totals = [0.0] * 6
    for weight, column in zip(WEIGHTS, TABLE.values(), strict=True):
        for start in range(0, 6, G):
            group = column[start:start + G]
            mean, std = sum(group) / G, _std(group)
            for i, value in enumerate(group):
                totals[start + i] += weight * (value - mean) / (std + 1e-4)
    mean, std = sum(totals) / 6, _std(totals)
    return [(t - mean) / (std + 1e-4) for t in totals]


def hand_grpo() -> list[float]:
    """Weighted sum first, then a z-score within each group."""
    totals = [sum(w * c[i] for w, c in zip(WEIGHTS, TABLE.values(), strict=True))
              for i in range(6)]
    out = []
    for start in range(0, 6, G):
        group = totals[start:start + G]
        mean, std = sum(group) / G, _std(group)
        out += [(v - mean) / (std + 1e-4) for v in group]
    return out


def trl_advantages(base_model, tmp_path, aggregation: str) -> list[float]:
    from trl import GRPOConfig, GRPOTrainer

    from hat_core.basemodel import load_base

    model, tokenizer = load_base(base_model)
    args = GRPOConfig(output_dir=str(tmp_path), num_generations=G, per_device_train_batch_size=6,
                      max_completion_length=4, reward_weights=WEIGHTS,
                      multi_objective_aggregation=aggregation, use_cpu=True, bf16=False,
                      report_to="none", max_steps=1)
    from datasets import Dataset

    prompts = [[{"role": "user", "content": "hello"}], [{"role": "user", "content": "tea"}]]
    trainer = GRPOTrainer(model=model, reward_funcs=[_fixed("r_a"), _fixed("r_b")], args=args,
                          train_dataset=Dataset.from_list([{"prompt": p} for p in prompts]),
                          processing_class=tokenizer)
    inputs = [{"prompt": p} for p in prompts for _ in range(G)]
    output = trainer._generate_and_score_completions(inputs)
    return output["advantages"].tolist()


def test_gdpo_advantages_match_the_hand_computation(base_model, tmp_path):
    got = trl_advantages(base_model, tmp_path, "normalize_then_sum")
    assert got == pytest.approx(hand_gdpo(), abs=1e-4)
    assert got != pytest.approx(hand_grpo(), abs=1e-2)


def test_grpo_advantages_match_the_hand_computation(base_model, tmp_path):
    got = trl_advantages(base_model, tmp_path, "sum_then_normalize")
    assert got == pytest.approx(hand_grpo(), abs=1e-4)


def test_hand_computations_are_normalised():
    gdpo = torch.tensor(hand_gdpo())
    assert abs(gdpo.mean().item()) < 1e-6 and abs(gdpo.std().item() - 1) < 1e-3
