"""The precompile table per fork."""

from __future__ import annotations

import pytest

from secant.evm.precompiles import FORKS, PrecompileFailure, precompile_table
from secant.evm.precompiles import modexp as modexp_module

BASE = set(range(1, 10))


def test_forks_and_addresses() -> None:
    assert FORKS == ("london", "paris", "shanghai", "cancun", "prague", "osaka")
    for fork in ("london", "paris", "shanghai"):
        assert set(precompile_table(fork)) == BASE
    for fork in ("cancun", "prague"):
        assert set(precompile_table(fork)) == BASE | {0x0A}
    assert set(precompile_table("osaka")) == BASE | {0x0A, 0x100}


def test_modexp_pricing_switches_at_osaka() -> None:
    assert precompile_table("prague")[5] is modexp_module.modexp
    assert precompile_table("osaka")[5] is modexp_module.modexp_osaka


def test_table_is_a_fresh_dict_and_names_are_case_insensitive() -> None:
    table = precompile_table("cancun")
    table.clear()
    assert len(precompile_table("Cancun")) == 10


def test_unknown_fork() -> None:
    with pytest.raises(ValueError, match="unknown fork"):
        precompile_table("berlin")


def test_every_precompile_fails_without_gas() -> None:
    for address, fn in precompile_table("osaka").items():
        if address == 0x04:
            continue  # checked below: identity of nothing still costs 15
        with pytest.raises(PrecompileFailure):
            fn(b"", 0)
    with pytest.raises(PrecompileFailure):
        precompile_table("osaka")[4](b"", 14)
