"""The concolic stage: which just-missed sides it takes, when, and what it counts."""

from __future__ import annotations

from typing import Any

import pytest

from secant.engine.harvey.adaptive import AdaptiveSeeds, Closest
from secant.engine.harvey.concolic import (
    MAX_PROGRESS,
    MIN_SPEND,
    REPLAY_STEPS,
    RESOURCES_PER_STEP,
    ConcolicStage,
)
from secant.symbolic.solve import FlipResult
from secant.types import Tx, TxSeq

CODE = b"\x01" * 32
A, B, C = (CODE, 10, True), (CODE, 20, False), (CODE, 30, True)


def case(n: int) -> TxSeq:
    return (Tx("f(uint256)", (n,), 1),)


def seeds(*sides: tuple[bytes, int, bool]) -> AdaptiveSeeds:
    adaptive = AdaptiveSeeds()
    for number, side in enumerate(sides):
        adaptive.best[side] = Closest(5, case(number), 0)
    return adaptive


def stage(**options: object) -> ConcolicStage:
    traced: list[TxSeq] = []
    made = ConcolicStage(lambda c: traced.append(c) or None, [1], share=0.1,  # type: ignore[func-returns-value]
                         patience=100, **options)  # type: ignore[arg-type]
    made.traced = traced  # type: ignore[attr-defined]
    return made


def test_a_side_waits_its_patience_then_the_least_tried_oldest_goes_first() -> None:
    concolic = stage()
    adaptive = seeds(A, B)
    assert concolic.choose(adaptive, 0) is None  # both just seen
    assert concolic.choose(adaptive, 99) is None
    adaptive.best[C] = Closest(5, case(9), 50)
    side, closest = concolic.choose(adaptive, 100) or (None, None)
    assert side == A and closest is not None and closest.case == case(0)
    concolic.solve(A, case(0))  # no symbolic records: counted, nothing to run
    assert concolic.stats.not_symbolic == 1 and concolic.tries[A] == 1
    assert concolic.choose(adaptive, 100) == (B, adaptive.best[B])
    concolic.solve(B, case(1))
    # The stage first saw C at 100 executions: eligible from 200 on.
    assert concolic.choose(adaptive, 199) is None
    assert concolic.choose(adaptive, 200) == (C, adaptive.best[C])


def test_a_side_is_solved_once_per_closest_case_and_at_most_max_tries() -> None:
    concolic = stage(max_tries=2)
    adaptive = seeds(A)
    concolic.choose(adaptive, 0)
    concolic.solve(A, case(0))
    assert concolic.choose(adaptive, 500) is None  # same closest case: same answer
    adaptive.best[A] = Closest(3, case(7), 400)  # a closer case
    assert concolic.choose(adaptive, 500) == (A, adaptive.best[A])
    concolic.solve(A, case(7))
    adaptive.best[A] = Closest(2, case(8), 450)
    assert concolic.choose(adaptive, 500) is None  # two tries spent


def test_sides_the_source_does_not_decide_are_left_alone() -> None:
    concolic = stage(worth=lambda side: side != A)
    adaptive = seeds(A, B)
    concolic.choose(adaptive, 0)
    assert concolic.choose(adaptive, 1000) == (B, adaptive.best[B])


def test_sides_seen_after_a_success_are_taken_at_once() -> None:
    concolic = stage()
    adaptive = seeds(A)
    concolic.choose(adaptive, 0)
    concolic.solve(A, case(0))
    concolic.observe(A, {A})  # the solved case took A
    assert concolic.stats.success == 1
    del adaptive.best[A]
    adaptive.best[B] = Closest(5, case(3), 300)  # the next conjunct, just seen
    assert concolic.choose(adaptive, 300) == (B, adaptive.best[B])
    concolic.observe(B, set())
    assert concolic.stats.fail == 1


def test_the_share_bounds_the_steps_charged() -> None:
    concolic = stage()
    assert concolic.due(0)  # nothing charged yet
    concolic.solve(A, case(0) * 3)  # a replay of three transactions, no query
    assert concolic.stats.charged == REPLAY_STEPS * 3
    assert not concolic.due(REPLAY_STEPS * 30 - 1)
    assert concolic.due(REPLAY_STEPS * 30)
    assert not ConcolicStage(lambda c: None, [1], share=0.0).due(10**9)


