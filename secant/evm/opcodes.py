"""The EVM opcode table: numbers, names, stack arity and immediate sizes.

Gas costs and which opcodes a fork enables are not here: they are fork data (``forks.py``).
"""

from __future__ import annotations

from typing import NamedTuple


class OpInfo(NamedTuple):
    """Static facts about one opcode."""

    code: int
    name: str
    pops: int
    pushes: int
    immediate: int = 0


_TABLE: list[OpInfo] = [
    OpInfo(0x00, "STOP", 0, 0),
    OpInfo(0x01, "ADD", 2, 1),
    OpInfo(0x02, "MUL", 2, 1),
    OpInfo(0x03, "SUB", 2, 1),
    OpInfo(0x04, "DIV", 2, 1),
    OpInfo(0x05, "SDIV", 2, 1),
    OpInfo(0x06, "MOD", 2, 1),
    OpInfo(0x07, "SMOD", 2, 1),
    OpInfo(0x08, "ADDMOD", 3, 1),
    OpInfo(0x09, "MULMOD", 3, 1),
    OpInfo(0x0A, "EXP", 2, 1),
    OpInfo(0x0B, "SIGNEXTEND", 2, 1),
    OpInfo(0x10, "LT", 2, 1),
    OpInfo(0x11, "GT", 2, 1),
    OpInfo(0x12, "SLT", 2, 1),
    OpInfo(0x13, "SGT", 2, 1),
    OpInfo(0x14, "EQ", 2, 1),
    OpInfo(0x15, "ISZERO", 1, 1),
    OpInfo(0x16, "AND", 2, 1),
    OpInfo(0x17, "OR", 2, 1),
    OpInfo(0x18, "XOR", 2, 1),
    OpInfo(0x19, "NOT", 1, 1),
    OpInfo(0x1A, "BYTE", 2, 1),
    OpInfo(0x1B, "SHL", 2, 1),
    OpInfo(0x1C, "SHR", 2, 1),
    OpInfo(0x1D, "SAR", 2, 1),
    OpInfo(0x1E, "CLZ", 1, 1),
    OpInfo(0x20, "KECCAK256", 2, 1),
    OpInfo(0x30, "ADDRESS", 0, 1),
    OpInfo(0x31, "BALANCE", 1, 1),
    OpInfo(0x32, "ORIGIN", 0, 1),
    OpInfo(0x33, "CALLER", 0, 1),
    OpInfo(0x34, "CALLVALUE", 0, 1),
    OpInfo(0x35, "CALLDATALOAD", 1, 1),
    OpInfo(0x36, "CALLDATASIZE", 0, 1),
    OpInfo(0x37, "CALLDATACOPY", 3, 0),
    OpInfo(0x38, "CODESIZE", 0, 1),
    OpInfo(0x39, "CODECOPY", 3, 0),
    OpInfo(0x3A, "GASPRICE", 0, 1),
    OpInfo(0x3B, "EXTCODESIZE", 1, 1),
    OpInfo(0x3C, "EXTCODECOPY", 4, 0),
    OpInfo(0x3D, "RETURNDATASIZE", 0, 1),
    OpInfo(0x3E, "RETURNDATACOPY", 3, 0),
    OpInfo(0x3F, "EXTCODEHASH", 1, 1),
    OpInfo(0x40, "BLOCKHASH", 1, 1),
    OpInfo(0x41, "COINBASE", 0, 1),
    OpInfo(0x42, "TIMESTAMP", 0, 1),
    OpInfo(0x43, "NUMBER", 0, 1),
    OpInfo(0x44, "PREVRANDAO", 0, 1),
    OpInfo(0x45, "GASLIMIT", 0, 1),
    OpInfo(0x46, "CHAINID", 0, 1),
    OpInfo(0x47, "SELFBALANCE", 0, 1),
    OpInfo(0x48, "BASEFEE", 0, 1),
    OpInfo(0x49, "BLOBHASH", 1, 1),
    OpInfo(0x4A, "BLOBBASEFEE", 0, 1),
    OpInfo(0x50, "POP", 1, 0),
    OpInfo(0x51, "MLOAD", 1, 1),
    OpInfo(0x52, "MSTORE", 2, 0),
    OpInfo(0x53, "MSTORE8", 2, 0),
    OpInfo(0x54, "SLOAD", 1, 1),
    OpInfo(0x55, "SSTORE", 2, 0),
    OpInfo(0x56, "JUMP", 1, 0),
    OpInfo(0x57, "JUMPI", 2, 0),
    OpInfo(0x58, "PC", 0, 1),
    OpInfo(0x59, "MSIZE", 0, 1),
    OpInfo(0x5A, "GAS", 0, 1),
    OpInfo(0x5B, "JUMPDEST", 0, 0),
    OpInfo(0x5C, "TLOAD", 1, 1),
    OpInfo(0x5D, "TSTORE", 2, 0),
    OpInfo(0x5E, "MCOPY", 3, 0),
    OpInfo(0x5F, "PUSH0", 0, 1),
    *[OpInfo(0x60 + i, f"PUSH{i + 1}", 0, 1, i + 1) for i in range(32)],
    *[OpInfo(0x80 + i, f"DUP{i + 1}", i + 1, i + 2) for i in range(16)],
    *[OpInfo(0x90 + i, f"SWAP{i + 1}", i + 2, i + 2) for i in range(16)],
    *[OpInfo(0xA0 + i, f"LOG{i}", i + 2, 0) for i in range(5)],
    OpInfo(0xF0, "CREATE", 3, 1),
    OpInfo(0xF1, "CALL", 7, 1),
    OpInfo(0xF2, "CALLCODE", 7, 1),
    OpInfo(0xF3, "RETURN", 2, 0),
    OpInfo(0xF4, "DELEGATECALL", 6, 1),
    OpInfo(0xF5, "CREATE2", 4, 1),
    OpInfo(0xFA, "STATICCALL", 6, 1),
    OpInfo(0xFD, "REVERT", 2, 0),
    OpInfo(0xFE, "INVALID", 0, 0),
    OpInfo(0xFF, "SELFDESTRUCT", 1, 0),
]

