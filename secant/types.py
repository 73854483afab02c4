"""Leaf value types shared by every layer: transactions, test cases, runs, findings.

A test case is a :class:`TxSeq`, a tuple of :class:`Tx` run in order from the chain's
post-deployment snapshot. Arguments use the fuzzer's value representation (see
``secant.targets.calldata``): ints for integers and addresses, bools, bytes, str, and tuples
for arrays and structs, so a whole test case is immutable and hashable.

A *location* names one parameter of a test case, the unit of mutation and of prediction:

* ``("arg", tx, path)``: an argument leaf of transaction ``tx``; ``path`` indexes into the
  argument tuple and then into nested arrays/tuples;
* ``("arg", tx, path, byte)``: one byte of a bytes or string argument;
* ``("value", tx)``, ``("sender", tx)``, ``("blocks", tx)``, ``("time", tx)``;
* ``("slot", tx, slot)``: a storage value the transaction reads (Harvey's aggressive mode).

A :class:`RunResult` is what any target gives back for one run of a test case: the fields
the engine reads (path id, coverage, comparisons, state accesses, outcomes). A target
extends it with facts of its own (the contract target's ``ContractRun`` adds panics,
calls, logs, ...), which only the oracles that know that target read.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, MutableSet
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

Location = tuple[Any, ...]
"""One parameter of a test case (see the module docstring)."""


def callee_key(address: int, slot: int) -> int:
    """The ``Tx.storage`` key of ``slot`` of ``address``, a contract the called one calls."""
    return (address << 256) | slot


def storage_slot(key: int) -> int:
    """The slot a ``Tx.storage`` key names (whichever contract's it is)."""
    return key & ((1 << 256) - 1)


@dataclass(frozen=True, slots=True)
class Tx:
    """One transaction of a test case.

    ``function`` is the ABI signature (``transfer(address,uint256)``) or ``fallback`` /
    ``receive``; ``to`` is the called contract (None: the campaign's main contract).
    ``blocks``/``time`` advance the block number and timestamp before the transaction runs.
    ``storage`` overrides the values that SLOADs return (key, value), used by Harvey's
    aggressive mode only: a key below 2**256 is a slot of the called contract, a larger one
    a slot of a contract it calls (``callee_key``).
    """

    function: str
    args: tuple[Any, ...]
    sender: int
    value: int = 0
    blocks: int = 0
    time: int = 0
    to: int | None = None
    storage: tuple[tuple[int, int], ...] = ()
    # The hash, computed once: prefix-cache keys and pools hash the same Tx many times.
    _hash: int | None = field(default=None, init=False, repr=False, compare=False)

    def __hash__(self) -> int:
        cached = self._hash
        if cached is None:
            cached = hash((self.function, self.args, self.sender, self.value, self.blocks,
                           self.time, self.to, self.storage))
            object.__setattr__(self, "_hash", cached)
        return cached

    def __reduce__(self) -> tuple[type[Tx], tuple[Any, ...]]:
        # Without the cached hash: string hashes differ between processes (workers).
        return (Tx, (self.function, self.args, self.sender, self.value, self.blocks,
                     self.time, self.to, self.storage))

    def with_args(self, args: tuple[Any, ...]) -> Tx:
        """A copy with other arguments (made directly: ``replace`` costs twice as much)."""
        return Tx(self.function, args, self.sender, self.value, self.blocks, self.time,
                  self.to, self.storage)


TxSeq = tuple[Tx, ...]
"""A test case: transactions run in order from the post-deployment state."""


@dataclass(frozen=True)
class TxOutcome:
    """How one transaction of a test case ended."""

    success: bool
    reverted: bool
    output: bytes
    gas_used: int
    error: str | None = None
    invalid: bool = False  # rejected before execution (e.g. value above the balance)


BranchEvent = tuple[bytes, int, bool, str, int, int]
"""(code id, pc, taken, relation, lhs, rhs) of one executed conditional branch: the branch
went ``taken`` because ``lhs <relation> rhs`` held or not (relations as in
``secant.evm.inspector``)."""

WriteEvent = tuple[bytes, int, int]
"""(code id, pc, key) of one write to persistent state (an SSTORE's slot)."""

ReadEvent = tuple[int, int, int, int]
"""(step, owner, key, value) of one read of persistent state (an SLOAD)."""


Block = tuple[bytes, int]
"""(code id, block start) of one covered basic block."""


class BlockSet(MutableSet[Block]):
    """A set of blocks kept as one set of block starts per code id.

    A set of ``(code id, pc)`` pairs costs a tuple and a tuple hash per element whenever a
    run's blocks are gathered or compared with the campaign's coverage, a few hundred
    times per run; sets of ints per code fill, copy and compare at C speed. It behaves as a
    set of pairs otherwise (membership, iteration, ``<=``, ``|=``, equality with any set).
    ``by_code`` is the storage: code id -> block starts (its sets are the BlockSet's own).
    """

    __slots__ = ("by_code",)

    def __init__(self, items: Iterable[Block] = (),
                 by_code: dict[bytes, set[int]] | None = None) -> None:
        self.by_code: dict[bytes, set[int]] = {} if by_code is None else by_code
        for item in items:
            self.add(item)

    def __contains__(self, item: object) -> bool:
        if not isinstance(item, tuple) or len(item) != 2:
            return False
        pcs = self.by_code.get(item[0])
        return pcs is not None and item[1] in pcs

    def __iter__(self) -> Iterator[Block]:
        for code, pcs in self.by_code.items():
            for pc in pcs:
                yield code, pc

    def __len__(self) -> int:
        return sum(map(len, self.by_code.values()))

    def __repr__(self) -> str:
        return f"BlockSet({sorted(self)!r})"

    def add(self, value: Block) -> None:
        """Add one block."""
        self.starts(value[0]).add(value[1])

    def discard(self, value: Block) -> None:
        """Remove one block if present."""
        pcs = self.by_code.get(value[0])
        if pcs is not None:
            pcs.discard(value[1])

    def starts(self, code: bytes) -> set[int]:
        """The (live) set of block starts of ``code``, created empty when there is none."""
        pcs = self.by_code.get(code)
        if pcs is None:
            pcs = self.by_code[code] = set()
        return pcs

    def copy(self) -> BlockSet:
        """An independent copy."""
        return BlockSet(by_code={code: set(pcs) for code, pcs in self.by_code.items()})

    def frozen(self) -> tuple[tuple[bytes, frozenset[int]], ...]:
        """The contents as immutable per-code sets (``BlockSet.thawed`` rebuilds them)."""
        return tuple((code, frozenset(pcs)) for code, pcs in self.by_code.items() if pcs)

    @staticmethod
    def thawed(frozen: Iterable[tuple[bytes, frozenset[int]]]) -> BlockSet:
        """A BlockSet of what ``frozen`` gave."""
        return BlockSet(by_code={code: set(pcs) for code, pcs in frozen})

    def __le__(self, other: AbstractSet[Any]) -> bool:
        if isinstance(other, BlockSet):
            theirs = other.by_code
            empty: frozenset[int] = frozenset()
            return all(pcs <= theirs.get(code, empty) for code, pcs in self.by_code.items())
        return super().__le__(other)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, BlockSet):
            return self <= other and other <= self
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]  # mutable, as a set

    def __ior__(self, other: AbstractSet[Any]) -> BlockSet:  # type: ignore[override,misc]
        if isinstance(other, BlockSet):
            for code, pcs in other.by_code.items():
                self.starts(code).update(pcs)
            return self
        for item in other:
            self.add(item)
        return self


