"""The A/B gateway on loopback, on the real store and MLflow registry, with two tiny
checkpoints: sticky arms, the split, every request an exposure, promotion and rollback
reaching the arms without a restart, and a dead backend's 503 with no exposure lost."""

from __future__ import annotations

import contextlib
import math
import shutil
import time

import httpx
import pytest
from flow_helpers import add_role, registered_version
from tiny_model import build_tiny_model, copy_with_seed

from db.engine import in_transaction
from db.experiments_repo import create_experiment, list_experiments
from db.exposures_repo import arm_counts, list_exposures
from db.promotion import promote_slot, rollback_slot
from hat_cli.gateway_cmd import embedded_gateway, registry_backends, running_gateway
from hat_core.errors import ConfigError
from hat_core.inference.server import free_port
from hat_core.release.registry import DECODING_TAG
from hat_core.serving.arms import FREE, HELD, HttpBackend

pytestmark = pytest.mark.timeout(600)  # minutes under load; seconds on idle cores


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    root = tmp_path_factory.mktemp("arms")
    first = build_tiny_model(root / "a")
    return first, copy_with_seed(first, root / "b", seed=1)


@pytest.fixture
def slot(store, tracking, registry_name, tmp_path, checkpoints):
    """v1 the champion, v2 (registered after it, gates passed) the challenger."""
    add_role(store, "olga", "operator")
    for i, checkpoint in enumerate(checkpoints, 1):
        shutil.copytree(checkpoint, tmp_path / f"model-{i}")
    v1 = registered_version(store, tracking, registry_name, tmp_path, 1, passed=True)
    v2 = registered_version(store, tracking, registry_name, tmp_path, 2, passed=True)
    promote_slot(store, tracking, registry_name=registry_name, version=v1, actor="olga")
    return f"{registry_name}/{v1}", f"{registry_name}/{v2}"


@contextlib.contextmanager
def gateway(store, open_backend, share=0.5, name="wk49"):
    exp = in_transaction(store, lambda s: create_experiment(
        s, name=name, treatment_share=share, actor="olga"))
    with running_gateway(store, exp, open_backend=open_backend, follow_every_s=0.2) as g, \
            httpx.Client(base_url=g.url, timeout=60, trust_env=False) as client:
        yield g, client, exp


def ask(client, user: str) -> httpx.Response:
    return client.post("/v1/chat/completions", json={
        "messages": [{"role": "user", "content": "这款保温杯多少钱？"}], "max_tokens": 1,
        "user": user})


def stored(store, exp, expected: int):
    with store() as s:
        return list_exposures(s, experiment_id=exp.id, limit=expected + 10)


@pytest.mark.slow  # 300 generations: about a minute on 2 idle cores, minutes under load
@pytest.mark.timeout(900)
def test_sticky_arms_split_and_every_request_stored(store, tracking, tmp_path, slot):
    champion, challenger = slot
    with gateway(store, registry_backends(tracking, tmp_path / "serving")) as (g, client, exp):
        same = [ask(client, "viewer-42") for _ in range(200)]
        users = [ask(client, f"viewer-{i}") for i in range(100)]
        assert g.exposures.flush() == 0
    answers = same + users
    assert {r.status_code for r in answers} == {200}
    assert len({r.headers["x-hat-arm"] for r in same}) == 1
    served = {r.headers["x-hat-arm"]: r.headers["x-hat-model-version"] for r in answers}
    assert served == {"control": champion, "treatment": challenger}
    assert all(r.json()["model"] == r.headers["x-hat-model-version"] for r in answers)
    treated = sum(r.headers["x-hat-arm"] == "treatment" for r in users)
    assert abs(treated - 50) <= 4 * math.sqrt(100 * 0.25)  # binomial, 4 sd
    rows = stored(store, exp, 300)
    assert len(rows) == 300 and len({r.request_id for r in rows}) == 300
    assert {r.request_id for r in rows} == {r.headers["x-request-id"] for r in answers}
    assert all(r.status == 200 and r.latency_ms > 0 and r.harness_version for r in rows)
    assert all(r.arm == exp.assignment().arm(r.user_id) for r in rows)
    with store() as s:
        counts = {c.arm: (c.users, c.requests) for c in arm_counts(s, experiment_id=exp.id)}
    users_per_arm = {"control": 100 - treated, "treatment": treated}
    sticky = same[0].headers["x-hat-arm"]  # viewer-42 is one of the 100 users too
    assert counts == {arm: (n, n + (200 if arm == sticky else 0))
                      for arm, n in users_per_arm.items()}


