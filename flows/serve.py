"""`hat serve`: the retrain service on one machine.

1. a local `prefect server start` (only when no Prefect API is configured), health-checked
   (`flows/prefect_server.py`, started before Prefect is imported);
2. the global concurrency limit `train-slot` (one training per GPU pool);
3. the reconciler loop in a thread (outbox rows -> `run_deployment` with idempotency keys);
4. the deployment `retrain/harness-change`: the harness-change event trigger + a weekly cron.
Ctrl-C or SIGTERM stops the runner, the reconciler and the server it started.
"""

from __future__ import annotations

import os
import signal

from flows.events import EVENT, RESOURCE_PREFIX
from flows.interruptions import PARENT_PID
from flows.reconciler import DEPLOYMENT

WEEKLY_CRON = "0 3 * * 1"  # Mondays 03:00


def ensure_concurrency_limit(name: str, limit: int = 1) -> None:
    """Create the global concurrency limit `name` unless it exists."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate
    from prefect.exceptions import ObjectAlreadyExists

    with get_client(sync_client=True) as client:
        try:
            client.create_global_concurrency_limit(
                GlobalConcurrencyLimitCreate(name=name, limit=limit))
        except ObjectAlreadyExists:
            pass


def retrain_deployment(config_path: str | None = None):
    """The `retrain/harness-change` deployment: event trigger + weekly cron."""
    from prefect.events import DeploymentEventTrigger
    from prefect.schedules import Cron

    from flows.retrain import retrain

    trigger = DeploymentEventTrigger(
        expect={EVENT}, match={"prefect.resource.id": f"{RESOURCE_PREFIX}.*"},
        parameters={"harness_version": "{{ event.payload.number }}",
                    "line": "{{ event.payload.line }}", "trigger": "harness-change",
                    "config_path": config_path})
    weekly = Cron(WEEKLY_CRON, timezone="UTC", parameters={"trigger": "weekly"})
    return retrain.to_deployment(
        name=DEPLOYMENT, schedules=[weekly], triggers=[trigger],
        parameters={"config_path": config_path},
        description="Retrain on every harness change and every week (docs/flows.md)")


def serve_forever(config_path: str | None, train_slot: str) -> None:
    """Serve the deployment until SIGINT/SIGTERM (this process' main thread)."""
    from prefect import serve

    ensure_concurrency_limit(train_slot)
    os.environ[PARENT_PID] = str(os.getpid())  # its flow runs end with it (watch_parent)
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        serve(retrain_deployment(config_path), pause_on_shutdown=False,
              print_starting_message=True)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)


def _raise_interrupt(signum, frame) -> None:
    from hat_core.children import stop_deadline

    stop_deadline(120.0)  # the clean-up ignores further signals; the deadline bounds it
    raise KeyboardInterrupt
