"""The retrain config's `eval.render_profile` and `eval.constrain_tools`: validated up front,
and the flow's evaluation (`flows.stages.evaluate_model`, which the gates and the zero-shot
check read) renders the suites in that profile and holds the model's calls to the harness's
tools."""

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
