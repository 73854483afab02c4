"""The fuzzer's one inspector: everything the engine and the oracles read from a run.

One flat inspector (rather than a fan-out of observers) because it hears of every basic
block and every JUMPI of every execution. It records those without a Python call each (the
EVM's *recorded* tables, ``secant.evm.inspector``): every JUMPI is appended to ``branches``
by the block code itself, every frame keeps the starts of the blocks it ran in its
``trail``, the recorder adds a frame's trail to the block starts of its code when the
frame ends (``blocks`` is a ``BlockSet``: one set of ints per code, no tuple per block),
and ``settle`` turns the branches logged since it last ran into ``edges`` once per run.
With a recording that steps every instruction the EVM calls the hooks instead, which fill
the same containers.

What it always records for a whole test case (the engine reads it):

* ``blocks``/``edges``: instruction coverage (basic-block starts) and branch edges per code;
* ``branches``: every JUMPI in order as ``(code_hash, pc, taken, relation, lhs, rhs)`` with
  ``branch_marks[i]`` the index where transaction ``i`` starts (cost vectors, path ids);
* ``sstores``: ``(code_hash, pc, slot)`` with ``sstore_marks`` likewise (arbitrary-write
  costs), ``sloads``: ``(tx, address, key, value)`` of the last transaction's reads (its
  called contract's by slot, those of the contracts it calls by ``types.callee_key``:
  Harvey's aggressive mode fuzzes them), and
  ``written``: every ``(address, slot)`` written, with its value before the case (the
  state hash of the sequence pools);

What it records on demand, by *recording* name (``RECORDINGS``; a campaign turns on those
its oracles need, so nothing is paid for a recording nobody reads):

* ``panics``: Solidity panics and INVALID halts with the block trail of their frame, so the
  assertion oracle can find the check in user code that jumped into the panic routine;
* ``calls``: every message (call or creation) below the transaction's own, with its kind,
  sender, target, value, depth and how it ended (``CallEvent``);
* ``logs``: every event emitted (``LogEvent``);
* ``accounts``: contracts created and accounts that ran SELFDESTRUCT (``SelfdestructEvent``);
* ``balances``: the ether balance of every known account after the case minus before it
  (the target computes it from the state at the end of a run);
* ``transitions``: block-to-block transitions (``TransitionRecorder``, for CFG completion);
* ``storage``: every message's start and end and every storage read and write, in the order
  they ran (``AccessEvent``), so an oracle can tell which frame read or wrote a slot while
  which other frame of the same contract waited on a call (reentrancy);
* ``dataflow``: taint labels (transaction input, block values, senders, call results) through
  stack, memory and storage, with the labelled JUMPIs, the state changes and calls and the
  JUMPIs guarding them, and what each caller did with a call's success flag
  (``secant.targets.taint``); the storage labels start from those the deployment left
  (``flow_base``). It steps every instruction, so it costs far more than the others
  (docs/oracles.md), and the stepped tables report branch comparisons less exactly than
  the traced ones (an ISZERO chain hides its comparison), which changes Harvey's
  distances: the data-flow oracles replay candidate runs with it instead of asking a
  campaign for it. ``dataflow_of`` gives an oracle the records of a run.
* ``symbolic``: concolic shadow execution (``secant.symbolic``): z3 terms over the
  transactions' calldata words, values, senders, block deltas and the storage they read,
  through stack, memory and storage, with the path condition at every JUMPI whose condition
  is symbolic (``SymbolicRun``). It steps every instruction and builds terms for symbolic
  data, so it is for replays that will be solved (``secant.symbolic.solve``), not for a
  campaign's every run. ``symbolic_of`` gives the records of a run.
* ``arithmetic``: arithmetic instructions the overflow oracle watches whose result wrapped
  at its source type, or may have (an operand not known), judged at the entry of their
  basic block from the live stack (``secant.targets.wraps``); ``wraps_of`` gives them. It
  costs a dict lookup per block, and a short evaluation per block holding such a site.

``checkpoint``/``restore`` save what a recorder holds after some transactions and bring it
back later, so the prefix cache can skip re-running a test case's first transactions.
``mark``/``rewind`` do the same for the run in progress, cheaply: a mark holds the lengths of
the containers at a transaction boundary, and rewinding starts a new case from that boundary
of the last one (the contract target rewinds the chain's journal beside it). The
``symbolic`` recording keeps everything that outlives a transaction (shadow storage, the
variables' bindings, records) in the recorder's containers too, so a case resumed from a
cached prefix has the same symbolic records as one run from the start.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice, repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple

from secant.abi import PANIC_SELECTOR
from secant.evm.inspector import Inspector
from secant.evm.opcodes import CREATE, CREATE2, HALTS, INVALID, JUMP, JUMPI, immediate_size
from secant.targets.taint import (
    Dataflow,
    DataflowTracker,
    FlowBranch,
    FlowCall,
    FlowFrame,
    FlowSink,
    FlowWrap,
)
from secant.targets.wraps import HOOKS, PLANS
from secant.types import BlockSet, BranchEvent, RunResult

if TYPE_CHECKING:
    from secant.evm.frame import Frame
    from secant.symbolic.records import SymbolicRun
    from secant.symbolic.shadow import ShadowTracker

RECORDINGS = {
    "panics": "Solidity panics and INVALID halts, with the block trail of their frame",
    "calls": "every call and creation below the transaction, with value, depth and outcome",
    "logs": "every event emitted",
    "accounts": "contracts created and accounts that self-destructed",
    "balances": "each known account's ether balance after the case minus before it",
    "transitions": "block-to-block transitions (directed fuzzing completes its CFG)",
    "storage": "every message's start and end and every storage read and write, in order",
    "dataflow": "taint of input, block values, senders and call results up to branches, "
                "state changes and calls (steps every instruction)",
    "arithmetic": "watched arithmetic that wrapped at its source type, seen at block entry",
    "symbolic": "z3 terms of calldata, value, sender, block deltas and storage read, and "
                "the path condition at symbolic JUMPIs (steps every instruction)",
}
"""The recordings a campaign can turn on, by name, with what each holds."""

_BLOCK_ENDS = HALTS | {JUMP, JUMPI}
_SIDE = itemgetter(0, 1, 2)  # a branch event's edge: (code hash, pc, taken)
# Attributes that are not containers of the case (``checkpoint`` leaves them out).
_NOT_RECORDED = frozenset({"overrides", "recordings", "branch_log", "block_hooks",
                           "flow_base"})

_TRAIL_KEEP = 256  # blocks of a panicking frame kept for the oracle (the site is recent)


@dataclass(frozen=True)
class PanicEvent:
    """A frame that ended in a Solidity panic (``code`` set) or at an INVALID (``code`` None).

    ``trail`` holds the last basic-block starts the frame executed, oldest first.
    """

    tx: int
    address: int
    code_hash: bytes
    code: bytes
    depth: int
    panic_code: int | None
    trail: tuple[int, ...]
    output: bytes


@dataclass(frozen=True, slots=True)
class CallEvent:
    """One message below a transaction's own: a call, a creation, or a precompile call.

    ``kind`` is the opcode (CALL, CALLCODE, DELEGATECALL, STATICCALL, CREATE, CREATE2);
    ``target`` the account whose context runs (the created address for a creation);
    ``code_address`` the account whose code runs (they differ for DELEGATECALL/CALLCODE).
    ``gas`` is the gas the message was given (a CALL's stipend included: exactly 2300 for
    ``send``/``transfer``).
    """

    tx: int
    depth: int
    kind: int
    sender: int
    target: int
    code_address: int
    value: int
    data: bytes
    success: bool
    reverted: bool
    output: bytes
    gas: int = 0


START, END, LOAD, STORE = range(4)
"""The kinds of ``AccessEvent``."""


class AccessEvent(NamedTuple):
    """One entry of the ``storage`` recording, in execution order.

    ``kind`` is ``START``/``END`` of a message (``address``: whose storage it runs on;
    ``slot``: for ``END``, 1 when it succeeded, which the reentrancy and gas-griefing
    oracles read) or ``LOAD``/``STORE`` of ``slot`` by the
    frame at ``depth`` on ``address``'s storage, at ``pc``.
    """

    tx: int
    kind: int
    depth: int
    address: int
    slot: int
    pc: int
    value: int


@dataclass(frozen=True, slots=True)
class LogEvent:
    """One event emitted: the emitting account, the LOG instruction's pc, topics, data."""

    tx: int
    address: int
    pc: int
    topics: tuple[int, ...]
    data: bytes


