"""Concolic shadow execution: z3 terms beside the concrete run, and the path condition.

A :class:`ShadowTracker` is fed by the interpreter's stepped tables (``on_step`` before
every instruction, with the live stack) and by the message hooks, like the taint tracker
(``secant.targets.taint``). Concrete values drive the run; the tracker keeps, beside each
value that depends on a symbolic input, the z3 term that computes it from the inputs:

* a shadow stack per frame of ``term | None`` (None: the live value, concrete), checked
  against the live stack's height before every instruction (a mismatch, which the
  differential test says never happens, makes every item concrete and is counted in
  ``resyncs``);
* shadow memory per frame, byte-granular: ``offset -> (term, byte)``, byte ``byte`` (0 the
  most significant) of a 256-bit term. An ``MLOAD`` of the 32 bytes of one stored word gives
  that word's term back; otherwise the bytes are reassembled with ``Extract``/``Concat``,
  concrete ones taken from the live memory;
* shadow storage per ``(address, slot)`` for the whole test case: the term written, None
  for a concrete write, absent for a slot the case has not written. Reading an absent slot
  gives the variable ``s_{address}_{slot}`` bound to the value the state holds: the value
  before the case. A frame that fails undoes its writes (a journal, as the state's);
  transient storage likewise, for one transaction.

Symbolic sources (``secant.symbolic.records`` names the variables): the transaction's own
calldata words, ``CALLVALUE`` and ``CALLER`` of the transaction's message, ``ORIGIN``,
``TIMESTAMP`` and ``NUMBER`` (the run's value plus the symbolic deltas of the transactions
so far) and storage as above. ``CALLDATASIZE`` and everything else is concrete.

Child frames (calls and creations below the transaction's message) are shadowed *without
symbolic sources of their own*: their calldata, ``CALLVALUE`` and ``CALLER`` are concrete,
but block values, ``ORIGIN`` and storage are the same variables at every depth, so a
library's or another contract's test of ``block.timestamp`` or of a slot an earlier
transaction wrote is recorded and solvable like the called contract's own. What crosses a
call is concretised: the callee's input, the call's target, value and gas, and its output
and return data. Carrying terms through calldata would be exact but would have to follow
every byte through the callee's ABI decoder, the expensive half of the job, for calls that
contracts under test mostly make with values of their own.

Concretisation: where the run needs a concrete value and the shadow holds a term, the
live value is used and a :class:`~secant.symbolic.records.SymPin` records ``term ==
value``: memory offsets and sizes, ``KECCAK256`` over symbolic bytes (the hash is concrete:
mapping slots come from the concrete keys), storage keys, jump targets, a call's operands
and input bytes, a callee's returned bytes, the address of BALANCE and EXTCODE*, the
numbers of BLOCKHASH and BLOBHASH, CLZ, and EXP's exponent when base and exponent are both
symbolic or the base is a concrete number other than a power of two. The solver keeps the
pins that precede a branch, so a solution concretises the same way; and every branch
recorded after a pin is marked inexact (an unsat answer about it proves nothing).

Path condition: every JUMPI whose condition word is symbolic appends a
:class:`~secant.symbolic.records.SymBranch` (transaction, depth, address, code hash, pc,
side taken, the z3 Bool ``condition != 0``, its position in the run's branch list).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import z3

from secant.evm.opcodes import (
    BALANCE,
    BLOBHASH,
    BLOCKHASH,
    CALL,
    CALLCODE,
    CALLDATACOPY,
    CALLDATALOAD,
    CALLER,
    CALLVALUE,
    CLZ,
    CODECOPY,
    CREATE,
    CREATE2,
    DELEGATECALL,
    EXP,
    EXTCODECOPY,
    EXTCODEHASH,
    EXTCODESIZE,
    JUMP,
    JUMPI,
    KECCAK256,
    LOG0,
    LOG4,
    MCOPY,
    MLOAD,
    MSTORE,
    MSTORE8,
    NUMBER,
    OPS,
    ORIGIN,
    RETURN,
    RETURNDATACOPY,
    REVERT,
    SELFDESTRUCT,
    SLOAD,
    SSTORE,
    STATICCALL,
    TIMESTAMP,
    TLOAD,
    TSTORE,
    stack_shape,
)
from secant.symbolic.names import state_variable
from secant.symbolic.numerals import bytes_const
from secant.symbolic.records import SymbolicRun, SymBranch, SymPin, SymTx
from secant.symbolic.semantics import (
    BINARY,
    TERNARY,
    UNARY,
    WIDTH,
    Word,
    binary,
    const,
    exp_concrete_exponent,
    exp_power_of_two,
    ternary,
    truth,
    unary,
)

if TYPE_CHECKING:
    from secant.evm.frame import Frame

__all__ = ["ShadowTracker"]

_ABSENT = object()  # a journal entry's "the key was not there"
_MEMORY_LIMIT = 1 << 23  # no gas limit pays for more memory: beyond it nothing is shadowed
_CALL_POPS = {CALL: 7, CALLCODE: 7, DELEGATECALL: 6, STATICCALL: 6}
_TERM_LIMIT = 20_000  # nodes of a term as a tree; larger results are concretised

# Instruction kinds for the step dispatch (most frequent first).
(_K_PUSH, _K_DUP, _K_SWAP, _K_POP, _K_JUMPDEST, _K_BINARY, _K_UNARY, _K_NONE,
 _K_OTHER) = range(1, 10)


_STACK_KINDS = {"push": _K_PUSH, "dup": _K_DUP, "swap": _K_SWAP, "pop": _K_POP,
                "jumpdest": _K_JUMPDEST}


def _kinds() -> list[int]:
    kinds = [_K_OTHER] * 256
    for op, info in OPS.items():
        shape = stack_shape(op)
        if shape is not None:
            kind = _STACK_KINDS[shape]
        elif op in BINARY:
            kind = _K_BINARY
        elif op in UNARY:
            kind = _K_UNARY
        elif (info.pops == 0 and info.pushes == 1
              and op not in (CALLER, CALLVALUE, ORIGIN, TIMESTAMP, NUMBER)):
            kind = _K_NONE  # a concrete value of the environment (ADDRESS, GAS, PC, ...)
        else:
            kind = _K_OTHER
        kinds[op] = kind
    return kinds


_KIND = _kinds()
assert (_K_PUSH, _K_DUP, _K_SWAP, _K_POP, _K_JUMPDEST, _K_BINARY, _K_UNARY,
        _K_NONE) == tuple(range(1, 9))
_POPS = [OPS[op].pops if op in OPS else 0 for op in range(256)]
_PUSHES = [OPS[op].pushes if op in OPS else 0 for op in range(256)]
# Operands that only name something outside the frame: concretised, result concrete.
_ADDRESSED = frozenset({BALANCE, EXTCODESIZE, EXTCODEHASH, BLOCKHASH, BLOBHASH, CLZ})

Byte = tuple[Any, int]
"""One shadow memory byte: byte ``i`` (0 = most significant) of a 256-bit term."""


class _Frame:
    """The shadow state of one running message."""

    __slots__ = ("depth", "address", "top", "stack", "memory", "lo", "hi", "journal_start")

    def __init__(self, depth: int, address: int, top: bool, journal_start: int) -> None:
        self.depth = depth
        self.address = address
        self.top = top  # the transaction's own message: its calldata etc. are symbolic
        self.stack: list[Word | None] = []
        self.memory: dict[int, Byte] = {}
        # Every symbolic byte lies in [lo, hi): writes elsewhere need no lookups.
        self.lo = _MEMORY_LIMIT
        self.hi = 0
        self.journal_start = journal_start


class ShadowTracker:
    """Shadows a run instruction by instruction (see the module docstring).

    The recorder binds the containers of the current test case with ``bind`` at the start
    of every transaction, forwards message starts and ends, and routes ``on_step`` to
    ``step``.
    """

    def __init__(self) -> None:
        self.run = SymbolicRun()
        self.tx = 0
        self.resyncs = 0  # shadow stacks that had to be realigned (a modelling gap)
        self._frames: list[_Frame] = []
        self._stack: list[Word | None] = []
        self._journal: list[tuple[dict[Any, Any], Any, Any]] = []
        self._transient: dict[tuple[int, int], Any] = {}
        self._events: list[Any] = []  # the recorder's branch events (positions)
        self._overrides: dict[int, int] = {}
        self._override_address: int | None = None
        self._vars: dict[str, Any] = {}
        self._time: Any = None  # TIMESTAMP's and NUMBER's deltas so far, per transaction
        self._blocks: Any = None
        self._pinned: set[tuple[int, int]] = set()
        self._words = 0  # whole calldata words of the transaction's message
        # id(term) -> (term, tree size) for the terms built in this case (the term is kept
        # so that its id is not reused); unknown terms count as leaves.
        self._sizes: dict[int, tuple[Any, int]] = {}

    # ------------------------------------------------------------------ binding
    def bind(self, run: SymbolicRun, tx: int, events: list[Any] | None = None,
             overrides: dict[int, int] | None = None,
             override_address: int | None = None) -> None:
        """Record transaction ``tx`` into ``run`` (the recorder's containers).

        ``events`` is the recorder's list of branch events: a record's ``branch`` is the
        position its JUMPI takes there. Reads of ``override_address``'s slots named in
        ``overrides`` (Harvey's aggressive mode) are concrete: the case fixes them.
        """
        self.run = run
        self.tx = tx
        self._events = events if events is not None else []
        self._overrides = overrides or {}
        self._override_address = override_address
        self._frames = []
        self._stack = []
        self._journal = []
        self._transient = {}
        self._time = None
        self._blocks = None
        self._pinned = set()
        if tx == 0 or len(self._sizes) > 200_000:
            self._sizes = {}  # terms in storage keep their sizes for later transactions

    def variable(self, name: str, value: int) -> Any:
        """The 256-bit variable ``name``, bound to ``value`` in this run."""
        found = self._vars.get(name)
        if found is None:
            found = self._vars[name] = z3.BitVec(name, WIDTH)
        self.run.bindings.setdefault(name, value)
        return found

    # ------------------------------------------------------------------ messages
    def message_start(self, kind: int, sender: int, target: int, value: int, data: bytes,
                      depth: int) -> None:
        """A message begins: a fresh shadow frame (symbolic sources only at depth 0)."""
        top = not self._frames and kind not in (CREATE, CREATE2)
        if top:
            self.run.txs[self.tx] = SymTx(self.tx, sender, target, value, bytes(data))
            self._words = max(0, (len(data) - 4) // 32)
        frame = _Frame(depth, target, top, len(self._journal))
        self._frames.append(frame)
        self._stack = frame.stack

    def message_end(self, depth: int, success: bool) -> None:
        """A message ended: drop its frame, undo its storage writes if it failed."""
        frames = self._frames
        if not frames:
            return
        frame = frames.pop()
        if not success:
            self._undo(frame.journal_start)
        if frames:
            self._stack = frames[-1].stack
        else:
            self._stack = []
            self._journal = []
            self._transient = {}

    def _undo(self, start: int) -> None:
        journal = self._journal
        while len(journal) > start:
            table, key, old = journal.pop()
            if old is _ABSENT:
                table.pop(key, None)
            else:
                table[key] = old

    # ------------------------------------------------------------------ instructions
    def step(self, frame: Frame, pc: int, opcode: int, stack: list[int],
             kinds: list[int] = _KIND) -> None:
        """Apply instruction ``opcode`` (about to run at ``pc``) to the shadow state."""
        shadow = self._stack
        if len(shadow) != len(stack):
            self._resync(stack)
            shadow = self._stack
        kind = kinds[opcode]
        if kind == 1:  # PUSH
            shadow.append(None)
        elif kind == 2:  # DUP
            shadow.append(shadow[0x7F - opcode])
        elif kind == 3:  # SWAP
            other = 0x8E - opcode
            shadow[-1], shadow[other] = shadow[other], shadow[-1]
        elif kind == 4:  # POP
            shadow.pop()
        elif kind == 5:  # JUMPDEST
            pass
        elif kind == 6:  # a binary operation: work only when an operand is symbolic
            a = shadow.pop()
            b = shadow[-1]
            if a is not None or b is not None:
                result = binary(opcode, stack[-1] if a is None else a,
                                stack[-2] if b is None else b)
                shadow[-1] = None if isinstance(result, int) else self._sized(
                    frame, pc, opcode, result, ((a, stack[-1]), (b, stack[-2])))
        elif kind == 7:  # ISZERO, NOT
            a = shadow[-1]
            if a is not None:
                result = unary(opcode, a)
                shadow[-1] = None if isinstance(result, int) else self._sized(
                    frame, pc, opcode, result, ((a, stack[-1]),))
        elif kind == 8:  # a concrete value of the environment
            shadow.append(None)
        else:
            self._other(frame, pc, opcode, stack)

    def _size(self, term: Word | None) -> int:
        """The tree size of ``term`` (shared subterms counted every time), at least 1."""
        if term is None or isinstance(term, int):
            return 0
        entry = self._sizes.get(id(term))
        return entry[1] if entry is not None else 1

    def _sized(self, frame: Frame, pc: int, op: int, result: Any,
               operands: tuple[tuple[Word | None, int], ...]) -> Any:
        """``result`` as a shadow item, or None (concrete) when its tree is too large.

        z3 flattens products and sums of shared subterms into trees (``x*x`` squared 30
        times is a product of 2**30 factors), which exhausts memory in ``simplify`` and in
        the solver. A result beyond ``_TERM_LIMIT`` nodes is concretised instead: its
        symbolic operands are pinned to their values.
        """
        size = 1 + sum(self._size(term) for term, _ in operands)
        if size > _TERM_LIMIT:
            for term, value in operands:
                if term is not None:
                    self._pin(frame, pc, op, term, value, "term too large")
            return None
        self._sizes[id(result)] = (result, size)
        return result

    def _resync(self, stack: list[int]) -> None:
        """Realign the shadow stack with the live one: every item becomes concrete."""
        self.resyncs += 1
        shadow = self._frames[-1].stack if self._frames else self._stack
        shadow[:] = [None] * len(stack)
        self._stack = shadow

    def _other(self, frame: Frame, pc: int, op: int, stack: list[int]) -> None:
        shadow = self._stack
        if not self._frames:
            # A step outside any message the tracker saw (not bound): keep the height only.
            pops, pushes = _POPS[op], _PUSHES[op]
            if pops:
                del shadow[-pops:]
            shadow.extend([None] * pushes)
            return
        context = self._frames[-1]
        if op == JUMPI:
            target, condition = shadow.pop(), shadow.pop()
            if target is not None:
                self._pin(frame, pc, op, target, stack[-1], "jump target")
            if condition is not None:
                self._branch(frame, pc, condition, stack[-2] != 0)
        elif op == MLOAD:
            offset = self._concrete(frame, pc, op, shadow[-1], stack[-1], "memory offset")
            shadow[-1] = self._word(self._read(context, frame, offset, 32))
        elif op == MSTORE:
            self._concrete(frame, pc, op, shadow.pop(), stack[-1], "memory offset")
            self._store_word(context, stack[-1], shadow.pop())
        elif op == MSTORE8:
            self._concrete(frame, pc, op, shadow.pop(), stack[-1], "memory offset")
            value = shadow.pop()
            if value is None:
                self._clear(context, stack[-1], 1)
            else:
                self._write(context, stack[-1], [(value, 31)])
        elif op == SLOAD:
            self._sload(frame, pc, stack[-1], context)
        elif op == SSTORE:
            self._concrete(frame, pc, op, shadow.pop(), stack[-1], "storage key")
            value = shadow.pop()
            self._set(self.run.storage, (context.address, stack[-1]), value)
        elif op == CALLDATALOAD:
            offset = self._concrete(frame, pc, op, shadow[-1], stack[-1], "calldata offset")
            shadow[-1] = self._calldata_word(context, frame, offset)
        elif op == CALLER or op == CALLVALUE or op == ORIGIN or op == TIMESTAMP or op == NUMBER:
            shadow.append(self._source(frame, context, op))
        elif op == EXP:
            self._exp(frame, pc, stack)
        elif op in TERNARY:
            a, b, n = shadow.pop(), shadow.pop(), shadow[-1]
            if a is not None or b is not None or n is not None:
                result = ternary(op, stack[-1] if a is None else a,
                                 stack[-2] if b is None else b,
                                 stack[-3] if n is None else n)
                shadow[-1] = None if isinstance(result, int) else self._sized(
                    frame, pc, op, result, ((a, stack[-1]), (b, stack[-2]), (n, stack[-3])))
        elif op == JUMP:
            target = shadow.pop()
            if target is not None:
                self._pin(frame, pc, op, target, stack[-1], "jump target")
        else:
            self._special(frame, pc, op, stack, context)

    def _special(self, frame: Frame, pc: int, op: int, stack: list[int],
                 context: _Frame) -> None:
        shadow = self._stack
        if op == KECCAK256:
            offset = self._concrete(frame, pc, op, shadow.pop(), stack[-1], "memory offset")
            size = self._concrete(frame, pc, op, shadow[-1], stack[-2], "memory size")
            data = self._read(context, frame, offset, size)
            if data is not None:
                self._pin(frame, pc, op, data, _memory_int(frame, offset, size),
                          "hashed bytes")
            shadow[-1] = None
        elif op == CALLDATACOPY:
            dest, start, size = self._operands(frame, pc, op, stack, 3)
            self._copy_calldata(context, frame, dest, start, size)
        elif op == CODECOPY or op == RETURNDATACOPY:
            dest, _, size = self._operands(frame, pc, op, stack, 3)
            self._clear(context, dest, size)
        elif op == EXTCODECOPY:
            _, dest, _, size = self._operands(frame, pc, op, stack, 4)
            self._clear(context, dest, size)
        elif op == MCOPY:
            dest, start, size = self._operands(frame, pc, op, stack, 3)
            self._mcopy(context, dest, start, size)
        elif op == TLOAD:
            key = self._concrete(frame, pc, op, shadow[-1], stack[-1], "storage key")
            shadow[-1] = self._transient.get((context.address, key))
        elif op == TSTORE:
            self._concrete(frame, pc, op, shadow.pop(), stack[-1], "storage key")
            self._set(self._transient, (context.address, stack[-1]), shadow.pop())
        elif op in _CALL_POPS:
            self._call(frame, pc, op, stack, context)
        elif op == CREATE or op == CREATE2:
            _, offset, size, *_ = self._operands(frame, pc, op, stack, _POPS[op])
            self._pin_bytes(frame, pc, op, context, offset, size, "creation code")
            shadow.append(None)
        elif op == RETURN or op == REVERT:
            offset, size = self._operands(frame, pc, op, stack, 2)
            if context.depth:
                self._pin_bytes(frame, pc, op, context, offset, size, "returned bytes")
        elif op == SELFDESTRUCT:
            self._operands(frame, pc, op, stack, 1)
        elif LOG0 <= op <= LOG4:
            del shadow[-_POPS[op]:]  # what is logged steers nothing
        elif op in _ADDRESSED:
            self._concrete(frame, pc, op, shadow[-1], stack[-1], "address or number")
            shadow[-1] = None
        else:
            # STOP, INVALID, undefined opcodes and anything else: concrete results.
            pops, pushes = _POPS[op], _PUSHES[op]
            for index in range(pops):
                self._concrete(frame, pc, op, shadow[-1 - index], stack[-1 - index],
                               "operand")
            if pops:
                del shadow[-pops:]
            shadow.extend([None] * pushes)

    # ------------------------------------------------------------------ operands
    def _concrete(self, frame: Frame, pc: int, op: int, term: Word | None, value: int,
                  reason: str) -> int:
        """``value``, pinning ``term`` to it when the operand is symbolic."""
        if term is not None:
            self._pin(frame, pc, op, term, value, reason)
        return value

    def _operands(self, frame: Frame, pc: int, op: int, stack: list[int],
                  count: int) -> list[int]:
        """Pop ``count`` operands from the shadow, concretised; their live values."""
        shadow = self._stack
        values = []
        for index in range(count):
            term = shadow.pop()
            value = stack[-1 - index]
            if term is not None:
                self._pin(frame, pc, op, term, value, "operand")
            values.append(value)
        return values

    def _pin(self, frame: Frame, pc: int, op: int, term: Any, value: int,
             reason: str) -> None:
        key = (term.get_id(), value)
        if key in self._pinned:
            return  # the same term pinned to the same value once per transaction
        self._pinned.add(key)
        run = self.run
        run.pins.append(SymPin(self.tx, frame.depth, frame.address, pc, op, term, value,
                               len(run.branches) + len(run.pins), reason))

    def _branch(self, frame: Frame, pc: int, condition: Any, taken: bool) -> None:
        test = truth(condition)
        if z3.is_true(test) or z3.is_false(test):
            return  # the same way for every input: no branch to record
        run = self.run
        run.branches.append(SymBranch(
            self.tx, frame.depth, frame.address, frame.code_hash, pc, taken, test,
            len(self._events), len(run.branches) + len(run.pins), not run.pins))

    # ------------------------------------------------------------------ sources
    def _source(self, frame: Frame, context: _Frame, op: int) -> Any:
        tx = self.tx
        if op == TIMESTAMP or op == NUMBER:
            return const(frame.env.timestamp if op == TIMESTAMP else frame.env.number) + (
                self._deltas("time" if op == TIMESTAMP else "blocks"))
        if op == ORIGIN:
            return self.variable(f"tx{tx}_sender", frame.evm.origin)
        if not context.top:
            return None
        if op == CALLER:
            return self.variable(f"tx{tx}_sender", frame.caller)
        info = self.run.txs.get(tx)
        if info is not None and info.balance is None:
            # What the sender could have sent: its balance now plus the value it sent.
            sent = frame.state.balance(frame.caller) + (
                frame.value if frame.caller != frame.address else 0)
            self.run.txs[tx] = replace(info, balance=sent)
        return self.variable(f"tx{tx}_value", frame.value)

    def _deltas(self, kind: str) -> Any:
        """The sum of the ``kind`` deltas of transactions 0 to the current one."""
        found = self._time if kind == "time" else self._blocks
        if found is None:
            terms = [self.variable(f"tx{i}_{kind}", 0) for i in range(self.tx + 1)]
            found = terms[0] if len(terms) == 1 else z3.Sum(terms)
            if kind == "time":
                self._time = found
            else:
                self._blocks = found
        return found

    def _calldata_word(self, context: _Frame, frame: Frame, offset: int) -> Any:
        if not context.top:
            return None
        relative = offset - 4
        if relative >= 0 and relative % 32 == 0 and relative // 32 < self._words:
            return self._calldata_var(relative // 32, frame)
        if offset + 32 <= 4 or relative >= 32 * self._words:
            return None  # the selector or beyond the whole words: concrete
        parts: list[Byte | None] = [self._calldata_byte(frame, offset + i) for i in range(32)]
        return self._word(self._assemble(parts, _padded(frame.calldata, offset, 32)))

    def _calldata_var(self, word: int, frame: Frame) -> Any:
        start = 4 + 32 * word
        value = int.from_bytes(frame.calldata[start:start + 32], "big")
        return self.variable(f"tx{self.tx}_w{word}", value)

    def _calldata_byte(self, frame: Frame, position: int) -> Byte | None:
        relative = position - 4
        if relative < 0 or relative >= 32 * self._words:
            return None
        return (self._calldata_var(relative // 32, frame), relative % 32)

    # ------------------------------------------------------------------ storage
    def _sload(self, frame: Frame, pc: int, slot: int, context: _Frame) -> None:
        shadow = self._stack
        self._concrete(frame, pc, SLOAD, shadow[-1], slot, "storage key")
        address = context.address
        overrides = self._overrides
        if overrides and (slot if address == self._override_address
                          else (address << 256) | slot) in overrides:
            shadow[-1] = None  # the case fixes this read (aggressive mode)
            return
        storage = self.run.storage
        key = (address, slot)
        if key in storage:
            shadow[-1] = storage[key]
            return
        value = frame.state.storage_at(address, slot)
        shadow[-1] = self.variable(state_variable(address, slot), value)

    def _set(self, table: dict[Any, Any], key: Any, value: Any) -> None:
        self._journal.append((table, key, table.get(key, _ABSENT)))
        table[key] = value

    # ------------------------------------------------------------------ memory
    def _word(self, term: Any | None) -> Any:
        """A 256-bit term as a shadow item (None when it is a constant)."""
        if term is None or z3.is_bv_value(term):
            return None
        return term

    def _read(self, context: _Frame, frame: Frame, offset: int, size: int) -> Any | None:
        """The term of ``size`` memory bytes at ``offset``, None if all are concrete."""
        if (not size or offset >= context.hi or offset + size <= context.lo
                or size > _MEMORY_LIMIT):
            return None
        memory = context.memory
        parts = [memory.get(offset + i) for i in range(size)]
        return self._assemble(parts, _padded(frame.memory, offset, size))

    def _assemble(self, parts: list[Byte | None], concrete: bytes) -> Any | None:
        """Concatenate shadow bytes (runs of one term's bytes become one ``Extract``)."""
        if all(part is None for part in parts):
            return None
        if len(parts) == 32:
            first = parts[0]
            if first is not None and first[1] == 0 and all(
                    part is not None and part[0] is first[0] and part[1] == i
                    for i, part in enumerate(parts)):
                return first[0]  # the 32 bytes of one word, in order
        pieces: list[Any] = []
        size = 1
        index = 0
        count = len(parts)
        while index < count:
            part = parts[index]
            end = index + 1
            if part is None:
                while end < count and parts[end] is None:
                    end += 1
                # A creation code or a hashed buffer runs to kilobytes: built in chunks.
                pieces.append(bytes_const(concrete[index:end]))
            else:
                term, first_byte = part
                while end < count:
                    following = parts[end]
                    if (following is None or following[0] is not term
                            or following[1] != first_byte + end - index):
                        break
                    end += 1
                last_byte = first_byte + end - index - 1
                size += self._size(term) + 1
                if first_byte == 0 and last_byte == 31:
                    pieces.append(term)
                else:
                    pieces.append(z3.Extract(255 - 8 * first_byte, 248 - 8 * last_byte, term))
            index = end
        result = pieces[0] if len(pieces) == 1 else z3.Concat(*pieces)
        self._sizes[id(result)] = (result, size)
        return result

    def _store_word(self, context: _Frame, offset: int, value: Any | None) -> None:
        if value is None:
            self._clear(context, offset, 32)
        else:
            self._write(context, offset, [(value, i) for i in range(32)])

    def _write(self, context: _Frame, offset: int, parts: list[Byte]) -> None:
        end = offset + len(parts)
        if end > _MEMORY_LIMIT:
            return
        memory = context.memory
        for i, part in enumerate(parts):
            memory[offset + i] = part
        context.lo = min(context.lo, offset)
        context.hi = max(context.hi, end)

    def _clear(self, context: _Frame, offset: int, size: int) -> None:
        if not size or offset >= context.hi or offset + size <= context.lo:
            return
        memory = context.memory
        for position in range(max(offset, context.lo), min(offset + size, context.hi)):
            memory.pop(position, None)

    def _copy_calldata(self, context: _Frame, frame: Frame, dest: int, start: int,
                       size: int) -> None:
        if not size:
            return
        if not context.top or start + size <= 4 or start - 4 >= 32 * self._words:
            self._clear(context, dest, size)
            return
        self._clear(context, dest, size)
        parts = [self._calldata_byte(frame, start + i) for i in range(size)]
        for i, part in enumerate(parts):
            if part is not None:
                self._write(context, dest + i, [part])

    def _mcopy(self, context: _Frame, dest: int, start: int, size: int) -> None:
        if not size:
            return
        memory = context.memory
        parts = [memory.get(start + i) for i in range(size)] if not (
            start >= context.hi or start + size <= context.lo) else []
        self._clear(context, dest, size)
        for i, part in enumerate(parts):
            if part is not None:
                self._write(context, dest + i, [part])

    def _pin_bytes(self, frame: Frame, pc: int, op: int, context: _Frame, offset: int,
                   size: int, reason: str) -> None:
        data = self._read(context, frame, offset, size)
        if data is not None:
            self._pin(frame, pc, op, data, _memory_int(frame, offset, size), reason)

    # ------------------------------------------------------------------ calls, EXP
    def _call(self, frame: Frame, pc: int, op: int, stack: list[int],
              context: _Frame) -> None:
        values = self._operands(frame, pc, op, stack, _CALL_POPS[op])
        rest = values[3:] if op == CALL or op == CALLCODE else values[2:]
        in_offset, in_size, out_offset, out_size = rest
        self._pin_bytes(frame, pc, op, context, in_offset, in_size, "call input")
        self._clear(context, out_offset, out_size)  # the callee's output is concrete
        self._stack.append(None)

    def _exp(self, frame: Frame, pc: int, stack: list[int]) -> None:
        shadow = self._stack
        base, exponent = shadow.pop(), shadow[-1]
        if base is None and exponent is None:
            return
        concrete_base, concrete_exponent = stack[-1], stack[-2]
        result: Word
        if exponent is not None and base is None:
            found = exp_power_of_two(concrete_base, exponent)
            if found is None:
                self._pin(frame, pc, EXP, exponent, concrete_exponent, "exponent")
                result = 0
            else:
                result = found
        else:
            if exponent is not None:
                self._pin(frame, pc, EXP, exponent, concrete_exponent, "exponent")
            if self._size(base) * concrete_exponent > _TERM_LIMIT:
                # The product has that many factors once z3 flattens it: too large.
                self._pin(frame, pc, EXP, base, concrete_base, "term too large")
                result = 0
            else:
                result = exp_concrete_exponent(base, concrete_exponent)
        shadow[-1] = None if isinstance(result, int) else self._sized(
            frame, pc, EXP, result, ((base, concrete_base), (exponent, concrete_exponent)))


def _padded(data: bytes | bytearray, offset: int, size: int) -> bytes:
    """``data[offset:offset + size]`` zero-padded to ``size`` bytes."""
    chunk = bytes(data[offset:offset + size]) if offset < len(data) else b""
    return chunk.ljust(size, b"\0")


def _memory_int(frame: Frame, offset: int, size: int) -> int:
    return int.from_bytes(_padded(frame.memory, offset, size), "big")
