"""Latency: percentiles, gates, the streaming client against a fake endpoint and (slow)
against a real `transformers serve` with a tiny random Qwen3 model."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest
from fake_openai_server import fake_server

from hat_core.errors import ConfigError, NotFoundError
from hat_core.harness.io import load_harness
from hat_core.inference.server import free_port, serve_command, transformers_server
from hat_core.latency.measure import (
    VIEWER_QUESTIONS,
    RequestSpec,
    Timing,
    evaluate_gates,
    first_model_id,
    harness_requests,
    measure,
    summarise_level,
)
from hat_core.latency.percentile import distribution, percentile
from hat_core.latency.profiles import PROFILES, Gate, Profile, check_gate, get_profile

ROOT = Path(__file__).resolve().parents[3]
V1 = ROOT / "examples" / "harnesses" / "v1.yaml"


# --- percentiles (nearest rank) -----------------------------------------------------------

def test_nearest_rank_percentiles_of_known_values():
    values = [float(v) for v in range(1, 101)]  # 1..100
    random.Random(0).shuffle(values)
    assert percentile(values, 50) == 50.0
    assert percentile(values, 95) == 95.0
    assert percentile(values, 99) == 99.0
    assert percentile(values, 100) == 100.0
    assert percentile(values, 0) == 1.0
    assert percentile([3.0, 1.0, 2.0, 4.0], 50) == 2.0  # rank ceil(2) = 2
    assert percentile([3.0, 1.0, 2.0, 4.0], 95) == 4.0
    assert percentile([7.0], 99) == 7.0


def test_percentiles_match_a_hand_computation_on_a_small_list():
    # n = 5 sorted [15, 20, 35, 40, 50]; rank ceil(p / 100 * 5), rank 1 for p = 0:
    # P0 -> 1, P5 -> ceil(0.25) = 1, P20 -> 1, P30 -> ceil(1.5) = 2, P40 -> 2,
    # P50 -> ceil(2.5) = 3, P75 -> ceil(3.75) = 4, P95 -> ceil(4.75) = 5, P100 -> 5
    values = [35, 50, 15, 40, 20]
    by_hand = {0: 15, 5: 15, 20: 15, 30: 20, 40: 20, 50: 35, 75: 40, 95: 50, 100: 50}
    assert {p: percentile(values, p) for p in by_hand} == by_hand
    assert all(type(percentile(values, p)) is int for p in by_hand)  # a measured value
    d = distribution(values)
    assert (d.count, d.p50, d.p95, d.p99, d.max, d.mean) == (5, 35, 50, 50, 50, 32.0)


def test_percentile_input_errors_and_distribution():
    with pytest.raises(ValueError):
        percentile([], 50)
    with pytest.raises(ValueError):
        percentile([1.0], 101)
    d = distribution([1.0, 2.0, 3.0, 10.0])
    assert (d.count, d.p50, d.p95, d.p99, d.max, d.mean) == (4, 2.0, 10.0, 10.0, 10.0, 4.0)
    assert distribution([]).p50 is None


# --- gates --------------------------------------------------------------------------------

def timings(e2e: list[float], failures: int = 0) -> list[Timing]:
    ok = [Timing(True, t, ttft=t / 4, output_tokens=20) for t in e2e]
    return ok + [Timing(False, 1.0, error="HTTP 500")] * failures


def test_h20_gates_on_hand_made_timings():
    h20 = get_profile("h20")
    fast = summarise_level(1, timings([1.0] * 90 + [5.0] * 9 + [12.0]), 200.0)
    assert all(g.passed for g in evaluate_gates(h20, [fast]))
    slow_p50 = summarise_level(1, timings([4.0] * 100), 400.0)
    failed = [g.gate.describe() for g in evaluate_gates(h20, [slow_p50]) if not g.passed]
    assert failed == ["concurrency 1: e2e p50 <= 3.5"]
    one_outlier = summarise_level(1, timings([1.0] * 99 + [16.0]), 115.0)
    failed = [g.gate.stat for g in evaluate_gates(h20, [one_outlier]) if not g.passed]
    assert failed == ["max"]
    tail = summarise_level(1, timings([1.0] * 94 + [9.0] * 6), 150.0)
    assert [g.gate.stat for g in evaluate_gates(h20, [tail]) if not g.passed] == ["p95"]


def test_errors_and_unmeasured_levels_fail_gates():
    h20 = get_profile("h20")
    errors = summarise_level(1, timings([1.0] * 99, failures=1), 100.0)
    assert errors.errors == 1 and errors.e2e.count == 99
    assert [g.gate.metric for g in evaluate_gates(h20, [errors]) if not g.passed] == [
        "error_rate"]
    only_c4 = summarise_level(4, timings([1.0] * 10), 3.0)
    assert not any(g.passed for g in evaluate_gates(h20, [only_c4]))


def test_tokens_per_second_gate_is_a_lower_bound():
    gate = Gate(1, "tokens_per_s", "p50", 10.0)
    assert check_gate(gate, 12.0).passed and not check_gate(gate, 8.0).passed
    assert not check_gate(gate, None).passed


def test_unknown_profile_lists_the_valid_ones():
    with pytest.raises(ConfigError) as err:
        get_profile("a100")
    assert "h20" in err.value.report() and "cpu-tiny" in err.value.report()
    assert set(PROFILES) >= {"h20", "cpu-tiny"}


# --- the client against a fake OpenAI-compatible endpoint ---------------------------------

def test_harness_requests_carry_the_rendered_prompt_and_tools():
    specs = harness_requests(load_harness(V1), 12)
    assert len(specs) == 12
    assert specs[0].messages[0]["role"] == "system" and specs[0].tools
    assert [s.messages[1]["content"] for s in specs[:2]] == list(VIEWER_QUESTIONS[:2])
    assert specs[10].messages[1]["content"] == VIEWER_QUESTIONS[0]


def test_measure_against_a_fake_streaming_endpoint():
    specs = harness_requests(load_harness(V1), 8)
    profile = Profile("t", "test", (Gate(1, "e2e", "max", 5.0), Gate(4, "ttft", "p95", 5.0)))
    with fake_server(tokens=4, delay=0.02) as (url, state):
        assert first_model_id(url) == "fake-model"
        report = measure(url, "fake-model", specs, [1, 4], profile, max_tokens=16)
    assert report.passed
    one, four = report.levels
    assert (one.requests, one.errors, four.requests, four.errors) == (8, 0, 8, 0)
    assert one.output_tokens == 32
    assert 0 < one.ttft.p50 < one.e2e.p50
    assert one.e2e.p50 >= 0.08
    assert state.peak >= 2  # concurrency 4 really overlapped requests
    body = state.bodies[-1]
    assert body["stream"] is True and body["max_tokens"] == 16 and body["tools"]
    assert len(state.bodies) == 1 + 8 + 8  # one warm-up request
    assert report.to_dict()["percentiles"] == "nearest-rank"


def test_server_errors_are_counted_not_raised():
    specs = [RequestSpec(({"role": "user", "content": "hi"},))] * 3
    with fake_server(fail_first=3) as (url, _):
        report = measure(url, "m", specs, [1], get_profile("cpu-tiny"), warmup=0)
    level = report.levels[0]
    assert level.errors == 3 and level.e2e.count == 0 and "HTTP 500" in level.first_errors[0]
    assert not report.passed


def test_unreachable_endpoint_is_an_error_per_request():
    specs = [RequestSpec(({"role": "user", "content": "hi"},))] * 2
    url = f"http://127.0.0.1:{free_port()}"
    report = measure(url, "m", specs, [1], get_profile("cpu-tiny"), warmup=0, timeout_s=3)
    assert report.levels[0].errors == 2


# --- transformers serve -------------------------------------------------------------------

def test_serve_command_binds_loopback(tmp_path):
    cmd = serve_command(tmp_path, 1234)
    assert cmd[cmd.index("--host") + 1] == "127.0.0.1" and "serve" in cmd
    with pytest.raises(NotFoundError), transformers_server(tmp_path):
        pass


def _server_pids(model_dir) -> set[str]:
    """Servers of `model_dir` only: another test worker may run its own meanwhile."""
    out = subprocess.run(["pgrep", "-f", f"transformers serve {model_dir} "],
                         capture_output=True, text=True).stdout
    return set(out.split())


@pytest.mark.slow
def test_real_transformers_serve_with_a_tiny_model(tiny_model_dir):
    before = _server_pids(tiny_model_dir)
    specs = harness_requests(load_harness(V1), 3)
    with transformers_server(tiny_model_dir, device="cpu") as url:
        report = measure(url, str(tiny_model_dir), specs, [1, 2], get_profile("cpu-tiny"),
                         max_tokens=8, timeout_s=120)
    assert report.passed, report.to_dict()
    assert all(lv.errors == 0 and lv.output_tokens > 0 for lv in report.levels)
    assert _server_pids(tiny_model_dir) <= before  # stopped, no orphan left
