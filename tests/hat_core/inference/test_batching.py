"""Lockstep rounds (`hat_core.inference.batching`) and `TransformersBackend.chat_batch`.

The scheduler tests use a backend that answers each request with its own text, so what a
round held is read from the batches it was given; the model tests run the real tiny model."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path

import pytest

from hat_core.inference.batching import (
    ChatRequest,
    LockstepAborted,
    answer_each,
    batch_size_of,
    play_in_lockstep,
)
from hat_core.inference.protocol import AssistantOutput

TOY_LONG = Path(__file__).resolve().parents[3] / "examples" / "models" / "toy-long"


class EchoBatchBackend:
    """Answers every request with its last message's content; keeps each batch it got."""

    name = "echo"
    constrain_tools = False
    batch_size = 4

    def __init__(self, fail_on: str | None = None):
        self.batches: list[list[str]] = []
        self.fail_on = fail_on

    def chat_batch(self, requests):
        texts = [r.messages[-1]["content"] for r in requests]
        if self.fail_on in texts:
            raise RuntimeError(f"cannot answer {self.fail_on}")
        self.batches.append(texts)
        return [AssistantOutput(t.upper()) for t in texts]


def conversation(job: int, turns: int, jitter: random.Random | None = None):
    """A job that asks `turns` questions in a row, sleeping a little between them."""
    def run(backend) -> list[str]:
        answers = []
        for t in range(turns):
            if jitter is not None:
                time.sleep(jitter.random() / 200)
            out = backend.chat([{"role": "user", "content": f"j{job}t{t}"}], max_tokens=4)
            answers.append(out.content)
        return answers
    return run


def test_a_round_holds_every_case_in_progress_in_case_order():
    backend = EchoBatchBackend()
    jobs = [conversation(0, 3), conversation(1, 1), conversation(2, 2), conversation(3, 1)]
    results = play_in_lockstep(jobs, backend, workers=3)
    assert results == [["J0T0", "J0T1", "J0T2"], ["J1T0"], ["J2T0", "J2T1"], ["J3T0"]]
    # Round 1: jobs 0-2. Job 1 ends, its worker takes job 3 before round 2 starts.
    assert backend.batches == [["j0t0", "j1t0", "j2t0"], ["j0t1", "j2t1", "j3t0"], ["j0t2"]]


def test_rounds_do_not_depend_on_thread_timing():
    turns = [3, 1, 4, 1, 5, 2, 6, 2, 1, 3]
    seen = []
    for seed in range(4):
        rng = random.Random(seed)
        backend = EchoBatchBackend()
        jobs = [conversation(i, n, random.Random(rng.random())) for i, n in enumerate(turns)]
        results = play_in_lockstep(jobs, backend, workers=4)
        assert [len(r) for r in results] == turns
        seen.append(backend.batches)
    assert all(b == seen[0] for b in seen[1:])
    assert max(len(b) for b in seen[0]) == 4 and sum(len(b) for b in seen[0]) == sum(turns)


def test_on_done_sees_every_job_once_and_one_at_a_time():
    calls, inside = [], [0]
    guard = threading.Lock()

    def on_done(i, result):
        with guard:
            inside[0] += 1
            assert inside[0] == 1
        calls.append((i, result))
        with guard:
            inside[0] -= 1

    play_in_lockstep([conversation(i, 2) for i in range(6)], EchoBatchBackend(), workers=3,
                     on_done=on_done)
    assert sorted(i for i, _ in calls) == list(range(6))


def test_a_failing_job_stops_the_others_and_its_error_reaches_the_caller():
    def broken(_backend):
        raise ValueError("scenario 2 is broken")

    backend = EchoBatchBackend()
    jobs = [conversation(0, 50), conversation(1, 50), broken, conversation(3, 50)]
    with pytest.raises(ValueError, match="scenario 2 is broken"):
        play_in_lockstep(jobs, backend, workers=4)
    assert len(backend.batches) <= 1  # the others stopped at their next turn


def test_a_failing_batch_raises_its_error_not_an_abort():
    backend = EchoBatchBackend(fail_on="j1t1")
    with pytest.raises(RuntimeError, match="cannot answer j1t1") as caught:
        play_in_lockstep([conversation(i, 3) for i in range(3)], backend, workers=3)
    assert not isinstance(caught.value, LockstepAborted)


def test_no_jobs_and_one_worker():
    assert play_in_lockstep([], EchoBatchBackend(), workers=4) == []
    backend = EchoBatchBackend()
    assert play_in_lockstep([conversation(0, 2), conversation(1, 1)], backend,
                            workers=1) == [["J0T0", "J0T1"], ["J1T0"]]
    assert backend.batches == [["j0t0"], ["j0t1"], ["j1t0"]]


def test_answer_each_batches_single_turns_in_order():
    backend, done = EchoBatchBackend(), []
    reqs = [ChatRequest([{"role": "user", "content": f"q{i}"}], max_tokens=4) for i in range(10)]
    out = answer_each(backend, reqs, on_answer=done.append)
    assert [o.content for o in out] == [f"Q{i}" for i in range(10)]
    assert [len(b) for b in backend.batches] == [4, 4, 2] and done == [4, 8, 10]