@dataclass(frozen=True, slots=True)
class SelfdestructEvent:
    """An account ran SELFDESTRUCT, sending ``balance`` to ``beneficiary``."""

    tx: int
    address: int
    beneficiary: int
    balance: int


_REWOUND_LISTS = ("branches", "branch_marks", "sstores", "sstore_marks", "sloads", "panics",
                  "calls", "logs", "created", "selfdestructs", "accesses", "wrapped")
"""The per-case lists a mark measures (the recordings that step every instruction, whose
trackers hold state of their own, are not rewound)."""


class RecorderMark(NamedTuple):
    """Where the recorder stood at a transaction boundary of the run (``TraceRecorder.mark``).

    ``lengths`` are those of ``_REWOUND_LISTS`` in order, ``written`` the number of slots
    written, ``blocks`` (per code) and ``edges`` what was covered so far: the recorder's
    own sets, which it copies before it changes them again (``_shared``).
    """

    tx: int
    lengths: tuple[int, ...]
    written: int
    blocks: tuple[tuple[bytes, AbstractSet[int]], ...]
    edges: AbstractSet[tuple[bytes, int, bool]]


@dataclass(frozen=True, slots=True)
class RecorderCheckpoint:
    """What a recorder accumulated over some transactions (see ``TraceRecorder.checkpoint``).

    Every public list and set attribute of the recorder, by name, as an immutable copy
    (``blocks``, ``branches``, ``branch_marks``, ..., and a subclass's own containers such
    as ``TransitionRecorder.transitions``): restoring hands out fresh containers every
    time, so results built from one restore never share a list with another.
    """

    tx: int
    lists: tuple[tuple[str, tuple[Any, ...]], ...]
    sets: tuple[tuple[str, frozenset[Any]], ...]
    dicts: tuple[tuple[str, tuple[tuple[Any, Any], ...]], ...] = ()
    blocks: tuple[tuple[bytes, frozenset[int]], ...] = ()

    def container(self, name: str) -> tuple[Any, ...] | frozenset[Any]:
        """The saved contents of the recorder's container ``name`` (``KeyError`` if none).

        A dict container comes back as its ``(key, value)`` items.
        """
        for key, values in self.lists:
            if key == name:
                return values
        for key, frozen in self.sets:
            if key == name:
                return frozen
        for key, items in self.dicts:
            if key == name:
                return items
        if name == "blocks":
            return frozenset(BlockSet.thawed(self.blocks))
        raise KeyError(name)


