"""Environment and block information: ADDRESS .. EXTCODEHASH, BLOCKHASH .. BLOBBASEFEE."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from secant.evm.crypto import EMPTY_CODE_HASH
from secant.evm.errors import ReturnDataOutOfBounds
from secant.evm.memory import charge, copy_cost, expand
from secant.evm.opcodes import (
    ADDRESS,
    BALANCE,
    BASEFEE,
    BLOBBASEFEE,
    BLOBHASH,
    BLOCKHASH,
    CALLDATACOPY,
    CALLDATALOAD,
    CALLDATASIZE,
    CALLER,
    CALLVALUE,
    CHAINID,
    CODECOPY,
    CODESIZE,
    COINBASE,
    EXTCODECOPY,
    EXTCODEHASH,
    EXTCODESIZE,
    GASLIMIT,
    GASPRICE,
    NUMBER,
    ORIGIN,
    PREVRANDAO,
    RETURNDATACOPY,
    RETURNDATASIZE,
    SELFBALANCE,
    TIMESTAMP,
)

if TYPE_CHECKING:
    from secant.evm.frame import Frame

ADDRESS_MASK = (1 << 160) - 1


def access_cost(f: Frame, address: int) -> int:
    """EIP-2929: 100 for a warm address, 2600 (and warm it) for a cold one."""
    warm = f.tx.warm_addresses
    if address in warm:
        return 100
    f.state.mark(warm, address)
    return 2600


def _copy_to_memory(f: Frame, mem_offset: int, data: bytes, offset: int, size: int) -> None:
    """Charge copy + expansion gas and copy ``data[offset:offset+size]`` zero-padded."""
    charge(f, copy_cost(size))
    expand(f, mem_offset + size)
    chunk = data[offset : offset + size] if offset < len(data) else b""
    if len(chunk) < size:
        chunk += bytes(size - len(chunk))
    f.memory[mem_offset : mem_offset + size] = chunk


def op_address(s: list[int], f: Frame, a: Any) -> None:
    """ADDRESS."""
    s.append(f.address)


def op_balance(s: list[int], f: Frame, a: Any) -> None:
    """BALANCE."""
    address = s[-1] & ADDRESS_MASK
    charge(f, access_cost(f, address))
    s[-1] = f.state.balance(address)


def op_origin(s: list[int], f: Frame, a: Any) -> None:
    """ORIGIN."""
    s.append(f.evm.origin)


def op_caller(s: list[int], f: Frame, a: Any) -> None:
    """CALLER."""
    s.append(f.caller)


def op_callvalue(s: list[int], f: Frame, a: Any) -> None:
    """CALLVALUE."""
    s.append(f.value)


def calldataload(f: Frame, i: int) -> int:
    """CALLDATALOAD's semantics (zero-padded)."""
    data = f.calldata
    if i + 32 <= len(data):
        return int.from_bytes(data[i : i + 32], "big")
    if i < len(data):
        return int.from_bytes(data[i:].ljust(32, b"\0"), "big")
    return 0


def op_calldataload(s: list[int], f: Frame, a: Any) -> None:
    """CALLDATALOAD."""
    s[-1] = calldataload(f, s[-1])


def op_calldatasize(s: list[int], f: Frame, a: Any) -> None:
    """CALLDATASIZE."""
    s.append(len(f.calldata))


def op_calldatacopy(s: list[int], f: Frame, a: Any) -> None:
    """CALLDATACOPY."""
    mem_offset = s.pop()
    offset = s.pop()
    size = s.pop()
    if size:
        _copy_to_memory(f, mem_offset, f.calldata, offset, size)


def op_codesize(s: list[int], f: Frame, a: Any) -> None:
    """CODESIZE."""
    s.append(len(f.code))


def op_codecopy(s: list[int], f: Frame, a: Any) -> None:
    """CODECOPY."""
    mem_offset = s.pop()
    offset = s.pop()
    size = s.pop()
    if size:
        _copy_to_memory(f, mem_offset, f.code, offset, size)


def op_gasprice(s: list[int], f: Frame, a: Any) -> None:
    """GASPRICE (the effective gas price)."""
    s.append(f.evm.gas_price)


def op_extcodesize(s: list[int], f: Frame, a: Any) -> None:
    """EXTCODESIZE."""
    address = s[-1] & ADDRESS_MASK
    charge(f, access_cost(f, address))
    s[-1] = len(f.state.code(address))


