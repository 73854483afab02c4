"""ABI-aware mutators: one parameter per mutation, and havoc stacking.

Prediction needs two inputs that differ in exactly one parameter, so :meth:`Mutator.mutate`
changes one *location* (see ``secant.types``) and says which. The operators are AFL's,
applied to the parameter's bit pattern at its ABI width (Fuzzing Book ``Mutator``, sFuzz
Table 1):

* integers and ``bytesN``: flips of 1, 2 or 4 consecutive bits and of 1, 2 or 4 bytes at a
  random position, arithmetic +-1..35 on an 8/16/32/64-bit field or the full width,
  interesting values (0, 1, -1, the type's min/max, 2^k and 2^k+-1, powers of ten),
  dictionary values and random type-valid values;
* ``address``: a sender, a deployed contract or a dictionary address; ``bool``: a flip;
* ``bytes``/``string``: byte flips and sets, inserting or deleting a run, splicing a
  dictionary value (as its big-endian bytes, leading or trailing zeros dropped);
* ``T[]``: inserting, duplicating or deleting an element (its elements mutate as leaves);
* per transaction: the sender, ``msg.value`` (payable functions only), the block-number
  and timestamp deltas.

:meth:`Mutator.havoc` stacks 2-16 of these (a separate mutator; its result has no location
and is not used for prediction).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from secant.engine.dictionary import Dictionary
from secant.engine.values import (
    Path,
    VType,
    args_leaves,
    from_int,
    get_at,
    set_at,
    to_unsigned,
    type_at,
)
from secant.types import Location, Tx, TxSeq

ARITH_MAX = 35
_WIDTHS = (8, 16, 32, 64)
_INT_OPS = ("flip", "flip", "byteflip", "arith", "arith", "interesting", "dict", "dict",
            "random")
_BYTES_OPS = ("flipbyte", "setbyte", "insert", "delete", "dict", "dict", "dict", "random")
_WEIGHTS = {"arg": 8, "value": 2, "slot": 4}
UNBOUNDED_DELAY = (1 << 40) - 1
"""The most a block delta may be when nothing bounds it (far past any deadline)."""

_TIME_STEPS = (0, 1, 12, 60, 3600, 86400, 7 * 86400, 30 * 86400, 365 * 86400)
_BLOCK_STEPS = (0, 1, 2, 10, 100, 1000, 7200, 50400, 216000)
_WORD = 1 << 256
# Relations for which only the other operand itself flips the branch (no +-1 neighbours).
_EQUALITIES = frozenset(("eq", "ne"))
_LEAF_INDEXES = 4096  # transactions whose input-to-state index is kept (then forgotten)

Comparison = tuple[int, int, str]
"""A comparison's operands and relation (``lhs``, ``rhs``, ``"lt"``/``"eq"``/...)."""


@dataclass(frozen=True)
class FunctionSpec:
    """A callable function: where it lives, its signature and argument types."""

    signature: str
    to: int | None
    types: tuple[VType, ...]
    payable: bool
    names: tuple[str, ...] = field(default=(), compare=False)
    """The parameters' names in the ABI ("" where unnamed; empty when unknown). Not part of
    the function's identity: only the learned policy reads them."""


@dataclass(frozen=True)
class Mutation:
    """A mutated test case, the location it changed (None for havoc) and the operator."""

    case: TxSeq
    location: Location | None
    operator: str


def interesting_values(vt: VType) -> list[int]:
    """AFL's interesting values adapted to an ABI integer type (as bit patterns)."""
    bits = vt.bits
    mask = (1 << bits) - 1
    values = {0, 1, mask}  # 0, 1, -1 / max
    if vt.kind == "int":
        values |= {1 << (bits - 1), (1 << (bits - 1)) - 1}  # min, max
    for k in (7, 8, 15, 16, 31, 32, 63, 64, 127, 128, 159, 160, 255):
        if k < bits:
            values |= {1 << k, (1 << k) - 1, (1 << k) + 1, (-(1 << k)) & mask}
    for k in range(1, 78):
        if 10 ** k > mask:
            break
        values.add(10 ** k)
    return sorted(values)


