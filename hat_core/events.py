"""The harness-change event on the Prefect event bus, emitted after a version is stored.

It is the fast path from a stored version to its retrain run (the deployment's trigger
starts `retrain` with the payload's line and number).

    announce_version_created("live-shop", 3, api_url=prefect_api_url(settings), emitter="cli")

Called after the version's transaction committed, by `hat harness submit`, the console's
submit page and `flows.events`. Best effort by design: the outbox row written with the version
is the durable path and the reconciler (`hat serve`) delivers it whatever happens here, so a
failure is an `Announcement` with `ok=False` for a warning, never an exception. Without a
configured API nothing is emitted (Prefect would start an ephemeral server in this process).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

EVENT = "harness.version.created"
RESOURCE_PREFIX = "hat.harness"
HEALTH_TIMEOUT_S = 2.0
DRAIN_TIMEOUT_S = 10.0
LATER = "the reconciler (`hat serve`) starts its retrain from the outbox instead"


@dataclass(frozen=True)
class Announcement:
    """Whether the event went out, and what to tell the person who submitted."""

    ok: bool
    message: str
    event_id: str | None = None


def resource_id(line: str, number: int) -> str:
    """The Prefect resource id of a harness version."""
    return f"{RESOURCE_PREFIX}.{line}.{number}"


def prefect_api_url(configured: str | None) -> str | None:
    """The Prefect API: the settings' `HAT_PREFECT_API_URL`, else `PREFECT_API_URL`, else None."""
    return configured or os.environ.get("PREFECT_API_URL") or None


def emit_version_created(line: str, number: int, emitter: str = "hat") -> str | None:
    """Emit the event with the current Prefect settings; its id, or None when Prefect has no
    event client. A server that is down drops it silently (the outbox covers that)."""
    from prefect.events import emit_event

    event = emit_event(
        event=EVENT,
        resource={"prefect.resource.id": resource_id(line, number), "hat.emitter": emitter},
        payload={"line": line, "number": int(number)},
    )
    return str(event.id) if event else None


def announce_version_created(line: str, number: int, *, api_url: str | None,
                             emitter: str) -> Announcement:
    """Emit the event to `api_url` if one is configured and answers, and wait until it is
    sent; otherwise say why not (the version is stored either way)."""
    if not api_url:
        return Announcement(False, f"No Prefect API is configured (HAT_PREFECT_API_URL): {LATER}.")
    down = _unreachable(api_url)
    if down:
        return Announcement(False, f"{down}: {LATER}.")
    from prefect.events.worker import EventsWorker
    from prefect.settings import PREFECT_API_URL, temporary_settings

    try:
        with temporary_settings(updates={PREFECT_API_URL: api_url}):
            event_id = emit_version_created(line, number, emitter)
            EventsWorker.drain_all(timeout=DRAIN_TIMEOUT_S)
    except Exception as exc:  # noqa: BLE001 - any client failure becomes the warning
        return Announcement(False, f"The harness-change event could not be emitted "
                                   f"({type(exc).__name__}: {exc}): {LATER}.")
    if event_id is None:
        return Announcement(False, f"Prefect has no event client here: {LATER}.")
    return Announcement(True, f"Emitted {EVENT} for {line} v{number} to {api_url}.", event_id)


def _unreachable(api_url: str) -> str:
    """Why `api_url` cannot be used (a 2-second `/health` check), or ""."""
    import httpx

    try:
        httpx.get(api_url.rstrip("/") + "/health", timeout=HEALTH_TIMEOUT_S).raise_for_status()
    except httpx.HTTPError as exc:
        return f"The Prefect API at {api_url} is not reachable ({type(exc).__name__})"
    return ""
