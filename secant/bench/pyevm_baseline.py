"""py-evm as a same-run baseline: the same accounts, the same calldata, its cheapest path.

py-evm is a development dependency only; ``PyEvmUnavailable`` carries the install hint.
The cheapest path measured: ``CancunComputation.apply_computation`` on a ``CancunState``
(no transaction validation, fee or nonce handling — less work than secant's measured path,
which runs whole transactions), with the state snapshotted and reverted around each call.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class PyEvmUnavailable(Exception):
    """py-evm is not installed."""

    hint = "pip install py-evm==0.12.1b1 (a development dependency of secant)"


def _addr(x: int) -> Any:
    """A 20-byte address as py-evm takes it (its ``Address`` NewType)."""
    return x.to_bytes(20, "big")


class PyEvmRunner:
    """Runs message calls on py-evm's Cancun VM from a copied pre-state."""

    def __init__(self, accounts: Iterable[tuple[int, int, int, bytes, dict[int, int]]],
                 timestamp: int = 1000, number: int = 1, gas_limit: int = 30_000_000,
                 coinbase: int = 0, base_fee: int = 0, prev_randao: int = 0) -> None:
        try:
            from eth.constants import BLANK_ROOT_HASH
            from eth.db.atomic import AtomicDB
            from eth.vm.execution_context import ExecutionContext
            from eth.vm.forks.cancun.computation import CancunComputation
            from eth.vm.forks.cancun.state import CancunState
            from eth.vm.message import Message
            from eth.vm.transaction_context import BaseTransactionContext
        except ImportError as error:  # pragma: no cover - depends on the environment
            raise PyEvmUnavailable(str(error)) from None
        self._computation = CancunComputation
        self._message = Message
        self._tx_context = BaseTransactionContext
        block_number: Any = number
        mix_hash: Any = prev_randao.to_bytes(32, "big")
        context = ExecutionContext(
            coinbase=_addr(coinbase), timestamp=timestamp, block_number=block_number,
            difficulty=0, mix_hash=mix_hash, gas_limit=gas_limit, prev_hashes=[],
            chain_id=1, base_fee_per_gas=base_fee, excess_blob_gas=0,
        )
        self.state: Any = CancunState(AtomicDB(), context, BLANK_ROOT_HASH)
        self._codes: dict[int, bytes] = {}
        for address, nonce, balance, code, storage in accounts:
            raw = _addr(address)
            self.state.set_nonce(raw, nonce)
            self.state.set_balance(raw, balance)
            if code:
                self.state.set_code(raw, code)
                self._codes[address] = code
            for slot, value in storage.items():
                self.state.set_storage(raw, slot, value)
        self.state.persist()

    def call(self, sender: int, to: int, data: bytes, gas: int, value: int = 0) -> bool:
        """Run one message call and undo its effects; return whether it succeeded."""
        state = self.state
        snapshot = state.snapshot()
        message = self._message(gas=gas, to=_addr(to), sender=_addr(sender), value=value,
                                data=data, code=self._codes.get(to, b""))
        context = self._tx_context(gas_price=1, origin=_addr(sender))
        computation = self._computation.apply_computation(state, message, context)
        ok = bool(computation.is_success)
        state.revert(snapshot)
        return ok


class MessageOutcome:
    """What one message did, in comparable form."""

    def __init__(self, success: bool, output: bytes, gas_left: int, refund: int,
                 logs: list[tuple[int, tuple[int, ...], bytes]]) -> None:
        self.success = success
        self.output = output
        self.gas_left = gas_left
        self.refund = refund
        self.logs = logs

    def __repr__(self) -> str:
        return (f"MessageOutcome(success={self.success}, output={self.output.hex()}, "
                f"gas_left={self.gas_left}, refund={self.refund}, logs={self.logs})")


def pyevm_message(runner: PyEvmRunner, sender: int, to: int, data: bytes, gas: int,
                  value: int, warm: Iterable[int]) -> MessageOutcome:
    """Run one message call on ``runner``'s state and keep its effects (for comparisons)."""
    state = runner.state
    for address in warm:
        state.mark_address_warm(_addr(address))
    message = runner._message(gas=gas, to=_addr(to), sender=_addr(sender), value=value,
                              data=data, code=runner._codes.get(to, b""))
    context = runner._tx_context(gas_price=1, origin=_addr(sender))
    computation = runner._computation.apply_message(state, message, context)
    logs = [
        (int.from_bytes(address, "big"), tuple(topics), bytes(log_data))
        for address, topics, log_data in computation.get_log_entries()
    ]
    success = bool(computation.is_success)
    return MessageOutcome(
        success,
        bytes(computation.output),
        computation.get_gas_remaining() if not computation.is_error
        or computation.should_return_gas else 0,
        computation.get_gas_refund() if success else 0,
        logs,
    )


def pyevm_account(runner: PyEvmRunner, address: int, slots: Iterable[int]
                  ) -> tuple[int, int, bytes, dict[int, int]]:
    """(nonce, balance, code, {slot: value} for non-zero ``slots``) of ``address``."""
    state = runner.state
    raw = _addr(address)
    storage = {s: v for s in slots if (v := state.get_storage(raw, s))}
    return state.get_nonce(raw), state.get_balance(raw), bytes(state.get_code(raw)), storage
