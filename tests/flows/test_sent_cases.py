"""The retrain flow's data step with bad cases: read from the store, replayed by
`stages.build_dataset`, marked consumed by the job; a resumed job reads them again."""

from __future__ import annotations

import json
import random
from pathlib import Path

import yaml
from flow_helpers import submit_variant

from db.badcases_repo import add_bad_case, get_bad_case, label_bad_case
from db.engine import in_transaction
from db.jobs_repo import create_job
from flows.sent_cases import read_sent_cases, record_consumed
from flows.stages import build_dataset
from hat_core.evaluation.badcases import ListBadCaseSink
from hat_core.evaluation.evaluate import EvalOptions, evaluate
from hat_core.sim.policy import RandomPolicy

TEST_CONFIG = Path(__file__).with_name("retrain_test.yaml")


def test_the_data_step_consumes_the_sent_case_for_its_job(store, tmp_path):
    version = submit_variant(store, 1)
    harness = version.harness()
    sink = ListBadCaseSink()
    evaluate(RandomPolicy(random.Random(0)), harness, ["t1"], EvalOptions(episodes=4),
             bad_cases=sink)

    def fill(s):
        case = add_bad_case(s, episode=sink.records[0].episode, harness_version_id=version.id,
                            failure_type="wrong_tool")
        label_bad_case(s, bad_case_id=case.id, review_state="confirmed", reviewer="rita",
                       label="wrong_tool", send_to_training=True)
        return case.id, create_job(s, harness_version_id=version.id, trigger="harness_change").id

    case_id, job_id = in_transaction(store, fill)
    cases = read_sent_cases(store, harness_version_id=version.id, job_id=job_id)
    assert [c["id"] for c in cases] == [case_id]
    data = yaml.safe_load(TEST_CONFIG.read_text())["data"]
    out = build_dataset(harness, None, data, tmp_path / "data", cases)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["bad_cases"]["ids"] == [case_id] and manifest["bad_cases"]["rows"] == 2
    assert record_consumed(store, manifest, job_id=job_id, actor="retrain") == [case_id]
    with store() as s:
        case = get_bad_case(s, bad_case_id=case_id)
    assert (case.consumed_by_build, case.consumed_by_job_id) == (manifest["version"], job_id)
    resumed = read_sent_cases(store, harness_version_id=version.id, job_id=job_id)
    assert resumed == cases  # the same inputs: the cached data step is found again
    assert read_sent_cases(store, harness_version_id=version.id) == []
