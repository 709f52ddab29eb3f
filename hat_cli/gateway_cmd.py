"""`hat gateway`: the A/B gateway on the embedded default, wired to the store and registry.

    hat gateway [--experiment NAME] [--host 127.0.0.1] [--port 8080] [--workers N]

Serves `POST /v1/chat/completions` (OpenAI-compatible) in front of the slot's champion
(control arm) and challenger (treatment arm), each loaded in this process from the MLflow
registry (`models:/NAME/VERSION`, downloaded to `$HAT_HOME/serving`). Every request is an
exposure row of the experiment; promotions and rollbacks recorded in the store reach the
arms within `--follow-every` seconds, without a restart. `hat serve` runs the same gateway
beside the retrain deployments. The experiment is `--experiment` (name or id), else the
newest of the slot, else a new one named `SLOT-default` with a 50/50 split.
`--backend-url URL` forwards every arm to an OpenAI-compatible server instead (production:
vLLM), asking for the model `NAME/VERSION` of the arm; given several times (one vLLM per
arm), each version goes to the server that lists it (`url_backends`).
`--workers N` runs N gateway processes on the port (uvloop and httptools in each; default 2
when forwarding, 1 when the models load here): see `embedded_gateway`.
A model loaded here decodes tool calls as its version was evaluated for its release gates
(tag `hat.decoding`: free, or held to the request's tools); `--decoding` overrides that.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import typer
from sqlalchemy.orm import Session, sessionmaker

from hat_cli.errors import exits_on_error
from hat_core.errors import ConfigError, Problem
from hat_core.serving.arms import DECODINGS, FREE, ArmTable, ArmTarget, ChatBackend, LocalBackend
from hat_core.serving.exposure import ExposureLog
from hat_core.serving.runner import Engine
from hat_core.serving.switch import SlotFollower

DEFAULT_PORT = 8080


@dataclass
class RunningGateway:
    """A gateway serving at `url`: its routing table, exposure log and slot follower."""

    url: str
    table: ArmTable
    exposures: ExposureLog
    follower: SlotFollower


AUTO = "auto"


def registry_backends(registry, cache: Path,
                      decoding: str = AUTO) -> Callable[[ArmTarget], ChatBackend]:
    """Open an arm's model in this process from the registry (downloaded once to `cache`),
    decoding tool calls as the version was evaluated for its gates (`auto`: its
    `hat.decoding` tag, `free` when untagged) or as `decoding` says (`DECODINGS`)."""
    if decoding not in (AUTO, *DECODINGS):
        raise ConfigError(f"unknown decoding {decoding!r}",
                          [Problem("--decoding", f"one of {AUTO}, {', '.join(DECODINGS)}")])

    def open_backend(target: ArmTarget) -> ChatBackend:
        folder = cache / target.registry_name / target.version
        how = registry.decoding(target.registry_name, target.version) \
            if decoding == AUTO else decoding
        return LocalBackend(registry.download(target.registry_name, target.version, folder),
                            decoding=how if how in DECODINGS else FREE)
    return open_backend


def choose_experiment(sessions: sessionmaker[Session], ref: str | None, *, slot: str = "ab",
                      actor: str = "system"):
    """The experiment named or numbered `ref`, else the slot's newest, else a new default."""
    from db.engine import in_transaction
    from db.experiments_repo import create_experiment, find_experiment, list_experiments

    with sessions() as s:
        if ref is not None:
            return find_experiment(s, ref=ref)
        for e in list_experiments(s):
            if e.slot == slot:
                return e
    return in_transaction(sessions, lambda s: create_experiment(
        s, name=f"{slot}-default", treatment_share=0.5, actor=actor, slot=slot))


