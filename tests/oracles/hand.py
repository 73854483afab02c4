"""Hand-written cases for the oracle tests: the oracle built on a chain, a target that
records what it needs (and panics), and the case's transactions."""

from __future__ import annotations

from collections.abc import Sequence

from secant.chain.chain import TestChain
from secant.engine.oracle import Oracle
from secant.oracles import registry
from secant.targets.contract import ContractTarget
from secant.types import Tx, TxSeq

HandStep = tuple[str, str, tuple[object, ...]] | tuple[str, str, tuple[object, ...], int]
"""sender name, function, arguments, and the wei sent (0 when left out)."""


def hand_case(chain: TestChain, oracle_name: str, steps: Sequence[HandStep]
              ) -> tuple[TxSeq, ContractTarget, Oracle]:
    """The transactions of ``steps``, a target for them and oracle ``oracle_name``."""
    [oracle] = registry.build(chain, [oracle_name])
    target = ContractTarget(chain, oracle.needs | {"panics"})
    txs = tuple(Tx(step[1], step[2], chain.sender(step[0]).address,
                   step[3] if len(step) > 3 else 0)  # type: ignore[misc]
                for step in steps)
    return txs, target, oracle
