"""Secant-method prediction: the papers' worked examples and the integer rounding rules."""

from __future__ import annotations

import random

from secant.engine.secant_method import (
    Domain,
    PredictionStats,
    Secant,
    choose_metric,
    outcome,
    predict,
    secant_root,
    straddle_root,
)
from secant.evm.costs import relation_cost


def test_learning_paper_table1_tests_3_and_5() -> None:
    # a = -1 gives C12 = 43, a = 7 gives C12 = 35; C3, C7 equal in both: learn a = 42.
    cost3 = {"C3": 8, "C7": 2, "C12": 43}
    cost5 = {"C3": 8, "C7": 2, "C12": 35}
    p = predict(-1, cost3, 7, cost5, Domain.signed(), random.Random(0))
    assert p is not None and (p.value, p.metric) == (42, "C12")


def test_learning_paper_failed_prediction_example() -> None:
    # b = 0 gives C6 = 3, b = -1 gives C6 = 4: the line says b = 3.
    assert secant_root(0, 3, -1, 4) == 3


def test_root_rounds_past_the_root_toward_falling_cost() -> None:
    # Line through (0, 10) and (3, 4): c = 10 - 2i, root 5 exactly.
    assert secant_root(0, 10, 3, 4) == 5
    # (0, 10), (2, 7): c = 10 - 1.5 i, root 6.67: cost falls with i, so step up to 7.
    assert secant_root(0, 10, 2, 7) == 7
    # (10, 0.. ) rising: (0, 4), (2, 7): c = 4 + 1.5 i, root -2.67: falls downward: -3.
    assert secant_root(0, 4, 2, 7) == -3
    assert secant_root(5, 3, 5, 9) is None
    assert secant_root(1, 3, 2, 3) is None


def test_derived_constant_needs_one_step() -> None:
    # a*3 + 7 == 57266236: the EQ cost is |3a + 7 - 57266236|, linear on each side.
    def cost(a: int) -> dict[str, int]:
        return {"eq": relation_cost("eq", 3 * a + 7, 57266236, True)}

    p = predict(1, cost(1), 100, cost(100), Domain.unsigned(), random.Random(1))
    assert p is not None and 3 * p.value + 7 == 57266236


def test_prediction_is_clamped_to_the_type() -> None:
    # uint8 input, cost says 300: clamped to 255.
    p = predict(0, {"m": 300}, 1, {"m": 299}, Domain.unsigned(8), random.Random(0))
    assert p is not None and p.value == 255
    # A root equal to an input already run is no prediction.
    assert predict(0, {"m": 5}, 5, {"m": 0}, Domain.unsigned(), random.Random(0)) is None


def test_metric_choice_rules_and_preference() -> None:
    rng = random.Random(3)
    a = {"same": 4, "zero-both": 0, "only-a": 9, "x": 10, "y": 6}
    b = {"same": 4, "zero-both": 0, "x": 3, "y": 2}
    picks = {choose_metric(a, b, rng) for _ in range(50)}
    assert picks == {"x", "y"}
    assert {choose_metric(a, b, rng, prefer={"y"}) for _ in range(20)} == {"y"}
    assert choose_metric({"m": 1}, {"n": 2}, rng) is None


def test_choice_is_deterministic_for_a_seed() -> None:
    a = {f"k{i}": i + 1 for i in range(20)}
    b = {f"k{i}": i + 5 for i in range(20)}
    first = [choose_metric(a, b, random.Random(7)) for _ in range(3)]
    assert len(set(first)) == 1


def test_iterated_secant_solves_a_nonlinear_branch() -> None:
    # sFuzz Fig. 2: y = x*x + 10; want y == 10010 (x = 100). One step is not enough.
    def costs(x: int) -> dict[str, int]:
        return {"m": relation_cost("eq", x * x + 10, 10010, True)}

    run = Secant("m", Domain.unsigned(), max_iterations=20)
    assert run.next(1, costs(1)) is None  # one point: no line yet
    value = run.next(2, costs(2))
    seen = []
    while value is not None:
        seen.append(value)
        value = run.next(value, costs(value))
    assert seen and costs(seen[-1])["m"] == 0
    assert seen[-1] == 100


def test_configuration_c_does_not_iterate() -> None:
    run = Secant("m", Domain.unsigned(), max_iterations=0)
    run.next(1, {"m": 10})
    assert run.next(2, {"m": 20}) is None


def test_stats_count_success_and_failure() -> None:
    stats = PredictionStats(attempts=3)
    assert outcome(stats, "m", {"m": 0})
    assert not outcome(stats, "m", {"m": 4})
    assert not outcome(stats, "m", {})  # branch not reached: a failure
    assert (stats.success, stats.fail) == (1, 2)
    assert abs(stats.rate - 1 / 3) < 1e-9


def test_iterated_secant_solves_harveys_rq2_example() -> None:
    # Harvey RQ2: a^4 + a^2 == 228901770 (a = 123), from two nearby random-ish points.
    def costs(a: int) -> dict[str, int]:
        return {"m": relation_cost("eq", a**4 + a**2, 228901770, True)}

    run = Secant("m", Domain.signed(), max_iterations=40)
    run.next(7, costs(7))
    value = run.next(9, costs(9))
    tries = 0
    while value is not None and costs(value)["m"]:
        value = run.next(value, costs(value))
        tries += 1
    assert value == 123, (value, tries)


def test_points_on_both_arms_of_an_equality_cost_meet_in_the_middle() -> None:
    # |x - 42| seen at 0 (cost 42) and at a huge value: the line's root is negative and
    # clamps back onto 0; the V through both points has its zero at 42.
    huge = 10 ** 30
    p = predict(0, {"m": 42}, huge, {"m": huge - 42}, Domain.unsigned(), random.Random(0))
    assert p is not None and p.value == 42
    assert straddle_root(-5, 47, 90, 48) == 42
    assert straddle_root(3, 0, 9, 4) is None  # a zero cost is already a solution
