"""Compile each basic block of EVM code into one Python function.

Why: a per-instruction dispatch loop spends most of its time on Python calls and on pushing
and popping a list. A generated function per block runs straight-line code over locals:

- a *virtual stack* of Python expressions replaces the EVM stack inside the block: PUSH, DUP,
  SWAP and POP are renames at generation time, pure arithmetic becomes one inline statement,
  and operations on constants are folded;
- the real stack (a list) is read only for items the block inherits and written once, when
  the block leaves (``flush``), or before an instruction that needs the real stack;
- static gas and stack bounds are checked once at block entry (see ``analysis.py`` for why
  that is exact);
- instrumentation is generated only into the traced variants: the comparison that decides a
  JUMPI is known at generation time, so its operands are passed to ``on_branch`` directly
  (``TRACED``, ``STEPPED``) or appended as one tuple to the frame's branch log (``RECORDED``:
  no Python call per branch, see ``secant.evm.inspector``).

A block function takes ``(stack, frame)`` and returns the pc of the next block.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from secant.evm import errors
from secant.evm.forks import Fork
from secant.evm.frame import BlockFn
from secant.evm.instructions import (
    arithmetic,
    comparison,
    control_flow,
    environment,
    log,
    stack,
    storage,
    system,
)
from secant.evm.memory import expand
from secant.evm.opcodes import (
    ADDRESS,
    BASEFEE,
    BLOBBASEFEE,
    BLOCKHASH,
    CALL,
    CALLCODE,
    CALLDATALOAD,
    CALLDATASIZE,
    CALLER,
    CALLVALUE,
    CHAINID,
    CLZ,
    CODESIZE,
    COINBASE,
    CREATE,
    CREATE2,
    DELEGATECALL,
    DUP1,
    DUP16,
    EXP,
    GAS,
    GASLIMIT,
    GASPRICE,
    HALTS,
    ISZERO,
    JUMP,
    JUMPDEST,
    JUMPI,
    KECCAK256,
    LOG0,
    LOG4,
    MLOAD,
    MSIZE,
    MSTORE,
    MSTORE8,
    NOT,
    NUMBER,
    OPS,
    ORIGIN,
    PC,
    POP,
    PREVRANDAO,
    PUSH0,
    PUSH32,
    RETURN,
    RETURNDATASIZE,
    REVERT,
    SLOAD,
    SSTORE,
    STATICCALL,
    STOP,
    SUB,
    SWAP1,
    SWAP16,
    TIMESTAMP,
    XOR,
)
from secant.evm.pure import NAMESPACE, PURE

PLAIN, TRACED, STEPPED, RECORDED = 0, 1, 2, 3
VARIANT_NAMES = ("plain", "traced", "stepped", "recorded")
STACK_LIMIT = 1024

Instruction = tuple[int, int, int]  # (pc, opcode, push value)

HANDLERS: dict[int, Callable[..., None]] = {}
for _module in (arithmetic, comparison, control_flow, environment, log, stack, storage, system):
    HANDLERS.update(_module.HANDLERS)

# The pure operations (``secant.evm.pure``) written inline: two-operand ones with their
# template (over top ``a`` and second ``b``) and the folding function for constants, and
# three-operand ones (not folded). EXP calls the interpreter's ``exp``, which charges its
# gas (it depends on the exponent).
_BINARY: dict[int, tuple[str, Callable[[int, int], int]]] = {
    op: (pure.template, pure.compute) for op, pure in PURE.items()
    if pure.arity == 2 and op != EXP}
_TERNARY: dict[int, str] = {op: pure.template for op, pure in PURE.items() if pure.arity == 3}
_ISZERO = PURE[ISZERO]
_NOT = PURE[NOT]
_DIFFERENCES = frozenset({SUB, XOR})
_NEGATE = {
    "eq": "ne", "ne": "eq", "lt": "ge", "ge": "lt", "gt": "le", "le": "gt",
    "slt": "sge", "sge": "slt", "sgt": "sle", "sle": "sgt",
}
# Values that cannot change while a frame runs: pushed as expressions, not copied to locals.
_FRAME_CONSTANTS = {ADDRESS: "f.address", CALLER: "f.caller", CALLVALUE: "f.value",
                    CALLDATASIZE: "len(f.calldata)"}
# Reads whose value is fixed for the block but not for the frame: copied into a local.
_READS = {
    ORIGIN: "f.evm.origin", GASPRICE: "f.evm.gas_price", RETURNDATASIZE: "len(f.return_data)",
    CHAINID: "f.env.chain_id", MSIZE: "len(f.memory)", GAS: "f.gas",
    COINBASE: "f.env.coinbase", TIMESTAMP: "f.env.timestamp", NUMBER: "f.env.number",
    PREVRANDAO: "f.env.prev_randao", GASLIMIT: "f.env.gas_limit", BASEFEE: "f.env.base_fee",
    BLOBBASEFEE: "f.evm.blob_base_fee",
}
# Reads reported to inspectors as block values (BLOCKHASH is not in _READS: it pops).
_BLOCK_VALUES = frozenset(
    {BLOCKHASH, COINBASE, TIMESTAMP, NUMBER, PREVRANDAO, GASLIMIT, BASEFEE, BLOBBASEFEE})
_CALLS = frozenset({CREATE, CALL, CALLCODE, DELEGATECALL, CREATE2, STATICCALL})


def _do_return(f: Any, offset: int, size: int) -> None:
    f.output = stack_bytes(f, offset, size)
    raise errors.Stop


def _do_revert(f: Any, offset: int, size: int) -> None:
    f.output = stack_bytes(f, offset, size)
    raise errors.Revert


def stack_bytes(f: Any, offset: int, size: int) -> bytes:
    """Memory ``[offset, offset + size)`` after charging its expansion."""
    if not size:
        return b""
    expand(f, offset + size)
    return bytes(f.memory[offset : offset + size])


def escaped(f: Any, value: int, negate: bool) -> tuple[str, int, int]:
    """The comparison behind a branch condition computed in an earlier block.

    ``f.cmp`` holds the last comparison whose result left a block; when its value is the
    condition's, its relation and operands describe the branch (negated under ISZERO).
    Otherwise the condition is only known as a value compared with zero.
    """
    last = f.cmp
    if last is not None and last[0] == value:
        rel = _NEGATE[last[1]] if negate else last[1]
        return rel, last[2], last[3]
    return ("eq", value, 0) if negate else ("ne", value, 0)


def _namespace(jumpdests: frozenset[int], code_hash: bytes) -> dict[str, Any]:
    ns: dict[str, Any] = {
        **NAMESPACE, "JD": jumpdests, "H": code_hash,
        "Stop": errors.Stop, "InvalidJump": errors.InvalidJump,
        "InvalidOpcode": errors.InvalidOpcode, "OutOfGas": errors.OutOfGas,
        "StackUnderflow": errors.StackUnderflow, "StackOverflow": errors.StackOverflow,
        "exp": arithmetic.exp, "mload": stack.mload, "mstore": stack.mstore,
        "mstore8": stack.mstore8,
        "keccak_memory": stack.keccak_memory, "calldataload": environment.calldataload,
        "sload": storage.sload, "sstore": storage.sstore, "log_event": log.log_event,
        "do_return": _do_return, "do_revert": _do_revert, "escaped": escaped,
    }
    for op, fn in HANDLERS.items():
        ns[f"H{op:02x}"] = fn
    return ns


def _is_const(expr: str) -> bool:
    return expr[0].isdigit()


class _BlockWriter:
    """Writes one block function; holds the virtual stack while doing so."""

    def __init__(self, variant: int, jumpdests: frozenset[int], fork: Fork, code_len: int,
                 blocks: dict[int, list[Instruction]] | None = None) -> None:
        self.variant = variant
        self.jumpdests = jumpdests
        self.fork = fork
        self.code_len = code_len
        # With ``blocks``, a block runs on into its static successors (``exit_to``).
        self.blocks = blocks or {}
        self.lines: list[str] = []
        self.items: list[str] = []
        self.meta: dict[str, tuple[str, str, str]] = {}
        self.counter = 0
        self.indent = "    "
        self.path: list[int] = []  # the blocks being written, outermost first
        self.budget = FUSE_INSTRUCTIONS
        self.fused = False

    # -------------------------------------------------------------- virtual stack
    def emit(self, line: str) -> None:
        self.lines.append(self.indent + line)

    def local(self) -> str:
        self.counter += 1
        return f"t{self.counter}"

    def pop(self) -> str:
        if self.items:
            return self.items.pop()
        name = self.local()
        self.emit(f"{name} = s.pop()")
        return name

    def push(self, expr: str) -> None:
        self.items.append(expr)

    def assign(self, expr: str) -> str:
        name = self.local()
        self.emit(f"{name} = {expr}")
        self.items.append(name)
        return name

    def dup(self, n: int) -> None:
        if n <= len(self.items):
            self.items.append(self.items[-n])
        else:
            name = self.local()
            self.emit(f"{name} = s[-{n - len(self.items)}]")
            self.items.append(name)

    def swap(self, n: int) -> None:
        items = self.items
        if not items:
            self.emit(f"s[-1], s[-{n + 1}] = s[-{n + 1}], s[-1]")
            return
        while len(items) < n + 1:
            name = self.local()
            self.emit(f"{name} = s.pop()")
            items.insert(0, name)
        items[-1], items[-n - 1] = items[-n - 1], items[-1]

    def flush(self) -> None:
        items = self.items
        if self.variant != PLAIN:
            # A comparison result leaving the block: remember its operands for the JUMPI
            # that may test it in a later block (see ``escaped``).
            for item in reversed(items):
                meta = self.meta.get(item)
                if meta is not None:
                    rel, lhs, rhs = meta
                    self.emit(f"f.cmp = ({item}, '{rel}', {lhs}, {rhs})")
                    break
        if len(items) == 1:
            self.emit(f"s.append({items[0]})")
        elif items:
            self.emit(f"s.extend(({', '.join(items)},))")
        items.clear()

    # -------------------------------------------------------------- instructions
    def branch(self, pc: int, outcome: str) -> None:
        """Report a JUMPI: ``outcome`` is ``taken, relation, lhs, rhs`` as expressions."""
        if self.variant == RECORDED:
            self.emit(f"f.branch_log((H, {pc}, {outcome}))")
        else:
            self.emit(f"f.evm.inspector.on_branch(f, {pc}, {outcome})")

    def word_end(self, offset: str) -> str:
        """An expression for ``offset + 32`` (folded for a constant, a local otherwise)."""
        if _is_const(offset):
            return hex(int(offset, 0) + 32)
        name = self.local()
        self.emit(f"{name} = {offset} + 32")
        return name

    def jump_target(self, dest: str) -> None:
        """Emit the jump to ``dest`` with its validity check."""
        known = _known(dest)
        if known is not None:
            if known in self.jumpdests:
                self.exit_to(known)
            else:
                self.emit("raise InvalidJump")
        else:
            self.emit(f"if {dest} not in JD: raise InvalidJump")
            self.emit(f"return {dest}")

    def exit_to(self, target: int) -> None:
        """Leave the block for the one at ``target``: run on into it, or return its pc.

        The successor is written inline (``block``) while the function stays within
        ``FUSE_DEPTH`` blocks and ``FUSE_INSTRUCTIONS`` instructions and ``target`` is not
        already being written (a loop). The virtual stack goes with it, as it would go
        through the real stack (``cross``).
        """
        instrs = self.blocks.get(target)
        if (instrs is None or target in self.path or len(self.path) > FUSE_DEPTH
                or len(instrs) > self.budget):
            self.flush()
            self.emit(f"return {target}")
            return
        self.budget -= len(instrs)
        self.cross()
        if self.variant == RECORDED:
            self.emit(f"V({target})")  # as the interpreter's loop records a block's entry
        self.fused = True
        self.block(target, instrs)

    def cross(self) -> None:
        """What leaving a block does to the virtual stack, for the block written next.

        Exactly what a flush would make of it for a block that reads the real stack: the
        last comparison leaving the block is remembered for ``escaped``, and the items lose
        what only the block knew of them (their comparisons; that they are constants:
        wrapped in parentheses, a constant is an expression like any other, except as a
        jump destination or a JUMPI's decided condition, which ``_known`` still reads).
        """
        if self.variant != PLAIN:
            for item in reversed(self.items):
                meta = self.meta.get(item)
                if meta is not None:
                    rel, lhs, rhs = meta
                    self.emit(f"f.cmp = ({item}, '{rel}', {lhs}, {rhs})")
                    break
        self.meta = {}
        self.items = [f"({item})" if _is_const(item) else item for item in self.items]

    def block(self, start: int, instrs: list[Instruction]) -> None:
        """Write the block at ``start``: its checks, its instructions and its exit."""
        gas, low, high = _checks(instrs, self.fork)
        inherited = len(self.items)  # stack items the virtual stack still holds
        if gas:
            self.emit(f"g = f.gas - {gas}")
            self.emit("if g < 0: raise OutOfGas")
            self.emit("f.gas = g")
        under = -low - inherited
        if under > 0 or high > 0:
            self.emit("n = len(s)")
            if under > 0:
                self.emit(f"if n < {under}: raise StackUnderflow")
            if high > 0:
                self.emit(f"if n > {STACK_LIMIT - high - inherited}: raise StackOverflow")
        self.path.append(start)
        last_pc, last_op, _ = instrs[-1]
        info = OPS.get(last_op)
        code_len = self.code_len
        end_pc = min(last_pc + 1 + (info.immediate if info else 0), code_len)
        for pc, op, value in instrs:
            info = OPS.get(op)
            next_pc = min(pc + 1 + (info.immediate if info else 0), code_len)
            if self.variant == STEPPED:
                self.flush()
                self.emit(f"f.pc = {pc}")
                self.emit(f"f.evm.inspector.on_step(f, {pc}, {op}, s)")
            if op == CODESIZE:  # a constant of the code
                self.push(hex(code_len))
                continue
            if self.instruction(pc, op, value, next_pc, self.fork):
                break
        else:
            self.exit_to(end_pc)
        self.path.pop()

    def instruction(self, pc: int, op: int, value: int, next_pc: int, fork: Fork) -> bool:
        """Emit one instruction; return True if it ended the function."""
        traced = self.variant != PLAIN
        if op not in fork.opcodes:
            self.emit(f"f.pc = {pc}")
            self.emit("raise InvalidOpcode")
            return True
        if PUSH0 <= op <= PUSH32:
            self.push(hex(value))
        elif DUP1 <= op <= DUP16:
            self.dup(op - DUP1 + 1)
        elif SWAP1 <= op <= SWAP16:
            self.swap(op - SWAP1 + 1)
        elif op == POP:
            self.pop()
        elif op == JUMPDEST:
            pass
        elif op in _BINARY:
            template, fold = _BINARY[op]
            a = self.pop()
            b = self.pop()
            # Traced code keeps comparisons of constants so on_branch sees their operands.
            if _is_const(a) and _is_const(b) and not (traced and op in comparison.RELATION):
                self.push(hex(fold(int(a, 0), int(b, 0))))
            else:
                name = self.assign(template.format(a=a, b=b))
                if traced and op in comparison.RELATION:
                    self.meta[name] = (comparison.RELATION[op], a, b)
                elif traced and op in _DIFFERENCES:
                    # solc tests equality as JUMPI(SUB(a, b)) or XOR: nonzero iff a != b,
                    # so the branch is a != b with both operands, not "difference != 0".
                    self.meta[name] = ("ne", a, b)
        elif op == ISZERO:
            a = self.pop()
            if _is_const(a) and not traced:
                self.push(hex(_ISZERO.compute(int(a, 0))))
            else:
                name = self.assign(_ISZERO.template.format(a=a))
                if traced:
                    inner = self.meta.get(a)
                    self.meta[name] = (
                        (_NEGATE[inner[0]], inner[1], inner[2]) if inner else ("eq", a, "0")
                    )
        elif op == NOT:
            a = self.pop()
            if _is_const(a):
                self.push(hex(_NOT.compute(int(a, 0))))
            else:
                self.assign(_NOT.template.format(a=a))
        elif op == CLZ:
            a = self.pop()
            self.assign(f"256 - {a}.bit_length()")
        elif op in _TERNARY:
            a, b, c = self.pop(), self.pop(), self.pop()
            self.assign(_TERNARY[op].format(a=a, b=b, c=c))
        elif op == EXP:
            a = self.pop()
            b = self.pop()
            self.assign(f"exp(f, {a}, {b})")
        elif op in _FRAME_CONSTANTS:
            self.push(_FRAME_CONSTANTS[op])
        elif op == PC:
            self.push(hex(pc))
        elif op in _READS:
            name = self.assign(_READS[op])
            if traced and op in _BLOCK_VALUES:
                self.emit(f"f.evm.inspector.on_block_value(f, {pc}, {op}, {name})")
        elif op == BLOCKHASH:
            a = self.pop()
            name = self.assign(f"f.env.block_hash({a})")
            if traced:
                self.emit(f"f.evm.inspector.on_block_value(f, {pc}, {op}, {name})")
        elif op == MLOAD:
            # Inline when memory already covers the word; the helper grows it (and charges).
            a = self.pop()
            end = self.word_end(a)
            self.assign(f"int.from_bytes(f.memory[{a}:{end}], 'big') if {end} <= len(f.memory) "
                        f"else mload(f, {a})")
        elif op == MSTORE:
            a = self.pop()
            b = self.pop()
            end = self.word_end(a)
            self.emit(f"if {end} <= len(f.memory): f.memory[{a}:{end}] = {b}.to_bytes(32, 'big')")
            self.emit(f"else: mstore(f, {a}, {b})")
        elif op == MSTORE8:
            a = self.pop()
            b = self.pop()
            self.emit(f"mstore8(f, {a}, {b})")
        elif op == CALLDATALOAD:
            # Inline when the word lies inside the calldata; the helper pads with zeros.
            a = self.pop()
            end = self.word_end(a)
            self.assign(f"int.from_bytes(f.calldata[{a}:{end}], 'big') if {end} <= "
                        f"len(f.calldata) else calldataload(f, {a})")
        elif op == KECCAK256:
            a = self.pop()
            b = self.pop()
            self.assign(f"keccak_memory(f, {a}, {b})")
        elif op == SLOAD:
            a = self.pop()
            name = self.assign(f"sload(f, {a})")
            if traced:
                self.emit(f"{name} = f.evm.inspector.on_sload(f, {pc}, {a}, {name})")
        elif op == SSTORE:
            a = self.pop()
            b = self.pop()
            if traced:
                old = self.local()
                self.emit(f"{old} = sstore(f, {a}, {b})")
                self.emit(f"f.evm.inspector.on_sstore(f, {pc}, {a}, {old}, {b})")
            else:
                self.emit(f"sstore(f, {a}, {b})")
        elif op == JUMP:
            dest = self.pop()
            self.flush()
            self.jump_target(dest)
            return True
        elif op == JUMPI:
            dest = self.pop()
            cond = self.pop()
            if traced:
                meta = self.meta.get(cond)
                if meta is None and not _is_const(cond):
                    # Decided by a value computed in an earlier block: its comparison, if
                    # the last one to leave a block is that value.
                    self.branch(pc, f"{cond} != 0, *escaped(f, {cond}, False)")
                elif (meta is not None and meta[0] == "eq" and meta[2] == "0"
                        and meta[1] not in self.meta and not _is_const(meta[1])):
                    # ISZERO of such a value: the same comparison, negated.
                    self.branch(pc, f"{cond} != 0, *escaped(f, {meta[1]}, True)")
                else:
                    rel, lhs, rhs = meta or ("ne", cond, "0")
                    self.branch(pc, f"{cond} != 0, '{rel}', {lhs}, {rhs}")
            self.flush()
            known = _known(cond)
            if known is not None:
                if known:
                    self.jump_target(dest)
                else:
                    self.exit_to(next_pc)
                return True
            self.emit(f"if {cond}:")
            # Both sides start from the flushed stack: what the taken side wrote inline
            # (its virtual stack, its comparisons) is not the other side's.
            outer, known_meta = self.indent, dict(self.meta)
            self.indent += "    "
            self.jump_target(dest)
            self.indent, self.items, self.meta = outer, [], known_meta
            self.exit_to(next_pc)
            return True
        elif op == STOP:
            self.emit(f"f.pc = {pc}")
            self.emit("raise Stop")
            return True
        elif op == RETURN or op == REVERT:
            a = self.pop()
            b = self.pop()
            self.emit(f"f.pc = {pc}")
            self.emit(f"{'do_return' if op == RETURN else 'do_revert'}(f, {a}, {b})")
            return True
        elif LOG0 <= op <= LOG4:
            self.flush()
            if traced:
                self.emit(f"topics, data = log_event(s, f, {op - LOG0})")
                self.emit(f"f.evm.inspector.on_log(f, {pc}, topics, data)")
            else:
                self.emit(f"log_event(s, f, {op - LOG0})")
        else:
            # Everything else runs its stack handler on the real stack.
            self.flush()
            if op in _CALLS:
                self.emit(f"f.pc = {next_pc}")
            elif op in HALTS:
                self.emit(f"f.pc = {pc}")
            self.emit(f"H{op:02x}(s, f, None)")
        return False


def _checks(instrs: list[Instruction], fork: Fork) -> tuple[int, int, int]:
    """A block's static gas and the lowest and highest stack heights it reaches (relative)."""
    gas = low = high = height = 0
    for _, op, _ in instrs:
        info = OPS.get(op)
        if info is None or op not in fork.opcodes:
            break
        gas += fork.static_gas[op]
        height -= info.pops
        low = min(low, height)
        height += info.pushes
        high = max(high, height)
    return gas, low, high


def _known(expr: str) -> int | None:
    """The value of a constant item, also of one a block boundary wrapped (``cross``)."""
    if _is_const(expr):
        return int(expr, 0)
    if expr.startswith("(") and expr.endswith(")") and _is_const(expr[1:-1]):
        return int(expr[1:-1], 0)
    return None


FUSE_DEPTH = 4
"""How many block boundaries in a row a block's function runs on across."""
FUSE_INSTRUCTIONS = 96
"""The most instructions a block's function takes in from its successors."""


def block_source(
    name: str,
    instrs: list[Instruction],
    fork: Fork,
    variant: int,
    jumpdests: frozenset[int],
    code_len: int,
    blocks: dict[int, list[Instruction]] | None = None,
) -> str:
    """Python source of the function for one basic block.

    With ``blocks`` (every block of the code by its start), the function runs on into the
    blocks its exits lead to when they are known when the code is generated (a jump to a
    constant, the fall into the next block, either side of a JUMPI whose target is a
    constant), up to ``FUSE_DEPTH`` boundaries and ``FUSE_INSTRUCTIONS`` instructions,
    never around a loop. Why: a Python call and a turn of the interpreter's loop per block
    cost about as much as a small block's own work, and solc's code is mostly small blocks
    joined by such jumps; an internal function's return address is a constant its caller
    pushed, so across the call the return is known too. Each block keeps its own gas and
    stack checks at its entry, and the recorded variant records its entry in the trail as
    the loop would, so a function does exactly what its blocks would one at a time.
    """
    w = _BlockWriter(variant, jumpdests, fork, code_len, blocks)
    w.block(instrs[0][0], instrs)
    if w.fused and variant == RECORDED:
        w.lines.insert(0, "    V = f.trail.append")
    return f"def {name}(s, f):\n" + "\n".join(w.lines) + "\n"


def compile_blocks(
    blocks: list[tuple[int, list[Instruction]]],
    fork: Fork,
    variant: int,
    jumpdests: frozenset[int],
    code_len: int,
    label: str,
    code_hash: bytes = b"",
    barriers: frozenset[int] = frozenset(),
    wrap: Callable[[BlockFn, int], BlockFn] | None = None,
) -> list[BlockFn | None]:
    """The table of ``blocks``' functions, indexed by pc; each is compiled on its first run.

    ``code_hash`` is the code's (the recorded variant names it in every branch it logs).
    No function runs on into a block that starts at one of ``barriers``: those are entered
    through the table only, where ``wrap`` (when given) wraps each of them (a block hook).

    Why on first run: generating and compiling a function costs a hundred times running
    it, and a run of a large system executes a small part of its code (a lending pool's
    24 KB: thousands of blocks, most of them in functions a campaign seldom or never
    calls). Until then a block's entry is a stub that compiles it, puts it in the table
    in its own place and runs it; the loops look the table up at every block, so they
    call the function from then on.
    """
    # Blocks run on into their static successors in the variants that call no hook per
    # block (``block_source``).
    fusing = ({start: instrs for start, instrs in blocks if start not in barriers}
              if variant in (PLAIN, RECORDED) else None)
    namespace = _namespace(jumpdests, code_hash)
    table: list[BlockFn | None] = [None] * (code_len + 1)

    def stub(start: int, instrs: list[Instruction]) -> BlockFn:
        def first_run(s: list[int], f: Any) -> int:
            name = f"b{start}"
            source = block_source(name, instrs, fork, variant, jumpdests, code_len, fusing)
            # generated from opcodes only
            exec(compile(source, label, "exec"), namespace)
            block: BlockFn = namespace[name]
            table[start] = block if wrap is None or start not in barriers else wrap(block,
                                                                                    start)
            return table[start](s, f)  # type: ignore[misc]
        return first_run

    for start, instrs in blocks:
        table[start] = stub(start, instrs)
    exec(compile(f"def bend(s, f):\n    f.pc = {code_len}\n    raise Stop\n", label, "exec"),
         namespace)
    table[code_len] = namespace["bend"]
    return table

