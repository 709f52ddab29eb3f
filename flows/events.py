"""The harness-change event on the Prefect event bus (the fast path to the retrain run).

`emit_version_created(line, number)` after a version is committed; the deployment's trigger
starts `retrain` with the payload's line and number. Emission is best effort: with the
server down the event is dropped silently, and the outbox row plus the reconciler deliver it.
The implementation is `hat_core.events` (so that `hat harness submit` and the console, which
do not import `flows`, emit the same event); `flows.serve` reads `EVENT` for its trigger.
"""

from __future__ import annotations

from hat_core.events import EVENT, RESOURCE_PREFIX, emit_version_created

__all__ = ["EVENT", "RESOURCE_PREFIX", "emit_version_created"]
