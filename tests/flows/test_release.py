"""`hat promote` / `hat rollback` rules on the real store and MLflow registry: refused after
failed gates, an admin override with a reason, roles, aliases, atomic rollback, retries."""

from __future__ import annotations

import pytest
from flow_helpers import add_role, registered_version

from db.audit_repo import list_audit
from db.promotion import promote_slot, rollback_slot
from db.release_repo import current_promotion, list_promotions
from flows.tracking import CHALLENGER, CHAMPION, PREVIOUS
from hat_core.errors import NotFoundError
from hat_core.release.gates import GateConfig, evaluate_gates
from hat_core.release.rules import ReleaseRefused


@pytest.fixture
def people(store):
    add_role(store, "olga", "operator")
    add_role(store, "ada", "admin")
    add_role(store, "vic", "viewer")


def promote(store, tracking, name, version, actor="olga", reason=""):
    return promote_slot(store, tracking, registry_name=name, version=version, actor=actor,
                           override_reason=reason)


def test_promote_a_passing_version_then_rollback(store, tracking, registry_name, tmp_path,
                                                 people):
    v1 = registered_version(store, tracking, registry_name, tmp_path, 1, passed=True)
    v2 = registered_version(store, tracking, registry_name, tmp_path, 2, passed=True)
    assert tracking.alias_version(registry_name, CHALLENGER) == v2
    first = promote(store, tracking, registry_name, v1)
    assert first.changed and first.previous_version is None
    second = promote(store, tracking, registry_name, v2)
    assert second.previous_version == v1
    assert tracking.aliases(registry_name) == {CHAMPION: v2, PREVIOUS: v1}  # challenger gone
    with store() as s:
        assert current_promotion(s, slot="ab").previous_model_version_id is not None
    back = rollback_slot(store, tracking, registry_name=registry_name, actor="olga")
    assert (back.version, back.previous_version) == (v1, v2)
    assert tracking.aliases(registry_name) == {CHAMPION: v1, PREVIOUS: v2}
    with store() as s:
        promotions = list_promotions(s, slot="ab")
        assert [p.reason for p in promotions][0] == f"rollback from version {v2}"
        actions = [a.action for a in list_audit(s, entity="slot")]
    assert actions == ["promotion.add"] * 3


def test_repeating_a_promotion_changes_nothing(store, tracking, registry_name, tmp_path,
                                               people):
    v1 = registered_version(store, tracking, registry_name, tmp_path, 1, passed=True)
    promote(store, tracking, registry_name, v1)
    again = promote(store, tracking, registry_name, v1)
    assert not again.changed
    with store() as s:
        assert len(list_promotions(s, slot="ab")) == 1


def test_failed_gates_are_refused_without_an_override(store, tracking, registry_name,
                                                      tmp_path, people):
    bad = registered_version(store, tracking, registry_name, tmp_path, 1, passed=False)
    assert tracking.alias_version(registry_name, CHALLENGER) is None
    with pytest.raises(ReleaseRefused, match="failed its gates") as err:
        promote(store, tracking, registry_name, bad)
    assert "gates.t1: t1 check" in err.value.report()
    with pytest.raises(ReleaseRefused, match="only an admin"):
        promote(store, tracking, registry_name, bad, actor="olga", reason="urgent")
    assert tracking.alias_version(registry_name, CHAMPION) is None
    done = promote(store, tracking, registry_name, bad, actor="ada", reason="hotfix, reviewed")
    assert done.promotion.override and done.promotion.reason == "hotfix, reviewed"
    assert tracking.alias_version(registry_name, CHAMPION) == bad


def test_inconclusive_gates_need_an_override_like_failed_ones(store, tracking, registry_name,
                                                              tmp_path, people):
    zero = [{"case_id": f"{s}/c{i}", "suite": s, "passed": False} for s in ("t1", "t2")
            for i in range(40)] + [{"suite": "ifeval", "key": i, "strict": False}
                                    for i in range(40)]
    gates = evaluate_gates(zero, zero, zero, True, GateConfig()).to_dict()   # 0 against 0
    unsure = registered_version(store, tracking, registry_name, tmp_path, 1, passed=False,
                                gates=gates)
    assert tracking.alias_version(registry_name, CHALLENGER) is None
    (mv,) = tracking.client.search_model_versions(f"name = '{registry_name}'")
    assert mv.tags["hat.gates_verdict"] == "inconclusive"
    with pytest.raises(ReleaseRefused, match="has inconclusive gates") as err:
        promote(store, tracking, registry_name, unsure)
    assert "gates.t1: inconclusive:" in err.value.report()
    with pytest.raises(ReleaseRefused, match="only an admin"):
        promote(store, tracking, registry_name, unsure, actor="olga", reason="looks fine")
    with pytest.raises(ReleaseRefused, match="an override needs a reason"):
        promote(store, tracking, registry_name, unsure, actor="ada")
    assert tracking.alias_version(registry_name, CHAMPION) is None
    with store() as s:
        assert current_promotion(s, slot="ab") is None
    done = promote(store, tracking, registry_name, unsure, actor="ada",
                   reason="both at 0; promoted to exercise the slot")
    assert done.promotion.override and done.promotion.gate_snapshot["verdict"] == "inconclusive"
    assert tracking.alias_version(registry_name, CHAMPION) == unsure


def test_only_operators_and_admins(store, tracking, registry_name, tmp_path, people):
    v1 = registered_version(store, tracking, registry_name, tmp_path, 1, passed=True)
    for actor in ("vic", "nobody"):
        with pytest.raises(ReleaseRefused, match="may not promote"):
            promote(store, tracking, registry_name, v1, actor=actor)
    with pytest.raises(NotFoundError):
        promote(store, tracking, registry_name, "99")


def test_rollback_needs_a_previous_champion(store, tracking, registry_name, tmp_path, people):
    with pytest.raises(ReleaseRefused, match="no previous champion"):
        rollback_slot(store, tracking, registry_name=registry_name, actor="olga")
    v1 = registered_version(store, tracking, registry_name, tmp_path, 1, passed=True)
    promote(store, tracking, registry_name, v1)
    with pytest.raises(ReleaseRefused, match="no previous champion"):
        rollback_slot(store, tracking, registry_name=registry_name, actor="olga")


def test_mlflow_unreachable_or_refusing_leaves_the_store_unchanged(store, tracking,
                                                                   registry_name, tmp_path,
                                                                   people):
    import socket

    from db.engine import in_transaction
    from db.release_repo import register_model_version
    from flows.tracking import Tracking
    from hat_core.release.registry import ModelRegistry, RegistryUnavailable

    v1 = registered_version(store, tracking, registry_name, tmp_path, 1, passed=True)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    for registry in (Tracking(dead), ModelRegistry(dead)):
        with pytest.raises(RegistryUnavailable, match="not reachable.*nothing was changed"):
            promote_slot(store, registry, registry_name=registry_name, version=v1,
                            actor="olga")
    passing = {"passed": True, "gates": {"t1": {"passed": True, "reason": "ok"}}}
    in_transaction(store, lambda s: register_model_version(   # in the store, not in MLflow
        s, registry_name=f"{registry_name}-x", version="7", gate_results=passing))
    with pytest.raises(RegistryUnavailable, match="could not point alias 'champion'"):
        promote_slot(store, tracking, registry_name=f"{registry_name}-x", version="7",
                        actor="olga")
    with store() as s:
        assert list_promotions(s) == []
    assert tracking.aliases(registry_name) == {CHALLENGER: v1}
