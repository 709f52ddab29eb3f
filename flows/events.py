"""The harness-change event on the Prefect event bus (the fast path to the retrain run).

`emit_version_created(line, number)` after a version is committed; the deployment's trigger
starts `retrain` with the payload's line and number. Emission is best effort: with the
server down the event is dropped silently, and the outbox row plus the reconciler deliver it.
"""

from __future__ import annotations

EVENT = "harness.version.created"
RESOURCE_PREFIX = "hat.harness"


def emit_version_created(line: str, number: int, emitter: str = "hat") -> str | None:
    """Emit the event; returns its id, or None when no event client is available."""
    from prefect.events import emit_event

    event = emit_event(
        event=EVENT,
        resource={"prefect.resource.id": f"{RESOURCE_PREFIX}.{line}.{number}",
                  "hat.emitter": emitter},
        payload={"line": line, "number": int(number)},
    )
    return str(event.id) if event else None
