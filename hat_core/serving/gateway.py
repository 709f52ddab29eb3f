"""The A/B gateway: an OpenAI-compatible chat endpoint in front of the slot's two arms.

    app = gateway_app(experiment, table, exposures, record_outcomes=store_outcomes)
    # POST /v1/chat/completions   body as OpenAI's; the user from `user` or `X-HAT-User`
    # POST /v1/outcomes           {"events": [{"user_id", "day", "metric", "value"}, ...]}
    # GET  /health, /v1/models, /v1/experiment

Each chat request is assigned its user's sticky arm (`Experiment.arm`), answered by that
arm's route at the moment it arrived, and logged as one `Exposure` (status and latency
included, failures too) through the `ExposureLog`, which never blocks the response. A
backend that does not answer gives HTTP 503 with a message naming the arm and the model,
unless `reroute` (the slot follower's `refresh_now`) finds the arm moved on to another
version meanwhile: the request is then sent once more, to the arm's new route (a blue-green
switch can stop the old server before the follower's poll sees the promotion).
Answers carry `X-Request-Id`, `X-HAT-Arm` and `X-HAT-Model-Version` headers, and
`X-HAT-Decoding`: how the arm decoded tool calls (`free`, `constrained-tools` held to the
request's tools, or `server` for a forwarded arm, whose server decides).
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence

import orjson
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse as _StdJSONResponse
from starlette.routing import Route as Endpoint

from hat_core.errors import HatError
from hat_core.evidence.ab_events import OutcomeEvent
from hat_core.serving.arms import ArmTable, ArmUnavailable
from hat_core.serving.assignment import Experiment
from hat_core.serving.exposure import Exposure, ExposureLog

MAX_USER_ID = 200


class JSONResponse(_StdJSONResponse):
    """Starlette's JSON response rendered by orjson (UTF-8, compact): the chat path's bodies
    are encoded once per request, so the stdlib encoder's cost showed in the profile."""

    def render(self, content) -> bytes:
        return orjson.dumps(content)
RecordOutcomes = Callable[[Sequence[OutcomeEvent]], int]


def _error(status: int, message: str, kind: str, headers: dict | None = None) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind}}, status, headers)


def user_of(request: Request, body: dict) -> str:
    """The user id of a request: the OpenAI `user` field, else the `X-HAT-User` header."""
    return str(body.get("user") or request.headers.get("x-hat-user") or "").strip()