def test_a_solved_case_that_went_further_is_the_next_base_for_its_side() -> None:
    concolic = stage()
    adaptive = seeds(A)
    concolic.choose(adaptive, 0)
    concolic.solve(A, case(0))
    concolic._solved = case(5)  # what a sat answer leaves (the stand-in tracer gives none)
    concolic.observe(A, set(), new_edges=2)  # new edges, but not A: the next conjunct
    side, closest = concolic.choose(adaptive, 150) or (None, None)
    assert side == A and closest is not None and closest.case == case(5)
    # Nothing new either (the next conjunct was covered already): still the solved case.
    concolic.observe(A, set(), new_edges=0)
    side, closest = concolic.choose(adaptive, 150) or (None, None)
    assert side == A and closest is not None and closest.case == case(5)
    concolic.solve(A, case(5))
    concolic.solve(A, case(5))  # three queries for A: the most it gets
    concolic._solved = case(6)
    concolic.observe(A, set(), new_edges=0)
    assert concolic.choose(adaptive, 150) is None


def test_a_query_whose_case_went_the_way_it_flipped_does_not_count_against_max_tries(
        ) -> None:
    concolic = stage(max_tries=1)
    adaptive = seeds(A)
    concolic.choose(adaptive, 0)
    flipped = (CODE, 7, True)  # the conjunct the query flipped, before A's JUMPI
    for step in range(MAX_PROGRESS):
        concolic.solve(A, case(10 + step))
        concolic._solved, concolic._flipped = case(11 + step), flipped  # a sat answer
        concolic.observe(A, set(), run_edges={flipped})  # passed it, failed the next one
        assert concolic.tries[A] == 0 and concolic.progress[A] == step + 1
        assert concolic.choose(adaptive, 150) == (A, Closest(0, case(11 + step), 150))
    concolic.solve(A, case(99))
    concolic._solved, concolic._flipped = case(100), flipped
    concolic.observe(A, set(), run_edges={flipped})  # progress again, but the most it gets
    assert concolic.tries[A] == 1 and concolic.choose(adaptive, 150) is None


def test_a_query_whose_case_did_not_go_the_way_it_flipped_counts() -> None:
    concolic = stage(max_tries=1)
    adaptive = seeds(A)
    concolic.choose(adaptive, 0)
    concolic.solve(A, case(0))
    concolic._solved, concolic._flipped = case(1), (CODE, 7, True)
    concolic.observe(A, set(), run_edges={(CODE, 7, False)})
    assert concolic.tries[A] == 1 and concolic.choose(adaptive, 150) is None


def test_a_query_spends_what_the_share_earned_and_at_least_min_spend() -> None:
    concolic = stage()
    assert concolic.allowance(0) == MIN_SPEND
    assert concolic.allowance(10**12) == concolic.rlimit
    # 250,000 steps: the share (0.1) earned 25,000 steps of z3's work.
    assert concolic.allowance(250_000) == 25_000 * RESOURCES_PER_STEP
    concolic.stats.charged = 12_500  # half of it spent
    assert concolic.allowance(250_000) == 12_500 * RESOURCES_PER_STEP
    concolic.stats.charged = 24_000  # what is left is below the least a query spends
    assert concolic.allowance(250_000) == MIN_SPEND


class _Record:
    variables = frozenset({"tx0_w0"})
    tx = 0
    other_edge = (CODE, 10, True)


class _Run:
    branches = [_Record()]

    def find(self, code_hash: bytes, pc: int, taken: bool) -> list[int]:
        return [0]

    def first_copy(self, index: int) -> int:
        return index


def test_a_query_stopped_at_its_allowance_waits_for_twice_as_much_and_is_no_try(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from secant.symbolic import solve as solver

    asked: list[int | None] = []

    def flip_branch(case: TxSeq, run: object, index: int, **options: Any) -> FlipResult:
        asked.append(options["spend"])
        spend = options["spend"]
        return FlipResult("unknown", resources=spend if spend is not None else 10**7)

    monkeypatch.setattr(solver, "flip_branch", flip_branch)
    concolic = ConcolicStage(lambda c: _Run(), [1], share=0.1,  # type: ignore[arg-type,return-value]
                             patience=0)
    adaptive = seeds(A)
    assert concolic.choose(adaptive, 0, MIN_SPEND) == (A, adaptive.best[A])
    assert concolic.solve(A, case(0), MIN_SPEND) is None
    assert asked == [MIN_SPEND]
    assert concolic.tries[A] == 0 and concolic.waiting[A] == 2 * MIN_SPEND
    # The same case is asked again, but only once twice the allowance is there.
    assert concolic.choose(adaptive, 1, MIN_SPEND) is None
    assert concolic.choose(adaptive, 1, 2 * MIN_SPEND) == (A, adaptive.best[A])
    # Under the stage's whole limit an unknown answer counts as a try.
    assert concolic.solve(A, case(0), concolic.rlimit) is None
    assert asked[-1] is None and concolic.tries[A] == 1
