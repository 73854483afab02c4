"""LEARN: integer views of parameters and predicted inputs (Harvey Alg. 2)."""

from __future__ import annotations

import random
from collections.abc import Callable

from secant.abi import AbiParam
from secant.engine.corpus import Seed
from secant.engine.dictionary import Dictionary
from secant.engine.feedback import Coverage, cost_vector
from secant.engine.harvey.prediction import PATIENCE, Predictor
from secant.engine.mutators import FunctionSpec, Mutation, Mutator
from secant.engine.schedulers import SeedStats
from secant.engine.secant_method import Domain, PredictionStats
from secant.engine.values import vtype
from secant.evm.crypto import keccak256
from secant.types import RunResult, Tx, TxOutcome, TxSeq

SENDER = 0x1000
CODE = b"\x01" * 32
SPECS = [
    FunctionSpec("f(uint8,bytes)", None, (vtype(AbiParam("", "uint8")),
                                          vtype(AbiParam("", "bytes"))), True),
]


def learner(stats: PredictionStats | None = None, iterations: int = 8) -> Predictor:
    mutator = Mutator(SPECS, [SENDER], Dictionary())
    mutator.max_value = 10 ** 18
    return Predictor(mutator, Coverage(), None, iterations, random.Random(0),
                   stats or PredictionStats())


def run_of(case: TxSeq, x: int) -> RunResult:
    """A run whose last transaction compared ``x == 42`` at one JUMPI and did not jump."""
    taken = x == 42
    return RunResult(case, [TxOutcome(True, False, b"", 0)], 1, set(), set(),
                      [(CODE, 10, taken, "eq", x, 42)], [0], [], [0], [])


def seed_of(case: TxSeq, x: int) -> Seed:
    result = run_of(case, x)
    return Seed(case, 1, cost_vector(result, None), SeedStats(1), "init", 0)


def test_integer_views_read_and_set_every_kind_of_parameter() -> None:
    view = learner()
    case = (Tx("f(uint8,bytes)", (7, b"ab"), SENDER, 5, blocks=2, time=9,
               storage=((3, 11),)),)
    value, domain, set_arg = view.integer_view(case, ("arg", 0, (0,))) or (0, None, None)
    assert (value, domain) == (7, Domain(0, 255)) and set_arg is not None
    assert set_arg(200)[0].args == (200, b"ab")
    byte = view.integer_view(case, ("arg", 0, (1,), 1))
    assert byte is not None and byte[0] == ord("b") and byte[2](0x7A)[0].args == (7, b"az")
    assert view.integer_view(case, ("arg", 0, (1,), 2)) is None  # past the end
    money = view.integer_view(case, ("value", 0))
    assert money is not None and money[0] == 5 and money[1].high == 10 ** 18
    for kind, now in (("time", 9), ("blocks", 2)):
        scalar = view.integer_view(case, (kind, 0))
        assert scalar is not None and scalar[0] == now
        assert getattr(scalar[2](100)[0], kind) == 100
    slot = view.integer_view(case, ("slot", 0, 3))
    assert slot is not None and slot[0] == 11
    assert slot[2](12)[0].storage == ((3, 12),)
    assert view.integer_view(case, ("slot", 0, 4)) is not None  # an unread slot is 0


def test_a_linear_cost_is_predicted_to_zero_and_counted_as_a_success() -> None:
    stats = PredictionStats()
    learn = learner(stats)
    base = (Tx("f(uint8,bytes)", (10, b""), SENDER),)
    seed = seed_of(base, 10)
    mutated = (Tx("f(uint8,bytes)", (20, b""), SENDER),)
    pending = learn.predict(seed, Mutation(mutated, ("arg", 0, (0,)), "arith"),
                          run_of(mutated, 20))
    assert pending is not None and pending.value == 42
    assert pending.case[0].args == (42, b"") and stats.attempts == 1
    assert learn.after_prediction(pending, run_of(pending.case, 42)) is None
    assert (stats.success, stats.fail) == (1, 0)


