"""Taint tracking on the executed trace: the ``dataflow`` recording.

A :class:`DataflowTracker` shadows every instruction the EVM executes (the interpreter's
stepped tables call ``on_step`` before each one with the live stack) and keeps, for every
value, a *label set*: a small bitmask saying which sources the value was computed from.

Sources (``LABELS``): the transaction's input (``CALLDATALOAD``, ``CALLDATASIZE``,
``CALLDATACOPY`` of the transaction's own message; a child message's calldata carries the
labels of the memory its caller passed), the block values ``TIMESTAMP``, ``NUMBER``,
``COINBASE``, ``PREVRANDAO`` (DIFFICULTY), ``BLOCKHASH``, ``GASLIMIT``, the senders
``ORIGIN`` and ``CALLER``, and call results: the success flag a CALL, CALLCODE,
DELEGATECALL or STATICCALL pushes (``CALL_SUCCESS`` plus one bit of ``CALL_BITS`` naming
that call) and the return data (``RETURNDATA``, with the labels of the memory the callee
returned). ``STORED`` marks a value read from storage, and ``ORIGIN_CHECK`` the result of
an ``EQ`` that compares ``ORIGIN`` with something other than the frame's own ``CALLER``
(``tx.origin == owner``, not ``tx.origin == msg.sender``; SUB and XOR count as comparisons,
since solc's optimizer tests ``a == b`` with them).

Propagation: through the stack (an operation's result has the union of its operands'
labels; PUSH, DUP, SWAP, POP move labels as they move values), through memory (one label
set per byte, so an ABI-encoded argument keeps its own labels; ``MLOAD`` and ``KECCAK256``
take the union of the bytes they read), and through storage: a per-case map (address,
slot) -> labels survives the transactions of one test case and is undone with the frame
that wrote it when that frame reverts; it starts with the block-value labels of the slots
the deployment wrote (``DEPLOYMENT_LABELS``). A storage read does not take the labels of
the slot number it reads (no pointer taint: ``balances[msg.sender]`` is not
"caller-derived").

What it records (the *sinks*), into containers the recorder owns (so the prefix cache
checkpoints them like every other recording):

* ``FlowBranch``: every JUMPI whose condition carries a label, with the label set, the pc
  and the side taken (one record per frame and distinct (pc, side, labels));
* ``FlowSink``: every SSTORE (slot and value labels), CALL and CALLCODE (target, value,
  data and selector labels, the ether sent and whether the call succeeded), DELEGATECALL
  and STATICCALL (target and data), and SELFDESTRUCT (beneficiary), each with the
  labelled JUMPIs of its frame that *guard* it (``guards``, indices into the branches);
* ``FlowCall``: every call with how its success flag was used by the calling frame: in a
  JUMPI condition, stored with SSTORE, returned with RETURN, or not at all;
* ``FlowFrame``: every message (frame ids index this list) with how it ended;
* ``FlowSink`` of a JUMP or JUMPI whose *destination* carries transaction input or the
  ether the transaction sent (``JUMP_SOURCES``; ``target`` is the destination): solc never
  computes a destination from either, so code that does (assembly arithmetic on an
  internal function pointer) lets the sender jump anywhere in the contract.

Guards approximate control dependence from the trace and a small static look at the code:
a JUMPI guards the rest of its frame when the side not taken surely halts (solc's
``require``: following constant jumps from that side reaches a STOP, RETURN, REVERT or
SELFDESTRUCT before any other JUMPI and before the place where both sides meet), and guards
nothing when that side fails a sanity check (a Panic revert: solc >= 0.8's checked
arithmetic, array bounds and ``assert``; INVALID: ``assert`` before 0.8), which tests
values but decides nothing. Otherwise a forward JUMPI guards until execution reaches the
place where both sides meet: its target when the ``if`` body falls through into it, for
an ``if``/``else`` the address the then-body's final ``PUSH end JUMP`` names, for a body
placed out of line (via-IR) the JUMPDEST right after the JUMPI (a JUMPI taken or falling
straight to the meeting place guards nothing); without any of these the meeting place is
not known and the JUMPI guards the rest of the frame; a backward JUMPI (a loop) guards
nothing. Unlabelled JUMPIs are not recorded.

Wrapped arithmetic (``OVERFLOW``): the overflow oracle registers, per runtime code, the
pcs of the arithmetic instructions the source may let wrap and the width and signedness of
their source type (``watch_arithmetic``; ``secant.compile.arith_types`` finds them). When
such an instruction's result does not fit that type, the result gets ``OVERFLOW`` and a bit
of ``WRAP_BITS`` naming the site, and a ``FlowWrap`` records the operands (one per site and
transaction). Until a site is registered nothing of this runs; afterwards ADD, SUB, MUL,
EXP and SDIV leave the inline path of every tracker (a dict lookup each).

Cost: the stepped tables call a Python hook per instruction (docs/oracles.md has the
measured overhead), which is why the recording is on only when an oracle needs it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from secant.compile.arith_types import wrapped
from secant.evm.analysis import analyze
from secant.evm.constant_stack import step as constant_step
from secant.evm.opcodes import (
    ADD,
    BLOCKHASH,
    CALL,
    CALLCODE,
    CALLDATACOPY,
    CALLDATALOAD,
    CALLDATASIZE,
    CALLER,
    CALLVALUE,
    CODECOPY,
    COINBASE,
    CREATE,
    CREATE2,
    DELEGATECALL,
    EQ,
    EXP,
    EXTCODECOPY,
    GASLIMIT,
    HALTS,
    INVALID,
    JUMP,
    JUMPDEST,
    JUMPI,
    KECCAK256,
    MCOPY,
    MLOAD,
    MSTORE,
    MSTORE8,
    MUL,
    NUMBER,
    OPS,
    ORIGIN,
    PREVRANDAO,
    PUSH1,
    PUSH32,
    RETURN,
    RETURNDATACOPY,
    RETURNDATASIZE,
    REVERT,
    SDIV,
    SELFDESTRUCT,
    SLOAD,
    SSTORE,
    STATICCALL,
    SUB,
    TIMESTAMP,
    TLOAD,
    TSTORE,
    XOR,
    stack_shape,
)
from secant.evm.pure import PURE

if TYPE_CHECKING:
    from secant.evm.forks import Fork
    from secant.evm.frame import Frame

__all__ = [
    "BLOCK",
    "CALLER_LABEL",
    "CALL_BITS",
    "CALL_SUCCESS",
    "DEPLOYMENT_LABELS",
    "INPUT",
    "JUMP_SOURCES",
    "LABELS",
    "ORIGIN_CHECK",
    "ORIGIN_LABEL",
    "OVERFLOW",
    "RETURNDATA",
    "STORED",
    "VALUE_LABEL",
    "WRAP_BITS",
    "Dataflow",
    "DataflowTracker",
    "FlowBranch",
    "FlowCall",
    "FlowFrame",
    "FlowSink",
    "FlowWrap",
    "label_names",
    "watch_arithmetic",
]

# ---------------------------------------------------------------------- labels
INPUT = 1 << 0
TIMESTAMP_LABEL = 1 << 1
NUMBER_LABEL = 1 << 2
COINBASE_LABEL = 1 << 3
PREVRANDAO_LABEL = 1 << 4
BLOCKHASH_LABEL = 1 << 5
GASLIMIT_LABEL = 1 << 6
ORIGIN_LABEL = 1 << 7
CALLER_LABEL = 1 << 8
CALL_SUCCESS = 1 << 9
RETURNDATA = 1 << 10
STORED = 1 << 11
ORIGIN_CHECK = 1 << 12
OVERFLOW = 1 << 13
"""A value computed from an arithmetic result that wrapped at its source type's width."""
VALUE_LABEL = 1 << 14
"""The ether the transaction sent (CALLVALUE of its own message): only the jump records
read it (the sender chooses it as it chooses the calldata)."""
JUMP_SOURCES = INPUT | VALUE_LABEL
"""What a recorded jump's destination carries: the sender's choice (``FlowSink`` of a
JUMP or JUMPI)."""
_CALL_BIT0 = 16
_CALL_SLOTS = 16
CALL_BITS = ((1 << _CALL_SLOTS) - 1) << _CALL_BIT0
"""One bit per call (the n-th call of a transaction gets bit n mod 16): whose flag it is."""
_WRAP_BIT0 = 32
_WRAP_SLOTS = 32
WRAP_BITS = ((1 << _WRAP_SLOTS) - 1) << _WRAP_BIT0
"""One bit per wrapping site of a case (the n-th site to wrap gets bit n mod 32)."""

