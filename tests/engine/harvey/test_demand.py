"""Harvey's demand-driven sequences in the loop: probes, demand, pools, follow-ups."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from secant.abi import AbiParam
from secant.engine.corpus import Seed
from secant.engine.dictionary import Dictionary
from secant.engine.harvey.demand import DemandDriven
from secant.engine.mutators import FunctionSpec, Mutator
from secant.engine.schedulers import SeedStats
from secant.engine.values import vtype
from secant.types import RunResult, Tx, TxOutcome, TxSeq

SENDER = 0x1000
UINT = (vtype(AbiParam("", "int256")),)
SPECS = [FunctionSpec("SetY(int256)", None, UINT, False),
         FunctionSpec("CopyY()", None, (), False),
         FunctionSpec("Bar()", None, (), False)]
X, Y = 0, 1  # storage slots


def demand(mode: str = "demand", probability: float = 1.0) -> DemandDriven:
    return DemandDriven(mode, Mutator(SPECS, [SENDER], Dictionary([42])), 8, probability)


def call(name: str, *args: int) -> Tx:
    signature = next(s.signature for s in SPECS if s.signature.startswith(name + "("))
    return Tx(signature, args, SENDER)


def run_of(case: TxSeq, reads: Sequence[tuple[int, int]] = (),
           writes: Sequence[tuple[int, int]] = (), state: int = 0) -> RunResult:
    """A run: ``writes`` are (tx, slot) SSTOREs, ``reads`` (slot, value) SLOADs of the last
    transaction."""
    last = len(case) - 1
    sstores = [(b"c" * 32, 0, slot) for _, slot in writes]
    sstore_marks = [sum(1 for tx, _ in writes if tx < i) for i in range(len(case))]
    result = RunResult(case, [TxOutcome(True, False, b"", 0)] * len(case), 1, set(), set(),
                        [], [0] * len(case), sstores, sstore_marks,
                        [(last, 0, slot, value) for slot, value in reads])
    result.state_hash = state
    return result


def seed_of(case: TxSeq, reads: tuple[tuple[int, int], ...]) -> Seed:
    return Seed(case, 1, {}, SeedStats(1), "init", 0, reads=reads)


def test_probes_only_in_demand_mode_on_reading_seeds_not_yet_demanding() -> None:
    rng = random.Random(0)
    bar = seed_of((call("Bar"),), ((X, 0),))
    assert demand().wants_probe(bar, rng)
    assert not demand("eager").wants_probe(bar, rng) and not demand("off").wants_probe(bar, rng)
    assert not demand().wants_probe(seed_of((call("CopyY"),), ()), rng)  # reads nothing
    assert not demand(probability=0.0).wants_probe(bar, rng)
    driven = demand()
    driven.probe_hit((call("SetY", 1), call("Bar")))
    assert driven.demands(call("Bar")) and not driven.demands(call("SetY", 1))
    assert not driven.wants_probe(bar, rng)  # already demanding: nothing left to learn
    assert driven.grows((call("Bar"),)) and not driven.grows((call("CopyY"),))
    assert demand("eager").grows((call("CopyY"),)) and not demand("off").grows((call("Bar"),))
    with pytest.raises(ValueError, match="unknown sequence mode"):
        demand("sometimes")


def test_a_probe_overrides_the_reads_and_mutates_one_of_them() -> None:
    rng = random.Random(1)
    seed = seed_of((call("SetY", 3), call("Bar")), ((X, 0), (Y, 3)))
    for _ in range(20):
        probe = demand().probe(seed, rng)
        assert probe is not None
        base, mutation = probe
        # The base behaves like the seed: every read slot overridden with what it held.
        assert base.case[-1].storage == ((X, 0), (Y, 3)) and base.case[0] == seed.case[0]
        assert mutation.location is not None
        kind, index, slot = mutation.location
        assert (kind, index) == ("slot", 1) and slot in (X, Y)
        changed = dict(mutation.case[-1].storage)
        assert changed != dict(base.case[-1].storage)
        assert {s for s in changed if changed[s] != dict(seed.reads)[s]} == {slot}


def test_runs_that_move_a_demanded_slot_join_the_pools() -> None:
    driven = demand()
    bar = (call("Bar"),)
    driven.learn(run_of(bar, reads=[(X, 0)]))  # Bar reads x
    copy = (call("SetY", 5), call("CopyY"))
    moves_x = run_of(copy, writes=[(0, Y), (1, X)], state=77)
    assert not driven.sets_up_demand(moves_x)  # nothing demands x yet
    driven.offer(moves_x, covered_more=False)
    assert driven.pools.sequences == []
    driven.probe_hit(bar)
    assert driven.sets_up_demand(moves_x)
    driven.offer(moves_x, covered_more=False)
    assert driven.pools.sequences == [copy]
    assert not driven.sets_up_demand(moves_x)  # its state is known now
    only_y = run_of((call("SetY", 6),), writes=[(0, Y)], state=78)
    assert not driven.sets_up_demand(only_y)
    driven.offer(only_y, covered_more=True)  # new coverage pools it anyway
    assert driven.pools.sequences[-1] == (call("SetY", 6),)
    off = demand("off")
    off.offer(only_y, covered_more=True)
    assert off.pools.sequences == []


def test_what_demanding_functions_read_is_gathered_again_when_it_grows() -> None:
    driven = demand()
    bar = (call("Bar"),)
    driven.learn(run_of(bar, reads=[(X, 0)]))  # Bar reads x
    driven.probe_hit(bar)
    moves_y = run_of((call("SetY", 5),), writes=[(0, Y)], state=80)
    assert not driven.sets_up_demand(moves_y)  # Bar does not read y (yet)
    driven.learn(run_of(bar, reads=[(Y, 5)]))  # now it does
    assert driven.sets_up_demand(moves_y)


def test_structural_mutations_in_two_steps_of_three() -> None:
    driven = demand("eager")
    rng = random.Random(2)
    case = (call("SetY", 1), call("Bar"))
    grown = (call("CopyY"),) + case
    calls: list[bool] = []

    def mutate(current: TxSeq, _: random.Random, keep_last: bool,
               others: list[TxSeq] | None) -> tuple[TxSeq, str] | None:
        calls.append(keep_last)
        assert current == case and others == [(call("Bar"),)]
        return grown, "add"

    driven.sequence_mutator.mutate = mutate  # type: ignore[method-assign,assignment]
    corpus = [seed_of((call("Bar"),), ())]
    made = [driven.structural(case, rng, corpus) for _ in range(600)]
    share = sum(m is not None for m in made) / len(made)
    assert 0.6 < share < 0.73 and len(calls) == sum(m is not None for m in made)
    assert not any(calls)  # eager mode mutates the whole sequence
    assert all(m.case == grown and m.location is None and m.operator == "add"
               for m in made if m is not None)


def test_follow_up_writes_the_compared_value_into_the_prefix_else_reuses_one() -> None:
    driven = demand()
    rng = random.Random(3)
    case = (call("SetY", 7), call("CopyY"), call("Bar"))
    follow = driven.follow_up(case, [(7, 42, "eq")], rng)
    assert follow is not None and follow.case[0] == call("SetY", 42)
    assert follow.location == ("arg", 0, (0,))
    # No operand occurs in the case: the last transaction may reuse a value (none here).
    assert driven.follow_up(case, [(8, 42, "eq")], rng) is None
