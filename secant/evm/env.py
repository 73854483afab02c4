"""The block environment a transaction runs in."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

MIN_BLOB_GASPRICE = 1


def fake_exponential(factor: int, numerator: int, denominator: int) -> int:
    """EIP-4844's integer approximation of ``factor * e ** (numerator / denominator)``."""
    i = 1
    output = 0
    accum = factor * denominator
    while accum > 0:
        output += accum
        accum = (accum * numerator) // (denominator * i)
        i += 1
    return output // denominator


@dataclass
class BlockEnv:
    """Values the block-information opcodes read.

    ``prev_randao`` also answers DIFFICULTY (PREVRANDAO's opcode before the merge).
    ``block_hashes`` maps a block number to its hash; BLOCKHASH of any other recent block
    returns 0.
    """

    coinbase: int = 0
    number: int = 1
    timestamp: int = 1
    gas_limit: int = 30_000_000
    base_fee: int = 0
    prev_randao: int = 0
    excess_blob_gas: int = 0
    chain_id: int = 1
    block_hashes: dict[int, int] = field(default_factory=dict)

    def blob_base_fee(self, update_fraction: int) -> int:
        """Price of one unit of blob gas (EIP-4844) under a fork's update fraction."""
        return fake_exponential(MIN_BLOB_GASPRICE, self.excess_blob_gas, update_fraction)

    def block_hash(self, number: int) -> int:
        """BLOCKHASH semantics: hashes of the 256 most recent blocks, else 0."""
        if number >= self.number or number < self.number - 256:
            return 0
        return self.block_hashes.get(number, 0)


_FIELDS = frozenset(f.name for f in fields(BlockEnv))


class WatchedEnv(BlockEnv):
    """A copy of a block environment that notes whether anything read it (``read``).

    A read-only call's result depends on the block only if it read one of its values
    (BLOCKHASH, COINBASE, TIMESTAMP, NUMBER, PREVRANDAO, GASLIMIT, CHAINID, BASEFEE,
    BLOBBASEFEE, or a cheatcode that answers with one): the property oracle keeps a
    property's value across blocks when its call read none. Every read of a field counts,
    a copy (``dataclasses.replace``, as ``vm.warp`` makes) included.
    """

    read = False

    def __getattribute__(self, name: str) -> Any:
        if name in _FIELDS:
            object.__setattr__(self, "read", True)
        return object.__getattribute__(self, name)

    @classmethod
    def of(cls, env: BlockEnv) -> WatchedEnv:
        """A watched copy of ``env`` that nothing has read yet."""
        return cls(**{name: getattr(env, name) for name in _FIELDS})