def test_answer_each_asks_a_backend_that_cannot_batch_one_request_at_a_time():
    class OneAtATime:
        name = "one"

        def __init__(self):
            self.calls = []

        def chat(self, messages, tools=None, *, max_tokens=512, temperature=0.0,
                 allowed_tools=None):
            self.calls.append((messages[-1]["content"], tools, max_tokens, allowed_tools))
            return AssistantOutput(messages[-1]["content"])

    backend, done = OneAtATime(), []
    held = [{"name": "get_price"}]
    reqs = [ChatRequest([{"role": "user", "content": "a"}], [{"x": 1}], 7),
            ChatRequest([{"role": "user", "content": "b"}], None, 9, allowed_tools=held)]
    assert [o.content for o in answer_each(backend, reqs, on_answer=done.append)] == ["a", "b"]
    assert backend.calls == [("a", [{"x": 1}], 7, None), ("b", None, 9, held)]
    assert done == [1, 2]


def test_batch_size_of_reads_only_backends_that_batch():
    assert batch_size_of(EchoBatchBackend()) == 4
    assert batch_size_of(object()) == 1

    class Declared:
        batch_size = 8  # no chat_batch: cannot batch

    assert batch_size_of(Declared()) == 1


# --- the shipped base --------------------------------------------------------------------------

TOOLS = [{"type": "function", "function": {
    "name": "get_price", "description": "price of a product",
    "parameters": {"type": "object", "properties": {"product_id": {"type": "string"}}}}},
    {"type": "function", "function": {
        "name": "check_stock", "description": "stock",
        "parameters": {"type": "object", "properties": {"sku": {"type": "string"}}}}}]
SYSTEM = {"role": "system", "content": "你是直播间的导购助手。回答观众的问题，需要时调用工具。" * 3}


def requests() -> list[ChatRequest]:
    """Prompts that share the system prompt and differ after it, in length too."""
    users = ["这个多少钱？", "有货吗", "你好",
             "我想买一件外套，身高一米七，体重六十公斤，穿什么尺码？"]
    out = [ChatRequest([SYSTEM, {"role": "user", "content": u}], TOOLS, max_tokens=12)
           for u in users]
    out.append(ChatRequest([{"role": "user", "content": "没有系统提示"}], None, max_tokens=5))
    return out


@pytest.fixture
def float64_backend():
    """The shipped base in float64: near-ties that float32 rounding could flip do not occur,
    so a batch must give exactly what each request gives alone."""
    from hat_core.inference.backends import TransformersBackend

    backend = TransformersBackend(TOY_LONG, device="cpu", batch_size=4)
    backend.model.double()
    return backend


@pytest.mark.slow
def test_chat_batch_answers_as_each_request_alone(float64_backend):
    reqs = requests()
    alone = [float64_backend.chat(r.messages, r.tools, max_tokens=r.max_tokens) for r in reqs]
    together = float64_backend.chat_batch(reqs)
    assert together == alone
    assert float64_backend.chat_batch(reqs[1:3]) == alone[1:3]
    assert any(a.content or a.tool_calls or a.invalid_tool_calls for a in alone)


@pytest.mark.slow
def test_lockstep_play_gives_the_one_at_a_time_cases_with_calls_held():
    """The shipped base, calls held to v2's tools, T1 played 4 cases at a time: the same
    transcripts and verdicts as one case at a time, and every held call still offered."""
    from held_calls import assert_only_held_calls_stay_offered

    from hat_core.evaluation.policy import INVALID_CALL, BackendPolicy
    from hat_core.evaluation.suites.qa import T1Suite
    from hat_core.harness.io import load_harness
    from hat_core.harness.render import use_profile
    from hat_core.inference.backends import TransformersBackend

    v2_harness = load_harness(TOY_LONG.parents[1] / "harnesses" / "v2.yaml")

    def play(batch_size: int):
        backend = TransformersBackend(TOY_LONG, device="cpu", constrain_tools=True,
                                      batch_size=batch_size)
        backend.model.double()
        with use_profile("compact"):
            return T1Suite().play(BackendPolicy(backend, max_tokens=120), v2_harness,
                                  episodes=6, seed=0)

    alone, together = play(1), play(4)
    assert [o.row() for o in together] == [o.row() for o in alone]
    calls = [c["function"] for o in together for m in o.episode.messages
             if m.get("role") == "assistant" for c in m.get("tool_calls") or ()]
    closed = [c for c in calls if c["name"] != INVALID_CALL]  # malformed JSON, no name
    assert_only_held_calls_stay_offered([{"name": "not_offered"}], closed, v2_harness)


@pytest.mark.slow
def test_ifeval_answers_in_batches_as_one_at_a_time(float64_backend):
    """IFEval's prompts (no shared system prompt: left padding only) batched by 4 give the
    rows of one prompt at a time."""
    from hat_core.evaluation.suites.ifeval import IfevalSuite

    batched = IfevalSuite().run(float64_backend, limit=6, max_tokens=40)
    float64_backend.batch_size = 1
    alone = IfevalSuite().run(float64_backend, limit=6, max_tokens=40)
    assert batched.rows == alone.rows and len(alone.rows) == 6
    assert any(r["response"] for r in alone.rows)


def test_transformers_backend_refuses_a_batch_size_below_one(tiny_model_dir):
    from hat_core.inference.backends import TransformersBackend

    with pytest.raises(ValueError, match="batch_size must be >= 1, got 0"):
        TransformersBackend(tiny_model_dir, device="cpu", batch_size=0)
