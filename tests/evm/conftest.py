from __future__ import annotations

from collections.abc import Callable

import pytest

from secant.evm.env import BlockEnv
from secant.evm.forks import CANCUN, Fork
from secant.evm.inspector import Inspector
from secant.evm.state import WorldState
from secant.evm.transaction import Transaction, TxResult, apply_transaction

SENDER = 0x5E17DE2
TARGET = 0xC0DE


@pytest.fixture
def run() -> Callable[..., tuple[TxResult, WorldState]]:
    """Run ``code`` at TARGET in a fresh state with one call transaction."""

    def _run(
        code: bytes,
        data: bytes = b"",
        gas: int = 1_000_000,
        value: int = 0,
        others: dict[int, bytes] | None = None,
        fork: Fork = CANCUN,
        inspector: Inspector | None = None,
    ) -> tuple[TxResult, WorldState]:
        state = WorldState()
        state.set_account(SENDER, balance=10**24)
        state.set_account(TARGET, code=code, balance=10**18)
        for address, other in (others or {}).items():
            state.set_account(address, code=other)
        env = BlockEnv(coinbase=0xC01B, gas_limit=100_000_000, base_fee=7, number=10,
                       timestamp=1000)
        tx = Transaction(sender=SENDER, to=TARGET, gas_limit=gas, gas_price=10, data=data,
                         value=value)
        return apply_transaction(state, env, tx, fork, inspector), state

    return _run