class Gateway:
    """The gateway's handlers over one experiment, one routing table and one exposure log."""

    def __init__(self, experiment: Experiment, table: ArmTable, exposures: ExposureLog,
                 record_outcomes: RecordOutcomes | None = None,
                 reroute: Callable[[], object] | None = None):
        self.experiment, self.table, self.exposures = experiment, table, exposures
        self.record_outcomes, self.reroute = record_outcomes, reroute

    async def chat(self, request: Request) -> JSONResponse:
        started = time.perf_counter()
        request_id = request.headers.get("x-request-id") or uuid.uuid4().hex
        try:
            body = orjson.loads(await request.body())
        except orjson.JSONDecodeError:
            return _error(400, "the body is not JSON", "invalid_request_error")
        user = user_of(request, body) if isinstance(body, dict) else ""
        if not user or len(user) > MAX_USER_ID:
            return _error(400, "no user id: send OpenAI's `user` field or an X-HAT-User "
                               f"header (at most {MAX_USER_ID} characters)",
                          "invalid_request_error")
        arm = self.experiment.arm(user)
        route = self.table.routes.get(arm)
        status, payload = 500, {"error": {"message": "gateway error", "type": "server_error"}}
        try:
            status, payload, route = await self._answer_or_reroute(route, arm, body)
        finally:  # every assigned request is an exposure, whatever happened to it
            self.exposures.submit(Exposure(
                self.experiment.id, user, arm, route.target.label if route else "",
                route.target.model_version_id if route else None,
                route.target.harness_version if route else "", request_id[:64],
                (time.perf_counter() - started) * 1000.0, status))
        headers = {"x-request-id": request_id, "x-hat-arm": arm,
                   "x-hat-model-version": route.target.label if route else ""}
        if route is not None:  # how tool calls were decoded: free, held, or the server's own
            headers["x-hat-decoding"] = getattr(route.backend, "decoding", "server")
        return JSONResponse(payload, status, headers)

    async def _answer_or_reroute(self, route, arm: str, body: dict):
        """The answer and the route that gave it: when the backend did not answer
        (`ArmUnavailable`), the request is retried once on the
        arm's new route if `reroute` finds one (a switch the gateway had not yet seen)."""
        status, payload, unavailable = await self._answer(route, arm, body)
        if not unavailable or self.reroute is None:
            return status, payload, route
        await run_in_threadpool(self.reroute)
        fresh = self.table.routes.get(arm)
        if fresh is None or fresh is route or fresh.target == route.target:
            return status, payload, route
        status, payload, _ = await self._answer(fresh, arm, body)
        return status, payload, fresh

    async def _answer(self, route, arm: str, body: dict) -> tuple[int, dict, bool]:
        """`(status, payload, unavailable)`: `unavailable` when the route's backend raised
        `ArmUnavailable` (refused, timed out, stopped, or a 5xx from an HTTP server); the
        503 of an arm with no model is not retried."""
        if route is None:
            return 503, {"error": {"message": f"arm {arm} has no model: slot "
                                              f"{self.experiment.slot!r} has no champion "
                                              "(promote one with `hat promote`)",
                                   "type": "backend_unavailable"}}, False
        try:
            status, payload = await route.backend.complete(body)
        except ArmUnavailable as exc:
            return 503, {"error": {"message": f"arm {arm} ({route.target.label}): {exc}",
                                   "type": "backend_unavailable"}}, True
        if status == 200 and isinstance(payload, dict):
            payload = {**payload, "model": route.target.label}
        return status, payload, False

    async def outcomes(self, request: Request) -> JSONResponse:
        if self.record_outcomes is None:
            return _error(404, "this gateway does not take outcome events", "not_found")
        try:
            events = parse_events(await request.json())
        except (ValueError, TypeError, KeyError) as exc:
            return _error(422, f"bad outcome events: {exc}", "invalid_request_error")
        try:
            stored = await run_in_threadpool(self.record_outcomes, events)
        except HatError as exc:
            return _error(409, exc.report(), "conflict")
        return JSONResponse({"stored": stored})

    async def health(self, request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok", "ready": bool(self.table.routes),
                             "process": os.getpid(),  # which of the `--workers` answered
                             "experiment": self.experiment.name, "arms": self.table.labels(),
                             "exposure_backlog": self.exposures.backlog})

    async def models(self, request: Request) -> JSONResponse:
        labels = sorted(set(self.table.labels().values()))
        return JSONResponse({"object": "list", "data": [
            {"id": label, "object": "model", "owned_by": "hat-ops"} for label in labels]})

    async def describe(self, request: Request) -> JSONResponse:
        e = self.experiment
        return JSONResponse({"id": e.id, "name": e.name, "slot": e.slot,
                             "treatment_share": e.treatment_share, "arms": self.table.labels()})


def parse_events(data) -> list[OutcomeEvent]:
    """`{"events": [{"user_id", "day", "metric", "value"}, ...]}` as `OutcomeEvent`s."""
    rows = data["events"] if isinstance(data, dict) else data
    if not isinstance(rows, list) or not rows:
        raise ValueError("`events` must be a non-empty list")
    return [OutcomeEvent(str(r["user_id"]), str(r["day"]), str(r["metric"]), float(r["value"]))
            for r in rows]


def gateway_app(experiment: Experiment, table: ArmTable, exposures: ExposureLog, *,
                record_outcomes: RecordOutcomes | None = None,
                on_shutdown: Callable[[], Awaitable[None]] | None = None,
                reroute: Callable[[], object] | None = None) -> Starlette:
    """The Starlette app of the gateway (serve it with `hat_core.serving.runner`);
    `on_shutdown` runs on the server's loop after the last request (closing backends);
    `reroute` is called (in a worker thread) before a backend's 503 is answered."""
    g = Gateway(experiment, table, exposures, record_outcomes, reroute)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        yield
        if on_shutdown is not None:
            await on_shutdown()
    return Starlette(lifespan=lifespan, routes=[
        Endpoint("/v1/chat/completions", g.chat, methods=["POST"]),
        Endpoint("/v1/outcomes", g.outcomes, methods=["POST"]),
        Endpoint("/v1/models", g.models, methods=["GET"]),
        Endpoint("/v1/experiment", g.describe, methods=["GET"]),
        Endpoint("/health", g.health, methods=["GET"]),
    ])
