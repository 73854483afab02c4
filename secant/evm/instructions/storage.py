"""Persistent and transient storage: SLOAD, SSTORE (EIP-2200/2929/3529), TLOAD, TSTORE."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from secant.evm.errors import OutOfGas, StaticViolation
from secant.evm.memory import charge
from secant.evm.opcodes import SLOAD, SSTORE, TLOAD, TSTORE

if TYPE_CHECKING:
    from secant.evm.frame import Frame

COLD_SLOAD = 2100
WARM = 100
SET = 20000
RESET = 5000
CLEAR_REFUND = 4800
STIPEND = 2300


def sload(f: Frame, slot: int) -> int:
    """SLOAD's semantics: 100 gas warm, 2100 cold."""
    key = (f.address, slot)
    warm = f.tx.warm_slots
    if key in warm:
        gas = f.gas - WARM
    else:
        f.state.mark(warm, key)
        gas = f.gas - COLD_SLOAD
    if gas < 0:
        raise OutOfGas
    f.gas = gas
    account = f.state.accounts.get(f.address)
    return account.storage.get(slot, 0) if account is not None else 0


def op_sload(s: list[int], f: Frame, a: Any) -> None:
    """SLOAD."""
    s[-1] = sload(f, s[-1])


def sstore(f: Frame, slot: int, new: int) -> int:
    """SSTORE's semantics (EIP-2200/2929/3529); returns the value it replaced."""
    if f.gas <= STIPEND:
        raise OutOfGas
    state = f.state
    tx = f.tx
    address = f.address
    account = state.get_or_create(address)
    storage = account.storage
    current = storage.get(slot, 0)
    key = (address, slot)
    original = tx.original.get(key)
    if original is None:
        original = tx.original[key] = current
    cost = 0
    if key not in tx.warm_slots:
        state.mark(tx.warm_slots, key)
        cost = COLD_SLOAD
    if original == current and current != new:
        cost += SET if original == 0 else RESET - COLD_SLOAD
    else:
        cost += WARM
    if current != new:
        refund = 0
        if original != 0 and current != 0 and new == 0:
            refund += CLEAR_REFUND
        if original != 0 and current == 0:
            refund -= CLEAR_REFUND
        if original == new:
            refund += SET - WARM if original == 0 else RESET - COLD_SLOAD - WARM
        if refund:
            state.add_refund(refund)
    charge(f, cost)
    if f.is_static:
        raise StaticViolation
    if current != new:
        state.journal.append((0, storage, slot, storage.get(slot)))
        if new:
            storage[slot] = new
        else:
            del storage[slot]
    return current


def op_sstore(s: list[int], f: Frame, a: Any) -> None:
    """SSTORE."""
    slot = s.pop()
    sstore(f, slot, s.pop())


def op_tload(s: list[int], f: Frame, a: Any) -> None:
    """TLOAD (EIP-1153)."""
    s[-1] = f.tx.transient.get((f.address, s[-1]), 0)


def op_tstore(s: list[int], f: Frame, a: Any) -> None:
    """TSTORE (EIP-1153)."""
    slot = s.pop()
    value = s.pop()
    if f.is_static:
        raise StaticViolation
    f.state.set_transient(f.address, slot, value)


HANDLERS = {SLOAD: op_sload, SSTORE: op_sstore, TLOAD: op_tload, TSTORE: op_tstore}
