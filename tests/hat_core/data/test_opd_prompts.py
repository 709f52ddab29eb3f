"""General-OPD prompts: the seeded verifiable generator and the user prompt-set loader."""

from __future__ import annotations

import json
import random

import pytest
from data_helpers import ROOT
from datasets import Dataset, DatasetDict

from hat_core.data.config import OpdConfig
from hat_core.data.opd_prompts import (
    generate_prompts,
    load_prompts,
    opd_prompt_set,
    opd_rows,
)
from hat_core.errors import ConfigError
from hat_core.evaluation.ifeval.checker import check, instruction_problem


def test_the_generator_is_seeded_and_bilingual():
    a = generate_prompts(random.Random(1), 60)
    assert a == generate_prompts(random.Random(1), 60)
    assert a != generate_prompts(random.Random(2), 60)
    assert {p.language for p in a} == {"en", "zh"}
    kinds = {i.split(":")[0] for p in a for i in p.instruction_ids}
    assert {"detectable_format", "keywords", "change_case", "length_constraints",
            "language"} <= kinds


def test_every_instruction_is_accepted_by_the_official_checker():
    for p in generate_prompts(random.Random(0), 200):
        for iid, kwargs in zip(p.instruction_ids, p.kwargs, strict=True):
            assert instruction_problem(iid, kwargs, p.prompt) is None, (iid, kwargs)


def test_a_compliant_answer_passes_the_checker():
    prompt = next(p for p in generate_prompts(random.Random(0), 50)
                  if p.instruction_ids == ("change_case:english_lowercase",))
    args = (0, prompt.prompt, list(prompt.instruction_ids), list(prompt.kwargs))
    assert all(check(*args, "all lowercase here.").strict)
    assert not any(check(*args, "Not Lowercase.").strict)


def test_no_prompt_is_an_evaluation_prompt():
    eval_path = ROOT / "examples" / "ifeval" / "hat_ifeval_small.jsonl"
    evaluation = {json.loads(line)["prompt"] for line in eval_path.read_text().splitlines()}
    assert not {p.prompt for p in generate_prompts(random.Random(0), 500)} & evaluation


def test_jsonl_prompt_sets_load_prompt_and_messages_rows(tmp_path):
    path = tmp_path / "p.jsonl"
    rows = [{"prompt": "Say hi."},
            {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "A?"},
                          {"role": "assistant", "content": "a"},
                          {"role": "user", "content": "B?"}]}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    assert [p.prompt for p in load_prompts(path)] == ["Say hi.", "B?"]


def test_bad_prompt_rows_are_all_reported(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"prompt": "ok"}\n{"text": "x"}\nnot json\n', encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_prompts(path)
    assert [p.path for p in err.value.problems] == [f"{path}:2", f"{path}:3"]


def test_an_on_disk_hf_dataset_loads(tmp_path):
    ds = Dataset.from_list([{"messages": [{"role": "user", "content": f"q{i}"}]}
                            for i in range(5)])
    DatasetDict({"train": ds}).save_to_disk(str(tmp_path / "tulu"))
    prompts = opd_prompt_set(OpdConfig(source=str(tmp_path / "tulu"), size=3),
                             random.Random(0))
    assert [p.prompt for p in prompts] == ["q0", "q1", "q2"]
    row = opd_rows(prompts)[0]
    assert row["messages"] == [{"role": "user", "content": "q0"}]
    assert json.loads(row["kwargs"]) == []


def test_a_built_opd_set_loads_back_with_its_instructions(built):
    from dataclasses import replace

    source = str(built.out / "opd")
    expected = [replace(p, source=source) for p in generate_prompts(random.Random("opd:0"), 20)]
    assert load_prompts(built.out / "opd") == expected
