"""The retrain config's `eval.render_profile`, `eval.constrain_tools`, `eval.num_threads` and
`eval.batch_size`: validated up front, and the flow's evaluation (`flows.stages.
evaluate_model`, which the gates and the zero-shot check read) renders the suites in that
profile, holds the model's calls to the harness's tools, plays on that many torch threads
and that many cases side by side."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flows.config import EvalSettings, retrain_config_from_dict
from flows.stages import evaluate_model
from hat_core.errors import ConfigError
from hat_core.harness.io import load_harness

ROOT = Path(__file__).resolve().parents[2]
TOY_LONG = ROOT / "examples" / "models" / "toy-long"


def test_the_profile_and_the_constraint_are_read_and_default_off():
    config = retrain_config_from_dict({"data": {"render_profile": "compact"},
                                       "eval": {"render_profile": "compact",
                                                "constrain_tools": True}})
    assert (config.eval.render_profile, config.eval.constrain_tools) == ("compact", True)
    default = retrain_config_from_dict({})
    assert (default.eval.render_profile, default.eval.constrain_tools) == ("full", False)


def test_an_unknown_profile_and_a_layout_the_model_was_not_trained_on_are_refused():
    with pytest.raises(ConfigError) as err:
        retrain_config_from_dict({"eval": {"render_profile": "tiny"}})
    assert "retrain.eval.render_profile: unknown render profile 'tiny'; valid: full" \
        in err.value.report()
    with pytest.raises(ConfigError) as err:
        retrain_config_from_dict({"data": {"render_profile": "compact"}})
    assert "'full', but the data is rendered 'compact' (data.render_profile)" \
        in err.value.report()


def _called(out: Path) -> list[str]:
    rows = [json.loads(line) for line in out.with_suffix(".cases.jsonl").open()]
    return [c["function"]["name"] for r in rows for m in r["transcript"]
            if m.get("role") == "assistant" for c in m.get("tool_calls") or ()]


def test_the_flows_evaluation_renders_the_profile_and_holds_calls_to_the_harness(tmp_path):
    harness = load_harness(ROOT / "examples" / "harnesses" / "v2.yaml")
    names = {t.name for t in harness.tools}
    called = {}
    for held in (False, True):
        settings = EvalSettings(episodes=6, limit=6, max_tokens=160, render_profile="compact",
                                constrain_tools=held)
        out = tmp_path / f"held-{held}.json"
        evaluate_model(TOY_LONG, harness, ("t1",), out, settings=settings)
        called[held] = _called(out)
    # the shipped base calls tools only in the compact layout it was built on (in the full
    # one the prompt outruns its 2,048 positions): calls at all show the profile was used
    assert called[False] and any(n not in names for n in called[False])
    assert called[True] and set(called[True]) <= names


def test_a_report_of_the_same_model_and_harness_is_reused_suite_by_suite(tmp_path):
    """The flow's judge step plays the reference model only on the suites its zero-shot
    check did not: those are taken from the zero-shot report (rows, metrics, bad cases),
    marked `reused_from`. A report of another model or harness is not reused."""
    v1 = load_harness(ROOT / "examples" / "harnesses" / "v1.yaml")
    v2 = load_harness(ROOT / "examples" / "harnesses" / "v2.yaml")
    settings = EvalSettings(episodes=3, limit=3, max_tokens=24, render_profile="compact")
    zero = tmp_path / "zero_shot" / "report.json"
    first = evaluate_model(TOY_LONG, v1, ("t1",), zero, settings=settings)
    out = tmp_path / "eval" / "champion.json"
    again = evaluate_model(TOY_LONG, v1, ("t1", "ifeval"), out, settings=settings, reuse=zero)
    report = json.loads(out.read_text(encoding="utf-8"))
    t1, ifeval = report["suites"]
    assert (t1["suite"], ifeval["suite"]) == ("t1", "ifeval")
    assert t1["summary"]["reused_from"] == str(zero) and "reused_from" not in ifeval["summary"]
    before = json.loads(zero.read_text(encoding="utf-8"))["suites"][0]
    assert t1["rows"] == before["rows"] and t1["metrics"] == before["metrics"]
    assert {k: v for k, v in again.items() if k.startswith("t1.")} == first
    assert len(ifeval["rows"]) == 3  # played
    bad = zero.with_suffix(".badcases.jsonl").read_text(encoding="utf-8").splitlines()
    copied = out.with_suffix(".badcases.jsonl").read_text(encoding="utf-8").splitlines()
    assert bad and copied[:len(bad)] == bad
    cases = [json.loads(x) for x in out.with_suffix(".cases.jsonl").open(encoding="utf-8")]
    assert [c["case_id"] for c in cases if c["suite"] == "t1"] == \
        [r["case_id"] for r in before["rows"]]
    # another harness (v2's zero-shot report read for v1) or another model: played afresh
    other = tmp_path / "other.json"
    evaluate_model(TOY_LONG, v2, ("t1",), other, settings=settings)
    fresh = tmp_path / "fresh.json"
    evaluate_model(TOY_LONG, v1, ("t1",), fresh, settings=settings, reuse=other)
    assert "reused_from" not in json.loads(fresh.read_text())["suites"][0]["summary"]
    renamed = json.loads(zero.read_text(encoding="utf-8")) | {"model": "another/model"}
    (tmp_path / "renamed.json").write_text(json.dumps(renamed), encoding="utf-8")
    evaluate_model(TOY_LONG, v1, ("t1",), fresh, settings=settings,
                   reuse=tmp_path / "renamed.json")
    assert "reused_from" not in json.loads(fresh.read_text())["suites"][0]["summary"]
    (tmp_path / "cut.json").write_text('{"model": "', encoding="utf-8")  # cut short
    evaluate_model(TOY_LONG, v1, ("t1",), fresh, settings=settings, reuse=tmp_path / "cut.json")
    assert "reused_from" not in json.loads(fresh.read_text())["suites"][0]["summary"]


def test_eval_threads_are_read_and_nonsense_is_refused():
    assert retrain_config_from_dict({"eval": {"num_threads": 1}}).eval.num_threads == 1
    assert retrain_config_from_dict({}).eval.num_threads is None
    for bad, said in ((0, "must be >= 1 (or absent), got 0"), (-2, "must be >= 1"),
                      (True, "must be int, got True"), ("two", "must be int, got 'two'")):
        with pytest.raises(ConfigError) as err:
            retrain_config_from_dict({"eval": {"num_threads": bad}})
        assert f"retrain.eval.num_threads: {said}" in err.value.report()


def test_the_flows_evaluation_plays_on_its_threads_and_puts_them_back(tmp_path, monkeypatch):
    """`eval.num_threads` holds while the model answers (read at each real answer), and the
    process has its own count again afterwards."""
    import torch

    from hat_core.inference.backends import TransformersBackend

    seen, chat, chat_batch = [], TransformersBackend.chat, TransformersBackend.chat_batch

    def watched(self, *args, **kwargs):
        seen.append(torch.get_num_threads())
        return chat(self, *args, **kwargs)

    def watched_batch(self, *args, **kwargs):
        seen.append(torch.get_num_threads())
        return chat_batch(self, *args, **kwargs)
    monkeypatch.setattr(TransformersBackend, "chat", watched)
    monkeypatch.setattr(TransformersBackend, "chat_batch", watched_batch)
    before = torch.get_num_threads()
    wanted = 2 if before == 1 else 1
    settings = EvalSettings(episodes=2, limit=2, max_tokens=16, render_profile="compact",
                            num_threads=wanted)
    evaluate_model(TOY_LONG, load_harness(ROOT / "examples" / "harnesses" / "v1.yaml"),
                   ("t1",), tmp_path / "report.json", settings=settings)
    assert seen and set(seen) == {wanted}
    assert torch.get_num_threads() == before


def test_eval_batch_size_is_read_and_nonsense_is_refused():
    assert retrain_config_from_dict({"eval": {"batch_size": 1}}).eval.batch_size == 1
    assert retrain_config_from_dict({}).eval.batch_size == 8
    for bad, said in ((0, "must be >= 1, got 0"), (-3, "must be >= 1, got -3"),
                      ("8", "must be int, got '8'")):
        with pytest.raises(ConfigError) as err:
            retrain_config_from_dict({"eval": {"batch_size": bad}})
        assert f"retrain.eval.batch_size: {said}" in err.value.report()


def test_the_flows_evaluation_plays_its_batch_size_of_cases_at_once(tmp_path, monkeypatch):
    """Each answer round holds up to `eval.batch_size` cases' turns; at 1, none is batched."""
    from hat_core.inference.backends import TransformersBackend

    rounds, chat_batch = [], TransformersBackend.chat_batch

    def watched(self, requests):
        rounds.append(len(requests))
        return chat_batch(self, requests)
    monkeypatch.setattr(TransformersBackend, "chat_batch", watched)
    harness = load_harness(ROOT / "examples" / "harnesses" / "v1.yaml")
    played = {}
    for size in (1, 3):
        settings = EvalSettings(episodes=5, limit=5, max_tokens=24, render_profile="compact",
                                batch_size=size)
        out = tmp_path / f"batch-{size}.json"
        evaluate_model(TOY_LONG, harness, ("t1",), out, settings=settings)
        played[size] = [json.loads(x)["case_id"] for x in out.with_suffix(".cases.jsonl")
                        .open(encoding="utf-8")]
        if size == 1:
            assert rounds == []
    assert rounds and rounds[0] == 3 and max(rounds) == 3
    assert played[3] == played[1] and len(played[1]) == 5  # every case, in case order