def test_a_missed_prediction_iterates_and_a_structural_mutation_learns_nothing() -> None:
    stats = PredictionStats()
    learn = learner(stats)
    base = (Tx("f(uint8,bytes)", (10, b""), SENDER),)
    mutated = (Tx("f(uint8,bytes)", (20, b""), SENDER),)
    pending = learn.predict(seed_of(base, 10), Mutation(mutated, ("arg", 0, (0,)), "arith"),
                          run_of(mutated, 20))
    assert pending is not None
    # The predicted run compared 50 (the cost is not the input's linear function here).
    again = learn.after_prediction(pending, run_of(pending.case, 50))
    assert again is not None and again.value != 42 and stats.fail == 1
    assert stats.attempts == 2
    assert learn.predict(seed_of(base, 10), Mutation(mutated + base, None, "insert"),
                       run_of(mutated, 20)) is None


def test_a_target_that_never_hits_rests_and_one_that_hits_stays_awake() -> None:
    base = (Tx("f(uint8,bytes)", (10, b""), SENDER),)
    mutated = (Tx("f(uint8,bytes)", (20, b""), SENDER),)
    offer = Mutation(mutated, ("arg", 0, (0,)), "arith")

    def offered(hit: bool) -> tuple[int, PredictionStats]:
        """How many of 300 offers of the same target were predicted (one run each)."""
        stats = PredictionStats()
        learn = learner(stats, iterations=0)
        made = 0
        for _ in range(300):
            pending = learn.predict(seed_of(base, 10), offer, run_of(mutated, 20))
            if pending is None:
                continue
            made += 1
            # A miss compares 50 whatever the input (a wrapped argument, say).
            learn.after_prediction(pending, run_of(pending.case, 42 if hit else 50))
        return made, stats

    made, stats = offered(hit=False)
    assert PATIENCE < made < 8 * PATIENCE  # rested most of the time, never given up
    assert stats.rested == 300 - made and stats.success == 0
    made, stats = offered(hit=True)
    assert made == 300 and stats.rested == 0 and stats.success == 300


def test_a_side_the_campaign_does_not_aim_at_is_never_learnt_from() -> None:
    base = (Tx("f(uint8,bytes)", (10, b""), SENDER),)
    mutated = (Tx("f(uint8,bytes)", (20, b""), SENDER),)
    offer = Mutation(mutated, ("arg", 0, (0,)), "arith")
    asked: list[object] = []

    def refusal(side: tuple[bytes, int, bool]) -> bool:
        asked.append(side)
        return False  # a side that only reverts (secant.evm.refusals), say

    mutator = Mutator(SPECS, [SENDER], Dictionary())
    learn = Predictor(mutator, Coverage(), None, 8, random.Random(0), PredictionStats(),
                      refusal)
    assert learn.predict(seed_of(base, 10), offer, run_of(mutated, 20)) is None
    assert asked and all(side == (CODE, 10, True) for side in asked)
    learn.aim = lambda side: True
    assert learn.predict(seed_of(base, 10), offer, run_of(mutated, 20)) is not None


def write_run(case: TxSeq, slot: int) -> RunResult:
    """A run whose last transaction wrote ``slot`` at one SSTORE (no comparison)."""
    return RunResult(case, [TxOutcome(True, False, b"", 0)], 1, set(), set(), [], [0],
                     [(CODE, 30, slot)], [0])


def test_a_write_is_learnt_from_only_when_its_slot_moves_as_an_array_index_does() -> None:
    target = 1000
    base = (Tx("f(uint8,bytes)", (10, b""), SENDER),)
    mutated = (Tx("f(uint8,bytes)", (20, b""), SENDER),)
    offer = Mutation(mutated, ("arg", 0, (0,)), "arith")
    mutator = Mutator(SPECS, [SENDER], Dictionary())

    def predicted(slot_of: Callable[[int], int]) -> int | None:
        learn = Predictor(mutator, Coverage(), target, 8, random.Random(0),
                          PredictionStats())
        seed = Seed(base, 1, cost_vector(write_run(base, slot_of(10)), target),
                    SeedStats(1), "init", 0)
        pending = learn.predict(seed, offer, write_run(mutated, slot_of(20)))
        return None if pending is None else pending.value

    # An array element: base slot 800 plus the index; the target is element 200.
    assert predicted(lambda index: 800 + index) == 200
    # A mapping's entry: a hashed slot jumps with the key, and nothing can be learnt.
    assert predicted(lambda key: int.from_bytes(keccak256(key.to_bytes(32, "big")),
                                                "big")) is None
