"""What a symbolic run records: branch records, concretisations, transactions, bindings.

The shadow tracker (``secant.symbolic.shadow``) appends to the containers of a
:class:`SymbolicRun` while a test case runs; the solver (``secant.symbolic.solve``) reads
them. The containers are plain lists and dicts owned by the trace recorder, so the prefix
cache checkpoints and restores them with every other recording.

Variables (z3 bit-vectors of 256 bits, by name):

* ``tx{i}_w{k}``: word ``k`` of transaction ``i``'s calldata, bytes ``4 + 32k`` to
  ``4 + 32k + 31`` (only words wholly inside the calldata);
* ``tx{i}_value``: the ether the transaction sends; ``tx{i}_sender``: its sender;
* ``tx{i}_time``, ``tx{i}_blocks``: how much *more* than in the run transaction ``i``
  advances the clock and the block number (0 in the run). A transaction's block is the
  sum of the deltas of every transaction up to it, so ``TIMESTAMP`` in transaction ``i``
  is the run's timestamp plus ``tx0_time + ... + tx{i}_time``;
* ``s_{address}_{slot}`` (hex): the value a slot held before the case, read by a
  transaction before any transaction of the case wrote it.

``SymbolicRun.bindings`` maps each variable that was created to its value in the run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import z3

from secant.symbolic.numerals import bv_const

__all__ = ["SymBranch", "SymPin", "SymTx", "SymbolicRun", "variables"]


def variables(term: Any) -> frozenset[str]:
    """The names of the symbolic variables ``term`` depends on."""
    found: set[str] = set()
    seen: set[int] = set()
    todo = [term]
    while todo:
        node = todo.pop()
        ident = node.get_id()
        if ident in seen:
            continue
        seen.add(ident)
        if z3.is_const(node):
            if node.decl().kind() == z3.Z3_OP_UNINTERPRETED:
                found.add(node.decl().name())
            continue
        todo.extend(node.children())
    return frozenset(found)


@dataclass(frozen=True, eq=False)
class SymBranch:
    """A JUMPI whose condition is symbolic (equal records: equal fields, same condition).

    ``condition`` is the z3 Bool "the condition word is non-zero"; ``taken`` the side the
    run went (True: it jumped). ``branch`` is the position of the same JUMPI in the run's
    ``branches`` (the ``BranchEvent`` list of the ``RunResult``), ``seq`` the order among
    all records and pins of the case. ``exact`` is False when some value was concretised
    earlier in the case (``SymPin``): then the condition may hold only for inputs that
    concretise the same way, and an unsat answer about it proves nothing.
    """

    tx: int
    depth: int
    address: int
    code_hash: bytes
    pc: int
    taken: bool
    condition: Any
    branch: int
    seq: int
    exact: bool

    @property
    def edge(self) -> tuple[bytes, int, bool]:
        """The coverage edge ``(code_hash, pc, side)`` the run took."""
        return (self.code_hash, self.pc, self.taken)

    @property
    def other_edge(self) -> tuple[bytes, int, bool]:
        """The edge a flip of this branch aims at."""
        return (self.code_hash, self.pc, not self.taken)

    @property
    def path_condition(self) -> Any:
        """The condition as the run satisfied it (negated when the branch fell through)."""
        return self.condition if self.taken else z3.Not(self.condition)

    @cached_property
    def variables(self) -> frozenset[str]:
        """The variables the condition depends on (computed once)."""
        return variables(self.condition)

    def _key(self) -> tuple[Any, ...]:
        return (self.tx, self.depth, self.address, self.code_hash, self.pc, self.taken,
                self.branch, self.seq, self.exact)

    def __eq__(self, other: object) -> bool:
        # Structural: z3's ``==`` builds a term, ``eq`` compares two.
        return (isinstance(other, SymBranch) and self._key() == other._key()
                and bool(self.condition.eq(other.condition)))

    def __hash__(self) -> int:
        return hash((self._key(), self.condition.hash()))


@dataclass(frozen=True, eq=False)
class SymPin:
    """A symbolic value used as a concrete one (a *concretisation*).

    ``term`` (of ``term.size()`` bits) had the concrete ``value`` where the run needed a
    concrete one: a memory offset or size, a storage key, a hashed or called-with byte
    range, a jump target, an exponent. ``reason`` says which. The solver keeps ``term ==
    value`` for every pin before the branch it flips (unless asked not to), so a solution
    concretises the same way and follows the same path.
    """

    tx: int
    depth: int
    address: int
    pc: int
    opcode: int
    term: Any
    value: int
    seq: int
    reason: str

    @property
    def constraint(self) -> Any:
        """``term == value`` as a z3 Bool."""
        return self.term == bv_const(self.value, self.term.size())

    @cached_property
    def variables(self) -> frozenset[str]:
        """The variables the pinned term depends on."""
        return variables(self.term)

    def _key(self) -> tuple[Any, ...]:
        return (self.tx, self.depth, self.address, self.pc, self.opcode, self.value,
                self.seq, self.reason)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, SymPin) and self._key() == other._key()
                and bool(self.term.eq(other.term)))

    def __hash__(self) -> int:
        return hash((self._key(), self.term.hash()))


@dataclass(frozen=True)
class SymTx:
    """The message a transaction of the case sent, as the EVM saw it at depth 0.

    ``sender`` is the depth-0 caller: the case's sender, or the relaying account when the
    case's sender is an attacker contract (the solver then leaves the transaction as it
    is). ``balance`` is what the sender could send at the start of the message (its balance
    plus the value it sent), known once ``CALLVALUE`` was read, else None.
    """

    index: int
    sender: int
    to: int
    value: int
    data: bytes
    balance: int | None = None


@dataclass
class SymbolicRun:
    """The ``symbolic`` recording of one test case (the recorder's containers).

    ``branches`` and ``pins`` in execution order; ``txs`` by transaction index (a
    transaction that ran no code has none); ``bindings`` the run's value of every variable
    created; ``storage`` the shadow storage after the case: ``(address, slot)`` -> the
    term written (None: a concrete value) for every slot the case wrote.
    """

    branches: list[SymBranch] = field(default_factory=list)
    pins: list[SymPin] = field(default_factory=list)
    txs: dict[int, SymTx] = field(default_factory=dict)
    bindings: dict[str, int] = field(default_factory=dict)
    storage: dict[tuple[int, int], Any] = field(default_factory=dict)

    def open_sides(self, covered: Iterable[tuple[bytes, int, bool]],
                   tx: int | None = None) -> list[int]:
        """Indices of the branches whose other side is not in ``covered`` (edges).

        ``tx`` restricts them to one transaction. Each edge is named once, at its first
        record: flipping a later record of the same edge needs a longer path condition.
        """
        done = set(covered)
        found: list[int] = []
        for index, record in enumerate(self.branches):
            if tx is not None and record.tx != tx:
                continue
            other = record.other_edge
            if other in done:
                continue
            done.add(other)
            found.append(index)
        return found

    def find(self, code_hash: bytes, pc: int, taken: bool | None = None) -> list[int]:
        """Indices of the records of the JUMPI at ``pc`` of ``code_hash`` (that went ``taken``)."""
        return [index for index, record in enumerate(self.branches)
                if record.pc == pc and record.code_hash == code_hash
                and (taken is None or record.taken == taken)]

    def first_copy(self, index: int, same_tx: bool = False) -> int:
        """The earliest record before ``index`` with the very same condition, or ``index``.

        solc tests a false ``a`` of ``a && b && c`` again at every conjunct's JUMPI: the
        earliest copy decided the path, so it is the one to flip (flipping a later copy
        is unsat). ``same_tx``: only copies in record ``index``'s transaction count.
        """
        record = self.branches[index]
        branches = self.branches
        return next((j for j in range(index)
                     if (not same_tx or branches[j].tx == record.tx)
                     and branches[j].condition.eq(record.condition)), index)

    def pins_before(self, seq: int) -> list[SymPin]:
        """The concretisations made before the record numbered ``seq``."""
        return [pin for pin in self.pins if pin.seq < seq]
