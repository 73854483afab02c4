"""Where a contract's code can send ether out: a static scan of its runtime bytecode.

An *exit* is an instruction that can move the running account's ether elsewhere: a CALL or
CALLCODE whose value operand may be non-zero, a CREATE or CREATE2 whose endowment may be
non-zero, and SELFDESTRUCT. A *delegation* is a DELEGATECALL or CALLCODE: other code runs
with this account's balance, so its exits are this account's too.

The scan is conservative in the direction that keeps the freezing-ether oracle quiet: an
operand counts as zero only when a constant zero was pushed in the same straight-line run
of code and only moved by DUP and SWAP since, as solc emits the value of a call that
sends nothing (``PUSH0 DUP7 GAS CALL``). Anything else, a computed or a loaded value, is
a possible exit. A run ends at every jump, halt and JUMPDEST, with one exception solc
needs: a JUMPDEST that nothing falls into, whose address is pushed exactly once in the
code and which a single JUMPI targets with that constant, is reached only through that
JUMPI, so the run carries on across it (the "revert unless the callee has code" check
solc puts between pushing a call's value and the CALL).

Bytes no jump can reach are not code: instructions after a halt or an unconditional JUMP
up to the next JUMPDEST are skipped, and so is the CBOR metadata solc appends to the
runtime code (its length is in the code's last two bytes), where a hash byte may read as
SELFDESTRUCT.

solc places a linked library's address as a PUSH20 constant somewhere in the caller's code,
not next to its DELEGATECALL, so a delegation's target is resolved only when the constant
sits in the same straight-line run; ``addresses`` lists every PUSH20 constant, from which
the oracles pick the accounts that hold code (the linked libraries).
"""

from __future__ import annotations

from dataclasses import dataclass

from secant.evm.analysis import analyze, code_end
from secant.evm.constant_stack import peek, step
from secant.evm.forks import Fork
from secant.evm.opcodes import (
    CALL,
    CALLCODE,
    CREATE,
    CREATE2,
    DELEGATECALL,
    HALTS,
    JUMP,
    JUMPDEST,
    JUMPI,
    OPS,
    PUSH1,
    PUSH20,
    PUSH32,
    SELFDESTRUCT,
)

__all__ = ["CodeExits", "Site", "scan"]

# Stack position (0: top) of the operand that decides whether ether moves.
_VALUE_OPERAND = {CALL: 2, CALLCODE: 2, CREATE: 0, CREATE2: 0}
# Stack position of the account whose code a delegation runs.
_TARGET_OPERAND = {DELEGATECALL: 1, CALLCODE: 1}
_SEGMENT_ENDS = HALTS | {JUMP, JUMPI}
_NO_FALLTHROUGH = HALTS | {JUMP}
_MAX_TRACKED = 64  # deeper stack items are unknown anyway; keeps the scan linear


@dataclass(frozen=True)
class Site:
    """One instruction the scan cares about.

    ``operand`` is the constant the scan proved for the deciding operand (the value of a
    CALL/CALLCODE/CREATE*, the target of a DELEGATECALL), None when it may be anything;
    ``block`` is the start of the basic block the instruction ends (calls and halts end
    their block, so a run's block coverage tells whether the site ran).
    """

    pc: int
    opcode: int
    operand: int | None
    block: int

    @property
    def name(self) -> str:
        """The opcode's mnemonic."""
        return OPS[self.opcode].name


@dataclass(frozen=True)
class CodeExits:
    """What the scan found in one runtime code (see the module docstring)."""

    exits: tuple[Site, ...]
    delegations: tuple[Site, ...]
    addresses: frozenset[int]

    def unresolved_delegations(self) -> tuple[Site, ...]:
        """Delegations whose target the straight-line scan could not pin to a constant."""
        return tuple(site for site in self.delegations if site.operand is None)


_SCANS: dict[tuple[bytes, str], CodeExits] = {}


def scan(code: bytes, code_hash: bytes, fork: Fork) -> CodeExits:
    """The exits, delegations and address constants of ``code`` (cached by code hash)."""
    key = (code_hash, fork.name)
    found = _SCANS.get(key)
    if found is not None:
        return found
    analysis = analyze(code, code_hash, fork)
    block_of: dict[int, int] = {}
    for start, instructions in analysis.blocks:
        for pc, _, _ in instructions:
            block_of[pc] = start
    pushed: dict[int, int] = {}
    for _, op, value in analysis.instructions:
        if PUSH1 <= op <= PUSH32:
            pushed[value] = pushed.get(value, 0) + 1
    exits: list[Site] = []
    delegations: list[Site] = []
    addresses: set[int] = set()
    # The abstract stack of the current straight-line run: a constant or None (unknown),
    # top last. Items below what the run pushed are unknown.
    stack: list[int | None] = []
    # JUMPDEST pc -> the abstract stack a JUMPI with that constant target leaves there.
    carried: dict[int, list[int | None]] = {}
    previous = -1  # the first instruction runs first
    end = code_end(code)
    for pc, op, value in analysis.instructions:
        if pc >= end:
            break
        if op == JUMPDEST:
            only_way = previous in _NO_FALLTHROUGH and pushed.get(pc) == 1
            stack = carried.pop(pc, []) if only_way else []
        elif previous in _NO_FALLTHROUGH:
            continue  # dead bytes: nothing falls or jumps here
        if op == JUMPI:
            target = peek(stack, 0)
            if target is not None and target > pc:
                # A second JUMPI to the same place (a duplicated constant) may arrive with
                # another stack: then nothing is known there.
                carried[target] = ([] if target in carried
                                   else stack[:-2] if len(stack) >= 2 else [])
        if op in _VALUE_OPERAND or op == SELFDESTRUCT:
            operand = peek(stack, _VALUE_OPERAND[op]) if op in _VALUE_OPERAND else None
            if operand != 0:
                exits.append(Site(pc, op, operand, block_of.get(pc, pc)))
        if op in _TARGET_OPERAND:
            delegations.append(Site(pc, op, peek(stack, _TARGET_OPERAND[op]),
                                    block_of.get(pc, pc)))
        if op == PUSH20:
            addresses.add(value)
        step(stack, op, value, _MAX_TRACKED)
        if op in _SEGMENT_ENDS:
            stack = []
        previous = op
    found = CodeExits(tuple(exits), tuple(delegations), frozenset(addresses))
    _SCANS[key] = found
    return found


