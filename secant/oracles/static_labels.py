"""What the dataflow recording's labels can be in one frame of a code, without running it.

The data-flow detectors replay runs with the ``dataflow`` recording (``secant.targets.taint``)
to learn the labels of values. Some of their questions can be answered for every run at
once, from the code, when the answer is "never": then no run needs a replay for it.

* ``stored_reach``: may the ``STORED`` label (a value read from storage) reach a call's
  callee, or memory (where the call's input comes from), in the frame a transaction opens?
  There the calldata carries transaction input alone and memory starts empty, so the label
  comes from the frame's own SLOAD, TLOAD or return data. The controlled-call detectors
  rate a callee out of storage *likely*, and need no replay for that rating where it
  cannot happen.
* ``origin_guards``: the JUMPIs whose condition may carry ``ORIGIN_CHECK`` (``tx.origin``
  compared with something that is not exactly ``msg.sender``), in any frame, given what
  calldata and storage may carry. The tx-origin detector reports such JUMPIs only: once it
  has reported all of them, no run needs a replay.

Both run the code abstractly from its entry (``_explore``). Each stack item is a constant
(what a PUSH put there, moved by DUP and SWAP: enough to follow solc's jumps and internal
returns) and a set of bits: the labels it *may* carry (``STORED``, ``ORIGIN``,
``ORIGIN_CHECK``, the union of the operands' as in the tracker) and what it surely is
(no label at all, or exactly the ``CALLER`` label, which decides whether an EQ is an origin
check). Memory is one set of bits for all its bytes. Every path is followed, states are
remembered per pc, and a jump to a place the constants do not name, or more than
``_STATES`` states, gives up: the answer is then "may" everywhere, which errs only towards
replaying.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from secant.evm.analysis import analyze, code_end
from secant.evm.forks import Fork
from secant.evm.opcodes import (
    ADD,
    BLOCKHASH,
    CALL,
    CALLCODE,
    CALLDATACOPY,
    CALLDATALOAD,
    CALLDATASIZE,
    CALLER,
    CODECOPY,
    COINBASE,
    CREATE,
    CREATE2,
    DELEGATECALL,
    DUP1,
    DUP16,
    EQ,
    EXP,
    EXTCODECOPY,
    GASLIMIT,
    HALTS,
    JUMP,
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
    POP,
    PREVRANDAO,
    PUSH0,
    PUSH1,
    PUSH32,
    RETURNDATACOPY,
    RETURNDATASIZE,
    SDIV,
    SLOAD,
    SSTORE,
    STATICCALL,
    SUB,
    SWAP1,
    SWAP16,
    TIMESTAMP,
    TLOAD,
    XOR,
)

__all__ = ["ORIGINS", "STORED_BIT", "FrameFacts", "Reach", "frame_facts", "origin_guards",
           "stored_reach"]

STORED_BIT, ORIGIN_BIT, CHECK_BIT = 1, 2, 4  # labels an item may carry
ORIGINS = ORIGIN_BIT | CHECK_BIT
"""What calldata or storage carries when ``tx.origin`` or its comparisons may be in it."""
_MAY = STORED_BIT | ORIGIN_BIT | CHECK_BIT
_CLEAN, _CALLER = 8, 16  # what an item surely is: no label at all, exactly the CALLER label
_STATES = 20_000  # (pc, state) pairs explored at most per frame
_CALLS = frozenset({CALL, CALLCODE, DELEGATECALL, STATICCALL})
_COMPARISONS = frozenset({EQ, SUB, XOR})  # the tracker's origin checks (solc tests == so)
_ARITHMETIC = frozenset({ADD, SUB, MUL, EXP, SDIV})  # may get the overflow oracle's labels
_BLOCK_VALUES = frozenset({TIMESTAMP, NUMBER, COINBASE, PREVRANDAO, GASLIMIT, BLOCKHASH})
_UNLABELLED_COPIES = frozenset({CODECOPY, EXTCODECOPY, MCOPY})

Item = tuple[int | None, int]  # (the constant a PUSH gave, or None; bits)
State = tuple[tuple[Item, ...], int]  # (stack, top last; what memory may carry)


class Reach(NamedTuple):
    """What may carry STORED at a call site, in a frame a transaction opens."""

    callee: bool
    memory: bool


@dataclass(frozen=True)
class FrameFacts:
    """What one frame of a code may do with labels, over every path (``frame_facts``).

    ``callees`` and ``inputs``: the bits a call site's callee and memory may carry, by
    pc; ``conditions``: the bits a JUMPI's condition may carry, by pc; ``stored``: what an
    SSTORE may write; ``complete``: whether every path was followed (else every answer
    is "may").
    """

    callees: dict[int, int]
    inputs: dict[int, int]
    conditions: dict[int, int]
    stored: int
    complete: bool


_FACTS: dict[tuple[bytes, str, int, int], FrameFacts] = {}


def frame_facts(code: bytes, code_hash: bytes, fork: Fork, calldata: int = 0,
                storage: int = 0) -> FrameFacts:
    """The facts of a frame of ``code`` whose calldata and storage carry at most these bits.

    SLOAD gives ``STORED`` and what ``storage`` says; return data and TLOAD may carry
    anything. Cached per code and assumptions.
    """
    key = (code_hash, fork.name, calldata, storage)
    found = _FACTS.get(key)
    if found is None:
        found = _FACTS[key] = _explore(code, code_hash, fork, calldata, storage)
    return found


def stored_reach(code: bytes, code_hash: bytes, fork: Fork) -> dict[int, Reach]:
    """Every call site's ``Reach`` in a frame a transaction opens, by pc.

    A site on no path from the entry gets ``Reach(False, False)``.
    """
    facts = frame_facts(code, code_hash, fork)
    if not facts.complete:
        return {pc: Reach(True, True) for pc in facts.callees}
    return {pc: Reach(bool(bits & STORED_BIT), bool(facts.inputs[pc] & STORED_BIT))
            for pc, bits in facts.callees.items()}


def origin_guards(codes: list[tuple[bytes, bytes]], fork: Fork, open_code: bool
                  ) -> set[tuple[bytes, int]] | None:
    """The JUMPIs of ``codes`` (hash, code) whose condition may carry ``ORIGIN_CHECK``.

    ``codes`` are all the code that can run in a case (the targets' and the attacker
    contracts'); ``open_code`` says other code may run too (a DELEGATECALL to a computed
    address, a contract created on the way), which may put ``tx.origin`` anywhere. What
    calldata and storage may carry comes from the codes themselves: what their calls pass
    and their SSTOREs write, until nothing more is found. None when some code could not be
    followed completely (every JUMPI may then be one).
    """
    calldata = storage = ORIGINS if open_code else 0
    while True:
        passed, written = calldata, storage
        for code_hash, code in codes:
            facts = frame_facts(code, code_hash, fork, calldata, storage)
            if not facts.complete:
                return None
            for bits in facts.inputs.values():
                passed |= bits & ORIGINS
            written |= facts.stored & ORIGINS
        if (passed, written) == (calldata, storage):
            break
        calldata, storage = passed, written
    guards: set[tuple[bytes, int]] = set()
    for code_hash, code in codes:
        facts = frame_facts(code, code_hash, fork, calldata, storage)
        guards.update((code_hash, pc) for pc, bits in facts.conditions.items()
                      if bits & CHECK_BIT)
    return guards


def _explore(code: bytes, code_hash: bytes, fork: Fork, calldata: int, storage: int
             ) -> FrameFacts:
    analysis = analyze(code, code_hash, fork)
    end = code_end(code)
    ops = {pc: (op, value) for pc, op, value in analysis.instructions if pc < end}
    jumpdests = analysis.jumpdests
    following = {}
    previous = None
    for pc, _, _ in analysis.instructions:
        if previous is not None:
            following[previous] = pc
        previous = pc
    callees = {pc: 0 for pc, (op, _) in ops.items() if op in _CALLS}
    inputs = dict(callees)
    conditions = {pc: 0 for pc, (op, _) in ops.items() if op == JUMPI}
    stored = 0
    given = _Given(calldata, STORED_BIT | storage)
    seen: set[tuple[int, State]] = set()
    pending: list[tuple[int, State]] = [(0, ((), 0))]
    while pending:
        pc, state = pending.pop()
        while True:
            if (pc, state) in seen:
                break
            seen.add((pc, state))
            if len(seen) > _STATES:
                return _unknown(callees, conditions)
            entry = ops.get(pc)
            if entry is None:
                break  # past the code (STOP) or into its metadata (INVALID)
            op, value = entry
            stack, memory = state
            info = OPS.get(op)
            if info is None or len(stack) < info.pops:
                break  # an invalid instruction, or an underflow (an exceptional halt)
            if op in HALTS:
                break
            if op == JUMP or op == JUMPI:
                dest = stack[-1][0]
                if op == JUMPI:
                    conditions[pc] |= stack[-2][1] & _MAY
                rest = stack[:-2] if op == JUMPI else stack[:-1]
                if dest is None:
                    return _unknown(callees, conditions)  # a jump the constants do not name
                if dest in jumpdests:
                    pending.append((dest, (rest, memory)))
                if op == JUMP or pc not in following:
                    break
                pc, state = following[pc], (rest, memory)
                continue
            if op in _CALLS:
                callees[pc] |= stack[-2][1] & _MAY
                inputs[pc] |= memory
            elif op == SSTORE:
                stored |= stack[-2][1] & _MAY
            state = _step(op, value, stack, memory, given)
            if pc not in following:
                break
            pc = following[pc]
    return FrameFacts(callees, inputs, conditions, stored, True)


class _Given(NamedTuple):
    calldata: int  # what calldata may carry
    loaded: int  # what an SLOAD may carry


def _unknown(callees: dict[int, int], conditions: dict[int, int]) -> FrameFacts:
    return FrameFacts(dict.fromkeys(callees, _MAY), dict.fromkeys(callees, _MAY),
                      dict.fromkeys(conditions, _MAY), _MAY, False)


def _step(op: int, value: int, stack: tuple[Item, ...], memory: int, given: _Given
          ) -> State:
    """The abstract state after ``op`` (not a jump, a halt or an underflow)."""
    if op == PUSH0 or PUSH1 <= op <= PUSH32:
        return (*stack, (value if op != PUSH0 else 0, _CLEAN)), memory
    if DUP1 <= op <= DUP16:
        return (*stack, stack[-1 - (op - DUP1)]), memory
    if SWAP1 <= op <= SWAP16:
        depth = op - SWAP1 + 1
        items = list(stack)
        items[-1], items[-1 - depth] = items[-1 - depth], items[-1]
        return tuple(items), memory
    if op == POP:
        return stack[:-1], memory
    info = OPS[op]
    popped = stack[len(stack) - info.pops:]
    rest = stack[:len(stack) - info.pops]
    if op == MSTORE or op == MSTORE8:
        return rest, memory | (popped[0][1] & _MAY)  # (value, offset): the value is below
    if op == CALLDATACOPY:
        return rest, memory | given.calldata
    if op == RETURNDATACOPY:
        return rest, _MAY  # what a callee returned may hold anything
    if op in _UNLABELLED_COPIES:
        return rest, memory
    if op in _CALLS:
        return (*rest, (None, 0)), _MAY  # its output lands in memory
    if op == CREATE or op == CREATE2:
        return (*rest, (None, _CLEAN)), memory  # the new address carries no label
    if op == SLOAD:
        bits = given.loaded
    elif op == TLOAD or op == RETURNDATASIZE:
        bits = _MAY
    elif op == CALLDATALOAD or op == CALLDATASIZE:
        bits = given.calldata
    elif op == MLOAD or op == KECCAK256:
        bits = memory
    elif op == ORIGIN:
        bits = ORIGIN_BIT
    elif op == CALLER:
        bits = _CALLER
    elif op in _BLOCK_VALUES:
        bits = _combined(popped) & _MAY  # labelled (block values): neither clean nor CALLER
    else:
        bits = _combined(popped)
        if op in _ARITHMETIC:
            bits &= _MAY  # a watched site that wraps adds labels: nothing is sure any more
        if op in _COMPARISONS and len(popped) == 2 and _compares_origin(*popped):
            bits = (bits | CHECK_BIT) & _MAY
    return rest + ((None, bits),) * info.pushes, memory


def _combined(popped: tuple[Item, ...]) -> int:
    """The bits of a result computed from ``popped`` (the union of labels)."""
    bits = 0
    clean = caller = True
    for _, item in popped:
        bits |= item & _MAY
        clean = clean and bool(item & _CLEAN)
        caller = caller and bool(item & (_CLEAN | _CALLER))
    if clean:
        return _CLEAN
    if caller and not bits:
        return _CALLER  # CALLER's label with unlabelled constants (solc's masking)
    return bits


def _compares_origin(a: Item, b: Item) -> bool:
    """Whether an EQ, SUB or XOR of ``a`` and ``b`` may be an origin check.

    The tracker's rule: one side carries ORIGIN, the other is not exactly CALLER's label.
    """
    return bool((a[1] & ORIGIN_BIT and not b[1] & _CALLER)
                or (b[1] & ORIGIN_BIT and not a[1] & _CALLER))
