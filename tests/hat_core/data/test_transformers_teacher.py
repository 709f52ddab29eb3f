"""The real `TransformersTeacher` on a tiny randomly initialised Qwen3 model directory: the
plumbing works end to end, and rejection sampling throws its nonsense away."""

from __future__ import annotations

from data_helpers import tiny_config

from hat_core.data.config import RejectionConfig
from hat_core.data.rejection import select
from hat_core.data.rollout import play_all, training_surfaces
from hat_core.data.teacher import TransformersTeacher
from hat_core.sim.batch import world

TEXTS = ["hello world, the price is 99 yuan.", "你好，欢迎来到直播间！这款保温杯多少钱？",
         '<tool_call>\n{"name": "get_price", "arguments": {"id": "A1"}}\n</tool_call>']


def test_a_local_model_directory_plays_episodes(harness, tmp_path):
    from hat_core.basemodel.model import make_model
    from hat_core.basemodel.sizes import get_size
    from hat_core.basemodel.tokenizer import train_tokenizer

    tokenizer = train_tokenizer(TEXTS * 20, 400)
    make_model(get_size("test"), tokenizer, seed=0).save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    teacher = TransformersTeacher(str(tmp_path), max_tokens=8)
    assert teacher.concurrency == 1 and teacher.name == tmp_path.name
    catalog, scenarios = world(0, 3)
    surfaces = training_surfaces(harness, tiny_config(variants=0))
    rollouts = play_all(surfaces, scenarios, catalog, teacher)
    assert all(r.error is None and r.episode.messages[0]["role"] == "system" for r in rollouts)
    assert all(any(m["role"] == "assistant" for m in r.episode.messages) for r in rollouts)
    kept, rejected = select(rollouts, RejectionConfig())
    assert kept == [] and rejected["total"] == 3
