"""What each arm serves now, and the backends that answer for it.

    table = ArmTable()
    table.switch({"control": Route("control", target, LocalBackend(model_dir))})
    route = table.routes["control"]       # a request keeps its route until it finishes
    status, body = await route.backend.complete(openai_body)

`LocalBackend` runs a model directory in this process (the embedded default, CPU), with
tool calls free or held to the request's tools (`DECODINGS`); `HttpBackend` forwards to any
OpenAI-compatible server (vLLM, `transformers serve`), which decodes as it is set up. Both
raise `ArmUnavailable` when the model cannot answer (the gateway's 503). A switch replaces
the whole routing table in one assignment: requests already under way keep the route they
took, new ones get the new table.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Protocol

from hat_core.errors import HatError

DEFAULT_MAX_TOKENS = 256
JSON_HEADERS = {"content-type": "application/json"}
# How a local arm decodes tool calls: freely, or held to the tools the request offers
# (`hat_core.inference.constrained`: call names and argument keys only; what vLLM's structured
# outputs do for a served model). A registered version names the decoding its release gates
# were measured with (tag `hat.decoding`), and the gateway serves it the same way.
FREE, HELD = "free", "constrained-tools"
DECODINGS = (FREE, HELD)


class ArmUnavailable(HatError):
    """The arm's backend did not answer (refused, timed out, failed, or not loaded)."""


@dataclass(frozen=True)
class ArmTarget:
    """A registered model version an arm serves, and the harness version it was trained on."""

    registry_name: str
    version: str
    model_version_id: int | None = None
    harness_version: str = ""

    @property
    def label(self) -> str:
        return f"{self.registry_name}/{self.version}"


class ChatBackend(Protocol):
    """Answers an OpenAI chat-completions body with (HTTP status, JSON body)."""

    async def complete(self, body: dict) -> tuple[int, dict]: ...


@dataclass(frozen=True)
class Route:
    """One arm's route: what it serves and the backend that answers."""

    arm: str
    target: ArmTarget
    backend: ChatBackend


class ArmTable:
    """The arms' routes; `switch` swaps them all at once."""

    def __init__(self) -> None:
        self._routes: Mapping[str, Route] = MappingProxyType({})
        self.generation = 0

    @property
    def routes(self) -> Mapping[str, Route]:
        return self._routes

    def switch(self, routes: Mapping[str, Route]) -> None:
        self._routes = MappingProxyType(dict(routes))
        self.generation += 1

    def labels(self) -> dict[str, str]:
        """arm -> the model version it serves."""
        return {arm: r.target.label for arm, r in self._routes.items()}


def completion(model: str, message: dict, finish_reason: str = "stop") -> dict:
    """An OpenAI `chat.completion` body with one choice."""
    return {"id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion",
            "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}]}


class LocalBackend:
    """A model directory run in this process (greedy; one generation at a time per model).

    With `decoding="constrained-tools"` a call's name can only be one of the request's tools
    and its argument keys only that tool's parameters: the tools of OpenAI's `tools` field
    (rendered into the prompt by the chat template), or of `allowed_tools`, this gateway's
    extension for clients that write the harness into the system prompt themselves, as the
    simulator's compact profile does (`[{"name", "parameters"}]` or OpenAI tool specs; not
    rendered). A request with neither decodes freely."""

    def __init__(self, model_dir: str | Path, *, max_tokens: int = DEFAULT_MAX_TOKENS,
                 decoding: str = FREE):
        from hat_core.inference.backends import TransformersBackend

        if decoding not in DECODINGS:
            raise ValueError(f"unknown decoding {decoding!r}; valid: {', '.join(DECODINGS)}")
        self.decoding = decoding
        self.model = TransformersBackend(model_dir, constrain_tools=decoding == HELD)
        self.max_tokens = max_tokens
        self._lock = threading.Lock()

    def _answer(self, body: dict) -> dict:
        limit = min(int(body.get("max_tokens") or self.max_tokens), self.max_tokens)
        allowed = body.get("allowed_tools")
        if allowed is not None and not (isinstance(allowed, list)
                                        and all(map(_named_tool, allowed))):
            raise ValueError("`allowed_tools` must be a list of tools, each "
                             '{"name", "parameters"} or an OpenAI tool spec')
        with self._lock:
            out = self.model.chat(body.get("messages") or [], body.get("tools"),
                                  max_tokens=limit, allowed_tools=allowed or None)
        message = {"role": "assistant", "content": out.content,
                   "reasoning_content": out.reasoning_content or None}
        if out.tool_calls:
            message["tool_calls"] = [c.to_openai(i) for i, c in enumerate(out.tool_calls)]
        return completion(self.model.name, message,
                          "tool_calls" if out.tool_calls else "stop")

    async def complete(self, body: dict) -> tuple[int, dict]:
        import anyio

        if not isinstance(body.get("messages"), list) or not body["messages"]:
            return 400, _error("`messages` must be a non-empty list", "invalid_request_error")
        try:
            return 200, await anyio.to_thread.run_sync(self._answer, body)
        except (ValueError, TypeError, KeyError) as exc:  # a body the chat template refuses
            return 400, _error(f"{type(exc).__name__}: {exc}", "invalid_request_error")


class HttpBackend:
    """An OpenAI-compatible server at `base_url` (`POST /v1/chat/completions`).

    Forwards with aiohttp (one pooled session per event loop, at most `max_connections`
    open, kept alive) and orjson: profiled at concurrency 32, httpx's pool bookkeeping and
    the stdlib JSON were most of the gateway's own time (docs/operations.md)."""

    def __init__(self, base_url: str, *, model: str | None = None, timeout_s: float = 120.0,
                 max_connections: int = 256):
        import aiohttp  # here, in the opener's thread: its first import blocks ~0.3 s
        import yarl  # aiohttp's own URL type (a dependency of aiohttp)

        self.base_url, self.model = base_url.rstrip("/"), model
        self.timeout_s, self.max_connections = timeout_s, max_connections
        self._url = yarl.URL(f"{self.base_url}/v1/chat/completions")  # parsed once
        self._errors = (TimeoutError, aiohttp.ClientError)
        self._sessions: dict = {}  # event loop -> aiohttp.ClientSession

    def _session(self):
        import asyncio

        import aiohttp

        loop = asyncio.get_running_loop()
        session = self._sessions.get(loop)
        if session is None or session.closed:
            session = self._sessions[loop] = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self.max_connections),
                timeout=aiohttp.ClientTimeout(total=self.timeout_s), trust_env=False)
        return session

    async def _post(self, body: dict) -> tuple[int, bytes]:
        import orjson

        sent = {**body, "model": self.model} if self.model else body
        try:
            async with self._session().post(self._url, data=orjson.dumps(sent),
                                            headers=JSON_HEADERS) as answer:
                return answer.status, await answer.read()
        except self._errors as exc:
            raise ArmUnavailable(f"{self.base_url} is not answering "
                                 f"({type(exc).__name__}: {exc})") from None

    async def complete(self, body: dict) -> tuple[int, dict]:
        import orjson

        status, raw = await self._post(body)
        text = raw[:200].decode("utf-8", "replace")
        if status >= 500:
            raise ArmUnavailable(f"{self.base_url} failed: HTTP {status} {text}")
        try:
            return status, orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise ArmUnavailable(f"{self.base_url} answered with no JSON: {text!r}") from None

    async def aclose(self) -> None:
        """Close the session of the running event loop."""
        import asyncio

        session = self._sessions.pop(asyncio.get_running_loop(), None)
        if session is not None:
            await session.close()