BLOCK = (TIMESTAMP_LABEL | NUMBER_LABEL | COINBASE_LABEL | PREVRANDAO_LABEL | BLOCKHASH_LABEL
         | GASLIMIT_LABEL)
"""Every block-value label."""

DEPLOYMENT_LABELS = BLOCK
"""The labels storage keeps from the deployment into every test case (``secant.targets.
contract.deployment_flow``): a block value means the same whichever transaction read it.
The others name parts of a transaction of the case (its input, its sender, the n-th call's
flag, the n-th wrapping site) and would be taken for the case's own: ``owner = tx.origin``
in a constructor would make ``tx.origin == owner`` look like a comparison of the origin
with itself."""

LABELS: dict[int, str] = {
    INPUT: "transaction input",
    TIMESTAMP_LABEL: "block.timestamp",
    NUMBER_LABEL: "block.number",
    COINBASE_LABEL: "block.coinbase",
    PREVRANDAO_LABEL: "block.prevrandao",
    BLOCKHASH_LABEL: "blockhash",
    GASLIMIT_LABEL: "block.gaslimit",
    ORIGIN_LABEL: "tx.origin",
    CALLER_LABEL: "msg.sender",
    CALL_SUCCESS: "a call's success flag",
    RETURNDATA: "return data",
    STORED: "storage",
    ORIGIN_CHECK: "tx.origin compared",
    OVERFLOW: "a wrapped arithmetic result",
    VALUE_LABEL: "msg.value",
}
"""Human names of the labels (call bits aside)."""

_SOURCES = {TIMESTAMP: TIMESTAMP_LABEL, NUMBER: NUMBER_LABEL, COINBASE: COINBASE_LABEL,
            PREVRANDAO: PREVRANDAO_LABEL, GASLIMIT: GASLIMIT_LABEL, ORIGIN: ORIGIN_LABEL,
            CALLER: CALLER_LABEL}


def label_names(labels: int) -> list[str]:
    """The names of the sources in ``labels`` (call bits as "a call's success flag")."""
    names = [name for bit, name in LABELS.items() if labels & bit]
    if labels & CALL_BITS and not labels & CALL_SUCCESS:
        names.append(LABELS[CALL_SUCCESS])
    return names


# ---------------------------------------------------------------------- records
@dataclass(frozen=True, slots=True)
class FlowFrame:
    """One message of the case: transaction, depth, account, code, and how it ended."""

    tx: int
    depth: int
    address: int
    code_hash: bytes
    success: bool