def wait_for(client, user: str, label: str, timeout_s: float = 20.0) -> httpx.Response:
    deadline = time.monotonic() + timeout_s
    while True:
        answer = ask(client, user)
        if answer.headers["x-hat-model-version"] == label or time.monotonic() > deadline:
            return answer
        time.sleep(0.1)


def control_user(exp) -> str:
    return next(u for u in (f"viewer-{i}" for i in range(100))
                if exp.assignment().arm(u) == "control")


def test_promotion_and_rollback_reach_the_gateway_without_a_restart(
        store, tracking, registry_name, tmp_path, slot):
    champion, challenger = slot
    with gateway(store, registry_backends(tracking, tmp_path / "serving")) as (g, client, exp):
        user = control_user(exp)
        assert ask(client, user).headers["x-hat-model-version"] == champion
        url, server_generation = g.url, g.table.generation
        promote_slot(store, tracking, registry_name=registry_name,
                     version=challenger.rsplit("/", 1)[1], actor="olga")
        switched = time.monotonic()
        assert wait_for(client, user, challenger).headers["x-hat-model-version"] == challenger
        assert time.monotonic() - switched < 20
        assert g.table.labels() == {"control": challenger, "treatment": challenger}
        rollback_slot(store, tracking, registry_name=registry_name, actor="olga",
                      reason="wk49 regression")
        assert wait_for(client, user, champion).headers["x-hat-model-version"] == champion
        assert g.url == url and g.table.generation == server_generation + 2
        assert g.exposures.flush() == 0
    labels = {r.model_version for r in stored(store, exp, 1000) if r.arm == "control"}
    assert labels == {champion, challenger}


def test_a_dead_backend_is_a_clear_503_and_every_request_still_an_exposure(store, slot):
    champion, _ = slot
    dead = f"http://127.0.0.1:{free_port()}"
    with gateway(store, lambda target: HttpBackend(dead, timeout_s=5)) as (g, client, exp):
        answers = [ask(client, f"viewer-{i}") for i in range(30)]  # no model runs here
        assert g.exposures.flush() == 0
        health = client.get("/health").json()
    assert {r.status_code for r in answers} == {503}
    error = answers[0].json()["error"]
    assert error["type"] == "backend_unavailable"
    assert dead in error["message"] and "not answering" in error["message"]
    assert answers[0].headers["x-hat-arm"] in error["message"]
    assert health["ready"] is True and health["exposure_backlog"] == 0
    rows = stored(store, exp, 30)
    assert len(rows) == 30 and {r.status for r in rows} == {503}


def test_requests_without_a_user_are_refused_and_not_exposures(store, tracking, tmp_path,
                                                               slot):
    with gateway(store, registry_backends(tracking, tmp_path / "serving")) as (g, client, exp):
        answer = client.post("/v1/chat/completions", json={"messages": []})
        by_header = client.post("/v1/chat/completions", headers={"X-HAT-User": "viewer-1"},
                                json={"messages": [{"role": "user", "content": "hi"}],
                                      "max_tokens": 1})
        outcome = client.post("/v1/outcomes", json={"events": [
            {"user_id": "viewer-1", "day": "2026-12-05", "metric": "gmv", "value": 12.5}]})
        again = client.post("/v1/outcomes", json={"events": [
            {"user_id": "viewer-1", "day": "2026-12-05", "metric": "gmv", "value": 1}]})
        assert g.exposures.flush() == 0
    assert answer.status_code == 400 and "X-HAT-User" in answer.json()["error"]["message"]
    assert by_header.status_code == 200
    assert outcome.json() == {"stored": 1} and again.status_code == 409
    assert [r.user_id for r in stored(store, exp, 5)] == ["viewer-1"]


