"""The chain side of secant: the ABI layer and the test chain a fuzzer runs on.

- :mod:`secant.abi`: encode/decode every ABI type, selectors, revert reasons.
- :mod:`secant.chain.accounts`: the sender accounts (deployer, users, attackers).
- :mod:`secant.chain.attackers`: the normal and reentrancy attacker contracts.
- :mod:`secant.chain.blockenv`: the block environment and its fuzzable advance.
- :mod:`secant.chain.arguments`: constructor arguments parsed per ABI type or generated.
- :mod:`secant.chain.deploy`: libraries, constructors, the address book.
- :mod:`secant.chain.cheatcodes`: Foundry/HEVM cheatcodes (with :mod:`secant.chain.assertions`
  for ``vm.assert*`` and :mod:`secant.chain.artifacts` for artifact names).
- :mod:`secant.chain.chain`: :class:`TestChain`, which puts it all together.

The names below are imported lazily: ``secant.compile`` imports ``secant.abi``, and
the test chain imports ``secant.compile``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from secant.chain.accounts import Role, Sender
    from secant.chain.attackers import AttackerContract, AttackerKind
    from secant.chain.blockenv import BlockEnvironment, BlockSettings
    from secant.chain.chain import CallResult, ChainConfig, TestChain
    from secant.chain.cheatcodes import Cheatcodes, is_assume_rejection
    from secant.chain.deploy import AddressBook, DeployedContract
    from secant.chain.errors import (
        ConstructorArgumentError,
        ConstructorReverted,
        DeploymentFailed,
        UnknownFunction,
        UnsupportedCheatcode,
    )

_EXPORTS = {
    "Role": "accounts", "Sender": "accounts",
    "AttackerContract": "attackers", "AttackerKind": "attackers",
    "BlockEnvironment": "blockenv", "BlockSettings": "blockenv",
    "CallResult": "chain", "ChainConfig": "chain", "TestChain": "chain",
    "Cheatcodes": "cheatcodes", "is_assume_rejection": "cheatcodes",
    "AddressBook": "deploy", "DeployedContract": "deploy",
    "ConstructorArgumentError": "errors", "ConstructorReverted": "errors",
    "DeploymentFailed": "errors", "UnknownFunction": "errors",
    "UnsupportedCheatcode": "errors",
}

__all__ = [
    "AddressBook",
    "AttackerContract",
    "AttackerKind",
    "BlockEnvironment",
    "BlockSettings",
    "CallResult",
    "ChainConfig",
    "Cheatcodes",
    "ConstructorArgumentError",
    "ConstructorReverted",
    "DeployedContract",
    "DeploymentFailed",
    "Role",
    "Sender",
    "TestChain",
    "UnknownFunction",
    "UnsupportedCheatcode",
    "is_assume_rejection",
]


def __getattr__(name: str) -> Any:
    """Import the exported names on first use."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'secant.chain' has no attribute {name!r}")
    return getattr(importlib.import_module(f"secant.chain.{module}"), name)
