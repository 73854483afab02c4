"""Message calls, creation and self-destruction: CALL*, CREATE*, SELFDESTRUCT.

The instructions compute gas and arguments exactly as the execution specs do, then hand the
new message to the interpreter (``Evm.begin_call`` / ``Evm.begin_create``), which either
completes it inline (precompiles, accounts without code, early failures) or suspends this
frame and runs a child frame without recursing in Python.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from secant.evm.crypto import keccak256
from secant.evm.errors import OutOfGas, StaticViolation, Stop
from secant.evm.instructions.environment import ADDRESS_MASK, access_cost
from secant.evm.memory import MAX_MEMORY_END, charge, expand, expansion_cost, grow
from secant.evm.opcodes import (
    CALL,
    CALLCODE,
    CREATE,
    CREATE2,
    DELEGATECALL,
    SELFDESTRUCT,
    STATICCALL,
)

if TYPE_CHECKING:
    from secant.evm.frame import Frame

CALL_VALUE = 9000
NEW_ACCOUNT = 25000
STIPEND = 2300
SELFDESTRUCT_NEW_ACCOUNT = 25000


def _memory_end(offset_a: int, size_a: int, offset_b: int, size_b: int) -> int:
    end = offset_a + size_a if size_a else 0
    if size_b and offset_b + size_b > end:
        end = offset_b + size_b
    return end


def _call_gas(f: Frame, requested: int, mem_cost: int, extra: int, value: int) -> tuple[int, int]:
    """EIP-150: return (gas to charge, gas given to the callee incl. stipend)."""
    gas_left = f.gas
    if gas_left >= extra + mem_cost:
        available = gas_left - mem_cost - extra
        requested = min(requested, available - available // 64)
    stipend = STIPEND if value else 0
    return requested + extra, requested + stipend


def _generic_call(s: list[int], f: Frame, kind: int) -> None:
    gas = s.pop()
    target = s.pop() & ADDRESS_MASK
    value = s.pop() if kind == CALL or kind == CALLCODE else 0
    in_offset = s.pop()
    in_size = s.pop()
    out_offset = s.pop()
    out_size = s.pop()
    end = _memory_end(in_offset, in_size, out_offset, out_size)
    mem_cost = expansion_cost(f, end)
    extra = access_cost(f, target)
    if value:
        extra += CALL_VALUE
        if kind == CALL and not f.state.is_alive(target):
            extra += NEW_ACCOUNT
    cost, child_gas = _call_gas(f, gas, mem_cost, extra, value)
    charge(f, cost + mem_cost)
    if f.is_static and value and kind == CALL:
        raise StaticViolation
    if end:
        grow(f, end)
    f.ret_offset = out_offset
    f.ret_size = out_size
    evm = f.evm
    # With cheatcodes installed the sender may be pranked: ``begin_call`` checks its balance.
    if value and f.state.balance(f.address) < value and evm.cheatcodes is None:
        f.return_data = b""
        f.gas += child_gas
        s.append(0)
        return
    data = bytes(f.memory[in_offset : in_offset + in_size]) if in_size else b""
    if kind == CALL:
        evm.begin_call(f, kind, f.address, target, target, value, True, f.is_static,
                       child_gas, data)
    elif kind == CALLCODE:
        evm.begin_call(f, kind, f.address, f.address, target, value, True, f.is_static,
                       child_gas, data)
    elif kind == DELEGATECALL:
        evm.begin_call(f, kind, f.caller, f.address, target, f.value, False, f.is_static,
                       child_gas, data)
    else:
        evm.begin_call(f, kind, f.address, target, target, 0, True, True, child_gas, data)


def op_call(s: list[int], f: Frame, a: Any) -> None:
    """CALL."""
    _generic_call(s, f, CALL)


def op_callcode(s: list[int], f: Frame, a: Any) -> None:
    """CALLCODE."""
    _generic_call(s, f, CALLCODE)


def op_delegatecall(s: list[int], f: Frame, a: Any) -> None:
    """DELEGATECALL."""
    _generic_call(s, f, DELEGATECALL)


def op_staticcall(s: list[int], f: Frame, a: Any) -> None:
    """STATICCALL."""
    _generic_call(s, f, STATICCALL)


def create_address(sender: int, nonce: int) -> int:
    """CREATE address: keccak(rlp([sender, nonce]))[12:]."""
    sender_bytes = sender.to_bytes(20, "big")
    if nonce == 0:
        nonce_rlp = b"\x80"
    elif nonce < 0x80:
        nonce_rlp = bytes([nonce])
    else:
        raw = nonce.to_bytes((nonce.bit_length() + 7) // 8, "big")
        nonce_rlp = bytes([0x80 + len(raw)]) + raw
    body = b"\x94" + sender_bytes + nonce_rlp
    return int.from_bytes(keccak256(bytes([0xC0 + len(body)]) + body)[12:], "big")


def create2_address(sender: int, salt: int, initcode: bytes) -> int:
    """CREATE2 address: keccak(0xff ++ sender ++ salt ++ keccak(initcode))[12:]."""
    data = b"\xff" + sender.to_bytes(20, "big") + salt.to_bytes(32, "big") + keccak256(initcode)
    return int.from_bytes(keccak256(data)[12:], "big")


def _generic_create(s: list[int], f: Frame, kind: int) -> None:
    value = s.pop()
    offset = s.pop()
    size = s.pop()
    salt = s.pop() if kind == CREATE2 else 0
    fork = f.evm.fork
    if size:
        if offset + size > MAX_MEMORY_END:
            raise OutOfGas
        words = (size + 31) >> 5
        extra = fork.gas_initcode_word * words if fork.initcode_limit else 0
        if kind == CREATE2:
            extra += 6 * words
        charge(f, extra)
        expand(f, offset + size)
    initcode = bytes(f.memory[offset : offset + size]) if size else b""
    if kind == CREATE2:
        address = create2_address(f.address, salt, initcode)
    else:
        address = create_address(f.address, f.state.nonce(f.address))
    f.evm.begin_create(f, kind, value, initcode, address, salt)


def op_create(s: list[int], f: Frame, a: Any) -> None:
    """CREATE."""
    _generic_create(s, f, CREATE)


def op_create2(s: list[int], f: Frame, a: Any) -> None:
    """CREATE2."""
    _generic_create(s, f, CREATE2)


def op_selfdestruct(s: list[int], f: Frame, a: Any) -> None:
    """SELFDESTRUCT, before or after EIP-6780 as the fork says."""
    beneficiary = s.pop() & ADDRESS_MASK
    state = f.state
    warm = f.tx.warm_addresses
    cost = 0
    if beneficiary not in warm:
        state.mark(warm, beneficiary)
        cost = 2600
    balance = state.balance(f.address)
    if balance and not state.is_alive(beneficiary):
        cost += SELFDESTRUCT_NEW_ACCOUNT
    charge(f, cost)
    if f.is_static:
        raise StaticViolation
    evm = f.evm
    if evm.inspector is not None:
        evm.inspector.on_selfdestruct(f, beneficiary, balance)
    state.transfer(f.address, beneficiary, balance)
    tx = f.tx
    if not evm.fork.selfdestruct_only_same_tx or f.address in tx.created:
        state.set_balance(f.address, 0)
        state.mark(tx.destroyed, f.address)
    raise Stop


HANDLERS = {
    CREATE: op_create, CALL: op_call, CALLCODE: op_callcode, DELEGATECALL: op_delegatecall,
    CREATE2: op_create2, STATICCALL: op_staticcall, SELFDESTRUCT: op_selfdestruct,
}
