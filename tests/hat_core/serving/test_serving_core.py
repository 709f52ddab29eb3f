"""The gateway's parts without the store: the salted assignment and its split, the batched
exposure writer under a failing store, and a switch while a request is under way."""

from __future__ import annotations

import asyncio
import math
import threading

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route as Endpoint

from hat_core.errors import ConfigError
from hat_core.serving.arms import ArmTable, ArmTarget, HttpBackend, completion
from hat_core.serving.assignment import Experiment, bucket
from hat_core.serving.exposure import Exposure, ExposureLog
from hat_core.serving.gateway import gateway_app
from hat_core.serving.runner import serve_in_thread
from hat_core.serving.switch import SlotFollower, effective_targets


@pytest.mark.parametrize("share", [0.5, 0.2])
def test_the_split_is_within_binomial_tolerance(share):
    exp = Experiment(1, "wk49", "salt-1", share)
    n = 20_000
    treated = sum(exp.arm(f"u{i}") == "treatment" for i in range(n))
    assert abs(treated - n * share) <= 4 * math.sqrt(n * share * (1 - share))


def test_assignment_is_sticky_and_the_salt_reshuffles():
    a, b = Experiment(1, "a", "salt-1", 0.5), Experiment(2, "b", "salt-2", 0.5)
    users = [f"u{i}" for i in range(2000)]
    assert [a.arm(u) for u in users] == [a.arm(u) for u in users]
    same = sum(a.arm(u) == b.arm(u) for u in users)
    assert 900 < same < 1100  # independent of the first assignment
    assert 0 <= bucket("s", "u") < 1 and a.control_share == 0.5
    with pytest.raises(ConfigError) as err:
        Experiment(3, "c", "s", 1.0)
    assert "strictly between 0 and 1" in err.value.report()


def exposure(i: int) -> Exposure:
    return Exposure(1, f"u{i}", "control", "hat-agent/1", None, "1", f"r{i}", 1.0, 200)


def test_a_failing_store_delays_exposures_but_loses_none():
    written, failures = [], []

    def write(batch):
        if len(failures) < 3:  # the store is down for the first three tries
            failures.append(len(batch))
            raise ConnectionError("store down")
        written.extend(batch)

    log = ExposureLog(write, batch_size=50, interval_s=0.01, retry_s=0.05)
    for i in range(500):
        log.submit(exposure(i))
    assert log.close(timeout_s=10) == 0
    assert [e.request_id for e in written] == [f"r{i}" for i in range(500)]
    assert log.failures == 3 and log.written == 500


def test_the_treatment_arm_serves_the_champion_when_there_is_no_challenger():
    a, b = ArmTarget("m", "1"), ArmTarget("m", "2")
    assert effective_targets({"control": a, "treatment": None}) == {"control": a,
                                                                     "treatment": a}
    assert effective_targets({"control": a, "treatment": b})["treatment"] == b
    assert effective_targets({"control": None, "treatment": b}) == {}


def slow_backend_app(release: threading.Event, started: threading.Event) -> Starlette:
    """A real OpenAI-style server whose answer waits until `release` is set."""
    async def chat(request):
        started.set()
        await asyncio.get_running_loop().run_in_executor(None, release.wait, 30)
        return JSONResponse(completion("slow", {"role": "assistant", "content": "ok"}))
    return Starlette(routes=[Endpoint("/v1/chat/completions", chat, methods=["POST"])])


def test_a_request_under_way_finishes_on_the_arm_it_started_on():
    release, started = threading.Event(), threading.Event()
    old, new = ArmTarget("m", "1"), ArmTarget("m", "2")
    targets = {"control": old}
    rows = []
    with serve_in_thread(slow_backend_app(release, started)) as backend_url:
        table = ArmTable()
        follower = SlotFollower(table, read=lambda: targets,
                                open_backend=lambda t: HttpBackend(backend_url))
        follower.refresh()
        log = ExposureLog(rows.extend, interval_s=0.01)
        app = gateway_app(Experiment(1, "e", "s", 0.01), table, log)
        with serve_in_thread(app) as url:
            body = {"messages": [{"role": "user", "content": "hi"}], "user": "u1"}
            answers = []
            under_way = threading.Thread(target=lambda: answers.append(
                httpx.post(f"{url}/v1/chat/completions", json=body, timeout=30)))
            under_way.start()
            assert started.wait(10)
            targets["control"] = new
            assert follower.refresh() and table.labels()["control"] == "m/2"
            release.set()
            under_way.join(10)
            after = httpx.post(f"{url}/v1/chat/completions", json=body, timeout=30)
        log.close()
    assert answers[0].status_code == 200 and answers[0].headers["x-hat-model-version"] == "m/1"
    assert after.headers["x-hat-model-version"] == "m/2"
    assert [r.model_version for r in rows] == ["m/1", "m/2"]