@dataclass(frozen=True, slots=True)
class FlowBranch:
    """A JUMPI whose condition carries ``labels`` (taken: it jumped)."""

    tx: int
    frame: int
    address: int
    code_hash: bytes
    pc: int
    taken: bool
    labels: int


@dataclass(frozen=True, slots=True)
class FlowSink:
    """A state change or call, with the labels of its operands and the JUMPIs guarding it.

    ``target`` is the callee (calls), the slot (SSTORE) or the beneficiary (SELFDESTRUCT);
    ``value`` the ether sent (calls) or the value written (SSTORE). ``data_labels`` cover
    the whole input of a call, ``selector_labels`` its first four bytes. ``guards`` index
    ``Dataflow.branches``; ``success`` says whether a call succeeded (True otherwise).
    """

    tx: int
    frame: int
    address: int
    code_hash: bytes
    pc: int
    opcode: int
    target: int
    value: int
    target_labels: int
    value_labels: int
    data_labels: int
    selector_labels: int
    guards: tuple[int, ...]
    success: bool


@dataclass(frozen=True, slots=True)
class FlowCall:
    """A call and what the calling frame did with its success flag.

    ``checked`` is "branch" (a JUMPI condition used it), "storage" (an SSTORE wrote it),
    "return" (the frame returned it) or "" (none of them: the flag was dropped).
    """

    tx: int
    frame: int
    address: int
    code_hash: bytes
    pc: int
    opcode: int
    target: int
    value: int
    success: bool
    checked: str


@dataclass(frozen=True, slots=True)
class FlowWrap:
    """An arithmetic instruction whose result wrapped at its source type's width.

    ``a`` and ``b`` are its operands (``a`` the top of the stack), ``result`` what the EVM
    computed, ``exact`` the true result; ``bit`` is the label bit (of ``WRAP_BITS``) its
    result carries. One record per site and transaction (the first wrap).
    """

    tx: int
    frame: int
    address: int
    code_hash: bytes
    pc: int
    opcode: int
    a: int
    b: int
    result: int
    exact: int
    bit: int


@dataclass
class Dataflow:
    """What the ``dataflow`` recording holds for one test case (the recorder's containers)."""

    frames: list[FlowFrame] = field(default_factory=list)
    branches: list[FlowBranch] = field(default_factory=list)
    sinks: list[FlowSink] = field(default_factory=list)
    calls: list[FlowCall] = field(default_factory=list)
    storage: dict[tuple[int, int], int] = field(default_factory=dict)
    wraps: list[FlowWrap] = field(default_factory=list)

    def completed(self, frame: int) -> bool:
        """Whether frame ``frame`` ended successfully."""
        return frame < len(self.frames) and self.frames[frame].success

    def guard_labels(self, sink: FlowSink) -> int:
        """The union of the labels of the JUMPIs guarding ``sink``."""
        labels = 0
        for index in sink.guards:
            labels |= self.branches[index].labels
        return labels

    def guards_with(self, sink: FlowSink, mask: int) -> list[FlowBranch]:
        """The JUMPIs guarding ``sink`` whose condition carries a label of ``mask``."""
        return [self.branches[i] for i in sink.guards if self.branches[i].labels & mask]


# ---------------------------------------------------------------------- the code's shape
_ALWAYS = -1  # join of a guard that lasts until its frame ends
_NO_GUARD = -2
_WALK_LIMIT = 512  # instructions followed to decide whether a side surely halts
_GOES_ON, _HALTS, _FAILS_CHECK = 0, 1, 2  # where one side of a JUMPI leads
_PANIC = 0x4E487B71  # Panic(uint256)'s selector: solc's overflow, bounds and assert checks