OPS: dict[int, OpInfo] = {info.code: info for info in _TABLE}
BY_NAME: dict[str, int] = {info.name: info.code for info in _TABLE}

# Every opcode by name, written out so that type checkers and readers see each one. The
# table above is the source; the tests check that every name here matches it.
STOP = 0x00
ADD = 0x01
MUL = 0x02
SUB = 0x03
DIV = 0x04
SDIV = 0x05
MOD = 0x06
SMOD = 0x07
ADDMOD = 0x08
MULMOD = 0x09
EXP = 0x0A
SIGNEXTEND = 0x0B
LT = 0x10
GT = 0x11
SLT = 0x12
SGT = 0x13
EQ = 0x14
ISZERO = 0x15
AND = 0x16
OR = 0x17
XOR = 0x18
NOT = 0x19
BYTE = 0x1A
SHL = 0x1B
SHR = 0x1C
SAR = 0x1D
CLZ = 0x1E
KECCAK256 = 0x20
ADDRESS = 0x30
BALANCE = 0x31
ORIGIN = 0x32
CALLER = 0x33
CALLVALUE = 0x34
CALLDATALOAD = 0x35
CALLDATASIZE = 0x36
CALLDATACOPY = 0x37
CODESIZE = 0x38
CODECOPY = 0x39
GASPRICE = 0x3A
EXTCODESIZE = 0x3B
EXTCODECOPY = 0x3C
RETURNDATASIZE = 0x3D
RETURNDATACOPY = 0x3E
EXTCODEHASH = 0x3F
BLOCKHASH = 0x40
COINBASE = 0x41
TIMESTAMP = 0x42
NUMBER = 0x43
PREVRANDAO = 0x44
GASLIMIT = 0x45
CHAINID = 0x46
SELFBALANCE = 0x47
BASEFEE = 0x48
BLOBHASH = 0x49
BLOBBASEFEE = 0x4A
POP = 0x50
MLOAD = 0x51
MSTORE = 0x52
MSTORE8 = 0x53
SLOAD = 0x54
SSTORE = 0x55
JUMP = 0x56
JUMPI = 0x57
PC = 0x58
MSIZE = 0x59
GAS = 0x5A
JUMPDEST = 0x5B
TLOAD = 0x5C
TSTORE = 0x5D
MCOPY = 0x5E
PUSH0 = 0x5F
PUSH1 = 0x60
PUSH2 = 0x61
PUSH3 = 0x62
PUSH4 = 0x63
PUSH5 = 0x64
PUSH6 = 0x65
PUSH7 = 0x66
PUSH8 = 0x67
PUSH9 = 0x68
PUSH10 = 0x69
PUSH11 = 0x6A
PUSH12 = 0x6B
PUSH13 = 0x6C
PUSH14 = 0x6D
PUSH15 = 0x6E
PUSH16 = 0x6F
PUSH17 = 0x70
PUSH18 = 0x71
PUSH19 = 0x72
PUSH20 = 0x73
PUSH21 = 0x74
PUSH22 = 0x75
PUSH23 = 0x76
PUSH24 = 0x77
PUSH25 = 0x78
PUSH26 = 0x79
PUSH27 = 0x7A
PUSH28 = 0x7B
PUSH29 = 0x7C
PUSH30 = 0x7D
PUSH31 = 0x7E
PUSH32 = 0x7F
DUP1 = 0x80
DUP2 = 0x81
DUP3 = 0x82
DUP4 = 0x83
DUP5 = 0x84
DUP6 = 0x85
DUP7 = 0x86
DUP8 = 0x87
DUP9 = 0x88
DUP10 = 0x89
DUP11 = 0x8A
DUP12 = 0x8B
DUP13 = 0x8C
DUP14 = 0x8D
DUP15 = 0x8E
DUP16 = 0x8F
SWAP1 = 0x90
SWAP2 = 0x91
SWAP3 = 0x92
SWAP4 = 0x93
SWAP5 = 0x94
SWAP6 = 0x95
SWAP7 = 0x96
SWAP8 = 0x97
SWAP9 = 0x98
SWAP10 = 0x99
SWAP11 = 0x9A
SWAP12 = 0x9B
SWAP13 = 0x9C
SWAP14 = 0x9D
SWAP15 = 0x9E
SWAP16 = 0x9F
LOG0 = 0xA0
LOG1 = 0xA1
LOG2 = 0xA2
LOG3 = 0xA3
LOG4 = 0xA4
CREATE = 0xF0
CALL = 0xF1
CALLCODE = 0xF2
RETURN = 0xF3
DELEGATECALL = 0xF4
CREATE2 = 0xF5
STATICCALL = 0xFA
REVERT = 0xFD
INVALID = 0xFE
SELFDESTRUCT = 0xFF

