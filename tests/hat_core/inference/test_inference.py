"""Inference backends, Qwen3 output parsing, the suite registry and reports."""

from __future__ import annotations

import json

import pytest
from fake_openai_server import fake_server

from hat_core.errors import ConfigError
from hat_core.evaluation.report import EvalReport, write_report
from hat_core.evaluation.suites.registry import SUITES, SuiteResult, get_suite, register
from hat_core.inference.backends import BackendError, OpenAIBackend, TransformersBackend
from hat_core.inference.protocol import AssistantOutput, InferenceBackend, parse_qwen3
from hat_core.inference.server import free_port
from hat_core.latency.measure import LatencyReport, Timing, evaluate_gates, summarise_level
from hat_core.latency.profiles import get_profile


def test_parse_qwen3_splits_reasoning_calls_and_content():
    text = ('<think>\n用户问价格\n</think>\n\n先查一下。\n<tool_call>\n'
            '{"name": "get_price", "arguments": {"id": "A1"}}\n</tool_call>')
    out = parse_qwen3(text)
    assert out.reasoning_content == "用户问价格" and out.content == "先查一下。"
    assert out.tool_calls[0].name == "get_price"
    assert json.loads(out.tool_calls[0].arguments) == {"id": "A1"}


def test_parse_qwen3_keeps_malformed_calls_and_plain_text():
    out = parse_qwen3("<tool_call>{not json</tool_call>")
    assert out.tool_calls == () and out.invalid_tool_calls == ("{not json",)
    assert parse_qwen3("你好") == AssistantOutput("你好")
    truncated = parse_qwen3('<tool_call>\n{"name": "f", "arguments": "{}"}')
    assert truncated.tool_calls[0].name == "f"


def test_openai_backend_retries_then_answers():
    with fake_server(fail_first=2, reply=lambda b: "<think>嗯</think>好的") as (url, state):
        backend = OpenAIBackend(url, "m", retries=2)  # the client backs off 0.5 s, 1 s
        out = backend.chat([{"role": "user", "content": "hi"}], max_tokens=5)
        backend.close()
    assert out == AssistantOutput("好的", "嗯")
    assert len(state.bodies) == 3 and state.bodies[-1]["max_tokens"] == 5
    assert isinstance(backend, InferenceBackend)


def test_openai_backend_gives_up_after_its_retries():
    with fake_server(fail_first=5) as (url, _):
        backend = OpenAIBackend(url, "m", retries=1)
        with pytest.raises(BackendError) as err:
            backend.chat([{"role": "user", "content": "hi"}])
    assert "HTTP 500" in err.value.report()


def test_openai_backend_reads_no_proxy_from_the_environment(monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    with fake_server() as (url, state):
        backend = OpenAIBackend(url, "m", retries=0)
        assert backend.chat([{"role": "user", "content": "hi"}]) == AssistantOutput("好的")
        backend.close()
    assert len(state.bodies) == 1


def test_openai_backend_names_a_refused_connection():
    backend = OpenAIBackend(f"http://127.0.0.1:{free_port()}", "m", retries=0, timeout_s=5)
    with pytest.raises(BackendError) as err:
        backend.chat([{"role": "user", "content": "hi"}])
    backend.close()
    assert "failed 1 time(s)" in str(err.value) and "APIConnectionError" in err.value.report()


class CannedBackend:
    """A fake model that answers every prompt with the same text."""

    name = "canned"

    def __init__(self, text: str):
        self.text, self.calls = text, 0

    def chat(self, messages, tools=None, *, max_tokens=512, temperature=0.0):
        self.calls += 1
        return AssistantOutput(self.text)


def test_ifeval_suite_runs_a_backend_and_scores_it():
    backend = CannedBackend("hello world")
    assert isinstance(backend, InferenceBackend)
    result = get_suite("ifeval").run(backend, None, limit=10)
    assert backend.calls == 10 and len(result.rows) == 10
    assert set(result.metrics) == {"ife_p", "prompt_loose", "instruction_strict",
                                   "instruction_loose"}
    assert 0.0 < result.metrics["ife_p"] < 1.0  # "hello world" has no comma, no title ...
    assert result.summary["sentence_splitter"] == "untrained"


def test_registry_is_open_and_lists_valid_names():
    class Echo:
        name = "echo"

        def run(self, model, harness, **options):
            return SuiteResult("echo", {"score": 1.0})

    register(Echo())
    try:
        assert get_suite("echo").run(None, None).metrics == {"score": 1.0}
    finally:
        SUITES.pop("echo")
    with pytest.raises(ConfigError) as err:
        get_suite("t9")
    assert "ifeval" in err.value.report()


def test_reports_are_json_plus_markdown(tmp_path):
    report = EvalReport("m", "abc", (SuiteResult("ifeval", {"ife_p": 0.5}, {}, ({"key": 1},)),))
    json_path, md_path = write_report(report, tmp_path / "r" / "report.json")
    assert json.loads(json_path.read_text())["suites"][0]["metrics"] == {"ife_p": 0.5}
    assert "| ifeval | ife_p | 0.500 |" in md_path.read_text()
    level = summarise_level(1, [Timing(True, 2.0, 0.5, 10)], 2.0)
    lat = LatencyReport("http://x", "m", "h20", 64, (level,),
                        evaluate_gates(get_profile("h20"), [level]))
    _, md = write_report(lat, tmp_path / "lat.json")
    assert "| 1 | 1 | 0 | 2.000 |" in md.read_text() and "pass" in md.read_text()


@pytest.mark.slow
def test_transformers_backend_generates_greedily(tiny_model_dir):
    backend = TransformersBackend(tiny_model_dir, device="cpu")
    messages = [{"role": "user", "content": "你好"}]
    tools = [{"type": "function", "function": {"name": "get_price", "description": "price",
                                               "parameters": {"type": "object"}}}]
    first = backend.chat(messages, tools, max_tokens=6)
    assert first == backend.chat(messages, tools, max_tokens=6)  # greedy: deterministic
    assert isinstance(first, AssistantOutput)