class _CodeShape:
    """Static facts about one code: where each JUMPI's sides lead (cached per code)."""

    __slots__ = ("code", "jumpdests", "ops", "previous", "_halts", "_joins")

    def __init__(self, code: bytes, code_hash: bytes, fork: Fork) -> None:
        analysis = analyze(code, code_hash, fork)
        self.code = code
        self.jumpdests = analysis.jumpdests
        # pc -> (opcode, push value); previous[pc] the pc of the instruction before.
        self.ops: dict[int, tuple[int, int]] = {}
        self.previous: dict[int, int] = {}
        last = -1
        for pc, op, value in analysis.instructions:
            self.ops[pc] = (op, value)
            self.previous[pc] = last
            last = pc
        self._halts: dict[tuple[int, int | None], int] = {}
        self._joins: dict[tuple[int, int, bool], int] = {}

    def join(self, pc: int, target: int, taken: bool) -> int:
        """Where the guard of the JUMPI at ``pc`` ends (``_ALWAYS``, ``_NO_GUARD`` or a pc)."""
        key = (pc, target, taken)
        found = self._joins.get(key)
        if found is None:
            found = self._joins[key] = self._join(pc, target, taken)
        return found

    def _join(self, pc: int, target: int, taken: bool) -> int:
        merge = self._merge(pc, target)
        other = self.leads(pc + 1 if taken else target, merge)
        if other == _HALTS:
            return _ALWAYS
        if other == _FAILS_CHECK:
            # An overflow, bounds or assert check (Panic, INVALID): a sanity check of the
            # values, not a decision about what the code does.
            return _NO_GUARD
        if target <= pc:
            return _NO_GUARD
        if merge is None:
            return _ALWAYS  # an out-of-line target: where the sides meet is not known
        # Where this side of the JUMPI starts: at the meeting place, it guards nothing.
        return _NO_GUARD if merge == (target if taken else pc + 1) else merge

    def _merge(self, pc: int, target: int) -> int | None:
        """Where the two sides of a forward JUMPI meet again, as far as the layout says.

        An ``if`` body falls through into the target: they meet there. An ``if``/``else``
        body ends with ``PUSH end JUMP`` right before the target (the else body): they meet
        at ``end``. A target after a halt or another jump is out of line: via-IR places an
        ``if`` body there and jumps back to a JUMPDEST right after the JUMPI, where they
        meet; without such a JUMPDEST the meeting place is not known (None).
        """
        if target <= pc:
            return None
        end = self._jump_before(target)
        if end is not None and end > target:
            return end
        before = self.previous.get(target, -1)
        if before >= 0 and end is None:
            op = self.ops[before][0]
            if op in OPS and op not in HALTS and op != JUMP:
                return target
        after = self.ops.get(pc + 1)
        return pc + 1 if after is not None and after[0] == JUMPDEST else None

    def _jump_before(self, pc: int) -> int | None:
        """The constant target of a ``PUSH c JUMP`` right before ``pc``, if there is one."""
        jump = self.previous.get(pc, -1)
        if jump < 0 or self.ops[jump][0] != JUMP:
            return None
        push = self.previous.get(jump, -1)
        if push < 0:
            return None
        op, value = self.ops[push]
        return value if PUSH1 <= op <= PUSH32 else None

    def leads(self, start: int, merge: int | None = None) -> int:
        """Where execution from ``start`` surely goes before any other JUMPI or ``merge``.

        ``_HALTS``: a STOP, RETURN, REVERT or SELFDESTRUCT; ``_FAILS_CHECK``: a Panic
        revert (solc >= 0.8's checked arithmetic, bounds and asserts) or INVALID (assert
        before 0.8); ``_GOES_ON``: anything else (reaching ``merge``, where the other side
        of the JUMPI goes too), or not known.
        """
        key = (start, merge)
        found = self._halts.get(key)
        if found is None:
            found = self._halts[key] = self._walk(start, merge)
        return found

    def _walk(self, pc: int, merge: int | None) -> int:
        stack: list[int | None] = []
        ops = self.ops
        panic = False
        for _ in range(_WALK_LIMIT):
            if pc == merge:
                return _GOES_ON
            entry = ops.get(pc)
            if entry is None:
                return _HALTS if pc >= len(self.code) else _GOES_ON  # past the end: STOP
            op, value = entry
            if op == INVALID or op not in OPS:
                return _FAILS_CHECK
            if op in HALTS:
                return _FAILS_CHECK if panic and op == REVERT else _HALTS
            if op == JUMPI:
                return _GOES_ON
            if op == JUMP:
                target = stack.pop() if stack else None
                if target is None:
                    return _GOES_ON
                if target not in self.jumpdests:
                    return _FAILS_CHECK  # an invalid jump halts exceptionally
                pc = target
                continue
            if PUSH1 <= op <= PUSH32 and (value == _PANIC or value == _PANIC << 224):
                panic = True
            constant_step(stack, op, value)
            info = OPS[op]
            pc += 1 + info.immediate
        return _GOES_ON


_SHAPES: dict[tuple[bytes, str], _CodeShape] = {}


def _shape(frame: Frame) -> _CodeShape:
    fork = frame.evm.fork
    key = (frame.code_hash, fork.name)
    shape = _SHAPES.get(key)
    if shape is None:
        if len(_SHAPES) > 1024:
            _SHAPES.clear()
        shape = _SHAPES[key] = _CodeShape(frame.code, frame.code_hash, fork)
    return shape


# ---------------------------------------------------------------------- memory labels
_MEMORY_LIMIT = 1 << 23  # no gas limit pays for more memory; beyond it nothing is tracked


def _read(memory: list[int], offset: int, size: int) -> int:
    """The union of the labels of ``memory[offset:offset + size]``."""
    if not size or offset >= len(memory):
        return 0
    labels = 0
    for label in set(memory[offset:offset + size]):
        labels |= label
    return labels


def _write(memory: list[int], offset: int, size: int, label: int) -> None:
    """Give ``memory[offset:offset + size]`` the label set ``label``."""
    if not size:
        return
    end = offset + size
    have = len(memory)
    if label:
        if end > _MEMORY_LIMIT:
            return
        if end > have:
            memory.extend([0] * (end - have))
        memory[offset:end] = [label] * size
    elif offset < have:
        end = min(end, have)
        memory[offset:end] = [0] * (end - offset)


def _copy(memory: list[int], dest: int, source: int, size: int) -> None:
    """MCOPY's labels."""
    if not size or dest + size > _MEMORY_LIMIT:
        return
    labels = memory[source:source + size] if source < len(memory) else []
    labels += [0] * (size - len(labels))
    if any(labels):
        if dest + size > len(memory):
            memory.extend([0] * (dest + size - len(memory)))
        memory[dest:dest + size] = labels
    else:
        _write(memory, dest, size, 0)


# ---------------------------------------------------------------------- the tracker
# Instruction kinds for the step dispatch (most frequent first).
_K_PUSH, _K_DUP, _K_SWAP, _K_POP, _K_JUMPDEST, _K_BIN, _K_SAME, _K_JUMP, _K_CMP = range(1, 10)
_K_JUMPI, _K_MLOAD, _K_MSTORE, _K_ZERO, _K_SOURCE, _K_GENERIC, _K_SPECIAL = range(10, 17)
# EQ, and SUB and XOR, which is how solc's optimizer tests ``a == b`` before a JUMPI.
_COMPARISONS = frozenset({EQ, SUB, XOR})

