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

# Named opcodes that code outside the interpreter refers to (the table above is the source).
STOP = 0x00
KECCAK256 = 0x20
ORIGIN, CALLER, CALLVALUE = 0x32, 0x33, 0x34
CALLDATALOAD, CALLDATASIZE, CALLDATACOPY, CODECOPY = 0x35, 0x36, 0x37, 0x39
BLOCKHASH, COINBASE, TIMESTAMP, NUMBER, PREVRANDAO, GASLIMIT = (
    0x40, 0x41, 0x42, 0x43, 0x44, 0x45)
POP, SLOAD, SSTORE = 0x50, 0x54, 0x55
JUMP, JUMPI, GAS, JUMPDEST = 0x56, 0x57, 0x5A, 0x5B
PUSH0, PUSH1, PUSH32 = 0x5F, 0x60, 0x7F
DUP1, DUP16, SWAP1, SWAP16 = 0x80, 0x8F, 0x90, 0x9F
CREATE, CALL, CALLCODE, RETURN, DELEGATECALL, CREATE2, STATICCALL = (
    0xF0, 0xF1, 0xF2, 0xF3, 0xF4, 0xF5, 0xFA)
REVERT, INVALID, SELFDESTRUCT = 0xFD, 0xFE, 0xFF

# Opcodes after which control does not fall through to the next instruction.
HALTS = frozenset({STOP, RETURN, REVERT, INVALID, SELFDESTRUCT})
# Opcodes that read the remaining gas: a basic block ends at them so that block-level gas
# charging stays exact (see analysis.py).
READS_GAS = frozenset({GAS, SSTORE, CREATE, CALL, CALLCODE, DELEGATECALL, CREATE2, STATICCALL})


def immediate_size(op: int) -> int:
    """How many immediate bytes follow ``op`` in code (the width of a PUSH, else 0)."""
    return op - PUSH0 if PUSH1 <= op <= PUSH32 else 0


def name_of(op: int) -> str:
    """Return the mnemonic of ``op`` (``UNKNOWN_0x..`` for undefined bytes)."""
    info = OPS.get(op)
    return info.name if info else f"UNKNOWN_0x{op:02x}"