class TraceRecorder(Inspector):
    """Coverage, comparisons and storage accesses of a test case, and the recordings asked."""

    def __init__(self, recordings: Iterable[str] = ("panics",)) -> None:
        wanted = frozenset(recordings)
        unknown = wanted - RECORDINGS.keys()
        if unknown:
            raise ValueError(f"unknown recording(s) {', '.join(sorted(unknown))}; "
                             f"choose from {', '.join(RECORDINGS)}")
        self.recordings = wanted
        self._record_panics = "panics" in wanted
        self._record_calls = "calls" in wanted
        self._record_logs = "logs" in wanted
        self._record_accounts = "accounts" in wanted
        self._record_storage = "storage" in wanted
        self.overrides: dict[int, int] = {}
        self.override_address: int | None = None
        # Contracts whose reads are never watched (the attacker contracts: their storage is
        # secant's own bookkeeping, not the system's state, ``on_sload``).
        self.unwatched: frozenset[int] = frozenset()
        # The dataflow recording: a tracker fed every instruction (the stepped tables call
        # ``on_step``, routed straight to the tracker); None while a side call runs.
        self._taint = DataflowTracker() if "dataflow" in wanted else None
        self._tracking = self._taint
        # The labels of the slots the deployment wrote, (address, slot) -> labels: every
        # case's storage labels start from them (``begin_tx``; the contract target sets
        # them, ``secant.targets.contract.deployment_flow``).
        self.flow_base: Mapping[tuple[int, int], int] = {}
        if self._taint is not None:
            self.wants_steps = True
            self.on_step = self._taint.step  # type: ignore[method-assign]
        # The symbolic recording: the shadow tracker, likewise (z3 is imported only here,
        # so a recorder without the recording never loads it).
        self._symbolic: ShadowTracker | None = None
        if "symbolic" in wanted:
            from secant.symbolic.shadow import ShadowTracker

            self._symbolic = ShadowTracker()
            self.wants_steps = True
            if self._taint is None:
                self.on_step = self._symbolic.step  # type: ignore[method-assign]
            else:
                taint_step, symbolic_step = self._taint.step, self._symbolic.step

                def both(frame: Frame, pc: int, opcode: int, stack: list[int]) -> None:
                    taint_step(frame, pc, opcode, stack)
                    symbolic_step(frame, pc, opcode, stack)

                self.on_step = both  # type: ignore[method-assign]
        self._shadowing = self._symbolic
        if "arithmetic" in wanted:  # blocks of watched arithmetic, followed from their entry
            self.block_hooks = HOOKS
        self.reset()

    def reset(self) -> None:
        """Start a new test case with fresh containers (the old ones belong to a result)."""
        self.blocks = BlockSet()
        self.edges: set[tuple[bytes, int, bool]] = set()
        self.branches: list[BranchEvent] = []
        self.branch_log = self.branches
        self._folded = 0  # branches whose edges are in ``edges`` already
        # Copy on write: the sets a mark holds (``edges``, and the block starts of these
        # codes) are copied before they change, so a mark costs no copy at all.
        self._edges_shared = False
        self._shared: set[bytes] = set()
        self.branch_marks: list[int] = []
        self.sstores: list[tuple[bytes, int, int]] = []
        self.sstore_marks: list[int] = []
        self.sloads: list[tuple[int, int, int, int]] = []
        # (address, slot) -> the value before the case first wrote it.
        self.written: dict[tuple[int, int], int] = {}
        self.panics: list[PanicEvent] = []
        self.calls: list[CallEvent] = []
        self.logs: list[LogEvent] = []
        self.created: list[int] = []
        self.selfdestructs: list[SelfdestructEvent] = []
        self.accesses: list[AccessEvent] = []
        # The dataflow recording's containers (``secant.targets.taint``), empty without it.
        self.flow_frames: list[FlowFrame] = []
        self.flow_branches: list[FlowBranch] = []
        self.flow_sinks: list[FlowSink] = []
        self.flow_calls: list[FlowCall] = []
        self.flow_storage: dict[tuple[int, int], int] = {}
        # The symbolic recording's containers (``secant.symbolic.records.SymbolicRun``).
        self.sym_branches: list[Any] = []
        self.sym_pins: list[Any] = []
        self.sym_txs: dict[int, Any] = {}
        self.sym_bindings: dict[str, int] = {}
        self.sym_storage: dict[tuple[int, int], Any] = {}
        self.flow_wraps: list[FlowWrap] = []
        # The arithmetic recording: (tx, code hash, pc, surely wrapped or only maybe).
        self.wrapped: list[tuple[int, bytes, int, bool]] = []
        self.tx = 0
        self._reads_start = 0  # the length of ``sloads`` when the current transaction began
        # Messages started and not yet ended, for the calls recording.
        self._open: list[tuple[int, int, int, int, int, bytes, int]] = []

    def checkpoint(self) -> RecorderCheckpoint:
        """Copy what the recorder holds now (between transactions) for ``restore``.

        Every public list or set attribute is taken for a per-case container (``reset``
        creates them afresh), which covers the containers subclasses add. Block trails
        belong to frames, which end with their transaction. The overrides are set by the
        next ``begin_tx``.
        """
        self.settle()
        lists: list[tuple[str, tuple[Any, ...]]] = []
        sets: list[tuple[str, frozenset[Any]]] = []
        dicts: list[tuple[str, tuple[tuple[Any, Any], ...]]] = []
        for name, value in vars(self).items():
            if name.startswith("_") or name in _NOT_RECORDED or name == "blocks":
                continue
            if isinstance(value, list):
                lists.append((name, tuple(value)))
            elif isinstance(value, set):
                sets.append((name, frozenset(value)))
            elif isinstance(value, dict):
                dicts.append((name, tuple(value.items())))
        return RecorderCheckpoint(self.tx, tuple(lists), tuple(sets), tuple(dicts),
                                  self.blocks.frozen())

    def restore(self, checkpoint: RecorderCheckpoint) -> None:
        """Start a test case as if the checkpoint's transactions had just been recorded."""
        self.reset()
        for name, values in checkpoint.lists:
            setattr(self, name, list(values))
        for name, frozen in checkpoint.sets:
            setattr(self, name, set(frozen))
        for name, items in checkpoint.dicts:
            setattr(self, name, dict(items))
        self.blocks = BlockSet.thawed(checkpoint.blocks)
        self.tx = checkpoint.tx
        self.branch_log = self.branches
        self._folded = len(self.branches)

    @property
    def rewindable(self) -> bool:
        """Whether ``mark``/``rewind`` apply (not with a recording that steps instructions)."""
        return self._taint is None and self._symbolic is None

    def mark(self, unread: bool = False) -> RecorderMark:
        """Where the recorder stands now, between two transactions (for ``rewind``).

        With ``unread``, the storage reads of the transaction just recorded are left out:
        they were recorded because it was the case's last, and a case that goes on after
        it does not record them.
        """
        # The lengths of _REWOUND_LISTS, in its order (written out: a mark is taken at
        # every transaction boundary).
        lengths = (len(self.branches), len(self.branch_marks), len(self.sstores),
                   len(self.sstore_marks),
                   self._reads_start if unread else len(self.sloads),
                   len(self.panics), len(self.calls), len(self.logs), len(self.created),
                   len(self.selfdestructs), len(self.accesses), len(self.wrapped))
        self.settle()
        by_code = self.blocks.by_code
        self._shared = set(by_code)
        self._edges_shared = True
        return RecorderMark(self.tx, lengths, len(self.written), tuple(by_code.items()),
                            self.edges)

    def rewind(self, mark: RecorderMark) -> None:
        """Start a new case as the run that made ``mark`` stood at that boundary.

        The containers are fresh copies (the last run's result keeps its own): each list
        cut to its length at the mark, the slots written before it, the blocks covered.
        """
        old = [getattr(self, name) for name in _REWOUND_LISTS]
        written = self.written
        self.reset()
        for name, values, length in zip(_REWOUND_LISTS, old, mark.lengths):
            setattr(self, name, values[:length])
        self.written = dict(islice(written.items(), mark.written))
        self.blocks = BlockSet(by_code=dict(mark.blocks))  # type: ignore[arg-type]
        self._shared = set(self.blocks.by_code)
        self.edges = mark.edges  # type: ignore[assignment]
        self._edges_shared = True
        self._folded = mark.lengths[0]  # the branches whose edges the mark holds
        self.tx = mark.tx
        self.branch_log = self.branches

    @contextmanager
    def side_call(self) -> Iterator[None]:
        """Record a call that is no transaction of the case (a property the oracle asks).

        Its blocks and comparisons join the current transaction's (so the search sees the
        property's branches as objectives); panics, calls, logs and accounts are not
        recorded, since the call's failure is its caller's to judge.
        """
        saved = (self._record_panics, self._record_calls, self._record_logs,
                 self._record_accounts, self._record_storage, self.override_address)
        self._record_panics = self._record_calls = self._record_logs = False
        self._record_accounts = self._record_storage = False
        self.override_address = None
        # No dataflow either: the side call runs on the plain traced tables.
        tracking, shadowing, steps = self._tracking, self._shadowing, self.wants_steps
        self._tracking, self._shadowing, self.wants_steps = None, None, False
        try:
            yield
        finally:
            (self._record_panics, self._record_calls, self._record_logs,
             self._record_accounts, self._record_storage, self.override_address) = saved
            self._tracking, self._shadowing, self.wants_steps = tracking, shadowing, steps

    def objective(self, site: bytes, pc: int, taken: bool, relation: str, lhs: int,
                  rhs: int) -> None:
        """Record a comparison that no JUMPI made (an oracle's objective) as a branch.

        ``site`` names the objective (never a 32-byte code hash, so it cannot collide with
        code); the engine treats it as any branch: an edge to cover, a cost to minimise.
        """
        self.branches.append((site, pc, taken, relation, lhs, rhs))

    def begin_tx(self, index: int, overrides: dict[int, int] | None = None,
                 override_address: int | None = None) -> None:
        """Mark the start of transaction ``index``; ``overrides`` replace its SLOAD results.

        Reads of ``override_address``'s storage are recorded in ``sloads`` (with the value
        the state held) and overridden where ``overrides`` names the slot.
        """
        self.tx = index
        self._reads_start = len(self.sloads)
        self.branch_marks.append(len(self.branches))
        self.sstore_marks.append(len(self.sstores))
        self.overrides = overrides or {}
        self.override_address = override_address
        if self._taint is not None:
            if index == 0 and self.flow_base:
                # A case from the deployed state: storage the deployment filled keeps its
                # labels (a later write replaces them, as any write does).
                self.flow_storage.update(self.flow_base)
            self._taint.bind(self.dataflow, index)
        if self._symbolic is not None:
            self._symbolic.bind(self.symbolic, index, self.branches, self.overrides,
                                self.override_address)

    @property
    def dataflow(self) -> Dataflow:
        """The dataflow recording's containers for the current case (empty without it)."""
        return Dataflow(self.flow_frames, self.flow_branches, self.flow_sinks, self.flow_calls,
                        self.flow_storage, self.flow_wraps)

    @property
    def symbolic(self) -> SymbolicRun:
        """The symbolic recording's containers for the current case (empty without it)."""
        from secant.symbolic.records import SymbolicRun

        return SymbolicRun(self.sym_branches, self.sym_pins, self.sym_txs, self.sym_bindings,
                           self.sym_storage)

    def symbolic_of(self, result: RunResult) -> SymbolicRun | None:
        """The ``symbolic`` records of ``result`` while this recorder still holds that run.

        None when the recorder does not record ``symbolic`` or has started another run
        since (its containers are the result's until then: ``branches`` is the same list).
        """
        if self._symbolic is None or self.branches is not result.branches:
            return None
        return self.symbolic

    # ------------------------------------------------------------------ hooks
    def on_message_start(
        self, kind: int, sender: int, target: int, code_address: int, value: int, gas: int,
        data: bytes, depth: int, is_static: bool,
    ) -> None:
        """Open the message's call record (and its storage and flow records)."""
        if self._record_calls and depth:
            self._open.append((kind, sender, target, code_address, value, data, gas))
        if self._record_storage:
            self.accesses.append(AccessEvent(self.tx, START, depth, target, 0, 0, 0))
        if self._tracking is not None:
            self._tracking.message_start(kind, target, depth)
        if self._shadowing is not None:
            self._shadowing.message_start(kind, sender, target, value, data, depth)

    def on_hooked_block(self, frame: Frame, pc: int) -> None:
        """A block of watched arithmetic (the arithmetic recording): evaluate its sites."""
        plans = PLANS.get(frame.code_hash)
        plan = plans.get(pc) if plans is not None else None
        if plan is not None:
            for site, surely in plan.evaluate(frame):
                self.wrapped.append((self.tx, frame.code_hash, site, surely))

    def on_block(self, frame: Frame, pc: int) -> None:
        """The stepped tables' report of a block: kept in the frame's trail, as recorded."""
        frame.trail.append(pc)

    def on_branch(
        self, frame: Frame, pc: int, taken: bool, relation: str, lhs: int, rhs: int
    ) -> None:
        """The stepped tables' report of a JUMPI: logged as the recorded tables log it."""
        self.branches.append((frame.code_hash, pc, taken, relation, lhs, rhs))

    def _visited(self, frame: Frame) -> None:
        """A frame ended: its block starts join those of its code."""
        code_hash = frame.code_hash
        if code_hash in self._shared:
            # A mark holds this set: copy it, unless the frame ran nothing new.
            pcs = self.blocks.by_code[code_hash]
            if pcs.issuperset(frame.trail):
                return
            self.blocks.by_code[code_hash] = pcs = set(pcs)
            self._shared.discard(code_hash)
            pcs.update(frame.trail)
            return
        self.blocks.starts(code_hash).update(frame.trail)

    def settle(self) -> None:
        """Bring ``edges`` up to date with the branches logged since the last call.

        The target calls it when a run ends, before its result takes the containers (and
        ``checkpoint`` before copying them).
        """
        branches = self.branches
        if self._folded < len(branches):
            sides = map(_SIDE, islice(branches, self._folded, None))
            self._folded = len(branches)
            if self._edges_shared:
                # A mark holds the set: copy it only when an edge is new.
                fresh = set(sides).difference(self.edges)
                if fresh:
                    self.edges = self.edges | fresh
                    self._edges_shared = False
                return
            self.edges.update(sides)

    def on_sload(self, frame: Frame, pc: int, slot: int, value: int) -> int:
        """Record the reads of a watched transaction; apply aggressive-mode overrides.

        The called contract's reads are keyed by slot, those of the contracts it calls
        by ``callee_key``: a handler reads the system it drives through calls, and those
        reads are what the demand-driven sequences must see (Harvey's aggressive probes
        override them like the handler's own).
        """
        if self._record_storage:
            self.accesses.append(AccessEvent(self.tx, LOAD, frame.depth, frame.address,
                                             slot, pc, value))
        watched = self.override_address
        if watched is None:
            return value
        address = frame.address
        if address != watched and address in self.unwatched:
            return value
        key = slot if address == watched else (address << 256) | slot
        self.sloads.append((self.tx, address, key, value))
        overrides = self.overrides
        if key in overrides:
            return overrides[key]
        return value

    def on_sstore(self, frame: Frame, pc: int, slot: int, old: int, new: int) -> None:
        """Record the write's slot (the arbitrary-write cost needs it)."""
        self.sstores.append((frame.code_hash, pc, slot))
        self.written.setdefault((frame.address, slot), old)
        if self._record_storage:
            self.accesses.append(AccessEvent(self.tx, STORE, frame.depth, frame.address,
                                             slot, pc, new))

    def on_message_end(
        self, kind: int, target: int, depth: int, success: bool, reverted: bool, output: bytes,
        gas_left: int, error: str | None, frame: Frame | None,
    ) -> None:
        """Keep the frame's blocks; close the call record; keep panics (not re-raised ones)."""
        if frame is not None:
            self._visited(frame)
        if self._tracking is not None:
            self._tracking.message_end(depth, success, frame)
        if self._shadowing is not None:
            self._shadowing.message_end(depth, success)
        if self._record_storage:
            self.accesses.append(AccessEvent(self.tx, END, depth, target, int(success), 0, 0))
        if depth and self._open:
            kind, sender, to, code_address, value, data, gas = self._open.pop()
            self.calls.append(CallEvent(self.tx, depth, kind, sender, target, code_address,
                                        value, data, success, reverted, output, gas))
        if (self._record_accounts and success and kind in (CREATE, CREATE2)):
            self.created.append(target)
        if frame is None or success or not self._record_panics:
            return
        panic_code: int | None
        if reverted and len(output) == 36 and output[:4] == PANIC_SELECTOR:
            panic_code = int.from_bytes(output[4:], "big")
        elif error == "invalid opcode" and self._ends_at_invalid(frame):
            panic_code = None
        else:
            return
        panics = self.panics
        if panics:
            last = panics[-1]
            if last.tx == self.tx and last.depth > depth and last.output == output:
                return  # the caller re-raised the callee's panic
        trail = frame.trail
        panics.append(PanicEvent(self.tx, frame.address, frame.code_hash, frame.code, depth,
                                 panic_code, tuple(trail[-_TRAIL_KEEP:]), output))

    def on_log(self, frame: Frame, pc: int, topics: tuple[int, ...], data: bytes) -> None:
        """Record the event (with the logs recording)."""
        if self._record_logs:
            self.logs.append(LogEvent(self.tx, frame.address, pc, topics, data))

    def on_selfdestruct(self, frame: Frame, beneficiary: int, balance: int) -> None:
        """Record the self-destruct (with the accounts recording)."""
        if self._record_accounts:
            self.selfdestructs.append(SelfdestructEvent(self.tx, frame.address, beneficiary,
                                                        balance))

    def _ends_at_invalid(self, frame: Frame) -> bool:
        """Whether the frame's last block ends with the INVALID instruction."""
        trail = frame.trail
        if not trail:
            return False
        code = frame.code
        pc = trail[-1]
        # Walk the block's instructions to its last one (blocks are short).
        last = pc
        while pc < len(code):
            op = code[pc]
            last = pc
            if op in _BLOCK_ENDS:
                break
            pc += 1 + immediate_size(op)
        return last < len(code) and code[last] == INVALID