_SPECIAL = frozenset({MSTORE8, SLOAD, SSTORE, CALLDATALOAD, CALLDATASIZE, CALLDATACOPY,
                      CALLVALUE, CODECOPY, EXTCODECOPY, RETURNDATASIZE, RETURNDATACOPY, MCOPY,
                      KECCAK256, BLOCKHASH, TLOAD, TSTORE, CALL, CALLCODE, DELEGATECALL, STATICCALL,
                      CREATE, CREATE2, RETURN, REVERT, SELFDESTRUCT})


_STACK_KINDS = {"push": _K_PUSH, "dup": _K_DUP, "swap": _K_SWAP, "pop": _K_POP,
                "jumpdest": _K_JUMPDEST}


def _kinds() -> list[int]:
    kinds = [_K_GENERIC] * 256
    for op, info in OPS.items():
        shape = stack_shape(op)
        if shape is not None:
            kind = _STACK_KINDS[shape]
        elif op == JUMP:
            kind = _K_JUMP
        elif op == JUMPI:
            kind = _K_JUMPI
        elif op == MLOAD:
            kind = _K_MLOAD
        elif op == MSTORE:
            kind = _K_MSTORE
        elif op in _SOURCES:
            kind = _K_SOURCE
        elif op in _COMPARISONS:
            kind = _K_CMP
        elif op in _SPECIAL:
            kind = _K_SPECIAL
        elif info.pops == 2 and info.pushes == 1:
            kind = _K_BIN
        elif info.pops == 1 and info.pushes == 1:
            kind = _K_SAME
        elif info.pops == 0 and info.pushes == 1:
            kind = _K_ZERO
        else:
            kind = _K_GENERIC
        kinds[op] = kind
    return kinds


_KIND = _kinds()
_K_ARITH = 17  # ADD, SUB, MUL, EXP, SDIV once a wrapping site is watched
_ARITH_OPS = (ADD, SUB, MUL, EXP, SDIV)
_ARITHMETIC: dict[bytes, dict[int, tuple[int, int, bool]]] = {}
_WRAP_LIMIT = 256  # wrap records kept per case


def watch_arithmetic(code_hash: bytes, sites: Mapping[int, tuple[int, int, bool]]) -> None:
    """Check the arithmetic of the code ``code_hash`` in every tracker from now on.

    ``sites`` maps the pc of an arithmetic instruction to ``(opcode, bits, signed)``, its
    source type; a result that does not fit gets the ``OVERFLOW`` label. Registered sites
    stay for the process (runtime code is identified by its hash).
    """
    if not sites:
        return
    _ARITHMETIC[code_hash] = dict(sites)
    for op in _ARITH_OPS:
        _KIND[op] = _K_ARITH


# ``step`` tests the kinds by number, and the label bits it tests inline by value.
assert (_K_PUSH, _K_DUP, _K_SWAP, _K_POP, _K_JUMPDEST, _K_BIN, _K_SAME, _K_JUMP,
        _K_CMP) == tuple(range(1, 10))
assert (ORIGIN_LABEL, CALLER_LABEL, ORIGIN_CHECK, JUMP_SOURCES) == (0x80, 0x100, 0x1000,
                                                                   0x4001)
_POPS = [OPS[op].pops if op in OPS else 0 for op in range(256)]
_PUSHES = [OPS[op].pushes if op in OPS else 0 for op in range(256)]
_CALL_POPS = {CALL: 7, CALLCODE: 7, DELEGATECALL: 6, STATICCALL: 6}
_DEPTH_LIMIT = 1024
_ADDRESS_MASK = (1 << 160) - 1


_RESULTS = {op: PURE[op].compute for op in _ARITH_OPS}
"""What the EVM computes for each watched opcode (``a`` the top of the stack)."""


class _Pending:
    """A call whose outcome is not settled yet (its callee is running)."""

    __slots__ = ("pc", "opcode", "target", "value", "target_labels", "value_labels",
                 "data_labels", "selector_labels", "guards", "bit", "out_offset", "out_size",
                 "expected", "started")

    def __init__(self, pc: int, opcode: int, target: int, value: int, target_labels: int,
                 value_labels: int, data_labels: int, selector_labels: int,
                 guards: tuple[int, ...], bit: int, out_offset: int, out_size: int,
                 expected: bool) -> None:
        self.pc = pc
        self.opcode = opcode
        self.target = target
        self.value = value
        self.target_labels = target_labels
        self.value_labels = value_labels
        self.data_labels = data_labels
        self.selector_labels = selector_labels
        self.guards = guards
        self.bit = bit
        self.out_offset = out_offset
        self.out_size = out_size
        # The outcome when no message starts for the call (it fails before: no balance, too
        # deep; or succeeds unseen), and whether one did.
        self.expected = expected
        self.started = False


