"""The checks of what is new: the candidate's gate `new` (paired superiority on the new
cases) and the zero-shot `new_floor` (the live model's rate there, by its Wilson interval).
Nothing new: neither appears, and every other gate reads as before."""

from __future__ import annotations

from hat_core.release.gates import GateConfig, evaluate_gates, evaluate_zero_shot

CONFIG = GateConfig()  # zero_shot_min_new 0.8, min_cases 30
NEW = ("bundle",)


def rows(suite: str, passed: list[bool], kind: str = "price") -> list[dict]:
    return [{"case_id": f"{suite}/s{i:03d}-{kind}", "suite": suite, "kind": kind,
             "passed": ok} for i, ok in enumerate(passed)]


def model(base: list[bool], new: list[bool], extra_t1: list[bool] = ()) -> list[dict]:
    """t1 and t2 base rows, t1 rows of the new kind (after the base bank), `new` rows."""
    t1_new = [{**r, "case_id": f"t1/s{100 + i:03d}-bundle"}
              for i, r in enumerate(rows("t1", list(extra_t1), "bundle"))]
    return (rows("t1", base) + t1_new + rows("t2", base)
            + rows("new", new, "bundle"))


def by_name(results):
    return {c.name: c for c in results.checks}


def test_the_new_gate_needs_a_significant_gain_on_the_new_cases():
    champion = model([True] * 40, [False] * 30, [False] * 3)
    candidate = model([True] * 40, [True] * 30, [True] * 3)
    gates = by_name(evaluate_gates(candidate, champion, None, True, CONFIG, new_kinds=NEW))
    assert gates["new"].verdict == "passed" and gates["new"].evidence["n"] == 30
    assert gates["new"].value == 1.0 and gates["new"].threshold == 0.0
    tie = by_name(evaluate_gates(champion, champion, None, True, CONFIG, new_kinds=NEW))
    assert tie["new"].verdict == "inconclusive"
    worse = by_name(evaluate_gates(champion, candidate, None, True, CONFIG, new_kinds=NEW))
    assert worse["new"].verdict == "failed"


def test_nothing_new_adds_no_check_and_changes_no_other_gate():
    a = model([True] * 40, [])
    plain = evaluate_gates(a, a, None, True, CONFIG)
    assert "new" not in by_name(plain)
    assert plain == evaluate_gates(a, a, None, True, CONFIG, new_kinds=())
    zero = evaluate_zero_shot(a, a, CONFIG)
    assert [c.name for c in zero.checks] == ["t1", "t2", "bad_case_rate"]


def test_zero_shot_fails_a_live_model_below_the_floor_on_what_is_new():
    reference = model([True] * 20 + [False] * 20, [])  # its old harness: no new cases
    current = model([True] * 20 + [False] * 20, [False] * 30, [False] * 3)
    results = evaluate_zero_shot(current, reference, CONFIG, new_kinds=NEW)
    checks = by_name(results)
    assert checks["new_floor"].verdict == "failed" and results.verdict == "failed"
    assert checks["new_floor"].evidence["interval"][1] < 0.8
    assert "below the floor 0.800" in checks["new_floor"].reason
    assert "bundle" in checks["new_floor"].reason
    # T1's bundle cases are left out of the pairing with the reference: it pairs, not refuses
    assert checks["t1"].evidence is not None and checks["t1"].evidence["n"] == 40


def test_zero_shot_new_floor_passes_above_and_is_inconclusive_across_it():
    reference = model([True] * 40, [])
    good = model([True] * 40, [True] * 30, [True] * 3)
    assert by_name(evaluate_zero_shot(good, reference, CONFIG, NEW))["new_floor"].passed
    near = model([True] * 40, [True] * 24 + [False] * 6)  # 0.8, interval straddles 0.8
    check = by_name(evaluate_zero_shot(near, reference, CONFIG, NEW))["new_floor"]
    assert check.verdict == "inconclusive" and "straddles" in check.reason
    unmeasured = model([True] * 40, [])
    check = by_name(evaluate_zero_shot(unmeasured, reference, CONFIG, NEW))["new_floor"]
    assert check.verdict == "inconclusive" and "not measured" in check.reason
