"""Held tool calls in the gateway: a real gateway over HTTP, two local arms of the shipped
base (one free, one held to the request's tools), played through the simulator's T1 on v2
by the OpenAI client, as the evaluation plays a model with `--constrain-tools`."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from held_calls import assert_only_held_calls_stay_offered, played_calls

from hat_core.harness.io import load_harness
from hat_core.inference.backends import OpenAIBackend
from hat_core.serving.arms import FREE, HELD, ArmTable, ArmTarget, LocalBackend, Route
from hat_core.serving.assignment import Experiment
from hat_core.serving.exposure import ExposureLog
from hat_core.serving.gateway import gateway_app
from hat_core.serving.runner import serve_in_thread

ROOT = Path(__file__).resolve().parents[3]
TOY_LONG = ROOT / "examples" / "models" / "toy-long"
EXPERIMENT = Experiment(1, "held", "salt-held", 0.5)


def user_on(arm: str) -> str:
    return next(u for u in (f"viewer-{i}" for i in range(1000)) if EXPERIMENT.arm(u) == arm)


@pytest.fixture(scope="module")
def gateway():
    table, rows = ArmTable(), []
    held = LocalBackend(TOY_LONG, decoding=HELD)
    free = LocalBackend(TOY_LONG, decoding=FREE)
    table.switch({"control": Route("control", ArmTarget("m", "1"), held),
                  "treatment": Route("treatment", ArmTarget("m", "2"), free)})
    log = ExposureLog(rows.extend, interval_s=0.01)
    with serve_in_thread(gateway_app(EXPERIMENT, table, log)) as url:
        yield url
    log.close()


def _calls(url: str, arm: str, harness) -> list[dict]:
    client = OpenAIBackend(url, "hat-agent", user=user_on(arm), constrain_tools=True)
    try:
        return played_calls(client, harness)
    finally:
        client.close()


@pytest.mark.slow
def test_the_held_arm_calls_only_offered_tools_and_the_free_one_does_not(gateway):
    harness = load_harness(ROOT / "examples" / "harnesses" / "v2.yaml")
    assert_only_held_calls_stay_offered(_calls(gateway, "treatment", harness),
                                        _calls(gateway, "control", harness), harness)


def _post(url: str, arm: str, **extra) -> httpx.Response:
    body = {"messages": [{"role": "user", "content": "这件多少钱？"}], "max_tokens": 4,
            "user": user_on(arm), **extra}
    return httpx.post(f"{url}/v1/chat/completions", json=body, timeout=60)


def test_answers_say_how_the_arm_decoded(gateway):
    assert _post(gateway, "control").headers["x-hat-decoding"] == HELD
    assert _post(gateway, "treatment").headers["x-hat-decoding"] == FREE


@pytest.mark.parametrize("bad", ["get_price", [{"parameters": {}}], [{"function": "x"}], [3]])
def test_malformed_allowed_tools_are_refused_with_a_reason(gateway, bad):
    answer = _post(gateway, "control", allowed_tools=bad)
    assert answer.status_code == 400
    assert "allowed_tools" in answer.json()["error"]["message"]


def test_an_unknown_decoding_is_refused():
    with pytest.raises(ValueError, match="constrained-tools"):
        LocalBackend(TOY_LONG, decoding="held")
