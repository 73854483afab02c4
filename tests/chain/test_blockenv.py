"""The block environment: advancing by deltas, resetting, derived PREVRANDAO and hashes."""

from __future__ import annotations

import random

import pytest

from secant.chain import BlockEnvironment, BlockSettings, ChainConfig, TestChain
from secant.chain.blockenv import (
    DEFAULT_NUMBER,
    DEFAULT_TIMESTAMP,
    derived_prevrandao,
    random_deltas,
)
from secant.evm.env import BlockEnv

from .conftest import chain_fixture, needs_node


def test_advance_returns_new_blocks() -> None:
    blocks = BlockEnvironment()
    first = blocks.current
    assert (first.number, first.timestamp, first.base_fee) == (DEFAULT_NUMBER,
                                                               DEFAULT_TIMESTAMP, 0)
    second = blocks.advance(1, 12)
    assert isinstance(second, BlockEnv) and second is not first and blocks.current is second
    assert (second.number, second.timestamp) == (DEFAULT_NUMBER + 1, DEFAULT_TIMESTAMP + 12)
    assert (first.number, first.timestamp) == (DEFAULT_NUMBER, DEFAULT_TIMESTAMP)  # unchanged
    assert second.prev_randao == derived_prevrandao(DEFAULT_NUMBER + 1) != first.prev_randao
    assert second.coinbase == first.coinbase and second.base_fee == first.base_fee
    same_block = blocks.advance(0, 0)
    assert same_block.number == second.number and same_block.prev_randao == second.prev_randao
    jump = blocks.advance(1000, 86_400)
    assert (jump.number, jump.timestamp) == (DEFAULT_NUMBER + 1001,
                                             DEFAULT_TIMESTAMP + 12 + 86_400)
    with pytest.raises(ValueError, match="only move forward"):
        blocks.advance(-1, 0)
    assert blocks.reset() is first
    assert blocks.reset(second) is second


def test_settings_and_block_hashes() -> None:
    settings = BlockSettings(number=100, timestamp=5, base_fee=7, coinbase=0xC0, prev_randao=9,
                             gas_limit=1_000_000, chain_id=5)
    env = BlockEnvironment(settings).current
    assert (env.number, env.timestamp, env.base_fee, env.coinbase, env.prev_randao,
            env.gas_limit, env.chain_id) == (100, 5, 7, 0xC0, 9, 1_000_000, 5)
    assert env.block_hash(99) != 0 and env.block_hash(99) != env.block_hash(98)
    assert env.block_hash(100) == 0 and env.block_hash(100 - 257) == 0  # BLOCKHASH window
    later = BlockEnvironment(settings).advance(1, 1)
    assert later.block_hash(99) == env.block_hash(99)  # the same everywhere


def test_random_deltas_are_deterministic() -> None:
    draws = [random_deltas(random.Random(3)) for _ in range(2)]
    assert draws[0] == draws[1]
    rng = random.Random(0)
    many = [random_deltas(rng, max_blocks=50) for _ in range(500)]
    assert all(0 <= n <= 50 and t >= n for n, t in many)
    assert {n for n, _ in many} >= {0, 1} and max(n for n, _ in many) > 10


@needs_node
def test_contracts_see_the_block(solc_installed: list[str]) -> None:
    config = ChainConfig(block=BlockSettings(base_fee=7))
    chain = TestChain.setup(chain_fixture("Clock.sol"), config=config)
    number, timestamp, base_fee, coinbase, randao = chain.view("Clock", "block_").values
    env = chain.env
    assert (number, timestamp, base_fee, int(coinbase, 16), randao) == (
        env.number, env.timestamp, 7, env.coinbase, env.prev_randao)
    assert chain.view("Clock", "hashOf", [number - 1]).value == (
        env.block_hash(number - 1).to_bytes(32, "big"))
    chain.advance(3, 40)
    assert chain.call("user1", "Clock", "see").success  # pays the base fee
    assert chain.view("Clock", "lastSeen").value == timestamp + 40
    assert chain.view("Clock", "block_").values[0] == number + 3
    chain.reset()
    assert chain.view("Clock", "block_").values[:2] == (number, timestamp)
    assert chain.view("Clock", "lastSeen").value == 0
