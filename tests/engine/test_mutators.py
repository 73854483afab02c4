"""Mutators change exactly one parameter, keep values type-valid, and replay by seed."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest

from secant.abi import AbiParam
from secant.engine.dictionary import Dictionary, code_constants
from secant.engine.mutators import FunctionSpec, Mutator, interesting_values
from secant.engine.values import (
    VType,
    args_leaves,
    from_int,
    get_at,
    int_domain,
    to_int,
    type_at,
    vtype,
)
from secant.types import Tx
from tests.evm.asm import asm

SENDERS = [0x1000, 0x2000, 0x3000]


def spec(signature: str, types: list[str], payable: bool = False) -> FunctionSpec:
    return FunctionSpec(signature, None, tuple(vtype(AbiParam("", t)) for t in types), payable)


SPECS = [
    spec("f(uint8,int16,bytes4)", ["uint8", "int16", "bytes4"]),
    spec("g(bytes,string,uint256[])", ["bytes", "string", "uint256[]"], payable=True),
    spec("h(address,bool,uint32[2])", ["address", "bool", "uint32[2]"]),
]


def mutator() -> Mutator:
    return Mutator(SPECS, SENDERS, Dictionary([42, 0x55 << 248, 1000], SENDERS))


def valid(vt: VType, value: Any) -> bool:
    if vt.kind == "uint":
        return isinstance(value, int) and 0 <= value < 1 << vt.bits
    if vt.kind == "int":
        return isinstance(value, int) and -(1 << (vt.bits - 1)) <= value < 1 << (vt.bits - 1)
    if vt.kind == "fbytes":
        return isinstance(value, bytes) and len(value) == vt.bits // 8
    if vt.kind == "address":
        return isinstance(value, int) and 0 <= value < 1 << 160
    if vt.kind == "bool":
        return isinstance(value, bool)
    if vt.kind == "bytes":
        return isinstance(value, bytes)
    if vt.kind == "string":
        return isinstance(value, str)
    assert vt.elem is not None
    if vt.length is not None and len(value) != vt.length:
        return False
    return isinstance(value, tuple) and all(valid(vt.elem, v) for v in value)


def differing_locations(a: Tx, b: Tx, types: tuple[VType, ...]) -> list[Any]:
    out: list[Any] = []
    for i, (x, y) in enumerate(zip(a.args, b.args)):
        if x != y:
            out.append(("arg", i))
    for field in ("sender", "value", "time", "blocks"):
        if getattr(a, field) != getattr(b, field):
            out.append(field)
    return out


@pytest.mark.parametrize("fn", SPECS, ids=lambda s: s.signature)
def test_one_parameter_per_mutation_and_type_valid(fn: FunctionSpec) -> None:
    m = mutator()
    rng = random.Random(7)
    tx = m.random_tx(fn, rng)
    changed_kinds = set()
    for _ in range(400):
        mutation = m.mutate((tx,), rng)
        if mutation is None:
            continue
        new = mutation.case[0]
        assert all(valid(vt, v) for vt, v in zip(fn.types, new.args))
        diffs = differing_locations(tx, new, fn.types)
        assert len(diffs) == 1, (mutation.location, diffs)
        location = mutation.location
        assert location is not None
        changed_kinds.add(location[0])
        if location[0] == "arg":
            assert diffs[0] == ("arg", location[2][0])
        else:
            assert diffs[0] == location[0]
        if location[0] == "value":
            assert fn.payable
    assert "arg" in changed_kinds and "sender" in changed_kinds
    # Block deltas only when the code reads TIMESTAMP/NUMBER (both True by default).
    assert {"time", "blocks"} <= changed_kinds


def test_block_deltas_skipped_when_code_ignores_them() -> None:
    m = mutator()
    m.reads_time = m.reads_number = False
    tx = m.random_tx(SPECS[0], random.Random(1))
    kinds = {loc[0] for loc in m.locations((tx,), 0)}
    assert kinds == {"arg", "sender"}


def test_a_call_with_nothing_to_change_is_not_mutated() -> None:
    # No arguments, no value, one sender, no block deltas: nothing to mutate in place.
    bare = spec("noop()", [])
    m = Mutator([bare], SENDERS[:1], Dictionary([], SENDERS[:1]))
    m.reads_time = m.reads_number = False
    case = (m.random_tx(bare, random.Random(1)),)
    assert m.locations(case, 0) == []
    assert m.mutate(case, random.Random(2)) is None
    assert m.havoc(case, random.Random(3)) is None


def test_block_deltas_stay_within_the_most_one_transaction_may_move() -> None:
    m = mutator()
    m.max_time_delay, m.max_block_delay = 100, 3
    rng = random.Random(4)
    case = (m.random_tx(SPECS[0], rng),)
    deltas = set()
    for _ in range(300):
        for kind in ("time", "blocks"):
            mutation = m.mutate_at(case, (kind, 0), rng)
            if mutation is not None:
                case = mutation.case
                deltas.add((kind, case[0].time if kind == "time" else case[0].blocks))
    assert max(d for k, d in deltas if k == "time") == 100  # reached, never passed
    assert max(d for k, d in deltas if k == "blocks") == 3


def test_same_seed_same_mutations() -> None:
    def run(seed: int) -> list[Any]:
        m, rng = mutator(), random.Random(seed)
        tx = m.random_tx(SPECS[1], rng)
        out = []
        case = (tx,)
        for _ in range(50):
            mutation = m.havoc(case, rng) or m.mutate(case, rng)
            if mutation is not None:
                case = mutation.case
                out.append(case)
        return out
    assert run(3) == run(3)
    assert run(3) != run(4)


def test_byte_mutations_name_the_byte() -> None:
    m = mutator()
    rng = random.Random(5)
    tx = Tx("g(bytes,string,uint256[])", (b"abcdef", "xyz", (1, 2)), SENDERS[0])
    seen_byte_locations = 0
    for _ in range(300):
        mutation = m.mutate_at((tx,), ("arg", 0, (0,)), rng)
        if mutation is None or mutation.location is None:
            continue
        if len(mutation.location) == 4:
            seen_byte_locations += 1
            index = mutation.location[3]
            new = mutation.case[0].args[0]
            assert len(new) == 6
            assert [i for i in range(6) if new[i] != b"abcdef"[i]] == [index]
    assert seen_byte_locations > 20


def test_interesting_values_cover_type_bounds() -> None:
    int8 = VType("int", bits=8)
    values = {from_int(int8, v) for v in interesting_values(int8)}
    assert {0, 1, -1, -128, 127} <= values
    uint256 = VType("uint", bits=256)
    assert {0, 1, (1 << 256) - 1, 10**18, 1 << 128} <= set(interesting_values(uint256))


def test_values_paths_and_integer_views() -> None:
    types = tuple(vtype(AbiParam("", t)) for t in ["uint8", "bytes2", "int8[]"])
    args = (5, b"\x01\x02", (-3, 4))
    leaves = args_leaves(types, args)
    assert [p for p, _ in leaves] == [(0,), (1,), (2,), (2, 0), (2, 1)]
    assert get_at(args, (2, 1)) == 4
    assert type_at(types, (2, 0)) == VType("int", bits=8)
    bytes2 = types[1]
    assert to_int(bytes2, b"\x01\x02") == 0x0102
    assert from_int(bytes2, 0x0304) == b"\x03\x04"
    assert int_domain(VType("int", bits=8)) is not None
    assert from_int(VType("int", bits=8), 0xFF) == -1
    assert int_domain(VType("address", bits=160)) is None


def test_dictionary_from_code_skips_jump_targets_and_bounds_runtime_entries() -> None:
    code = asm("PUSH2 0x0010 JUMP PUSH4 0xdeadbeef PUSH1 0x2a PUSH2 0x0020 JUMPI")
    assert code_constants(code) == [0xDEADBEEF, 0x2A]
    d = Dictionary([1, 2], limit=3)
    for v in range(10, 20):
        d.add(v)
    assert d.values() == [1, 2, 17, 18, 19]
    assert not d.add(1)


def input_to_state_results(tx: Tx, pairs: list[tuple[int, int, str]], tries: int = 200
                           ) -> set[tuple[Any, Any]]:
    m = mutator()
    rng = random.Random(3)
    out: set[tuple[Any, Any]] = set()
    for _ in range(tries):
        mutation = m.input_to_state((tx,), pairs, rng, 0)
        if mutation is not None:
            assert mutation.operator == "input-to-state"
            out.add((mutation.case[0].args, mutation.location))
    return out


def test_input_to_state_replaces_integer_operands_in_place() -> None:
    tx = Tx("f(uint8,int16,bytes4)", (7, -3, b"\x00\x00\x00\x09"), SENDERS[0])
    minus_three = (1 << 256) - 3
    pairs = [(7, 200, "lt"), (minus_three, 12, "slt"),
             (0x00000009 << 224, 0xCAFE0000 << 224, "eq")]
    found = input_to_state_results(tx, pairs)
    args = {a for a, _ in found}
    assert (200, -3, b"\x00\x00\x00\x09") in args            # uint8 seen as lhs
    assert (7, 12, b"\x00\x00\x00\x09") in args              # int16 in two's complement
    assert (7, -3, b"\xca\xfe\x00\x00") in args              # bytes4 left-aligned
    # Off-by-one neighbours (for < and <= checks) come along, and nothing else changes.
    assert {a[0] for a in args} == {7, 199, 200, 201}
    assert all(loc == ("arg", 0, (i,)) for (a, loc) in found for i in range(3)
               if a[i] != tx.args[i])
    # Operands that do not fit the parameter are not written there.
    assert input_to_state_results(tx, [(7, 1 << 9, "lt")]) == set()


def test_input_to_state_writes_equality_operands_exactly() -> None:
    tx = Tx("f(uint8,int16,bytes4)", (7, -3, b"\x00\x00\x00\x09"), SENDERS[0])
    for relation in ("eq", "ne"):
        found = input_to_state_results(tx, [(7, 200, relation)])
        assert {a for a, _ in found} == {(200, -3, b"\x00\x00\x00\x09")}


def test_input_to_state_switches_the_sender_to_the_one_a_check_wants() -> None:
    m = mutator()
    rng = random.Random(5)
    tx = Tx("f(uint8,int16,bytes4)", (7, -3, b"\x00\x00\x00\x09"), SENDERS[0])
    # require(msg.sender == owner) with owner = SENDERS[2]: the sender is the operand.
    mutation = m.input_to_state((tx,), [(SENDERS[0], SENDERS[2], "eq")], rng, 0)
    assert mutation is not None and mutation.location == ("sender", 0)
    assert mutation.case[0] == replace(tx, sender=SENDERS[2])
    # An owner that is not one of the campaign's senders is left alone.
    assert m.input_to_state((tx,), [(SENDERS[0], 0xBEEF, "eq")], rng, 0) is None


def test_input_to_state_inside_bytes_names_the_byte() -> None:
    tx = Tx("g(bytes,string,uint256[])", (b"DDR\xa7zz", "xyz", (5,)), SENDERS[0])
    # bytes1 comparison m[i] == "U": both operands left-aligned in the word.
    found = input_to_state_results(tx, [(0xA7 << 248, 0x55 << 248, "eq")])
    assert ((b"DDRUzz", "xyz", (5,)), ("arg", 0, (0,), 3)) in found
    # uint8(m[i]) == 0x41 style: right-aligned; the array element is an integer leaf.
    found = input_to_state_results(tx, [(ord("y"), 0x41, "eq"), (5, 77, "eq")])
    args = {a for a, _ in found}
    assert (b"DDR\xa7zz", "xAz", (5,)) in args and (b"DDR\xa7zz", "xyz", (77,)) in args
    # Nothing to replace: no mutation.
    assert input_to_state_results(tx, [(0xEE << 248, 0x55 << 248, "eq")]) == set()


def test_input_to_state_moves_the_clock_a_deadline_compares() -> None:
    m = mutator()
    m.max_time_delay, m.max_block_delay = 604_800, 60_480
    rng = random.Random(6)
    first = Tx("f(uint8,int16,bytes4)", (7, -3, b"\x00\x00\x00\x09"), SENDERS[0], time=100)
    last = Tx("f(uint8,int16,bytes4)", (8, -3, b"\x00\x00\x00\x09"), SENDERS[0])
    case = (first, last)
    clock = (50, 1_000)  # block 50 at second 1,000 when the last transaction began
    # block.timestamp >= since + 30 days, 5,000 s short: the last one waits 5,000 s more.
    pair = [(1_000, 6_000, "eq")]
    mutation = m.input_to_state(case, pair, rng, 1, clock=clock)
    assert mutation is not None and mutation.location == ("time", 1)
    assert mutation.case == (first, replace(last, time=5_000))
    # Longer than one transaction may wait: spread, the later transactions first.
    pair = [(1_000, 1_000 + 604_800 + 10, "eq")]
    mutation = m.input_to_state(case, pair, rng, None, anywhere=True, clock=clock)
    assert mutation is not None
    assert [tx.time for tx in mutation.case] == [110, 604_800]
    assert mutation.location == ("time", 0)
    # block.number >= 60: ten blocks on.
    mutation = m.input_to_state(case, [(50, 60, "eq")], rng, 1, clock=clock)
    assert mutation is not None and mutation.case[1] == replace(last, blocks=10)
    # Backwards, past every delay allowed, an unknown clock, or code that never reads it:
    # no move.
    assert m.input_to_state(case, [(1_000, 900, "eq")], rng, 1, clock=clock) is None
    assert m.input_to_state(case, [(1_000, 1_000 + 10 ** 7, "eq")], rng, None,
                            anywhere=True, clock=clock) is None
    assert m.input_to_state(case, [(1_000, 6_000, "eq")], rng, 1) is None
    m.reads_time = False
    assert m.input_to_state(case, [(1_000, 6_000, "eq")], rng, 1, clock=clock) is None

