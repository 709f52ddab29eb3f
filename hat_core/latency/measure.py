"""Latency of an OpenAI-compatible endpoint under realistic harness requests.

Each request is the rendered system prompt and tools of a harness plus one viewer question,
sent to `/v1/chat/completions` with `stream=true`. Per request: time to first token (the first
SSE chunk carrying content, reasoning or a tool call), end-to-end time, output tokens (the
server's `usage.completion_tokens` when it sends it, else the number of content chunks) and
output tokens per second (tokens / end-to-end time). Per concurrency level the requests run on
a thread pool of that size over one `httpx.Client`; each level reports P50/P95/P99/max
(nearest rank, see `percentile.py`) and is gated by a profile (see `gates.py`).

    specs = harness_requests(load_harness("examples/harnesses/v1.yaml"), 100)
    report = measure("http://127.0.0.1:8000", "model", specs, [1, 4, 8], get_profile("h20"))
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import httpx

from hat_core.harness.model import Harness
from hat_core.harness.render import render
from hat_core.latency.percentile import Distribution, distribution
from hat_core.latency.profiles import GateResult, Profile, check_gate

VIEWER_QUESTIONS = (
    "这款保温杯多少钱？有优惠券吗？",
    "今天下单什么时候发货？",
    "包邮吗？新疆能发吗？",
    "这个鞋子尺码偏大还是偏小？",
    "主播，链接里的颜色还有货吗？",
    "买两件能便宜一点吗？",
    "这个护手霜适合干皮吗？",
    "退货运费谁出？",
    "刚才说的满减活动怎么参加？",
    "保温杯能放进洗碗机吗？",
)


@dataclass(frozen=True)
class RequestSpec:
    """One chat request: messages and the OpenAI-style tool list."""

    messages: tuple[dict, ...]
    tools: tuple[dict, ...] = ()


@dataclass(frozen=True)
class Timing:
    """One request's measurement; `ok` False with `error` when it failed."""

    ok: bool
    e2e: float
    ttft: float | None = None
    output_tokens: int = 0
    error: str | None = None

    @property
    def tokens_per_s(self) -> float | None:
        return self.output_tokens / self.e2e if self.ok and self.e2e > 0 else None


@dataclass(frozen=True)
class LevelStats:
    """All requests at one concurrency level."""

    concurrency: int
    requests: int
    errors: int
    wall_s: float
    e2e: Distribution
    ttft: Distribution
    tokens_per_s: Distribution
    output_tokens: int
    first_errors: tuple[str, ...] = ()

    @property
    def error_rate(self) -> float:
        return self.errors / self.requests if self.requests else 1.0

    def value(self, metric: str, stat: str) -> float | None:
        if metric == "error_rate":
            return self.error_rate
        return getattr(self, metric).stat(stat)

    def to_dict(self) -> dict:
        return {"concurrency": self.concurrency, "requests": self.requests,
                "errors": self.errors, "error_rate": self.error_rate, "wall_s": self.wall_s,
                "output_tokens": self.output_tokens,
                "throughput_tokens_per_s": self.output_tokens / self.wall_s if self.wall_s else 0,
                "e2e_s": self.e2e.to_dict(), "ttft_s": self.ttft.to_dict(),
                "tokens_per_s": self.tokens_per_s.to_dict(),
                "first_errors": list(self.first_errors)}


@dataclass(frozen=True)
class LatencyReport:
    endpoint: str
    model: str
    profile: str
    max_tokens: int
    levels: tuple[LevelStats, ...]
    gates: tuple[GateResult, ...]
    meta: dict = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return all(g.passed for g in self.gates)

    def to_dict(self) -> dict:
        return {"endpoint": self.endpoint, "model": self.model, "profile": self.profile,
                "max_tokens": self.max_tokens, "passed": self.passed,
                "percentiles": "nearest-rank", **self.meta,
                "levels": [lv.to_dict() for lv in self.levels],
                "gates": [g.to_dict() for g in self.gates]}


def harness_requests(harness: Harness, n: int,
                     questions: Sequence[str] = VIEWER_QUESTIONS) -> list[RequestSpec]:
    """`n` requests: the harness's system prompt and tools, questions taken in turn."""
    rendered = render(harness)
    system = {"role": "system", "content": rendered.system_prompt}
    return [RequestSpec((system, {"role": "user", "content": questions[i % len(questions)]}),
                        tuple(rendered.tools)) for i in range(n)]


def request_body(spec: RequestSpec, model: str, max_tokens: int) -> dict:
    body = {"model": model, "messages": list(spec.messages), "stream": True,
            "max_tokens": max_tokens, "temperature": 0,
            "stream_options": {"include_usage": True}}
    return body | ({"tools": list(spec.tools)} if spec.tools else {})