def served_models(base_url: str, timeout_s: float = 5.0) -> set[str]:
    """The model names an OpenAI-compatible server lists (`GET /v1/models`); none when it
    does not answer."""
    import httpx

    try:
        answer = httpx.get(f"{base_url.rstrip('/')}/v1/models", timeout=timeout_s,
                           trust_env=False)
        return {m["id"] for m in answer.json()["data"]} if answer.status_code == 200 else set()
    except (httpx.HTTPError, ValueError, KeyError, TypeError):
        return set()


class PoolBackend:
    """One model version on whichever of several servers list it (one vLLM per arm).

    Opening raises `ArmUnavailable` while no server lists `model` (the gateway then keeps
    its arms and tries again). Requests go round-robin over the servers that list it, and
    that list is read again every `refresh_s` seconds (in a thread, off the event loop), so
    when a second server finishes loading the version (the control arm's vLLM after a
    promotion) it takes its share, and a server that moved to another version drops out."""

    def __init__(self, urls: list[str], model: str, *, refresh_s: float = 2.0,
                 listing=served_models):
        self.model, self.refresh_s, self._listing = model, refresh_s, listing
        self._backends = {url: HttpBackend(url, model=model) for url in urls}
        self.serving = self._read()
        if not self.serving:
            raise ArmUnavailable(f"no server of {', '.join(urls)} serves {model} yet")
        self._checked, self._turn = time.monotonic(), 0

    def _read(self) -> list[str]:
        return [url for url in self._backends if self.model in self._listing(url)]

    def recheck(self) -> None:
        """Read the listing again before this pool serves an arm once more (a rollback to a
        version served a while ago): `ArmUnavailable` while no server lists it any longer
        (its server stopped; blue-green is loading it again elsewhere)."""
        serving = self._read()
        if not serving:
            raise ArmUnavailable(f"no server serves {self.model} any longer")
        self.serving, self._checked = serving, time.monotonic()

    async def complete(self, body: dict) -> tuple[int, dict]:
        import anyio

        if time.monotonic() - self._checked > self.refresh_s:
            self._checked = time.monotonic()
            self.serving = await anyio.to_thread.run_sync(self._read) or self.serving
        self._turn += 1
        url = self.serving[self._turn % len(self.serving)]
        return await self._backends[url].complete(body)

    async def aclose(self) -> None:
        for backend in self._backends.values():
            await backend.aclose()


def _named_tool(spec) -> bool:
    fn = spec.get("function", spec) if isinstance(spec, dict) else None
    return isinstance(fn, dict) and isinstance(fn.get("name"), str) and bool(fn["name"])


def _error(message: str, kind: str) -> dict:
    return {"error": {"message": message, "type": kind}}