@contextlib.contextmanager
def running_gateway(sessions: sessionmaker[Session], experiment, *,
                    open_backend: Callable[[ArmTarget], ChatBackend], host: str = "127.0.0.1",
                    port: int = 0, follow_every_s: float = 1.0,
                    say: Callable[[str], None] = lambda line: None,
                    read: Callable[[], dict] | None = None,
                    engine: Engine = Engine()) -> Iterator[RunningGateway]:
    """The gateway of `experiment` (a `db.values.AbExperiment`) until the block ends; then
    in-flight requests finish and every queued exposure is written. The arms follow the
    store's slot (`read` replaces that, for benchmarks); `engine` is uvicorn's loop and
    parser, and whether the port is shared with other gateway processes."""
    from db.engine import in_transaction
    from db.exposures_repo import add_exposures
    from db.outcomes_repo import add_outcomes
    from db.serving_slot import slot_targets
    from hat_core.serving.gateway import gateway_app
    from hat_core.serving.runner import serve_in_thread

    def read_slot():
        with sessions() as s:
            return slot_targets(s, slot=experiment.slot)

    table = ArmTable()
    exposures = ExposureLog(lambda batch: in_transaction(
        sessions, lambda s: add_exposures(s, exposures=batch)),
        on_error=lambda exc: say(f"exposures: store refused a batch, retrying: {exc}"))
    follower = SlotFollower(table, read=read or read_slot, open_backend=open_backend,
                            interval_s=follow_every_s,
                            on_error=lambda exc: say(f"gateway: keeping the arms: {exc}"),
                            on_switch=lambda labels: say(f"gateway: arms now {labels}"))
    def record_outcomes(events):
        return in_transaction(sessions, lambda s: add_outcomes(
            s, experiment_id=experiment.id, events=events))

    async def close_backends() -> None:
        for backend in follower.backends():
            if hasattr(backend, "aclose"):
                await backend.aclose()

    app = gateway_app(experiment.assignment(), table, exposures,
                      record_outcomes=record_outcomes, on_shutdown=close_backends,
                      reroute=follower.refresh_now)
    try:
        try:
            follower.refresh()
        except Exception as exc:  # noqa: BLE001  (answer 503 until the follower loads it)
            say(f"gateway: the arms could not be loaded yet: {exc}")
        follower.start()
        with serve_in_thread(app, host=host, port=port, engine=engine) as url:
            yield RunningGateway(url, table, exposures, follower)
    finally:
        follower.stop()
        left = exposures.close()
        if left:
            say(f"gateway: {left} exposure(s) could not be written")


def url_backends(base_urls: str | list[str]) -> Callable[[ArmTarget], ChatBackend]:
    """Every arm forwarded to an OpenAI-compatible server, the model named by its label
    (`hat-agent/3`). One URL: that server serves every version under its name (vLLM with
    LoRA adapters, or a proxy routing by model name). Several (one vLLM per arm, each run by
    `hat_core.serving.arm_server`): a version goes to the servers whose `/v1/models` list it
    (`PoolBackend`); while none does (still loading), `ArmUnavailable` keeps the gateway on
    the arms it has, and the follower tries again."""
    from hat_core.serving.arms import HttpBackend, PoolBackend

    urls = [base_urls] if isinstance(base_urls, str) else list(base_urls)
    if len(urls) == 1:
        return lambda target: HttpBackend(urls[0], model=target.label)
    return lambda target: PoolBackend(urls, target.label)


def default_workers(backend_url: list[str] | None) -> int:
    """Gateway processes when `--workers` is not given: 2 when forwarding (measured faster at
    concurrency 8 and 32, docs/operations.md), 1 when the models run in the process (each
    worker would load its own copy)."""
    return min(2, os.cpu_count() or 1) if backend_url else 1


def sibling_command(experiment_id: int, host: str, port: int, follow_every_s: float,
                    backend_url: list[str] | None, decoding: str = AUTO) -> list[str]:
    """The command line of one more gateway process on the same port and experiment."""
    line = [sys.executable, "-m", "hat_cli", "gateway", "--experiment", str(experiment_id),
            "--host", host, "--port", str(port), "--follow-every", str(follow_every_s),
            "--workers", "1", "--shared-port"]
    if decoding != AUTO:
        line += ["--decoding", decoding]
    for url in backend_url or []:
        line += ["--backend-url", url]
    return line


@contextlib.contextmanager
def sibling_gateways(commands: list[list[str]], say: Callable[[str], None]) -> Iterator[list]:
    """The processes of `commands` until the block ends; then each is asked to stop at
    once (SIGTERM: it lets requests finish and writes its queued exposures) and waited for."""
    from hat_core.children import spawn, stop_group

    procs = []
    try:
        for command in commands:
            procs.append(spawn(command))
            say(f"gateway: worker process {procs[-1].pid} on the same port")
        yield procs
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            stop_group(proc, grace=60)


