"""Model versions, eval results and promotions (with previous version and overrides)."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import IntegrityError

from db.audit_repo import list_audit
from db.engine import in_transaction
from db.errors import StoreError
from db.release_repo import (
    add_eval_result,
    current_promotion,
    list_eval_results,
    list_model_versions,
    list_promotions,
    promote,
    register_model_version,
)
from hat_core.errors import NotFoundError


def register(sessions, version: str):
    return in_transaction(sessions, lambda s: register_model_version(
        s, registry_name="avatar", version=version, mlflow_run_id=f"run{version}",
        gate_results={"t1": {"passed": True}}))


def test_model_versions_are_unique_by_name_and_version(sessions):
    register(sessions, "1")
    with pytest.raises(IntegrityError):
        register(sessions, "1")
    with sessions() as s:
        (mv,) = list_model_versions(s, registry_name="avatar")
    assert mv.gate_results == {"t1": {"passed": True}}


def test_eval_results(sessions):
    mv = register(sessions, "1")
    for suite, metric, value in [("t2", "acc", 0.7), ("t1", "acc", 0.9)]:
        in_transaction(sessions, lambda s, a=suite, b=metric, c=value: add_eval_result(
            s, model_version_id=mv.id, suite=a, metric=b, value=c, cases_uri="file:///x"))
    with sessions() as s:
        results = list_eval_results(s, model_version_id=mv.id)
    assert [(r.suite, r.value) for r in results] == [("t1", 0.9), ("t2", 0.7)]


def test_promote_records_the_previous_version_and_rollback(sessions):
    a, b = register(sessions, "1"), register(sessions, "2")
    first = in_transaction(sessions, lambda s: promote(s, slot="ab", model_version_id=a.id,
                                                       actor="rel", gate_snapshot={"ok": True}))
    second = in_transaction(sessions, lambda s: promote(s, slot="ab", model_version_id=b.id,
                                                        actor="rel"))
    back = in_transaction(sessions, lambda s: promote(s, slot="ab", model_version_id=a.id,
                                                      actor="rel", reason="rollback"))
    assert first.previous_model_version_id is None
    assert second.previous_model_version_id == a.id and back.previous_model_version_id == b.id
    with sessions() as s:
        assert current_promotion(s, slot="ab") == back
        assert current_promotion(s, slot="champion") is None
        assert [p.id for p in list_promotions(s, slot="ab")] == [back.id, second.id, first.id]
        assert len(list_audit(s, entity="slot", entity_id="ab")) == 3


def test_override_needs_a_reason_and_version_must_exist(sessions):
    mv = register(sessions, "1")
    with pytest.raises(StoreError, match="needs a reason"):
        in_transaction(sessions, lambda s: promote(s, slot="ab", model_version_id=mv.id,
                                                   actor="rel", override=True))
    with pytest.raises(NotFoundError):
        in_transaction(sessions, lambda s: promote(s, slot="ab", model_version_id=999, actor="x"))
    p = in_transaction(sessions, lambda s: promote(s, slot="ab", model_version_id=mv.id,
                                                   actor="rel", override=True, reason="hotfix"))
    assert p.override and p.reason == "hotfix"
