"""Sequence pools and structural mutations (Harvey §5, sFuzz Table 1)."""

from __future__ import annotations

import random

from secant.chain.abi import AbiParam
from secant.engine.dictionary import Dictionary
from secant.engine.mutators import FunctionSpec, Mutator
from secant.engine.sequences import Pools, SequenceMutator
from secant.engine.values import vtype
from secant.types import Tx

SENDERS = [0x1000, 0x2000]
SPECS = [FunctionSpec(f"{name}(uint256)", None, (vtype(AbiParam("", "uint256")),), False)
         for name in ("a", "b", "c", "t")]


def tx(name: str, arg: int = 0, storage: tuple[tuple[int, int], ...] = ()) -> Tx:
    return Tx(f"{name}(uint256)", (arg,), SENDERS[0], storage=storage)


def test_pools_keep_new_states_only_and_strip_overrides() -> None:
    pools = Pools(limit=2)
    assert not pools.offer((tx("a"),), 0)  # the post-deployment state is known
    assert pools.offer((tx("a", 1), tx("b", 2, storage=((0, 5),))), 11)
    assert not pools.offer((tx("c"),), 11)
    assert pools.transactions == [tx("b", 2)] and pools.sequences == [(tx("a", 1), tx("b", 2))]
    assert pools.offer((tx("c"),), 12) and pools.offer((tx("a", 3),), 13)
    assert len(pools.transactions) == 2 and pools.transactions[0] == tx("c")  # oldest dropped
    assert (pools.stats.offered, pools.stats.accepted) == (5, 3)


def test_demand_mode_mutations_keep_the_last_transaction() -> None:
    pools = Pools()
    pools.offer((tx("a", 1), tx("b", 2)), 7)
    seqs = SequenceMutator(Mutator(SPECS, SENDERS, Dictionary()), pools, max_length=4)
    # t reads slot 0, which only b writes; a reads slot 1, which c writes.
    seqs.reads = {(None, "t(uint256)"): {0}, (None, "a(uint256)"): {1}}
    seqs.writes = {(None, "b(uint256)"): {0, 5}, (None, "c(uint256)"): {1}}
    rng = random.Random(1)
    case = (tx("a", 9), tx("c", 8), tx("t", 42))
    operators: set[str] = set()
    for _ in range(400):
        out = seqs.mutate_once(case, rng, keep_last=True, others=[(tx("b", 5), tx("t", 1))])
        if out is None:
            continue
        new, operator = out
        operators.add(operator)
        assert new[-1] == tx("t", 42) and 1 <= len(new) <= 4
        if operator == "replace-prefix":
            assert new[:-1] == (tx("a", 1), tx("b", 2))
        if operator == "swap":
            assert sorted(new[:-1], key=repr) == sorted(case[:-1], key=repr)
        if operator == "prune":
            assert len(new) == len(case) - 1
        if operator == "insert-writer":
            at = next(i for i, (x, y) in enumerate(zip(new, case + (None,))) if x != y)
            inserted, after = new[at].function, new[at + 1].function
            assert (inserted, after) in (("b(uint256)", "t(uint256)"),
                                         ("c(uint256)", "a(uint256)"))
    assert operators == set(SequenceMutator.OPERATORS)


def test_eager_mode_mutates_anywhere_and_respects_the_length_bound() -> None:
    seqs = SequenceMutator(Mutator(SPECS, SENDERS, Dictionary()), Pools(), max_length=3)
    rng = random.Random(2)
    case = (tx("t", 1),)
    lasts = set()
    for _ in range(300):
        out = seqs.mutate(case, rng, keep_last=False, others=[(tx("a"), tx("b"), tx("c"))])
        if out is not None:
            case = out[0]
            assert 1 <= len(case) <= 3
            lasts.add(case[-1].function)
    assert len(lasts) > 2  # the last transaction is not fixed in eager mode


def test_stacked_mutations_keep_the_invariants() -> None:
    pools = Pools()
    pools.offer((tx("a", 1),), 3)
    seqs = SequenceMutator(Mutator(SPECS, SENDERS, Dictionary()), pools, max_length=5)
    rng = random.Random(4)
    stacked = 0
    for _ in range(200):
        out = seqs.mutate((tx("b"), tx("t", 7)), rng, keep_last=True)
        if out is not None:
            assert out[0][-1] == tx("t", 7) and len(out[0]) <= 5
            stacked += "+" in out[1]
    assert stacked > 50