class TransitionRecorder(TraceRecorder):
    """A recorder that also keeps block-to-block transitions (for CFG completion).

    Directed fuzzing needs the edges a static analysis missed (dynamic jumps such as
    internal-function returns); the extra set insert per block is paid only when asked.
    """

    def reset(self) -> None:
        """Start a new test case."""
        super().reset()
        self.transitions: set[tuple[bytes, int, int]] = set()

    @property
    def rewindable(self) -> bool:
        """Never: a mark does not measure the transitions."""
        return False

    def _visited(self, frame: Frame) -> None:
        """A frame ended: its blocks and the transitions between them are recorded."""
        super()._visited(frame)
        trail = frame.trail
        self.transitions.update(zip(repeat(frame.code_hash), trail, islice(trail, 1, None)))


def wraps_of(result: RunResult, post: object) -> list[tuple[int, bytes, int, bool]] | None:
    """The ``arithmetic`` recording of ``result`` (as ``dataflow_of`` finds it), or None."""
    recorder = getattr(post, "recorder", None)
    if (isinstance(recorder, TraceRecorder) and "arithmetic" in recorder.recordings
            and recorder.branches is result.branches):
        return recorder.wrapped
    return None


def dataflow_of(result: RunResult, post: object) -> Dataflow | None:
    """The ``dataflow`` recording of ``result``, or None when the run did not record it.

    A result that carries the records (a ``dataflow`` attribute) gives them; otherwise they
    are read from the recorder of ``post`` (the contract target an oracle's ``check``
    receives), provided that recorder still holds this very run: its containers are the
    result's (``branches`` is the same list) until the target's next run.
    """
    found = getattr(result, "dataflow", None)
    if isinstance(found, Dataflow):
        return found
    recorder = getattr(post, "recorder", None)
    if (isinstance(recorder, TraceRecorder) and recorder._taint is not None
            and recorder.branches is result.branches):
        return recorder.dataflow
    return None


def symbolic_of(result: RunResult, post: object) -> SymbolicRun | None:
    """The ``symbolic`` recording of ``result``, or None when the run did not record it.

    As ``dataflow_of``: a result carrying the records (a ``symbolic`` attribute) gives them;
    otherwise they come from the recorder of ``post`` (a contract target, or a recorder
    itself) while it still holds this very run.
    """
    found = getattr(result, "symbolic", None)
    if found is not None:
        from secant.symbolic.records import SymbolicRun  # z3 loads only when there is one

        if isinstance(found, SymbolicRun):
            return found
    recorder = post if isinstance(post, TraceRecorder) else getattr(post, "recorder", None)
    if isinstance(recorder, TraceRecorder):
        return recorder.symbolic_of(result)
    return None


def make_recorder(recordings: Iterable[str]) -> TraceRecorder:
    """The recorder that records ``recordings`` (a ``TransitionRecorder`` for transitions)."""
    wanted = frozenset(recordings)
    if "transitions" in wanted:
        return TransitionRecorder(wanted)
    return TraceRecorder(wanted)