class Mutator:
    """Mutates test cases of one campaign (its functions, senders and dictionary)."""

    def __init__(self, functions: Sequence[FunctionSpec], senders: Sequence[int],
                 dictionary: Dictionary, max_value: int = 10 ** 21,
                 reads_time: bool = True, reads_number: bool = True) -> None:
        self.functions = list(functions)
        self._by_key = {(f.to, f.signature): f for f in self.functions}
        self.senders = list(senders)
        self.dictionary = dictionary
        self.max_value = max_value
        # Block deltas are worth mutating only when the code reads TIMESTAMP / NUMBER.
        self.reads_time = reads_time
        self.reads_number = reads_number
        # How far one transaction may move the block (FuzzConfig.max_time_delay, ...).
        self.max_time_delay = UNBOUNDED_DELAY
        self.max_block_delay = UNBOUNDED_DELAY
        self._interesting: dict[VType, list[int]] = {}
        # Input-to-state's index of each transaction's parameters (``_LeafIndex``), kept
        # while the transaction is around: a case's transactions come back in its mutants.
        self._leaf_indexes: dict[Tx, _LeafIndex] = {}

    def spec(self, tx: Tx) -> FunctionSpec:
        """The function a transaction calls."""
        return self._by_key[(tx.to, tx.function)]

    # ------------------------------------------------------------------ generation
    def random_value(self, vt: VType, rng: random.Random) -> Any:
        """A random type-valid value, biased to small numbers and known addresses."""
        kind = vt.kind
        if kind in ("uint", "int", "fbytes"):
            roll = rng.random()
            if roll < 0.4:
                pattern = rng.randrange(256)
            elif roll < 0.6:
                pattern = self._interesting_of(vt, rng)
            elif roll < 0.75 and len(self.dictionary):
                pattern = self.dictionary.choice(rng) or 0
            else:
                pattern = rng.getrandbits(vt.bits)
            return from_int(vt, pattern)
        if kind == "address":
            return self._address(rng)
        if kind == "bool":
            return rng.random() < 0.5
        if kind in ("bytes", "string"):
            data = rng.randbytes(rng.choice((0, 1, 4, 8, 32, 33, 64)))
            return data if kind == "bytes" else data.decode("latin-1")
        if kind == "array":
            assert vt.elem is not None
            count = vt.length if vt.length is not None else rng.randint(0, 4)
            return tuple(self.random_value(vt.elem, rng) for _ in range(count))
        return tuple(self.random_value(f, rng) for f in vt.fields)

    def random_tx(self, spec: FunctionSpec, rng: random.Random,
                  sender: int | None = None) -> Tx:
        """A fresh call of ``spec`` with random arguments (value only if payable)."""
        args = tuple(self.random_value(vt, rng) for vt in spec.types)
        value = rng.choice((0, 0, 1, 10 ** 15, 10 ** 18)) if spec.payable else 0
        chosen = sender if sender is not None else self.senders[rng.randrange(len(self.senders))]
        return Tx(spec.signature, args, chosen, value, to=spec.to)

    def _address(self, rng: random.Random) -> int:
        found = self.dictionary.address(rng) if rng.random() < 0.9 else None
        if found is None:
            return self.senders[rng.randrange(len(self.senders))] if rng.random() < 0.9 else 0
        return found

    def _interesting_of(self, vt: VType, rng: random.Random) -> int:
        values = self._interesting.get(vt)
        if values is None:
            values = self._interesting[vt] = interesting_values(vt)
        return values[rng.randrange(len(values))]

    # ------------------------------------------------------------------ one location
    def locations(self, case: TxSeq, index: int) -> list[Location]:
        """Every location of transaction ``index`` that a mutation may change."""
        tx = case[index]
        spec = self.spec(tx)
        out: list[Location] = [("arg", index, path) for path, _ in args_leaves(spec.types,
                                                                               tx.args)]
        if spec.payable:
            out.append(("value", index))
        if len(self.senders) > 1:
            out.append(("sender", index))
        if self.reads_time:
            out.append(("time", index))
        if self.reads_number:
            out.append(("blocks", index))
        out.extend(("slot", index, slot) for slot, _ in tx.storage)
        return out

    def mutate(self, case: TxSeq, rng: random.Random, index: int | None = None
               ) -> Mutation | None:
        """Change one parameter of transaction ``index`` (default: a random one)."""
        if not case:
            return None
        if index is None:
            index = rng.randrange(len(case))
        locations = self.locations(case, index)
        if not locations:  # a call without arguments, value or choice of sender
            return None
        # Arguments carry most of the behaviour: pick them far more often.
        weights = [_WEIGHTS.get(loc[0], 1) for loc in locations]
        location = rng.choices(locations, weights=weights)[0]
        return self.mutate_at(case, location, rng)

    def mutate_at(self, case: TxSeq, location: Location, rng: random.Random
                  ) -> Mutation | None:
        """Change the parameter at ``location``; None when the operator changed nothing."""
        kind, index = location[0], location[1]
        tx = case[index]
        if kind == "arg":
            path: Path = location[2]
            spec = self.spec(tx)
            vt = type_at(spec.types, path)
            old = get_at(tx.args, path)
            new, operator, byte = self.mutate_value(vt, old, rng)
            if new == old and type(new) is type(old):
                return None
            new_tx = tx.with_args(set_at(tx.args, path, new))
            if byte is not None:
                # One byte of a bytes/string changed in place: prediction may treat it as
                # an integer parameter of its own.
                location = ("arg", index, path, byte)
        elif kind == "value":
            pattern, operator = self._mutate_int_pattern(VType("uint", 256), tx.value, rng)
            new_tx = replace(tx, value=min(pattern, self.max_value))
        elif kind == "sender":
            others = [s for s in self.senders if s != tx.sender]
            new_tx = replace(tx, sender=others[rng.randrange(len(others))])
            operator = "sender"
        elif kind in ("time", "blocks"):
            old_delta = tx.time if kind == "time" else tx.blocks
            if rng.random() < 0.5:
                delta = rng.choice(_TIME_STEPS if kind == "time" else _BLOCK_STEPS)
            else:
                delta = max(0, old_delta + rng.randint(-ARITH_MAX, ARITH_MAX))
            if kind == "time":
                new_tx = replace(tx, time=min(delta, self.max_time_delay))
            else:
                new_tx = replace(tx, blocks=min(delta, self.max_block_delay))
            operator = kind
        elif kind == "slot":
            slot = location[2]
            storage = dict(tx.storage)
            pattern, operator = self._mutate_int_pattern(VType("uint", 256), storage[slot], rng)
            storage[slot] = pattern
            new_tx = replace(tx, storage=tuple(sorted(storage.items())))
        else:
            raise ValueError(f"unknown location {location!r}")
        if new_tx == tx:
            return None
        return Mutation(case[:index] + (new_tx,) + case[index + 1:], location, operator)

    def mutate_value(self, vt: VType, value: Any, rng: random.Random
                     ) -> tuple[Any, str, int | None]:
        """A mutated copy of one leaf value and the operator used.

        The third item is, for bytes and strings, the index of the single byte changed in
        place (None otherwise).
        """
        kind = vt.kind
        if kind in ("uint", "int", "fbytes"):
            pattern, operator = self._mutate_int_pattern(vt, to_unsigned(vt, value), rng)
            return from_int(vt, pattern), operator, None
        if kind == "address":
            return self._address(rng), "address", None
        if kind == "bool":
            return not value, "flip", None
        if kind in ("bytes", "string"):
            raw = value if kind == "bytes" else value.encode("latin-1", "replace")
            data, operator, byte = self._mutate_bytes(raw, rng)
            return (data if kind == "bytes" else data.decode("latin-1")), operator, byte
        if kind == "array":
            return (*self._mutate_array(vt, value, rng), None)
        return self.random_value(vt, rng), "random", None

    def _mutate_int_pattern(self, vt: VType, pattern: int, rng: random.Random
                            ) -> tuple[int, str]:
        bits = vt.bits
        mask = (1 << bits) - 1
        operator = _INT_OPS[rng.randrange(len(_INT_OPS))]
        if operator == "flip":
            width = rng.choice((1, 2, 4))
            pattern ^= ((1 << width) - 1) << rng.randrange(max(1, bits - width + 1))
        elif operator == "byteflip":
            width = min(rng.choice((1, 2, 4)), bits // 8)
            pattern ^= ((1 << (8 * width)) - 1) << (8 * rng.randrange(bits // 8 - width + 1))
        elif operator == "arith":
            delta = rng.randint(1, ARITH_MAX) * rng.choice((1, -1))
            width = rng.choice([w for w in _WIDTHS if w < bits] + [bits])
            if width == bits:
                pattern = (pattern + delta) & mask
            else:
                shift = 8 * rng.randrange((bits - width) // 8 + 1)
                field_mask = ((1 << width) - 1) << shift
                field = ((pattern >> shift) + delta) & ((1 << width) - 1)
                pattern = (pattern & ~field_mask) | (field << shift)
        elif operator == "interesting":
            pattern = self._interesting_of(vt, rng)
        elif operator == "dict":
            found = self.dictionary.choice(rng)
            if found is None:
                return self._interesting_of(vt, rng), "interesting"
            # An entry +-1 now and then: off-by-one checks (<, <=) sit next to constants.
            pattern = (found + rng.choice((0, 0, 0, 1, -1))) & mask
        else:
            pattern = rng.getrandbits(bits)
        return pattern & mask, operator

    def _mutate_bytes(self, data: bytes, rng: random.Random) -> tuple[bytes, str, int | None]:
        operator = _BYTES_OPS[rng.randrange(len(_BYTES_OPS))]
        if not data and operator in ("flipbyte", "setbyte", "delete"):
            operator = "insert"
        out = bytearray(data)
        byte: int | None = None
        if operator in ("flipbyte", "setbyte"):
            # Half the time the last byte: parsers read left to right, so the frontier of
            # a growing input is its end.
            byte = len(out) - 1 if rng.random() < 0.5 else rng.randrange(len(out))
            if operator == "flipbyte":
                out[byte] ^= 1 << rng.randrange(8)
            else:
                out[byte] = rng.randrange(256)
        elif operator == "insert":
            # Half the time at the end: inputs parsed left to right grow there.
            at = len(out) if rng.random() < 0.5 else rng.randrange(len(out) + 1)
            out[at:at] = rng.randbytes(rng.choice((1, 1, 2, 4, 8, 32)))
        elif operator == "delete":
            at = rng.randrange(len(out))
            out[at:at + rng.choice((1, 1, 2, 4, 8))] = b""
        elif operator == "dict":
            found = self.dictionary.choice(rng)
            if found is None:
                return bytes(out), "dict", None
            chunk = found.to_bytes(32, "big")
            chunk = chunk.rstrip(b"\0") if rng.random() < 0.5 else chunk.lstrip(b"\0")
            at = len(out) if rng.random() < 0.5 else rng.randrange(len(out) + 1)
            if rng.random() < 0.5:
                out[at:at + len(chunk)] = chunk  # overwrite
            else:
                out[at:at] = chunk
        else:
            out = bytearray(rng.randbytes(rng.choice((0, 1, 4, 8, 32, 64))))
        return bytes(out), operator, byte

    def _mutate_array(self, vt: VType, value: tuple[Any, ...], rng: random.Random
                      ) -> tuple[Any, str]:
        assert vt.elem is not None
        items = list(value)
        roll = rng.random()
        if not items or roll < 0.4:
            at = rng.randrange(len(items) + 1)
            items.insert(at, self.random_value(vt.elem, rng))
            return tuple(items), "insert"
        if roll < 0.6:
            at = rng.randrange(len(items))
            items.insert(at, items[at])
            return tuple(items), "duplicate"
        del items[rng.randrange(len(items))]
        return tuple(items), "delete"

    # ------------------------------------------------------------------ value reuse
    def reuse(self, case: TxSeq, rng: random.Random, index: int) -> Mutation | None:
        """Copy into transaction ``index`` an argument value another transaction passed.

        Values that must agree across calls (the answer given to ``start_quiz_game`` and the
        response given to ``Try``, an id created by one call and used by the next) are
        compared through hashes or storage, which neither prediction nor input-to-state can
        see through; reusing a value of the same type from elsewhere in the sequence can.
        """
        tx = case[index]
        leaves = args_leaves(self.spec(tx).types, tx.args)
        if not leaves or len(case) < 2:
            return None
        path, vt = leaves[rng.randrange(len(leaves))]
        current = get_at(tx.args, path)
        donors = [get_at(other.args, other_path)
                  for at, other in enumerate(case) if at != index
                  for other_path, other_vt in args_leaves(self.spec(other).types, other.args)
                  if other_vt == vt]
        donors = [value for value in donors if value != current]
        if not donors:
            return None
        new_tx = tx.with_args(set_at(tx.args, path, donors[rng.randrange(len(donors))]))
        return Mutation(case[:index] + (new_tx,) + case[index + 1:], ("arg", index, path),
                        "reuse")

    # ------------------------------------------------------------------ input-to-state
    def _leaf_index(self, tx: Tx) -> _LeafIndex:
        """The parameters of ``tx`` indexed for input-to-state (cached, bounded)."""
        index = self._leaf_indexes.get(tx)
        if index is None:
            if len(self._leaf_indexes) >= _LEAF_INDEXES:
                self._leaf_indexes.clear()
            index = self._leaf_indexes[tx] = _LeafIndex(self.spec(tx), tx)
        return index

    def input_to_state(self, case: TxSeq, pairs: Sequence[Comparison],
                       rng: random.Random, index: int | None = None,
                       anywhere: bool = False, clock: tuple[int, int] = (0, 0)
                       ) -> Mutation | None:
        """Replace a comparison operand found in the input by the other operand.

        ``pairs`` are the (lhs, rhs, relation) of comparisons the seed's run reached without
        taking their other side. When one operand appears verbatim in a parameter of
        transaction ``index`` (an integer argument equal to it, a ``bytesN``
        holding it left-aligned, its bytes inside a ``bytes``/``string``, or
        ``msg.value``, or the sender when the other operand is one of the campaign's
        senders), the other operand is written in its place (for an ordering, sometimes
        +-1: ``x < 10`` wants 9; an equality wants the operand itself)
        (Redqueen's input-to-state replacement, the "operands seen in comparisons" of
        issue 4 used where they were seen). With ``anywhere``, every transaction of the
        case is searched: a value set by an earlier transaction (``SetY(v)``) often reaches
        the last one's comparison through storage. ``clock`` is the (block number,
        timestamp) the last transaction began at: an operand equal to one of them is the
        clock, and a later one is reached by moving the block on (``block.timestamp >=
        since + 30 days``) with a larger delta before any searched transaction, within the
        campaign's largest delay. The result changes one location, so prediction can learn
        from it.
        """
        if not case or not pairs:
            return None
        if anywhere:
            indices = list(range(len(case)))
        else:
            indices = [index if index is not None else rng.randrange(len(case))]
        # The parameters to search, computed once per transaction: its leaves (path, type,
        # value) indexed by the word a comparison would see, and msg.value when payable.
        groups = [(at, self._leaf_index(case[at])) for at in indices]
        candidates: list[tuple[Location, Any]] = []
        senders = set(self.senders)
        for lhs, rhs, relation in pairs:
            for seen, wanted in ((lhs, rhs), (rhs, lhs)):
                if seen == wanted:
                    continue
                if relation not in _EQUALITIES:
                    wanted = (wanted + rng.choice((0, 1, -1))) % _WORD
                for at, group in groups:
                    value = group.value
                    for path, vt, leaf in group.matching(seen):
                        candidates.extend(_replacements(at, path, vt, leaf, seen, wanted, rng))
                    if value == seen and 0 < wanted <= self.max_value:
                        candidates.append((("value", at), wanted))
                    if case[at].sender == seen and wanted in senders:
                        # msg.sender == owner: the one input a sender can be predicted to.
                        candidates.append((("sender", at), wanted))
                    candidates.extend(self._clock_moves(case, at, clock, seen, wanted))
        if not candidates:
            return None
        location, new = candidates[rng.randrange(len(candidates))]
        index = location[1]
        tx = case[index]
        if location[0] == "clock":
            return _moved_clock(case, location, new)
        if location[0] == "value":
            new_tx = replace(tx, value=new)
        elif location[0] == "sender":
            new_tx = replace(tx, sender=new)
        else:
            new_tx = tx.with_args(set_at(tx.args, location[2], new))
        if new_tx == tx:
            return None
        return Mutation(case[:index] + (new_tx,) + case[index + 1:], location,
                        "input-to-state")

    def _clock_moves(self, case: TxSeq, at: int, clock: tuple[int, int], seen: int,
                     wanted: int) -> list[tuple[Location, Any]]:
        """Block delays up to transaction ``at`` that bring the clock ``seen`` to ``wanted``.

        A delay before transaction ``at`` moves the block of every later one alike, so any
        transaction up to the last (whose comparison it was) may carry it; a move longer
        than the largest delay is spread over ``at`` and the transactions before it, the
        later ones first. Only forward, and only where the code reads that clock. Each
        move is ``(("clock", at, kind), delays)``: the new delay of transactions ``at``,
        ``at - 1``, ....
        """
        moves: list[tuple[Location, Any]] = []
        number, timestamp = clock
        for kind, now, reads, most in (
                ("time", timestamp, self.reads_time, self.max_time_delay),
                ("blocks", number, self.reads_number, self.max_block_delay)):
            if not (reads and now and seen == now and wanted > now and most > 0):
                continue
            need = wanted - now
            delays: list[int] = []
            for tx in reversed(case[:at + 1]):
                current = getattr(tx, kind)
                added = min(need, max(0, most - current))
                delays.append(current + added)
                need -= added
                if not need:
                    moves.append((("clock", at, kind), tuple(delays)))
                    break
        return moves

    # ------------------------------------------------------------------ havoc
    def havoc(self, case: TxSeq, rng: random.Random, index: int | None = None
              ) -> Mutation | None:
        """Stack 2-16 single mutations (AFL's havoc); the result has no location."""
        current = case
        for _ in range(1 << rng.randint(1, 4)):
            mutation = self.mutate(current, rng, index)
            if mutation is not None:
                current = mutation.case
        return Mutation(current, None, "havoc") if current != case else None


def _moved_clock(case: TxSeq, move: Location, delays: tuple[int, ...]) -> Mutation:
    """``case`` with the block delays of a clock move (``Mutator._clock_moves``).

    Every move lengthens at least one delay, so the case always changes. Its location is
    the delay of the earliest transaction changed, the one prediction may go on tuning.
    """
    _, at, kind = move
    changed = list(case)
    for offset, delay in enumerate(delays):
        changed[at - offset] = replace(case[at - offset], **{kind: delay})
    return Mutation(tuple(changed), (kind, at - len(delays) + 1), "input-to-state")


class _LeafIndex:
    """A transaction's parameters for input-to-state, by the word a comparison sees.

    ``matching(seen)`` gives, in their order, the leaves where ``_replacements`` may find
    the operand ``seen``: the integers, addresses and ``bytesN`` equal to it as a word (a
    dict lookup instead of a test per leaf: the follow-up of a sequence mutation asks for
    32 comparisons in every transaction) and every ``bytes``/``string``, which are searched.
    """

    __slots__ = ("by_word", "searched", "value")

    def __init__(self, spec: FunctionSpec, tx: Tx) -> None:
        self.value = tx.value if spec.payable else None
        # word -> [(position, path, type, value)]; bytes and strings, searched every time.
        self.by_word: dict[int, list[tuple[int, Path, VType, Any]]] = {}
        self.searched: list[tuple[int, Path, VType, Any]] = []
        for position, (path, vt) in enumerate(args_leaves(spec.types, tx.args)):
            leaf = get_at(tx.args, path)
            kind = vt.kind
            if kind in ("uint", "address", "int"):
                word = leaf % _WORD  # an int's two's complement, as the EVM compares it
            elif kind == "fbytes":
                word = int.from_bytes(leaf, "big") << (256 - vt.bits)  # left-aligned
            elif kind in ("bytes", "string"):
                self.searched.append((position, path, vt, leaf))
                continue
            else:
                continue
            self.by_word.setdefault(word, []).append((position, path, vt, leaf))

    def matching(self, seen: int) -> list[tuple[Path, VType, Any]]:
        """The leaves that may hold ``seen``, in the order of the parameters."""
        found = self.by_word.get(seen, ())
        if self.searched:
            found = sorted([*found, *self.searched], key=lambda leaf: leaf[0])
        return [(path, vt, leaf) for _, path, vt, leaf in found]


def _replacements(index: int, path: Path, vt: VType, value: Any, seen: int, wanted: int,
                  rng: random.Random) -> list[tuple[Location, Any]]:
    """Where the operand ``seen`` occurs in one leaf value, and the value with ``wanted``."""
    kind = vt.kind
    location: Location = ("arg", index, path)
    if kind in ("uint", "address"):
        if value == seen and wanted < (1 << vt.bits):
            return [(location, wanted)]
        return []
    if kind == "int":
        signed = seen - _WORD if seen >> 255 else seen
        target = wanted - _WORD if wanted >> 255 else wanted
        half = 1 << (vt.bits - 1)
        if value == signed and -half <= target < half:
            return [(location, target)]
        return []
    if kind == "fbytes":
        shift = 256 - vt.bits  # bytesN values are compared left-aligned
        if int.from_bytes(value, "big") << shift == seen and not wanted & ((1 << shift) - 1):
            return [(location, (wanted >> shift).to_bytes(vt.bits // 8, "big"))]
        return []
    if kind not in ("bytes", "string"):
        return []
    data = value if kind == "bytes" else value.encode("latin-1", "replace")
    seen_word, wanted_word = seen.to_bytes(32, "big"), wanted.to_bytes(32, "big")
    out: list[tuple[Location, Any]] = []
    # A byte slice compared as an integer is right-aligned (uint8(b[i])) or left-aligned
    # (bytes1 b[i], bytes32 slices); try both.
    right, left = seen_word.lstrip(b"\0"), seen_word.rstrip(b"\0")
    for pattern, replacement, spill in (
            (right, wanted_word[32 - len(right):], wanted_word[:32 - len(right)]),
            (left, wanted_word[:len(left)], wanted_word[len(left):])):
        if not pattern or spill.strip(b"\0"):
            continue  # nothing to look for, or the other operand does not fit in place
        at = data.find(pattern)
        if at < 0:
            continue
        hits = [at]
        while len(hits) < 8 and (at := data.find(pattern, at + 1)) >= 0:
            hits.append(at)
        at = hits[rng.randrange(len(hits))]
        changed = data[:at] + replacement + data[at + len(pattern):]
        new = changed if kind == "bytes" else changed.decode("latin-1")
        where: Location = ("arg", index, path, at) if len(pattern) == 1 else location
        out.append((where, new))
    return out
