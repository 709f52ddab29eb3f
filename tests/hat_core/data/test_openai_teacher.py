"""The real `OpenAITeacher` against a local OpenAI-compatible server (http.server, loopback):
tool calls over the wire, a 503 retried, a timeout reported as a rejected rollout."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from data_helpers import record_script, script_key, tiny_config

from hat_core.data.rollout import play, training_surfaces
from hat_core.data.teacher import OpenAITeacher
from hat_core.sim.batch import world


class Endpoint:
    """`POST /v1/chat/completions` answering from an oracle script."""

    def __init__(self, script: dict, *, fail_first: int = 0, delay_s: float = 0.0):
        self.script, self.fail_first, self.delay_s = script, fail_first, delay_s
        self.bodies: list[dict] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                endpoint.bodies.append(body)
                if len(endpoint.bodies) <= endpoint.fail_first:
                    self.send_response(503)
                    self.end_headers()
                    return
                time.sleep(endpoint.delay_s)
                out = endpoint.script[script_key(body["messages"])]
                message = {"role": "assistant", "content": out.content,
                           "reasoning_content": out.reasoning_content}
                if out.tool_calls:
                    message["tool_calls"] = [c.to_openai(i) for i, c in
                                             enumerate(out.tool_calls)]
                data = json.dumps({"choices": [{"message": message}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except BrokenPipeError:  # the client gave up (the timeout test)
                    pass

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def bank(harness):
    catalog, scenarios = world(21, 15)
    return catalog, scenarios, record_script(harness, scenarios, catalog, {})


def test_a_whole_episode_over_http_with_a_retried_503(harness, bank):
    catalog, scenarios, script = bank
    endpoint = Endpoint(script, fail_first=1)
    teacher = OpenAITeacher(endpoint.url, "teacher", retries=2, backoff_s=0.0, timeout_s=5)
    surface = training_surfaces(harness, tiny_config(variants=0))[0]
    try:
        sc = next(s for s in scenarios if s.kind == "price_coupon")
        rollout = play(surface, sc, catalog, teacher)
    finally:
        teacher.close()
        endpoint.close()
    assert rollout.error is None and rollout.scores.accuracy == 1.0
    assert len(endpoint.bodies) == 4  # 503, then coupon.list, price.calc, the reply
    body = endpoint.bodies[-1]
    assert body["model"] == "teacher"
    assert [t["function"]["name"] for t in body["tools"]][:2] == ["get_product_info",
                                                                  "search_products"]
    assert all("reasoning_content" not in m for m in body["messages"])


def test_a_timeout_becomes_a_rejected_rollout(harness, bank):
    catalog, scenarios, script = bank
    endpoint = Endpoint(script, delay_s=1.0)
    teacher = OpenAITeacher(endpoint.url, "teacher", retries=1, backoff_s=0.0, timeout_s=0.2)
    surface = training_surfaces(harness, tiny_config(variants=0))[0]
    try:
        rollout = play(surface, scenarios[0], catalog, teacher)
    finally:
        teacher.close()
        endpoint.close()
    assert rollout.episode is None and "failed 2 time(s)" in rollout.error
