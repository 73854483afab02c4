"""The campaign's static view: storage slots per function, constants, address candidates."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from secant.campaign.campaign import Campaign
from secant.campaign.config import CampaignConfig
from secant.campaign.plan import Selection, plan
from secant.chain.chain import ChainConfig
from secant.compile import CompileOptions, load
from secant.engine.config import FuzzConfig
from secant.engine.policy import Policy, PolicyContext
from secant.evm.opcodes import JUMP, JUMPDEST, MSTORE, PUSH1, PUSH2, PUSH4, PUSH32
from secant.learn.features import function_infos
from secant.learn.slots import region_slots
from secant.learn.view import ContractView, attacker_addresses, contract_view, function_constants
from tests.compile.conftest import needs_node

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "learn"


class _Seen(Exception):
    """Stops the campaign once its policy context was built."""


@functools.cache
def view_of(name: str) -> ContractView:
    """The view of the contract of fixture ``name``, from a campaign's policy context."""
    seen: list[ContractView] = []
    compilations = load([FIXTURES / name], CompileOptions())
    config = CampaignConfig(FuzzConfig(seed=0, max_execs=1), out=None, shrink_limit=0)
    [chosen] = plan(compilations, Selection(), ChainConfig(), config, project=False)
    chain = chosen.make_chain()
    assert chain.main is not None
    main = chain.main.address

    def grab(context: PolicyContext) -> Policy:
        assert context.fork is not None
        infos = function_infos(context.space.functions, context.function_codes, context.fork)
        seen.append(contract_view(context.space, infos, context.function_codes,
                                  context.codes, context.fork, [main]))
        raise _Seen

    with pytest.raises(_Seen):
        Campaign(chain, chosen.config, oracles=[], functions=chosen.functions,
                 senders=chosen.senders, policy=grab)
    return seen[0]


def by_name(view: ContractView) -> dict[str, int]:
    return {info.signature.partition("(")[0]: number
            for number, info in enumerate(view.functions)}


@needs_node
@pytest.mark.parametrize("name", ["Ledger.sol", "Ledger04.sol"])
def test_functions_that_share_storage_have_overlapping_slot_sets(name: str) -> None:
    view = view_of(name)
    f = by_name(view)
    # owner 0, balances 1 (a mapping: its base slot), total 2, history 3 (an array), limit 4.
    assert view.reads[f["deposit"]] >= {1, 2} and view.writes[f["deposit"]] >= {1, 2}
    assert view.writes[f["withdraw"]] >= {1, 2}
    assert view.reads[f["record"]] >= {3} and view.writes[f["record"]] >= {3}
    assert 0 in view.reads[f["setLimit"]] and view.writes[f["setLimit"]] == {4}
    assert view.reads[f["pure7"]] == view.writes[f["pure7"]] == frozenset()
    # ILF's graph: deposit writes what withdraw reads; record shares nothing with them.
    assert view.writes[f["deposit"]] & view.reads[f["withdraw"]]
    assert not (view.writes[f["record"]] | view.reads[f["record"]]) & \
        (view.writes[f["deposit"]] | view.reads[f["deposit"]])
    assert all(0.0 < share < 1.0 for share in view.code_share)
    assert not any(view.fallback)


@needs_node
@pytest.mark.parametrize("name", ["Ledger.sol", "Ledger04.sol"])
def test_constants_are_the_functions_own_without_selectors_and_masks(name: str) -> None:
    view = view_of(name)
    f = by_name(view)
    assert 7777 in view.constants[f["deposit"]]
    assert 424242 in view.constants[f["setLimit"]]
    assert 424242 not in view.constants[f["deposit"]]
    for constants in view.constants:
        assert list(constants) == sorted(set(constants)) and len(constants) <= 64
        assert 0 not in constants and 1 not in constants
        assert (1 << 160) - 1 not in constants and (1 << 256) - 1 not in constants


@needs_node
def test_address_candidates_are_senders_then_targets_then_attackers_then_zero() -> None:
    view = view_of("Ledger.sol")
    senders = len(view.senders)
    assert view.addresses[:senders] == view.senders
    assert view.address_roles[:senders] == ("sender",) * senders
    assert view.address_roles[senders] == "target"
    assert view.addresses[senders] not in attacker_addresses()
    assert view.addresses[-1] == 0 and view.address_roles[-1] == "zero"
    attackers = [a for a, role in zip(view.addresses, view.address_roles, strict=True)
                 if role == "attacker"]
    assert attackers and set(attackers) <= set(attacker_addresses())
    assert len(set(view.addresses)) == len(view.addresses)
    order = [view.address_roles.index(role) for role in ("sender", "target", "attacker", "zero")]
    assert order == sorted(order)


def test_the_slot_scan_follows_a_mapping_and_a_helper_return() -> None:
    # Block 0: mstore(0, key); mstore(0x20, 5); keccak256(0, 0x40); push the return address
    # 0x20 and jump to the helper at 0x30, which SLOADs the hashed slot and jumps back.
    from secant.evm.opcodes import CALLER, KECCAK256, PUSH0, SLOAD, SSTORE, STOP, SWAP1

    blocks = {
        0: [(0, CALLER, 0), (1, PUSH0, 0), (2, MSTORE, 0), (3, PUSH1, 5), (5, PUSH1, 0x20),
            (7, MSTORE, 0), (8, PUSH1, 0x40), (10, PUSH0, 0), (11, KECCAK256, 0),
            (12, PUSH1, 0x20), (14, SWAP1, 0), (15, PUSH1, 0x30), (17, JUMP, 0)],
        0x20: [(0x20, JUMPDEST, 0), (0x21, PUSH1, 9), (0x23, SSTORE, 0), (0x24, STOP, 0)],
        0x30: [(0x30, JUMPDEST, 0), (0x31, SLOAD, 0), (0x32, PUSH1, 9), (0x34, SWAP1, 0),
               (0x35, SWAP1, 0), (0x36, JUMP, 0)],
    }
    following = {0: 0x20, 0x20: 0x30}
    access = region_slots(blocks, following, set(blocks), 0)
    assert access.reads == {5}
    # The helper's JUMP went back to 0x20 with 0x20 on the stack... SSTORE at slot 9.
    assert 9 in access.writes


def test_function_constants_drop_jump_targets_selectors_masks_and_text() -> None:
    instructions = [
        (0, PUSH2, 0x0123), (3, JUMP, 0),                   # a jump target
        (4, PUSH4, 0xA9059CBB), (9, PUSH2, 0x4242),          # a selector, a constant
        (12, PUSH32, (1 << 160) - 1), (45, PUSH1, 0xFF),     # masks
        (47, PUSH32, int.from_bytes(b"owner".ljust(32, b"\0"), "big")),  # a reason
        (80, PUSH1, 0x40), (82, MSTORE, 0),                  # a memory offset
        (83, PUSH1, 1), (85, PUSH1, 0), (87, PUSH1, 99),
    ]
    kept = function_constants(instructions, frozenset({0x0123}), frozenset({2}),
                              frozenset({0xA9059CBB}))
    assert kept == (99, 0x4242)
