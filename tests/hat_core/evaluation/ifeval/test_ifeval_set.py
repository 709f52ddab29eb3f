"""The project's own IFEval-format set: committed file == generator output, all accepted."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from hat_core.evaluation.ifeval import verdicts as ifeval
from hat_core.evaluation.ifeval.checker import load_splitter
from hat_core.evaluation.ifeval.project_set import build_set
from hat_core.evaluation.suites.registry import DEFAULT_IFEVAL_SET

ROOT = Path(__file__).resolve().parents[4]
COMMITTED = ROOT / "examples" / "ifeval" / "hat_ifeval_small.jsonl"


def test_committed_file_is_the_generator_output():
    rows = [json.loads(line) for line in COMMITTED.read_text("utf-8").splitlines()]
    assert rows == build_set()
    assert DEFAULT_IFEVAL_SET == COMMITTED


def test_generation_is_seeded():
    assert build_set(seed=7) == build_set(seed=7)
    assert build_set(seed=7) != build_set(seed=8)


def test_every_prompt_is_accepted_by_the_checker():
    prompts = ifeval.load_prompts(COMMITTED)  # raises on any id or kwargs the checker rejects
    assert 60 <= len(prompts) <= 100
    languages = Counter(row["language"] for row in build_set())
    assert languages["en"] >= 30 and languages["zh"] >= 20
    ids = Counter(i for p in prompts for i in p.instruction_id_list)
    assert len(ids) >= 10


def test_unanswered_prompts_score_zero():
    prompts = ifeval.load_prompts(COMMITTED)[:3]
    result = ifeval.score(prompts, ifeval.Responses({}, ()), load_splitter(None))
    assert result.summary.prompt_strict == 0.0 and result.summary.missing_responses == 3
