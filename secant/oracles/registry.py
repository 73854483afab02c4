"""The oracles a campaign can run, by name.

Built-in detectors are listed in ``BUILTIN``; ``register`` adds another class (a plugin or
a test's own oracle) under its ``name``. ``build`` instantiates the chosen ones for a
chain (every registered oracle when no names are given) and says in one line which name
is unknown. ``recordings`` is what a campaign must record for a set of oracles.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from secant.chain.chain import TestChain
from secant.engine.oracle import Oracle
from secant.errors import SecantError
from secant.oracles.arbitrary_jump import ArbitraryJumpOracle
from secant.oracles.arbitrary_write import ArbitraryWriteOracle
from secant.oracles.assertion import AssertionOracle
from secant.oracles.block_dependency import BlockDependencyOracle
from secant.oracles.controlled_call import ControlledCallOracle
from secant.oracles.controlled_delegatecall import ControlledDelegatecallOracle
from secant.oracles.failed_call import FailedCallOracle
from secant.oracles.forced_ether import ForcedEtherOracle
from secant.oracles.freezing import FreezingEtherOracle
from secant.oracles.fuzz_test import FuzzTestOracle
from secant.oracles.gas_griefing import GasGriefingOracle
from secant.oracles.gas_limit import GasLimitOracle
from secant.oracles.gasless_send import GaslessSendOracle
from secant.oracles.leaking import LeakingEtherOracle
from secant.oracles.order_dependence import OrderDependenceOracle
from secant.oracles.overflow import OverflowOracle
from secant.oracles.property import PropertyOracle
from secant.oracles.reentrancy import ReentrancyOracle
from secant.oracles.requirement import RequirementOracle
from secant.oracles.suicidal import SuicidalOracle
from secant.oracles.takeover import OwnerTakeoverOracle
from secant.oracles.tx_origin import TxOriginOracle
from secant.oracles.unchecked_call import UncheckedCallOracle

OracleClass = type[Oracle]

BUILTIN: tuple[OracleClass, ...] = (AssertionOracle, PropertyOracle, FuzzTestOracle,
                                     LeakingEtherOracle, SuicidalOracle, ArbitraryWriteOracle,
                                     FreezingEtherOracle, UncheckedCallOracle, GaslessSendOracle,
                                     FailedCallOracle, BlockDependencyOracle,
                                     ControlledDelegatecallOracle,
                                     ControlledCallOracle, TxOriginOracle, ReentrancyOracle,
                                     OverflowOracle, OwnerTakeoverOracle, ForcedEtherOracle,
                                     OrderDependenceOracle, GasLimitOracle, RequirementOracle,
                                     GasGriefingOracle, ArbitraryJumpOracle)
"""The detectors secant ships, in the order ``--list-oracles`` shows them."""

_REGISTRY: dict[str, OracleClass] = {cls.name: cls for cls in BUILTIN}


def register(cls: OracleClass) -> OracleClass:
    """Make ``cls`` available by its ``name`` (usable as a class decorator)."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no name")
    _REGISTRY[cls.name] = cls
    return cls


def available() -> dict[str, OracleClass]:
    """Every registered oracle class by name."""
    return dict(_REGISTRY)


def build(chain: TestChain, names: Sequence[str] | None = None) -> list[Oracle]:
    """Instances of the named oracles (all registered ones for None) for ``chain``.

    Each class is constructed with the chain (``Cls(chain)``).
    """
    chosen = list(_REGISTRY) if names is None else list(dict.fromkeys(names))
    unknown = [name for name in chosen if name not in _REGISTRY]
    if unknown:
        raise SecantError(f"unknown oracle {unknown[0]!r}",
                          f"choose from {', '.join(_REGISTRY)} (see --list-oracles)")
    return [_REGISTRY[name](chain) for name in chosen]  # type: ignore[call-arg]


def recordings(oracles: Iterable[Oracle]) -> frozenset[str]:
    """The recordings the given oracles read."""
    needed: set[str] = set()
    for oracle in oracles:
        needed |= oracle.needs
    return frozenset(needed)