@dataclass
class RunResult:
    """What one run of a test case gave back, for any target.

    Coverage marks are ``blocks`` (code id, block start) and ``edges`` (code id, pc, side);
    ``branches`` lists every conditional branch in order with its comparison, and
    ``branch_marks[i]`` is where step ``i`` of the case starts in it: the engine's cost
    metrics are the distances of the sides not taken. ``writes``/``write_marks`` are the
    writes to persistent state likewise (Harvey's arbitrary-write cost and the sequences'
    data flow), ``reads`` the reads of the last step, as ``Tx.storage`` keys (aggressive
    mode), and
    ``state_hash`` a digest of the state the case left (0: as it started). A target
    without persistent state leaves those four empty. ``path_id`` names the path; its
    scope (last step or all steps) is the target's.
    """

    case: TxSeq
    outcomes: list[TxOutcome]
    path_id: int
    blocks: AbstractSet[Block] = field(default_factory=BlockSet)
    edges: set[tuple[bytes, int, bool]] = field(default_factory=set)
    branches: list[BranchEvent] = field(default_factory=list)
    branch_marks: list[int] = field(default_factory=list)
    writes: list[WriteEvent] = field(default_factory=list)
    write_marks: list[int] = field(default_factory=list)
    reads: list[ReadEvent] = field(default_factory=list)
    state_hash: int = 0
    stored: tuple[int, ...] = field(default=(), compare=False)
    """The values the case left in the slots it changed (the state hash's digest input)."""
    steps_run: int | None = field(default=None, compare=False)
    """Steps the target actually ran (a prefix cache restored the others; None: all). A
    measure of the run's cost, not of what it did: results that differ in it alone are
    equal."""
    clock: tuple[int, int] = field(default=(0, 0), compare=False)
    """(block number, timestamp) the last step began at; (0, 0) for a target without
    blocks. Input-to-state reads a comparison operand equal to one of them as the clock,
    which the transactions' block and time deltas move."""

    def tx_branches(self, index: int) -> list[BranchEvent]:
        """The branches of step ``index``."""
        marks = self.branch_marks
        end = marks[index + 1] if index + 1 < len(marks) else len(self.branches)
        return self.branches[marks[index]:end]

    @property
    def last_outcome(self) -> TxOutcome:
        """How the last step ended."""
        return self.outcomes[-1]


