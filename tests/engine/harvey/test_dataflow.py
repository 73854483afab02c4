"""Mapping entries named by the accounts keying them, and writers aligned with readers."""

from __future__ import annotations

from secant.abi import AbiParam
from secant.engine.harvey.dataflow import SlotNames, align, links
from secant.engine.values import VType, vtype
from secant.evm.crypto import keccak256
from secant.types import Tx

ALICE, BOB, CAROL, DAVE = 0xA11CE, 0xB0B, 0xCA401, 0xDA7E
ADDRESS = vtype(AbiParam("", "address"))
UINT = vtype(AbiParam("", "uint256"))
TYPES: dict[str, tuple[VType, ...]] = {
    "approve(address,uint256)": (ADDRESS, UINT),
    "transferFrom(address,address,uint256)": (ADDRESS, ADDRESS, UINT),
    "mint(address,uint256)": (ADDRESS, UINT),
    "deposit()": (),
}


def names() -> SlotNames:
    return SlotNames([ALICE, BOB, CAROL, DAVE], lambda tx: TYPES[tx.function])


def word(value: int) -> bytes:
    return value.to_bytes(32, "big")


def solidity(key: int, base: int) -> int:
    return int.from_bytes(keccak256(word(key) + word(base)), "big")


def vyper(key: int, base: int) -> int:
    return int.from_bytes(keccak256(word(base) + word(key)), "big")


def test_entries_are_named_by_the_sender_or_the_address_argument_keying_them() -> None:
    slots = names()
    deposit = Tx("deposit()", (), ALICE)
    assert slots.name(solidity(ALICE, 2), deposit) == ("map", 2, ("caller",))
    assert slots.name(vyper(ALICE, 63), deposit) == ("map", 63, ("caller",))
    assert slots.name(solidity(BOB, 2), deposit) == solidity(BOB, 2)  # BOB is not named
    assert slots.name(solidity(ALICE, 64), deposit) == solidity(ALICE, 64)  # past MAX_BASE
    assert slots.name(7, deposit) == 7
    mint = Tx("mint(address,uint256)", (BOB, 5), ALICE)
    assert slots.name(solidity(BOB, 0), mint) == ("map", 0, (("arg", (0,)),))
    assert SlotNames([ALICE], lambda tx: (), enabled=False).name(
        solidity(ALICE, 2), deposit) == solidity(ALICE, 2)


def test_approve_and_transfer_from_name_the_same_allowance_entry_differently() -> None:
    slots = names()
    allowance = solidity(BOB, solidity(ALICE, 1))  # allowance[ALICE][BOB] at slot 1
    approve = Tx("approve(address,uint256)", (BOB, 10), ALICE)
    pull = Tx("transferFrom(address,address,uint256)", (ALICE, CAROL, 10), BOB)
    written = slots.name(allowance, approve)
    read = slots.name(allowance, pull)
    assert written == ("map", 1, ("caller", ("arg", (0,))))
    assert read == ("map", 1, (("arg", (0,)), "caller"))
    assert links({written}, {read}) and not links({written}, {("map", 2, ("caller",))})
    # An approval by someone else, for someone else, becomes DAVE's approval for BOB
    # when BOB pulls from DAVE.
    other = Tx("approve(address,uint256)", (CAROL, 3), CAROL)
    puller = Tx("transferFrom(address,address,uint256)", (DAVE, ALICE, 3), BOB)
    assert align(other, {written}, {read}, puller) == Tx("approve(address,uint256)",
                                                          (BOB, 3), DAVE)


def test_alignment_leaves_plain_links_and_conflicts_alone() -> None:
    deposit = Tx("deposit()", (), ALICE)
    reader = Tx("deposit()", (), BOB)
    caller = ("map", 2, ("caller",))
    assert align(deposit, {5, caller}, {5, caller}, reader) is deposit  # slot 5 links
    assert align(deposit, {caller}, {caller}, reader) == Tx("deposit()", (), BOB)
    # Both levels keyed by the sender, the reader's by two different accounts.
    both = ("map", 1, ("caller", "caller"))
    pull = Tx("transferFrom(address,address,uint256)", (ALICE, CAROL, 1), BOB)
    assert align(deposit, {both}, {("map", 1, (("arg", (0,)), "caller"))}, pull) is deposit
    # mint(to=self), named after the caller: the argument follows the new sender.
    mint = Tx("mint(address,uint256)", (ALICE, 5), ALICE)
    assert align(mint, {caller}, {caller}, reader) == Tx("mint(address,uint256)", (BOB, 5),
                                                         BOB)
