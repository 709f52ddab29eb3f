"""The release rules on gate verdicts (`hat_core.release.rules`): an inconclusive candidate is
not the challenger and is promoted only by an admin's override with a reason, like a failed
one; gate results stored before verdicts existed still read as passed or failed."""

from __future__ import annotations

import pytest

from hat_core.release.gates import GateConfig, evaluate_gates
from hat_core.release.rules import (
    Candidate,
    ReleaseRefused,
    challenger_of,
    check_promotion,
    gates_of,
    gates_passed,
    gates_verdict,
)


def zero_against_zero() -> dict:
    """What the flow stores for a candidate and a champion that both fail every case."""
    rows = [{"case_id": f"{s}/c{i}", "suite": s, "passed": False} for s in ("t1", "t2")
            for i in range(40)] + [{"suite": "ifeval", "key": i, "strict": False}
                                    for i in range(40)]
    return evaluate_gates(rows, rows, rows, True, GateConfig()).to_dict()


def test_an_inconclusive_candidate_reads_as_inconclusive():
    gates = zero_against_zero()
    assert gates_verdict(gates) == "inconclusive" and not gates_passed(gates)
    assert {g.name: g.verdict for g in gates_of(gates)} == {
        "bad_case_rate": "inconclusive", "ife_p": "inconclusive", "latency": "passed",
        "t1": "inconclusive", "t2": "inconclusive"}
    assert gates_verdict({}) == "inconclusive"  # nothing recorded shows nothing


def test_an_inconclusive_candidate_cannot_be_promoted_without_an_override_and_a_reason():
    gates = zero_against_zero()
    with pytest.raises(ReleaseRefused, match=r"has inconclusive gates \(bad_case_rate, "
                                             r"ife_p, t1, t2\).*only an admin") as err:
        check_promotion("operator", version="2", gate_results=gates)
    assert [p.path for p in err.value.problems] == ["gates.bad_case_rate", "gates.ife_p",
                                                    "gates.t1", "gates.t2"]
    assert err.value.problems[2].message.startswith("inconclusive: t1.accuracy 0.000 vs 0.000")
    assert err.value.problems[2].message.endswith("(value=0, reference=0)")
    with pytest.raises(ReleaseRefused, match="only an admin"):
        check_promotion("operator", version="2", gate_results=gates, override_reason="sure")
    with pytest.raises(ReleaseRefused, match="an override needs a reason"):
        check_promotion("admin", version="2", gate_results=gates, override_reason="  ")
    assert check_promotion("admin", version="2", gate_results=gates,
                           override_reason="read the cases by hand") is True


def test_an_inconclusive_candidate_is_never_the_challenger():
    passing = {"passed": True, "verdict": "passed",
               "gates": {"t1": {"passed": True, "verdict": "passed", "reason": "ok"}}}
    models = [Candidate(1, passing), Candidate(2, passing), Candidate(3, zero_against_zero())]
    assert challenger_of(models, 1) == 2


def test_stored_results_without_verdicts_read_as_before():
    old = {"passed": False, "gates": {"t1": {"passed": True, "reason": "ok"},
                                      "t2": {"passed": False, "reason": "t2 check"}}}
    assert [g.verdict for g in gates_of(old)] == ["passed", "failed"]
    assert gates_verdict(old) == "failed"
    with pytest.raises(ReleaseRefused, match=r"failed its gates \(t2\)") as err:
        check_promotion("operator", version="3", gate_results=old)
    assert err.value.problems[0].message == "t2 check"