def test_a_kept_pool_is_not_reused_while_no_server_holds_its_version():
    """Rolling back to a version served a while ago: its pool is kept, but its server has
    since stopped (blue-green loads it again elsewhere); the arm stays until one lists it."""
    from hat_core.serving.arms import ArmUnavailable, PoolBackend

    listed = {"http://a": {"m/1"}, "http://b": set()}
    v1, v2 = ArmTarget("m", "1"), ArmTarget("m", "2")
    targets = {"control": v1}
    table = ArmTable()
    follower = SlotFollower(table, read=lambda: targets, open_backend=lambda t: PoolBackend(
        list(listed), t.label, listing=lambda url: listed[url]))
    follower.refresh()
    listed.update({"http://a": set(), "http://b": {"m/2"}})
    targets["control"] = v2
    assert follower.refresh() and table.labels()["control"] == "m/2"
    targets["control"] = v1  # back to 1: nobody holds it now
    with pytest.raises(ArmUnavailable, match="m/1"):
        follower.refresh()
    assert table.labels()["control"] == "m/2"
    listed["http://b"] = {"m/2", "m/1"}  # loaded again, on the other server
    assert follower.refresh() and table.routes["control"].backend.serving == ["http://b"]


def answering_app(label: str) -> Starlette:
    """A real OpenAI-style server that answers at once, naming itself."""
    async def chat(request):
        return JSONResponse(completion(label, {"role": "assistant", "content": label}))
    return Starlette(routes=[Endpoint("/v1/chat/completions", chat, methods=["POST"])])


def test_a_stopped_old_server_is_rerouted_to_the_arms_new_version():
    """Blue-green under load: the old version's server stopped before the follower's poll
    saw the promotion. The request that meets the stopped server is sent once more, to the
    new version the store now names, and its exposure names that version."""
    old, new = ArmTarget("m", "1"), ArmTarget("m", "2")
    targets, rows, errors = {"control": old}, [], []
    with serve_in_thread(answering_app("green")) as green:
        with serve_in_thread(answering_app("blue")) as blue:
            urls = {old: blue, new: green}
            table = ArmTable()
            follower = SlotFollower(table, read=lambda: targets, interval_s=3600,
                                    open_backend=lambda t: HttpBackend(urls[t]),
                                    on_error=errors.append)
            follower.refresh()
        # blue has stopped; the store names version 2, which the poll has not read yet
        targets["control"] = new
        log = ExposureLog(rows.extend, interval_s=0.01)
        app = gateway_app(Experiment(1, "e", "s", 0.01), table, log,
                          reroute=lambda: follower.refresh_now(min_gap_s=0))
        with serve_in_thread(app) as url:
            body = {"messages": [{"role": "user", "content": "hi"}], "user": "u1"}
            answer = httpx.post(f"{url}/v1/chat/completions", json=body, timeout=30)
        log.close()
    assert answer.status_code == 200, answer.text
    assert answer.headers["x-hat-model-version"] == "m/2"
    assert answer.json()["choices"][0]["message"]["content"] == "green"
    assert [(r.model_version, r.status) for r in rows] == [("m/2", 200)]
    assert errors == []


def test_a_dead_backend_with_no_new_version_still_answers_503_once_rerouted():
    """Nothing to move to (the store still names the dead version): 503 naming the arm, and
    at most one refresh per request."""
    calls = []
    target = ArmTarget("m", "1")
    with serve_in_thread(answering_app("gone")) as gone:
        pass  # stopped at once: nothing listens at `gone` now
    table = ArmTable()

    def read():
        calls.append(1)
        return {"control": target}
    follower = SlotFollower(table, read=read, interval_s=3600,
                            open_backend=lambda t: HttpBackend(gone))
    follower.refresh()
    log = ExposureLog(lambda batch: None, interval_s=0.01)
    app = gateway_app(Experiment(1, "e", "s", 0.01), table, log,
                      reroute=lambda: follower.refresh_now(min_gap_s=0))
    with serve_in_thread(app) as url:
        body = {"messages": [{"role": "user", "content": "hi"}], "user": "u1"}
        answers = [httpx.post(f"{url}/v1/chat/completions", json=body, timeout=30)
                   for _ in range(3)]
    log.close()
    assert [a.status_code for a in answers] == [503, 503, 503]
    assert "arm control (m/1)" in answers[0].json()["error"]["message"]
    assert len(calls) == 1 + 3  # the first refresh, then exactly one per failed request


def test_refresh_now_reads_once_within_its_gap_and_never_raises():
    reads, errors = [], []

    def read():
        reads.append(1)
        if len(reads) > 1:
            raise ConnectionError("store down")
        return {"control": ArmTarget("m", "1")}
    follower = SlotFollower(ArmTable(), read=read, open_backend=lambda t: object(),
                            on_error=errors.append)
    assert follower.refresh_now(min_gap_s=60) is True  # the first: nothing read before
    assert follower.refresh_now(min_gap_s=60) is False and len(reads) == 1
    assert follower.refresh_now(min_gap_s=0) is False  # the store is down: reported
    assert len(reads) == 2 and [type(e) for e in errors] == [ConnectionError]