def op_extcodecopy(s: list[int], f: Frame, a: Any) -> None:
    """EXTCODECOPY."""
    address = s.pop() & ADDRESS_MASK
    mem_offset = s.pop()
    offset = s.pop()
    size = s.pop()
    charge(f, access_cost(f, address))
    if size:
        _copy_to_memory(f, mem_offset, f.state.code(address), offset, size)


def op_returndatasize(s: list[int], f: Frame, a: Any) -> None:
    """RETURNDATASIZE."""
    s.append(len(f.return_data))


def op_returndatacopy(s: list[int], f: Frame, a: Any) -> None:
    """RETURNDATACOPY: reading past the return data is an exceptional halt."""
    mem_offset = s.pop()
    offset = s.pop()
    size = s.pop()
    if offset + size > len(f.return_data):
        raise ReturnDataOutOfBounds
    if size:
        _copy_to_memory(f, mem_offset, f.return_data, offset, size)


def op_extcodehash(s: list[int], f: Frame, a: Any) -> None:
    """EXTCODEHASH: 0 for a dead account."""
    address = s[-1] & ADDRESS_MASK
    charge(f, access_cost(f, address))
    account = f.state.accounts.get(address)
    if account is None or account.is_empty():
        s[-1] = 0
    else:
        s[-1] = int.from_bytes(account.code_hash or EMPTY_CODE_HASH, "big")


def op_blockhash(s: list[int], f: Frame, a: Any) -> None:
    """BLOCKHASH."""
    s[-1] = f.env.block_hash(s[-1])


def op_coinbase(s: list[int], f: Frame, a: Any) -> None:
    """COINBASE."""
    s.append(f.env.coinbase)


def op_timestamp(s: list[int], f: Frame, a: Any) -> None:
    """TIMESTAMP."""
    s.append(f.env.timestamp)


def op_number(s: list[int], f: Frame, a: Any) -> None:
    """NUMBER."""
    s.append(f.env.number)


def op_prevrandao(s: list[int], f: Frame, a: Any) -> None:
    """PREVRANDAO (DIFFICULTY before the merge)."""
    s.append(f.env.prev_randao)


def op_gaslimit(s: list[int], f: Frame, a: Any) -> None:
    """GASLIMIT."""
    s.append(f.env.gas_limit)


def op_chainid(s: list[int], f: Frame, a: Any) -> None:
    """CHAINID."""
    s.append(f.env.chain_id)


def op_selfbalance(s: list[int], f: Frame, a: Any) -> None:
    """SELFBALANCE."""
    s.append(f.state.balance(f.address))


def op_basefee(s: list[int], f: Frame, a: Any) -> None:
    """BASEFEE."""
    s.append(f.env.base_fee)


def op_blobhash(s: list[int], f: Frame, a: Any) -> None:
    """BLOBHASH: the i-th versioned hash of the transaction, else 0."""
    i = s[-1]
    hashes = f.evm.blob_hashes
    s[-1] = int.from_bytes(hashes[i], "big") if i < len(hashes) else 0


def op_blobbasefee(s: list[int], f: Frame, a: Any) -> None:
    """BLOBBASEFEE."""
    s.append(f.evm.blob_base_fee)


HANDLERS = {
    ADDRESS: op_address, BALANCE: op_balance, ORIGIN: op_origin, CALLER: op_caller,
    CALLVALUE: op_callvalue, CALLDATALOAD: op_calldataload, CALLDATASIZE: op_calldatasize,
    CALLDATACOPY: op_calldatacopy, CODESIZE: op_codesize, CODECOPY: op_codecopy,
    GASPRICE: op_gasprice, EXTCODESIZE: op_extcodesize, EXTCODECOPY: op_extcodecopy,
    RETURNDATASIZE: op_returndatasize, RETURNDATACOPY: op_returndatacopy,
    EXTCODEHASH: op_extcodehash, BLOCKHASH: op_blockhash, COINBASE: op_coinbase,
    TIMESTAMP: op_timestamp, NUMBER: op_number, PREVRANDAO: op_prevrandao,
    GASLIMIT: op_gaslimit, CHAINID: op_chainid, SELFBALANCE: op_selfbalance,
    BASEFEE: op_basefee, BLOBHASH: op_blobhash, BLOBBASEFEE: op_blobbasefee,
}