class _Context:
    """The shadow state of one running frame."""

    __slots__ = ("frame_id", "depth", "address", "code_hash", "calldata", "stack", "memory",
                 "open", "joins", "seen", "pending", "calls", "used_branch", "used_store",
                 "used_return", "out", "returndata", "journal_start", "shape")

    def __init__(self, frame_id: int, depth: int, address: int, calldata: int,
                 journal_start: int) -> None:
        self.frame_id = frame_id
        self.depth = depth
        self.address = address
        self.code_hash = b""
        self.calldata = calldata
        self.stack: list[int] = []
        self.memory: list[int] = []
        # Open guards: branch index -> join pc (``_ALWAYS``: until the frame ends).
        self.open: dict[int, int] = {}
        self.joins: set[int] = set()
        self.seen: dict[tuple[int, bool, int], int] = {}
        self.pending: _Pending | None = None
        self.calls: list[tuple[_Pending, bool]] = []
        self.used_branch = 0
        self.used_store = 0
        self.used_return = 0
        self.out = 0  # labels of what the frame returned or reverted with
        self.returndata = 0  # labels of the last call's return data
        self.journal_start = journal_start
        self.shape: _CodeShape | None = None


class DataflowTracker:
    """Shadows a run instruction by instruction (see the module docstring).

    The recorder binds the containers of the current test case with ``bind`` at the start
    of every transaction, forwards message starts and ends, and routes ``on_step`` here.
    """

    def __init__(self) -> None:
        self.data = Dataflow()
        self.tx = 0
        self.resyncs = 0  # shadow stacks that had to be realigned (a modelling gap)
        self._contexts: list[_Context] = []
        self._top: _Context | None = None
        self._stack: list[int] = []  # the running frame's shadow stack
        self._joins: set[int] = set()  # and where its open guards end
        self._journal: list[tuple[tuple[int, int], int | None]] = []
        self._transient: dict[tuple[int, int], int] = {}
        self._calls = 0

    def bind(self, data: Dataflow, tx: int) -> None:
        """Record transaction ``tx`` into ``data`` (the recorder's containers)."""
        self.data = data
        self.tx = tx
        self._contexts = []
        self._top = None
        self._stack = []
        self._joins = set()
        self._journal = []
        self._transient = {}
        self._calls = 0

    # ------------------------------------------------------------------ messages
    def message_start(self, kind: int, address: int, depth: int) -> None:
        """A message begins: a fresh shadow frame (calldata labels from the caller)."""
        parent = self._top
        calldata = INPUT if parent is None else 0
        if parent is not None and parent.pending is not None and kind not in (CREATE, CREATE2):
            parent.pending.started = True
            calldata = parent.pending.data_labels
        frames = self.data.frames
        context = _Context(len(frames), depth, address, calldata, len(self._journal))
        frames.append(FlowFrame(self.tx, depth, address, b"", False))
        self._contexts.append(context)
        self._top = context
        self._stack = context.stack
        self._joins = context.joins

    def message_end(self, depth: int, success: bool, frame: Frame | None) -> None:
        """A message ended: settle its calls, undo its storage labels if it failed."""
        contexts = self._contexts
        if not contexts:
            return
        context = contexts.pop()
        pending = context.pending
        if pending is not None:
            self._settle(context, pending, pending.expected, 0)
        if not success:
            self._undo(context.journal_start)
        data = self.data
        for call, ok in context.calls:
            checked = ("branch" if context.used_branch & call.bit else
                       "storage" if context.used_store & call.bit else
                       "return" if context.used_return & call.bit else "")
            data.calls.append(FlowCall(self.tx, context.frame_id, context.address,
                                       context.code_hash, call.pc, call.opcode, call.target,
                                       call.value, ok, checked))
        code_hash = frame.code_hash if frame is not None else context.code_hash
        data.frames[context.frame_id] = FlowFrame(self.tx, depth, context.address, code_hash,
                                                  success)
        parent = contexts[-1] if contexts else None
        self._top = parent
        if parent is None:
            self._stack = []
            self._joins = set()
            self._journal = []
            self._transient = {}
            return
        self._stack = parent.stack
        self._joins = parent.joins
        pending = parent.pending
        if pending is not None and pending.started:
            self._settle(parent, pending, success, context.out)

    def _undo(self, start: int) -> None:
        journal = self._journal
        storage = self.data.storage
        while len(journal) > start:
            key, old = journal.pop()
            if old is None:
                storage.pop(key, None)
            else:
                storage[key] = old

    # ------------------------------------------------------------------ instructions
    def step(self, frame: Frame, pc: int, opcode: int, stack: list[int],
             kinds: list[int] = _KIND) -> None:
        """Apply instruction ``opcode`` (about to run at ``pc``) to the shadow state.

        The most frequent instructions are handled inline (kind numbers as in ``_kinds``);
        the rest in ``_other``.
        """
        kind = kinds[opcode]
        shadow = self._stack
        if kind == 1:  # PUSH
            shadow.append(0)
        elif kind == 2:  # DUP
            shadow.append(shadow[0x7F - opcode])
        elif kind == 3:  # SWAP: exchange the top with item n + 1
            depth = 0x8E - opcode
            shadow[-1], shadow[depth] = shadow[depth], shadow[-1]
        elif kind == 4:  # POP
            shadow.pop()
        elif kind == 5:  # JUMPDEST: guards whose sides meet here end
            if pc in self._joins:
                self._close(pc)
        elif kind == 6:  # a binary operation: the union of both operands
            top = shadow.pop()
            shadow[-1] |= top
        elif kind == 7:  # a unary operation: the operand's labels
            pass
        elif kind == 8:  # JUMP: a destination the sender chose is recorded
            labels = shadow.pop()
            if labels & 0x4001:  # JUMP_SOURCES
                self._jump(frame, pc, opcode, stack[-1], labels)
        elif kind == 9:  # EQ, SUB, XOR: the union, and whether tx.origin is compared
            top = shadow.pop()
            other = shadow[-1]
            if (top ^ other) & 0x80:  # ORIGIN_LABEL on one side only
                caller = other if top & 0x80 else top
                shadow[-1] = top | other | (0x1000 if caller != 0x100 else 0)  # ORIGIN_CHECK
            else:
                shadow[-1] = top | other
        else:
            self._other(frame, pc, opcode, stack, kind)

    def _other(self, frame: Frame, pc: int, opcode: int, stack: list[int], kind: int) -> None:
        context = self._top
        if context is None:
            return
        shadow = context.stack
        if kind == _K_JUMPI:
            if len(shadow) != len(stack):
                self._resync(shadow, stack)
            labels = shadow.pop()
            if labels & JUMP_SOURCES:
                self._jump(frame, pc, opcode, stack[-1], labels)
            labels = shadow.pop()
            if labels:
                self._branch(frame, context, pc, stack[-1], stack[-2] != 0, labels)
        elif kind == _K_MLOAD:
            shadow[-1] = _read(context.memory, stack[-1], 32)
        elif kind == _K_MSTORE:
            shadow.pop()
            _write(context.memory, stack[-1], 32, shadow.pop())
        elif kind == _K_ZERO:
            shadow.append(0)
        elif kind == _K_SOURCE:
            shadow.append(_SOURCES[opcode])
        elif kind == _K_GENERIC:
            labels = 0
            for _ in range(_POPS[opcode]):
                labels |= shadow.pop()
            if _PUSHES[opcode]:
                shadow.append(labels)
        elif kind == _K_ARITH:
            self._arith(frame, context, pc, opcode, stack)
        else:
            self._special(frame, context, pc, opcode, stack)

    def _arith(self, frame: Frame, context: _Context, pc: int, opcode: int,
               stack: list[int]) -> None:
        """An arithmetic instruction while sites are watched: wraps at a site are labelled."""
        shadow = context.stack
        top = shadow.pop()
        other = shadow[-1]
        labels = top | other
        if opcode == SUB and (top ^ other) & ORIGIN_LABEL:  # as kind 9 does for SUB
            caller = other if top & ORIGIN_LABEL else top
            if caller != CALLER_LABEL:
                labels |= ORIGIN_CHECK
        sites = _ARITHMETIC.get(frame.code_hash)
        site = sites.get(pc) if sites is not None else None
        if site is not None and site[0] == opcode:
            a, b = stack[-1], stack[-2]
            exact = wrapped(opcode, site[1], site[2], a, b)
            if exact is not None:
                labels |= OVERFLOW | self._wrap(frame, context, pc, opcode, a, b, exact)
        shadow[-1] = labels

    def _wrap(self, frame: Frame, context: _Context, pc: int, opcode: int, a: int, b: int,
              exact: int) -> int:
        """Record a wrap (once per site and transaction); the label bit of its site."""
        if not context.code_hash:
            context.code_hash = frame.code_hash
        code_hash = context.code_hash
        wraps = self.data.wraps
        sites: list[tuple[bytes, int]] = []
        bit = 0
        for wrap in wraps:
            if wrap.code_hash == code_hash and wrap.pc == pc:
                bit = wrap.bit
                if wrap.tx == self.tx:
                    return bit
            elif (wrap.code_hash, wrap.pc) not in sites:
                sites.append((wrap.code_hash, wrap.pc))
        if not bit:
            bit = 1 << (_WRAP_BIT0 + len(sites) % _WRAP_SLOTS)
        if len(wraps) < _WRAP_LIMIT:
            wraps.append(FlowWrap(self.tx, context.frame_id, context.address, code_hash, pc,
                                  opcode, a, b, _RESULTS[opcode](a, b), exact, bit))
        return bit

    def _resync(self, shadow: list[int], stack: list[int]) -> None:
        """Realign the shadow stack with the real one (unknown items are unlabelled)."""
        self.resyncs += 1
        missing = len(stack) - len(shadow)
        if missing > 0:
            shadow[:0] = [0] * missing
        else:
            del shadow[:-missing]

    def _close(self, pc: int) -> None:
        """Execution reached ``pc``: the guards whose sides meet there end."""
        context = self._top
        if context is None:
            return
        context.joins.discard(pc)
        context.open = {index: join for index, join in context.open.items() if join != pc}

    def _branch(self, frame: Frame, context: _Context, pc: int, target: int, taken: bool,
                labels: int) -> None:
        context.used_branch |= labels
        key = (pc, taken, labels)
        index = context.seen.get(key)
        if index is None:
            branches = self.data.branches
            index = context.seen[key] = len(branches)
            if not context.code_hash:
                context.code_hash = frame.code_hash
            branches.append(FlowBranch(self.tx, context.frame_id, context.address,
                                       context.code_hash, pc, taken, labels))
        shape = context.shape
        if shape is None:
            shape = context.shape = _shape(frame)
        join = shape.join(pc, target, taken)
        if join == _NO_GUARD:
            return
        context.open[index] = join
        if join >= 0:
            context.joins.add(join)

    def _guards(self, context: _Context) -> tuple[int, ...]:
        return tuple(context.open)

    def _special(self, frame: Frame, context: _Context, pc: int, op: int,
                 stack: list[int]) -> None:
        shadow = context.stack
        memory = context.memory
        if op == SLOAD:
            shadow[-1] = self.data.storage.get((context.address, stack[-1]), 0) | STORED
        elif op == SSTORE:
            slot_labels = shadow.pop()
            value_labels = shadow.pop()
            slot = stack[-1]
            context.used_store |= value_labels
            self._record(frame, context, pc, op, slot, stack[-2], slot_labels, value_labels,
                         0, 0, True)
            key = (context.address, slot)
            storage = self.data.storage
            self._journal.append((key, storage.get(key)))
            if value_labels:
                storage[key] = value_labels
            else:
                storage.pop(key, None)
        elif op == CALLDATALOAD:
            shadow[-1] = context.calldata
        elif op == CALLVALUE:
            shadow.append(VALUE_LABEL if context.depth == 0 else 0)
        elif op == CALLDATASIZE:
            shadow.append(context.calldata)
        elif op == CALLDATACOPY:
            del shadow[-3:]
            _write(memory, stack[-1], stack[-3], context.calldata)
        elif op == CODECOPY:
            del shadow[-3:]
            _write(memory, stack[-1], stack[-3], 0)
        elif op == EXTCODECOPY:
            del shadow[-4:]
            _write(memory, stack[-2], stack[-4], 0)
        elif op == RETURNDATASIZE:
            shadow.append(context.returndata)
        elif op == RETURNDATACOPY:
            del shadow[-3:]
            _write(memory, stack[-1], stack[-3], context.returndata)
        elif op == MCOPY:
            del shadow[-3:]
            _copy(memory, stack[-1], stack[-2], stack[-3])
        elif op == KECCAK256:
            shadow.pop()
            shadow[-1] = _read(memory, stack[-1], stack[-2])
        elif op == MSTORE8:
            shadow.pop()
            _write(memory, stack[-1], 1, shadow.pop())
        elif op == BLOCKHASH:
            shadow[-1] |= BLOCKHASH_LABEL
        elif op == TLOAD:
            shadow[-1] = self._transient.get((context.address, stack[-1]), 0)
        elif op == TSTORE:
            shadow.pop()
            self._transient[(context.address, stack[-1])] = shadow.pop()
        elif op in _CALL_POPS:
            self._call(frame, context, pc, op, stack)
        elif op == RETURN or op == REVERT:
            del shadow[-2:]
            out = _read(memory, stack[-1], stack[-2])
            context.out = out
            if op == RETURN:
                context.used_return |= out
        elif op == SELFDESTRUCT:
            labels = shadow.pop()
            self._record(frame, context, pc, op, stack[-1], 0, labels, 0, 0, 0, True)
        else:  # CREATE, CREATE2: the new address carries no label
            pops = _POPS[op]
            del shadow[-pops:]
            shadow.append(0)
            context.returndata = 0

    def _call(self, frame: Frame, context: _Context, pc: int, op: int,
              stack: list[int]) -> None:
        shadow = context.stack
        if len(shadow) != len(stack):
            self._resync(shadow, stack)
        memory = context.memory
        target_labels = shadow[-2]
        if op == CALL or op == CALLCODE:
            value, value_labels = stack[-3], shadow[-3]
            rest = -4
        else:
            value, value_labels = 0, 0
            rest = -3
        in_offset, in_size = stack[rest], stack[rest - 1]
        out_offset, out_size = stack[rest - 2], stack[rest - 3]
        data_labels = _read(memory, in_offset, in_size)
        selector_labels = _read(memory, in_offset, min(in_size, 4))
        del shadow[-_CALL_POPS[op]:]
        if context.pending is not None:  # a call no message answered
            self._settle(context, context.pending, context.pending.expected, 0)
        bit = 1 << (_CALL_BIT0 + self._calls % _CALL_SLOTS)
        self._calls += 1
        if not context.code_hash:
            context.code_hash = frame.code_hash
        # Without a message (too deep, not enough ether) the call fails at once.
        expected = frame.depth < _DEPTH_LIMIT and not (
            value and frame.state.balance(frame.address) < value)
        context.pending = _Pending(pc, op, stack[-2] & _ADDRESS_MASK, value, target_labels,
                                   value_labels, data_labels, selector_labels,
                                   self._guards(context), bit, out_offset, out_size, expected)
        shadow.append(CALL_SUCCESS | bit)

    def _settle(self, context: _Context, pending: _Pending, success: bool,
                returned: int) -> None:
        """The call's outcome is known (``returned``: labels of what the callee returned)."""
        context.pending = None
        returned |= RETURNDATA
        context.returndata = returned
        _write(context.memory, pending.out_offset, pending.out_size, returned)
        context.calls.append((pending, success))
        self.data.sinks.append(FlowSink(
            self.tx, context.frame_id, context.address, context.code_hash, pending.pc,
            pending.opcode, pending.target, pending.value, pending.target_labels,
            pending.value_labels, pending.data_labels, pending.selector_labels,
            pending.guards, success))

    def _jump(self, frame: Frame, pc: int, op: int, destination: int, labels: int) -> None:
        """A JUMP or JUMPI whose destination carries ``labels`` of ``JUMP_SOURCES``."""
        context = self._top
        if context is not None:
            self._record(frame, context, pc, op, destination, 0, labels, 0, 0, 0, True)

    def _record(self, frame: Frame, context: _Context, pc: int, op: int, target: int,
                value: int, target_labels: int, value_labels: int, data_labels: int,
                selector_labels: int, success: bool) -> None:
        if not context.code_hash:
            context.code_hash = frame.code_hash
        self.data.sinks.append(FlowSink(
            self.tx, context.frame_id, context.address, context.code_hash, pc, op, target,
            value, target_labels, value_labels, data_labels, selector_labels,
            self._guards(context), success))