@dataclass
class Finding:
    """A bug found by an oracle, with what it takes to reproduce it.

    ``case`` is the test case that shows it (the engine sets the run's case when the oracle
    leaves it None; a property oracle names the prefix after which a property failed).
    ``oracle`` names the detector that reported it; ``key`` deduplicates findings and is
    the oracle's to choose (it starts with the oracle's name; for assertions it then names
    the failing check's contract, site and panic code). ``sequence`` is the test case as
    JSON-ready dicts (the campaign fills it, naming senders and contracts);
    ``execs_to_find`` and ``time_to_find_s`` say when the campaign first saw it.
    ``severity`` (``high``, ``medium``, ``low``: how bad the bug is when real) and
    ``confidence`` (``certain``, ``likely``, ``possible``: how sure the run makes it) rate
    it; an oracle sets the confidence of each finding, the engine fills in the oracle's
    ratings where it left them out, and a finding of an unrated oracle has neither.

    Once the campaign has shrunk the finding (``secant.engine.shrink``), ``case``,
    ``sequence`` and ``detail`` describe the shrunk case, ``original_case``,
    ``original_sequence`` and ``original_detail`` the one found, and ``shrink`` holds the
    shrinker's figures (None: not shrunk).
    """

    kind: str
    swc: str
    contract: str
    function: str
    pc: int
    source: str | None
    detail: str
    key: tuple[Any, ...]
    case: TxSeq | None = None
    oracle: str = ""
    sequence: list[dict[str, Any]] = field(default_factory=list)
    execs_to_find: int = 0
    time_to_find_s: float = 0.0
    original_case: TxSeq | None = None
    original_sequence: list[dict[str, Any]] = field(default_factory=list)
    original_detail: str = ""
    shrink: dict[str, Any] | None = None
    severity: str | None = None
    confidence: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The finding as ``summary.json`` lists it (with what shrinking did, once shrunk)."""
        data: dict[str, Any] = {
            "oracle": self.oracle,
            "kind": self.kind,
            "swc": self.swc,
            "contract": self.contract,
            "function": self.function,
            "pc": self.pc,
            "source": self.source,
            "sequence": self.sequence,
            "execs_to_find": self.execs_to_find,
            "time_to_find_s": round(self.time_to_find_s, 3),
            "detail": self.detail,
        }
        for name, rating in (("severity", self.severity), ("confidence", self.confidence)):
            if rating is not None:
                data[name] = rating
        if self.shrink is not None:
            data["original_sequence"] = self.original_sequence
            if self.original_detail and self.original_detail != self.detail:
                data["original_detail"] = self.original_detail
            data["shrink"] = self.shrink
        return data


def finding_label(kind: object, severity: object = None, confidence: object = None) -> str:
    """``[kind]``, or ``[kind, severity, confidence]`` for a rated finding (what is known)."""
    return "[" + ", ".join(str(part) for part in (kind, severity, confidence) if part) + "]"


def jsonable(value: Any) -> Any:
    """A fuzzer value as JSON: bytes as 0x-hex, tuples as lists, the rest as is."""
    if isinstance(value, bytes):
        return "0x" + value.hex()
    if isinstance(value, tuple | list):
        return [jsonable(v) for v in value]
    return value


def case_to_json(case: TxSeq, names: dict[str, int] | None = None) -> list[dict[str, Any]]:
    """A test case as JSON-ready dicts.

    Senders and targets are named when ``names`` (name -> address) knows them.
    """
    by_address = {address: name for name, address in (names or {}).items()}

    def who(address: int) -> str:
        return by_address.get(address, f"0x{address:040x}")

    out = []
    for tx in case:
        entry: dict[str, Any] = {"function": tx.function, "args": jsonable(tx.args),
                                 "sender": who(tx.sender)}
        if tx.value:
            entry["value"] = tx.value
        if tx.blocks or tx.time:
            entry["blocks"] = tx.blocks
            entry["time"] = tx.time
        if tx.to is not None:
            entry["to"] = who(tx.to)
        if tx.storage:
            entry["storage"] = [[hex(slot), hex(value)] for slot, value in tx.storage]
        out.append(entry)
    return out