# Opcodes after which control does not fall through to the next instruction.
HALTS = frozenset({STOP, RETURN, REVERT, INVALID, SELFDESTRUCT})
# Opcodes that read the remaining gas: a basic block ends at them so that block-level gas
# charging stays exact (see analysis.py).
READS_GAS = frozenset({GAS, SSTORE, CREATE, CALL, CALLCODE, DELEGATECALL, CREATE2, STATICCALL})


def immediate_size(op: int) -> int:
    """How many immediate bytes follow ``op`` in code (the width of a PUSH, else 0)."""
    return op - PUSH0 if PUSH1 <= op <= PUSH32 else 0



def stack_shape(op: int) -> str | None:
    """The stack shape of ``op``: push, dup, swap, pop, jumpdest, or None for the others.

    These opcodes only move stack items (or mark a jump target). The steppers that shadow
    a run (data flow, symbolic) dispatch on them first: they are most of the instructions
    a contract runs and need no work beyond the stack.
    """
    if op == PUSH0 or PUSH1 <= op <= PUSH32:
        return "push"
    if DUP1 <= op <= DUP16:
        return "dup"
    if SWAP1 <= op <= SWAP16:
        return "swap"
    if op == POP:
        return "pop"
    if op == JUMPDEST:
        return "jumpdest"
    return None