def _has_output(chunk: dict) -> bool:
    for choice in chunk.get("choices") or ():
        delta = choice.get("delta") or {}
        if delta.get("content") or delta.get("reasoning_content") or delta.get("tool_calls"):
            return True
    return False


def _sse_chunks(response: httpx.Response):
    for line in response.iter_lines():
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            return
        yield json.loads(data)


def read_stream(response: httpx.Response, start: float) -> tuple[float | None, int]:
    """(time to first output chunk, output tokens) of a streamed chat completion."""
    ttft, chunks, usage = None, 0, None
    for chunk in _sse_chunks(response):
        if _has_output(chunk):
            chunks += 1
            ttft = ttft if ttft is not None else time.perf_counter() - start
        usage = (chunk.get("usage") or {}).get("completion_tokens", usage)
    return ttft, usage if usage is not None else chunks


def stream_one(client: httpx.Client, base_url: str, body: dict) -> Timing:
    """Send one streaming request and time it; failures come back as `Timing(ok=False)`."""
    start = time.perf_counter()
    try:
        with client.stream("POST", f"{base_url}/v1/chat/completions", json=body) as resp:
            if resp.status_code != 200:
                resp.read()
                return Timing(False, time.perf_counter() - start,
                              error=f"HTTP {resp.status_code}: {resp.text[:200]}")
            ttft, tokens = read_stream(resp, start)
    except (httpx.HTTPError, json.JSONDecodeError) as exc:
        return Timing(False, time.perf_counter() - start, error=f"{type(exc).__name__}: {exc}")
    return Timing(True, time.perf_counter() - start, ttft, tokens)


def summarise_level(concurrency: int, timings: Sequence[Timing], wall_s: float) -> LevelStats:
    """Distributions over the successful requests; failures are counted as errors."""
    ok = [t for t in timings if t.ok]
    return LevelStats(
        concurrency=concurrency, requests=len(timings), errors=len(timings) - len(ok),
        wall_s=wall_s, e2e=distribution([t.e2e for t in ok]),
        ttft=distribution([t.ttft for t in ok if t.ttft is not None]),
        tokens_per_s=distribution([t.tokens_per_s for t in ok if t.tokens_per_s is not None]),
        output_tokens=sum(t.output_tokens for t in ok),
        first_errors=tuple(dict.fromkeys(t.error for t in timings if t.error))[:3],
    )


def run_level(base_url: str, bodies: Sequence[dict], concurrency: int,
              timeout_s: float) -> LevelStats:
    """Send all `bodies` with at most `concurrency` in flight."""
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    timeout = httpx.Timeout(timeout_s, connect=min(10.0, timeout_s))
    with httpx.Client(timeout=timeout, limits=limits, trust_env=False) as client, \
            ThreadPoolExecutor(max_workers=concurrency) as pool:
        start = time.perf_counter()
        timings = list(pool.map(lambda b: stream_one(client, base_url, b), bodies))
        wall = time.perf_counter() - start
    return summarise_level(concurrency, timings, wall)


def evaluate_gates(profile: Profile, levels: Sequence[LevelStats]) -> tuple[GateResult, ...]:
    by_level = {lv.concurrency: lv for lv in levels}
    return tuple(check_gate(g, by_level[g.concurrency].value(g.metric, g.stat)
                            if g.concurrency in by_level else None) for g in profile.gates)


def measure(base_url: str, model: str, specs: Sequence[RequestSpec],
            concurrency: Sequence[int], profile: Profile, *, max_tokens: int = 64,
            timeout_s: float = 120.0, warmup: int = 1) -> LatencyReport:
    """Warm up, then run every request at each concurrency level, and apply the profile."""
    bodies = [request_body(s, model, max_tokens) for s in specs]
    if warmup:
        run_level(base_url, bodies[:warmup], 1, timeout_s)
    levels = tuple(run_level(base_url, bodies, c, timeout_s) for c in concurrency)
    return LatencyReport(base_url, model, profile.name, max_tokens, levels,
                         evaluate_gates(profile, levels))


def first_model_id(base_url: str, timeout_s: float = 10.0) -> str | None:
    """The first model id `GET /v1/models` lists, or None if it lists none or fails."""
    try:
        resp = httpx.get(f"{base_url}/v1/models", timeout=timeout_s, trust_env=False)
        data = (resp.json().get("data") or []) if resp.status_code == 200 else []
    except (httpx.HTTPError, ValueError):
        return None
    return data[0].get("id") if data else None
