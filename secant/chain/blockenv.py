"""The block environment of the test chain, advancing per transaction by fuzzable deltas.

Contracts read the block number, timestamp, base fee, coinbase and PREVRANDAO (and
BLOCKHASH); bugs often hide behind ``block.timestamp > deadline`` or ``block.number % 10``.
A fuzzer therefore chooses, per transaction, how far the chain moves on
(:meth:`BlockEnvironment.advance`), and :meth:`BlockEnvironment.reset` brings it back to the
post-deployment block.

Everything is deterministic: PREVRANDAO and block hashes are derived from the block number
(``keccak256`` of a fixed label and the number), so the same deltas give the same blocks.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Any

from secant.chain.accounts import derived_address
from secant.evm.crypto import keccak256
from secant.evm.env import BlockEnv

__all__ = [
    "DEFAULT_NUMBER",
    "DEFAULT_TIMESTAMP",
    "FORGE_NUMBER",
    "FORGE_TIMESTAMP",
    "SECONDS_PER_BLOCK",
    "BlockEnvironment",
    "BlockSettings",
    "DerivedBlockHashes",
    "derived_prevrandao",
    "random_deltas",
]

DEFAULT_NUMBER = 4_370_000
"""Block number of the first block: Echidna's (Byzantium's first block), so harnesses written
for Echidna see the block they expect, and ``number - k`` does not underflow."""

DEFAULT_TIMESTAMP = 1_524_785_992
"""Timestamp of the first block: Echidna's (2018-04-26 23:39:52 UTC)."""

FORGE_NUMBER = 1
FORGE_TIMESTAMP = 1
"""forge's first block, where Foundry test contracts start."""

SECONDS_PER_BLOCK = 12
"""Seconds between blocks on mainnet since the merge; the default time delta per block."""


def _derive(label: bytes, number: int) -> int:
    return int.from_bytes(keccak256(label + number.to_bytes(32, "big")), "big")


def derived_prevrandao(number: int) -> int:
    """The PREVRANDAO value of block ``number`` (deterministic)."""
    return _derive(b"secant prevrandao", number)


class DerivedBlockHashes(dict[int, int]):
    """Block hashes computed on demand from the number: no table to fill as blocks pass.

    ``BlockEnv.block_hash`` keeps BLOCKHASH's 256-block window and asks ``get`` only for
    numbers inside it; any such number hashes to ``keccak256("secant blockhash" || number)``
    unless an explicit entry was stored.
    """

    def get(self, key: int, default: Any = None) -> Any:  # type: ignore[override]
        """Return the stored hash of block ``key``, else its derived hash."""
        if key in self:
            return self[key]
        if isinstance(key, int) and key >= 0:
            return _derive(b"secant blockhash", key)
        return default


@dataclass(frozen=True)
class BlockSettings:
    """The first block of the chain (what :meth:`BlockEnvironment.reset` returns to)."""

    number: int = DEFAULT_NUMBER
    timestamp: int = DEFAULT_TIMESTAMP
    base_fee: int = 0
    coinbase: int | None = None
    prev_randao: int | None = None
    gas_limit: int = 30_000_000
    chain_id: int = 1

    def block_env(self) -> BlockEnv:
        """Build the ``BlockEnv`` of this first block (coinbase/PREVRANDAO derived if unset)."""
        return BlockEnv(
            coinbase=derived_address("coinbase") if self.coinbase is None else self.coinbase,
            number=self.number,
            timestamp=self.timestamp,
            gas_limit=self.gas_limit,
            base_fee=self.base_fee,
            prev_randao=(derived_prevrandao(self.number) if self.prev_randao is None
                         else self.prev_randao),
            chain_id=self.chain_id,
            block_hashes=DerivedBlockHashes(),
        )


class BlockEnvironment:
    """The current block; ``advance`` moves it on, ``reset`` returns to the start.

    Each call returns a new ``BlockEnv`` (earlier ones are never changed), so a recorded
    transaction keeps the block it ran in.
    """

    def __init__(self, settings: BlockSettings | None = None) -> None:
        self.settings = settings or BlockSettings()
        self.initial = self.settings.block_env()
        self.current = self.initial

    def advance(self, number_delta: int = 1, time_delta: int = SECONDS_PER_BLOCK) -> BlockEnv:
        """Move on by ``number_delta`` blocks and ``time_delta`` seconds; return the new block.

        Deltas of 0 keep the transaction in the same block (or second). A new block number
        gets its own PREVRANDAO. Negative deltas raise ``ValueError``.
        """
        if number_delta < 0 or time_delta < 0:
            raise ValueError("block number and time only move forward (deltas must be >= 0)")
        env = self.current
        number = env.number + number_delta
        randao = derived_prevrandao(number) if number_delta else env.prev_randao
        self.current = replace(env, number=number, timestamp=env.timestamp + time_delta,
                               prev_randao=randao)
        return self.current

    def reset(self, env: BlockEnv | None = None) -> BlockEnv:
        """Go back to ``env`` (default: the first block) and return it."""
        self.current = self.initial if env is None else env
        return self.current


def random_deltas(rng: random.Random, max_blocks: int = 256,
                  seconds_per_block: int = SECONDS_PER_BLOCK) -> tuple[int, int]:
    """Draw ``(number_delta, time_delta)`` from ``rng``: mostly the next block, sometimes a jump.

    Half the draws stay within the next block or two; the rest jump up to ``max_blocks``
    blocks ahead. Time moves ``seconds_per_block`` per block, give or take a few seconds.
    """
    roll = rng.random()
    if roll < 0.1:
        blocks = 0
    elif roll < 0.5:
        blocks = 1
    else:
        blocks = rng.randint(2, max(2, max_blocks))
    jitter = rng.randint(-(seconds_per_block // 2), seconds_per_block // 2) if blocks else 0
    seconds = max(blocks, blocks * seconds_per_block + jitter)
    return blocks, seconds