def test_each_version_is_served_with_the_decoding_its_gates_measured(
        store, tracking, registry_name, tmp_path, checkpoints):
    add_role(store, "olga", "operator")
    for i, checkpoint in enumerate(checkpoints, 1):
        shutil.copytree(checkpoint, tmp_path / f"model-{i}")
    held = registered_version(store, tracking, registry_name, tmp_path, 1, passed=True,
                              decoding=HELD)
    old = registered_version(store, tracking, registry_name, tmp_path, 2, passed=True)
    tracking.client.delete_model_version_tag(registry_name, old, DECODING_TAG)  # before tags
    promote_slot(store, tracking, registry_name=registry_name, version=held, actor="olga")
    assert tracking.decoding(registry_name, held) == HELD
    assert tracking.decoding(registry_name, old) == FREE
    by_tag = registry_backends(tracking, tmp_path / "serving")
    forced = registry_backends(tracking, tmp_path / "serving-free", decoding=FREE)
    for week, (open_backend, control) in enumerate(((by_tag, HELD), (forced, FREE))):
        with gateway(store, open_backend, name=f"wk{50 + week}") as (g, client, exp):
            user = control_user(exp)
            other = next(u for u in (f"viewer-{i}" for i in range(100))
                         if exp.assignment().arm(u) == "treatment")
            assert ask(client, user).headers["x-hat-decoding"] == control
            assert ask(client, other).headers["x-hat-decoding"] == FREE
    with pytest.raises(ConfigError, match="unknown decoding"):
        registry_backends(tracking, tmp_path / "serving", decoding="held")


def test_a_forwarding_gateway_refuses_a_decoding_it_cannot_apply(store):
    with store() as s:
        before = len(list_experiments(s))
    gateway = embedded_gateway(store, None, experiment_ref=None, host="127.0.0.1", port=0,
                               backend_url=["http://127.0.0.1:9"], decoding=HELD)
    with pytest.raises(ConfigError, match="each server decodes"), gateway:
        pass
    with store() as s:
        assert len(list_experiments(s)) == before  # refused before anything was created


def test_a_registered_version_loads_as_an_mlflow_transformers_model(
        store, tracking, registry_name, slot, monkeypatch):
    import mlflow.transformers
    from mlflow.models import Model

    champion, _ = slot
    monkeypatch.setenv("MLFLOW_TRACKING_URI", tracking.tracking_uri)
    uri = f"models:/{registry_name}@champion"
    parts = mlflow.transformers.load_model(uri, return_type="components")
    assert parts["task"] == "text-generation" and parts["model"].config.model_type == "qwen3"
    assert "llm/v1/chat" in str(Model.load(uri).to_dict())  # the chat signature and task
    mv = tracking.client.get_model_version_by_alias(registry_name, "champion")
    assert f"{mv.name}/{mv.version}" == champion and mv.source.endswith("/model")
    for tag in ("hat.job_key", "hat.harness_version", "hat.gates_passed",
                "hat.checkpoint_uri"):
        assert mv.tags[tag], tag
    local = tracking.model_source_dir(registry_name, mv.version)
    assert (local / "config.json").is_file() and (local / "tokenizer.json").is_file()


def test_the_arms_can_be_forwarded_to_one_openai_server_by_model_name(store, slot):
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route as Endpoint

    from hat_cli.gateway_cmd import url_backends
    from hat_core.serving.arms import completion
    from hat_core.serving.runner import serve_in_thread

    asked = []

    async def chat(request):
        asked.append((await request.json())["model"])
        return JSONResponse(completion("upstream", {"role": "assistant", "content": "好的"}))

    champion, challenger = slot
    upstream = Starlette(routes=[Endpoint("/v1/chat/completions", chat, methods=["POST"])])
    with serve_in_thread(upstream) as url, gateway(store, url_backends(url)) as (g, client, exp):
        answers = [ask(client, f"viewer-{i}") for i in range(20)]
        assert g.exposures.flush() == 0
    assert {r.status_code for r in answers} == {200}
    assert asked == [r.headers["x-hat-model-version"] for r in answers]
    assert set(asked) == {champion, challenger}