@contextlib.contextmanager
def embedded_gateway(sessions, settings, *, experiment_ref: str | None, host: str, port: int,
                     follow_every_s: float = 1.0, say: Callable[[str], None] = typer.echo,
                     backend_url: list[str] | None = None, workers: int | None = None,
                     shared_port: bool = False, decoding: str = AUTO) -> Iterator[RunningGateway]:
    """`running_gateway` on the settings' registry: models loaded in this process (tool calls
    decoded as `registry_backends` says), or forwarded to the servers of `backend_url`
    (`url_backends`; they decode as they are set up, so `decoding` must stay `auto`).
    `workers` > 1: as many gateway processes on one port (SO_REUSEPORT), this one and
    `workers - 1` children, each with its own exposure writer and slot follower (the
    assignment is a pure hash, so they agree); `shared_port`: this process is one of them."""
    from hat_cli.db_cmd import whoami
    from hat_core.release.registry import ModelRegistry

    if backend_url and decoding != AUTO:
        raise ConfigError("--decoding applies to models loaded in the gateway; with "
                          "--backend-url each server decodes as it is set up",
                          [Problem("--decoding", "leave it out, or set up the server's "
                                                 "structured outputs (vLLM)")])
    workers = default_workers(backend_url) if workers is None else workers
    experiment = choose_experiment(sessions, experiment_ref, actor=whoami())
    registry = ModelRegistry(settings.resolved_mlflow_uri())
    backends = url_backends(backend_url) if backend_url else registry_backends(
        registry, Path(settings.home).resolve() / "serving", decoding)
    if not shared_port:
        say(f"gateway: experiment {experiment.name} (id {experiment.id}, treatment share "
            f"{experiment.treatment_share}), {workers} process(es)")
    engine = Engine(reuse_port=shared_port or workers > 1)
    with running_gateway(sessions, experiment, open_backend=backends, host=host, port=port,
                         follow_every_s=follow_every_s, say=say, engine=engine) as running:
        bound = int(running.url.rsplit(":", 1)[1])
        with sibling_gateways([sibling_command(experiment.id, host, bound, follow_every_s,
                                               backend_url, decoding)] * (workers - 1), say):
            yield running


@exits_on_error
def gateway(
    experiment: str = typer.Option(None, "--experiment", help="name or id (default: the "
                                                              "slot's newest)"),
    host: str = typer.Option("127.0.0.1", "--host"),
    port: int = typer.Option(DEFAULT_PORT, "--port"),
    follow_every: float = typer.Option(1.0, "--follow-every", min=0.1,
                                       help="seconds between reads of the slot"),
    backend_url: list[str] = typer.Option(None, "--backend-url",
                                          help="forward to this OpenAI-compatible server "
                                               "(vLLM), model = NAME/VERSION, instead of "
                                               "loading here; repeat for one server per arm"),
    workers: int = typer.Option(None, "--workers", min=1,
                                help="gateway processes on the port (default: 2 with "
                                     "--backend-url, else 1)"),
    shared_port: bool = typer.Option(False, "--shared-port", hidden=True,
                                     help="one of several processes on the port"),
    decoding: str = typer.Option(AUTO, "--decoding",
                                 help="tool calls of the models loaded here: auto (as each "
                                      "version was evaluated, its hat.decoding tag), free, or "
                                      "constrained-tools (held to the request's tools)"),
) -> None:
    """Run the A/B gateway until Ctrl-C (OpenAI-compatible, sticky arms, exposures)."""
    from hat_cli.db_cmd import open_store
    from hat_core.settings import load_settings

    sessions = open_store()
    with embedded_gateway(sessions, load_settings(), experiment_ref=experiment, host=host,
                          port=port, follow_every_s=follow_every, backend_url=backend_url,
                          workers=workers, shared_port=shared_port,
                          decoding=decoding) as running:
        if not shared_port:
            typer.echo(f"gateway at {running.url}/v1/chat/completions (Ctrl-C stops it)")
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())  # a clean stop writes exposures
        with contextlib.suppress(KeyboardInterrupt):
            stop.wait()
    typer.echo("stopped", err=True)
