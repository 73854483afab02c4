"""Foundry/HEVM cheatcodes on the test chain, observed from Solidity.

``fixtures/Cheats.sol`` declares its own ``Vm`` interface; ``Harness`` calls each cheatcode
through it (or raw, through ``forward``) and ``Target`` records who called it.
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

import pytest

from secant.abi import decode, encode, function_selector
from secant.chain import ChainConfig, TestChain
from secant.chain.artifacts import parse_artifact_name
from secant.chain.cheatcodes import (
    ASSUME_MARKER,
    CHEATCODE_GAS,
    FORGE_ASSERTION_TOPIC,
    GLOBAL_FAIL_SLOT,
    HEVM_ADDRESS,
    KNOWN_UNSUPPORTED,
    SECP256K1_ORDER,
    is_assume_rejection,
    supported_signatures,
)
from secant.chain.errors import UnsupportedCheatcode
from secant.evm.instructions.system import create_address
from secant.targets.contract import ContractRun, ContractTarget
from secant.targets.prefix_cache import PrefixCache
from secant.types import Tx, TxSeq

from .conftest import ETHER, chain_fixture, needs_node

pytestmark = needs_node

ALICE = 0xA11CE
BOB = 0xB0B
KEY_ONE_ADDRESS = 0x7E5F4552091A69125D5DFCB7B8C2659029395BDF  # the address of private key 1


def harness_chain(**config: Any) -> TestChain:
    return TestChain.setup(chain_fixture("Cheats.sol"), contract="Harness",
                           config=ChainConfig(**config))


def address_of(chain: TestChain, getter: str) -> int:
    return int(chain.view("Harness", getter).value, 16)


def records(chain: TestChain, getter: str = "target") -> list[tuple[int, int]]:
    """(msg.sender, tx.origin) of every ``record`` call the Target saw, in order."""
    target = address_of(chain, getter)
    count = chain.view(target, "count").value
    return [(int(chain.view(target, "senders", [i]).value, 16),
             int(chain.view(target, "origins", [i]).value, 16)) for i in range(count)]


def block_info(chain: TestChain) -> dict[str, Any]:
    values = chain.view("Harness", "blockInfo").values
    assert values is not None
    names = ("number", "timestamp", "basefee", "chain", "miner", "randao")
    info = dict(zip(names, values))
    info["miner"] = int(info["miner"], 16)
    return info


def forward(chain: TestChain, signature: str, *args: Any) -> Any:
    """Call a cheatcode raw through ``Harness.forward`` (a revert comes back as it was)."""
    inner = signature[signature.index("(") + 1:-1]
    types = inner.split(",") if inner else []
    values = [f"0x{v:040x}" if t == "address" else v for t, v in zip(types, args)]
    data = function_selector(signature) + encode(types, values)
    return chain.call("deployer", "Harness", "forward", [data])


def message(result: Any) -> str:
    assert not result.success and result.revert is not None
    return str(result.revert.message)


# ---------------------------------------------------------------------------- block
BLOCK_CHEATS = [
    ("warp", 1_800_000_000, "timestamp", 1_800_000_000),
    ("roll", 20_000_000, "number", 20_000_000),
    ("fee", 7, "basefee", 7),
    ("chainId", 31337, "chain", 31337),
    ("coinbase", ALICE, "miner", ALICE),
    ("prevrandaoBytes", b"\x01" * 32, "randao", int.from_bytes(b"\x01" * 32, "big")),
    ("prevrandaoUint", 12345, "randao", 12345),
    ("difficulty", 99, "randao", 99),
]


@pytest.mark.parametrize(("function", "argument", "field", "expected"), BLOCK_CHEATS,
                         ids=[row[0] for row in BLOCK_CHEATS])
def test_block_cheatcodes_last_for_the_case_and_reset_undoes_them(
        solc_installed: list[str], function: str, argument: Any, field: str,
        expected: int) -> None:
    chain = harness_chain()
    before = block_info(chain)
    assert chain.call("deployer", "Harness", function, [argument]).success
    # The next transaction of the case runs in the changed block; nothing else changed.
    later = chain.call("user1", "Harness", "blockInfo")
    assert later.success and later.values is not None
    seen = dict(zip(before, later.values))
    seen["miner"] = int(seen["miner"], 16)
    assert seen == {**before, field: expected}
    assert block_info(chain) == seen
    chain.reset()
    assert block_info(chain) == before


def test_a_block_change_applies_at_once_to_callers_and_callees(solc_installed: list[str]
                                                               ) -> None:
    chain = harness_chain()
    assert chain.call("deployer", "Harness", "warpAndSee", [5_000]).value == (5_000, 5_000)
    assert chain.call("deployer", "Harness", "warpInCallee", [6_000]).value == 6_000
    assert chain.env.timestamp == 6_000


def test_a_reverted_transaction_or_a_view_leaves_the_block(solc_installed: list[str]) -> None:
    chain = harness_chain()
    before = block_info(chain)
    assert message(chain.call("deployer", "Harness", "warpAndRevert", [5_000])) == "undo"
    assert chain.view("Harness", "warp", [7_000]).success
    assert block_info(chain) == before


def test_block_advances_continue_from_a_warped_block(solc_installed: list[str]) -> None:
    chain = harness_chain()
    chain.call("deployer", "Harness", "warp", [10_000])
    chain.advance(2, 24)
    assert (chain.env.timestamp, block_info(chain)["timestamp"]) == (10_024, 10_024)


# ---------------------------------------------------------------------------- state
def test_deal_store_load_etch_and_nonces_are_journaled(solc_installed: list[str]) -> None:
    chain = harness_chain()
    target = address_of(chain, "target")
    slot = (2).to_bytes(32, "big")  # Target.value
    code = bytes.fromhex("600160005260206000f3")  # returns 1
    assert chain.call("deployer", "Harness", "deal", [ALICE, 5 * ETHER]).success
    assert chain.call("deployer", "Harness", "store", [target, slot, (42).to_bytes(32, "big")]
                      ).success
    assert chain.call("deployer", "Harness", "etch", [BOB, code]).success
    assert chain.call("deployer", "Harness", "nonces", [ALICE, 5]).value == (0, 5)
    assert chain.state.balance(ALICE) == 5 * ETHER
    assert chain.view(target, "value").value == 42
    assert chain.view("Harness", "load", [target, slot]).value == (42).to_bytes(32, "big")
    assert chain.code_at(BOB) == code
    assert chain.state.nonce(ALICE) == 5
    chain.reset()
    assert chain.state.balance(ALICE) == 0 and chain.view(target, "value").value == 0
    assert chain.code_at(BOB) == b"" and chain.state.nonce(ALICE) == 0
    assert "must be strictly equal to or higher" in message(
        chain.call("deployer", "Harness", "nonces", [target, 0]))
    assert "cannot use precompile" in message(
        chain.call("deployer", "Harness", "etch", [1, code]))


# ---------------------------------------------------------------------------- pranks
def test_pranks_change_the_sender_of_the_next_calls_at_their_depth(solc_installed: list[str]
                                                                   ) -> None:
    chain = harness_chain()
    deployer = chain.deployer.address
    harness = chain.contract("Harness").address
    target = address_of(chain, "target")
    cases = [
        # prank: the next call only; startPrank: until stopPrank.
        ("prankOnce", [ALICE], [(ALICE, deployer), (harness, deployer)], []),
        ("startStop", [ALICE], [(ALICE, deployer), (ALICE, deployer), (harness, deployer)], []),
        # Deeper calls keep their real sender.
        ("prankNested", [ALICE], [(ALICE, deployer)], [(target, deployer)]),
        # With an origin: tx.origin too, inside the pranked call, and back afterwards.
        ("prankWithOrigin", [ALICE, BOB], [(ALICE, BOB), (harness, deployer)],
         [(target, BOB)]),
        ("startWithOrigin", [ALICE, BOB], [(ALICE, BOB), (ALICE, BOB), (harness, deployer)],
         []),
    ]
    for function, args, on_target, on_other in cases:
        chain.reset()
        assert chain.call("deployer", "Harness", function, args).success, function
        assert (records(chain), records(chain, "other")) == (on_target, on_other), function


def test_a_pranked_sender_pays_the_value_and_creates_at_its_address(solc_installed: list[str]
                                                                    ) -> None:
    chain = harness_chain()
    target = address_of(chain, "target")
    assert chain.state.balance(chain.contract("Harness").address) == 0
    assert chain.call("deployer", "Harness", "prankPays", [ALICE, ETHER]).success
    assert (chain.state.balance(ALICE), chain.state.balance(target)) == (0, ETHER)
    chain.reset()
    child, creator = chain.call("deployer", "Harness", "prankCreates", [ALICE]).value
    assert int(child, 16) == create_address(ALICE, 0) and int(creator, 16) == ALICE
    assert "cannot overwrite a prank" in message(
        chain.call("deployer", "Harness", "prankTwice", [ALICE, BOB]))


# ---------------------------------------------------------------------------- expectRevert
EXPECT_REVERT = [
    ("expectAny", [], None),
    ("expectMessage", ["boom", "boom"], None),
    ("expectMessage", ["boom", "bang"], "Error != expected error: bang != boom"),
    ("expectSelector", [], None),
    ("expectEncoded", [3, 3], None),
    ("expectEncoded", [3, 4], "Error != expected error: 0x63a2a81f"),
    ("expectButSucceeds", [], "next call did not revert as expected"),
    ("expectWithoutData", [], "call reverted as expected, but without data"),
    ("expectNoCall", [], "next call did not revert as expected"),
    ("expectReturning", [], None),
    ("expectCreate", [], None),
    ("expectOnlyNext", [], None),
]


@pytest.mark.parametrize(("function", "args", "failure"), EXPECT_REVERT,
                         ids=[f"{row[0]}-{i}" for i, row in enumerate(EXPECT_REVERT)])
def test_expect_revert(solc_installed: list[str], function: str, args: list[Any],
                       failure: str | None) -> None:
    chain = harness_chain()
    result = chain.call("deployer", "Harness", function, args)
    if failure is None:
        assert result.success, result.revert
    else:
        assert message(result).startswith(failure)


def test_expected_reverts_return_placeholders_and_the_caller_goes_on(solc_installed: list[str]
                                                                     ) -> None:
    chain = harness_chain()
    assert chain.call("deployer", "Harness", "expectAny").success
    assert chain.view("Harness", "seen").value == 1  # the harness continued after the call
    assert chain.call("deployer", "Harness", "expectReturning").value == 1  # decoded as 0
    assert int(chain.call("deployer", "Harness", "expectCreate").value, 16) == 1
    assert chain.call("deployer", "Harness", "expectOnlyNext").value == 7
    # Cheatcode calls in between consume neither a prank nor the expectation.
    assert chain.call("deployer", "Harness", "expectWithPrank", [ALICE]).success
    assert records(chain) == [(chain.contract("Harness").address, chain.deployer.address)]


def test_console_calls_do_not_count_as_the_next_call(solc_installed: list[str]) -> None:
    chain = harness_chain()
    assert chain.call("deployer", "Harness", "consoleInBetween", [ALICE]).success
    assert records(chain) == [(ALICE, chain.deployer.address)]


# ---------------------------------------------------------------------------- assume
def test_assume_rejections_are_recognisable(solc_installed: list[str]) -> None:
    chain = harness_chain()
    rejected = chain.call("deployer", "Harness", "assumeBig", [3])
    assert rejected.reverted and rejected.output == ASSUME_MARKER
    assert is_assume_rejection(rejected.output)
    assert chain.call("deployer", "Harness", "assumeBig", [11]).value == 11
    no_revert = chain.call("deployer", "Harness", "assumeNoRevertCall")
    assert no_revert.reverted and is_assume_rejection(no_revert.output)
    assert not is_assume_rejection(b"") and not is_assume_rejection(b"\x08\xc3\x79\xa0")


# ---------------------------------------------------------------------------- keys, labels
@pytest.mark.parametrize("key", [1, 2, 0xC0FFEE, SECP256K1_ORDER - 1])
def test_addr_and_sign_agree_with_ecrecover(solc_installed: list[str], key: int) -> None:
    chain = harness_chain()
    digest = bytes(range(32))
    signer, recovered, v, r, s = chain.view("Harness", "signed", [key, digest]).value
    assert signer == recovered and v in (27, 28)
    assert int.from_bytes(s, "big") <= SECP256K1_ORDER // 2  # low s
    if key == 1:
        assert int(signer, 16) == KEY_ONE_ADDRESS
    # RFC 6979: the same key and digest sign the same way every time.
    assert chain.view("Harness", "signed", [key, digest]).value == (signer, recovered, v, r, s)


def test_keys_out_of_range_revert(solc_installed: list[str]) -> None:
    chain = harness_chain()
    assert "private key cannot be 0" in message(chain.view("Harness", "signed", [0, bytes(32)]))
    assert "curve order" in message(forward(chain, "addr(uint256)", SECP256K1_ORDER))


def test_labels_are_kept_for_display(solc_installed: list[str]) -> None:
    chain = harness_chain()
    assert chain.call("deployer", "Harness", "labelIt", [ALICE, "alice"]).value == "alice"
    assert chain.labels[ALICE] == "alice"
    (unlabeled,) = decode(["string"], forward(chain, "getLabel(address)", BOB).value)
    assert unlabeled == "unlabeled:0x0000000000000000000000000000000000000B0b"


# ---------------------------------------------------------------------------- artifacts
@pytest.mark.parametrize("name", ["Deployed", "Cheats.sol:Deployed",
                                  "Cheats.sol:Deployed:0.8.24",
                                  "tests/chain/fixtures/Cheats.sol:Deployed",
                                  "out/Cheats.sol/Deployed.json"])
def test_get_code_resolves_artifact_names(solc_installed: list[str], name: str) -> None:
    chain = harness_chain()
    [compilation] = chain_fixture("Cheats.sol")
    expected = compilation.contract("Deployed").creation.to_bytes()
    assert chain.view("Harness", "code", [name]).value == expected


def test_artifact_names_parse() -> None:
    assert parse_artifact_name("Token") == (None, "Token")
    assert parse_artifact_name("Token.sol") == ("Token.sol", None)
    assert parse_artifact_name("src/Token.sol:Token:0.8.20") == ("src/Token.sol", "Token")
    assert parse_artifact_name("out/Token.sol/Token.json") == ("Token.sol", "Token")


def test_deploy_code_creates_from_the_caller_and_reset_removes_it(solc_installed: list[str]
                                                                  ) -> None:
    chain = harness_chain()
    harness = chain.contract("Harness").address
    expected = create_address(harness, chain.state.nonce(harness))
    deployed = int(chain.call("deployer", "Harness", "deploy", ["Cheats.sol:Deployed", 42]
                              ).value, 16)
    assert deployed == expected
    assert chain.state.storage_at(deployed, 0) == 42
    assert chain.state.storage_at(deployed, 1) == harness
    chain.reset()
    assert chain.code_at(deployed) == b""
    assert message(chain.call("deployer", "Harness", "deployPlain", ["Reverting"])) == (
        "vm.deployCode: the creation of Reverting reverted")
    assert message(chain.call("deployer", "Harness", "deployPlain", ["Nope"])).startswith(
        "vm.deployCode: no artifact 'Nope'")
    assert "ambiguous" in message(chain.call("deployer", "Harness", "deployPlain",
                                             ["Cheats.sol"]))


# ---------------------------------------------------------------------------- assertions
ADDRESS = "0x00000000000000000000000000000000000A11cE"
ASSERTS = [
    ("assertTrue(bool)", (True,), None),
    ("assertTrue(bool)", (False,), "assertion failed"),
    ("assertFalse(bool,string)", (True, "flag set"), "flag set"),
    ("assertEq(bool,bool)", (True, False), "assertion failed: true != false"),
    ("assertEq(uint256,uint256)", (3, 3), None),
    ("assertEq(uint256,uint256)", (1, 2), "assertion failed: 1 != 2"),
    ("assertEq(int256,int256,string)", (-1, 1, "signs"), "signs: -1 != 1"),
    ("assertEq(address,address)", (ALICE, BOB),
     f"assertion failed: {ADDRESS} != 0x0000000000000000000000000000000000000B0b"),
    ("assertEq(bytes32,bytes32)", (b"\x01" * 32, b"\x01" * 32), None),
    ("assertEq(bytes32,bytes32)", (bytes(32), b"\x01" * 32),
     f"assertion failed: 0x{'00' * 32} != 0x{'01' * 32}"),
    ("assertEq(string,string)", ("a", "b"), "assertion failed: a != b"),
    ("assertEq(bytes,bytes)", (b"\x01", b"\x02"), "assertion failed: 0x01 != 0x02"),
    ("assertEq(uint256[],uint256[])", ([1, 2], [1, 2]), None),
    ("assertEq(uint256[],uint256[])", ([1, 2], [1, 3]), "assertion failed: [1, 2] != [1, 3]"),
    ("assertEq(string[],string[],string)", (["x"], ["y"], "lists"), "lists: [x] != [y]"),
    ("assertNotEq(uint256,uint256)", (1, 1), "assertion failed: 1 == 1"),
    ("assertNotEq(address,address)", (ALICE, BOB), None),
    ("assertLt(uint256,uint256)", (2, 1), "assertion failed: 2 >= 1"),
    ("assertGt(uint256,uint256,string)", (1, 1, "more"), "more: 1 <= 1"),
    ("assertLe(int256,int256)", (-1, -2), "assertion failed: -1 > -2"),
    ("assertGe(int256,int256)", (-2, -1), "assertion failed: -2 < -1"),
    ("assertGe(uint256,uint256)", (5, 5), None),
    ("assertApproxEqAbs(uint256,uint256,uint256)", (100, 104, 4), None),
    ("assertApproxEqAbs(uint256,uint256,uint256)", (100, 105, 4),
     "assertion failed: 100 !~= 105 (max delta: 4, real delta: 5)"),
    ("assertApproxEqAbs(int256,int256,uint256,string)", (-3, 3, 5, "near"),
     "near: -3 !~= 3 (max delta: 5, real delta: 6)"),
    ("assertApproxEqRel(uint256,uint256,uint256)", (100, 105, 5 * 10**16), None),
    ("assertApproxEqRel(uint256,uint256,uint256)", (100, 110, 5 * 10**16),
     "assertion failed: 100 !~= 110 (max delta: 5.0000000000000000%, "
     "real delta: 9.0909090909090909%)"),
    ("assertApproxEqRel(uint256,uint256,uint256)", (1, 0, 0),
     "assertion failed: 1 !~= 0 (max delta: 0.0000000000000000%, real delta: undefined)"),
    ("assertEqDecimal(uint256,uint256,uint256)", (1500, 2500, 3),
     "assertion failed: 1.500 != 2.500"),
    ("assertLtDecimal(int256,int256,uint256,string)", (-5, -6, 1, "dec"), "dec: -0.5 >= -0.6"),
    ("assertApproxEqAbsDecimal(uint256,uint256,uint256,uint256)", (100, 300, 100, 2),
     "assertion failed: 1.00 !~= 3.00 (max delta: 1.00, real delta: 2.00)"),
]


@pytest.mark.parametrize(("signature", "args", "failure"), ASSERTS,
                         ids=[f"{row[0].split('(')[0]}-{i}" for i, row in enumerate(ASSERTS)])
def test_assertions(solc_installed: list[str], signature: str, args: tuple[Any, ...],
                    failure: str | None) -> None:
    chain = harness_chain()
    result = forward(chain, signature, *args)
    if failure is None:
        assert result.success, result.revert
    else:
        assert message(result) == failure


def test_assertions_through_the_solidity_interface(solc_installed: list[str]) -> None:
    chain = harness_chain()
    cases = [
        ("assertSame", [4, 4], None),
        ("assertSame", [4, 5], "assertion failed: 4 != 5"),
        ("assertNames", ["a", "b"], "names differ: a != b"),
        ("assertLists", [[ALICE], [ALICE]], None),
        ("assertLists", [[ALICE], []], f"assertion failed: [{ADDRESS}] != []"),
        ("assertClose", [10, 12, 1],
         "assertion failed: 10 !~= 12 (max delta: 1, real delta: 2)"),
        ("assertBelow", [-3, -2], None),
        ("assertBelow", [3, -1], "assertion failed: 3 >= -1"),
        ("assertHolds", [True], None),
        ("assertHolds", [False], "must hold"),
    ]
    for function, args, failure in cases:
        result = chain.view("Harness", function, args)
        if failure is None:
            assert result.success, (function, result.revert)
        else:
            assert message(result) == failure, function


@pytest.mark.parametrize("assertions_revert", [True, False])
def test_a_failed_assertion_is_recorded_and_reverts_only_if_forge_says_so(
        solc_installed: list[str], assertions_revert: bool) -> None:
    # forge's assertions_revert = false: the call goes on, forge's failure flag is set.
    chain = harness_chain(assertions_revert=assertions_revert)
    target = ContractTarget(chain, recordings=frozenset({"logs"}))
    harness = chain.contract("Harness")
    run = target.run((Tx("assertHolds(bool)", (False,), chain.deployer.address),))
    assert isinstance(run, ContractRun)
    assert run.outcomes[0].success != assertions_revert
    recorded = [log for log in run.logs if log.topics == (FORGE_ASSERTION_TOPIC,)]
    assert [(log.address, decode(["string"], log.data)[0]) for log in recorded] == [
        (harness.address, "must hold")]
    # The record names the calling instruction: its source is the harness's assertHolds.
    location = harness.locate(recorded[0].pc)
    assert location is not None and location.function == "assertHolds"
    # The handler's failure is recorded once: the flag does not outlive its transaction.
    assert chain.state.storage_at(HEVM_ADDRESS, GLOBAL_FAIL_SLOT) == 0
    held = target.run((Tx("assertHolds(bool)", (True,), chain.deployer.address),))
    assert held.outcomes[0].success and not held.logs


def test_every_forge_std_assertion_overload_is_supported() -> None:
    supported = set(supported_signatures())
    for kind in ("bool", "uint256", "int256", "address", "bytes32", "string", "bytes"):
        for array in ("", "[]"):
            for name in ("assertEq", "assertNotEq"):
                pair = f"{kind}{array},{kind}{array}"
                assert {f"{name}({pair})", f"{name}({pair},string)"} <= supported
    assert not supported & set(KNOWN_UNSUPPORTED)


# ---------------------------------------------------------------------------- errors
def test_an_unsupported_cheatcode_is_one_line_naming_it(solc_installed: list[str]) -> None:
    chain = harness_chain()
    snapshot = chain.state.snapshot()
    nonce = chain.state.nonce(chain.deployer.address)
    with pytest.raises(UnsupportedCheatcode) as raised:
        chain.call("deployer", "Harness", "unsupported")
    text = str(raised.value)
    assert "\n" not in text
    assert text.startswith("unsupported cheatcode 0x440ed10d (vm.expectEmit()); ")
    assert "docs/cheatcodes.md" in text
    assert raised.value.signature == "expectEmit()"
    # The transaction left nothing behind.
    assert chain.state.snapshot() == snapshot
    assert chain.state.nonce(chain.deployer.address) == nonce
    with pytest.raises(UnsupportedCheatcode, match="0xdeadbeef .not a cheatcode secant knows"):
        chain.call("deployer", "Harness", "forward", [bytes.fromhex("deadbeef")])
    with pytest.raises(UnsupportedCheatcode, match="vm.ffi"):
        chain.view("Harness", "forward", [function_selector("ffi(string[])")])


def test_short_or_malformed_call_data_reverts(solc_installed: list[str]) -> None:
    chain = harness_chain()
    short = chain.call("deployer", "Harness", "forward", [b"\x12\x34"])
    assert message(short) == "vm: the call data is shorter than a selector"
    bare = chain.call("deployer", "Harness", "forward", [function_selector("warp(uint256)")])
    assert message(bare) == "vm.warp(uint256): malformed arguments"
    wide = function_selector("coinbase(address)") + (1 << 160).to_bytes(32, "big")
    assert message(chain.call("deployer", "Harness", "forward", [wide])) == (
        "vm.coinbase(address): malformed arguments")


def test_a_transaction_to_the_cheatcode_address_costs_a_fixed_gas(solc_installed: list[str]
                                                                  ) -> None:
    chain = harness_chain()
    data = function_selector("warp(uint256)") + (77).to_bytes(32, "big")
    result = chain.transact("deployer", HEVM_ADDRESS, data)
    nonzero = sum(1 for b in data if b)
    intrinsic = 21_000 + 16 * nonzero + 4 * (len(data) - nonzero)
    assert result.success and result.gas_used == intrinsic + CHEATCODE_GAS
    assert chain.env.timestamp == 77


def test_cheatcodes_can_be_switched_off(solc_installed: list[str]) -> None:
    chain = harness_chain(cheatcodes=False)
    before = block_info(chain)
    assert not chain.call("deployer", "Harness", "warp", [5]).success  # vm has no code
    assert block_info(chain) == before and chain.cheatcodes is None


# ---------------------------------------------------------------------------- prefix cache
def assert_same_run(cached: ContractRun, plain: ContractRun) -> None:
    for f in fields(ContractRun):
        # Not the steps the cache saved (a field that does not compare).
        if f.compare:
            assert getattr(cached, f.name) == getattr(plain, f.name), f.name


@pytest.mark.parametrize("resume", [False, True], ids=["cache", "cache-and-last-run"])
def test_a_cached_prefix_with_a_warp_equals_a_replay(solc_installed: list[str],
                                                     resume: bool) -> None:
    plain_chain, cached_chain = harness_chain(), harness_chain()
    plain = ContractTarget(plain_chain, resume=False)
    cache = PrefixCache()
    cached = ContractTarget(cached_chain, prefix_cache=cache, resume=resume)
    user = plain_chain.sender("user1").address
    warp = Tx("warp(uint256)", (2_000_000_000,), user)
    roll = Tx("roll(uint256)", (25_000_000,), user)
    see = Tx("see()", (), user)
    later = replace(see, blocks=1, time=30)
    cases: list[TxSeq] = [
        (warp, see), (warp, see), (warp, later), (roll, warp, see), (roll, warp, later),
        (warp, roll, see), (see, warp), (see, warp, see), (warp, see),
    ]
    for case in cases:
        want = plain.run(case)
        got = cached.run(case)
        assert_same_run(got, want)
        assert cached_chain.env == plain_chain.env
        assert cached_chain.state.storage_at(cached_chain.contract("Harness").address, 2) == (
            plain_chain.state.storage_at(plain_chain.contract("Harness").address, 2))
    # Resuming after the last run takes what the cache would have given, where it can.
    assert cache.hits >= (1 if resume else 4)
    assert cached.rewinds >= (3 if resume else 0)
    assert cached_chain.env.timestamp == 2_000_000_000
    assert cached_chain.state.storage_at(cached_chain.contract("Harness").address, 2) == (
        2_000_000_000)


@pytest.mark.parametrize("types, values", [
    (("uint256", "uint256", "string"), (1, 2, "balances differ: ü")),
    (("address", "bytes", "bool"), (0xBEEF, b"\x00\x01" * 40, True)),
    (("int256", "string", "string"), (-5, "", "x" * 70)),
])
def test_messages_are_decoded_as_the_general_decoder_decodes_them(
        types: tuple[str, ...], values: tuple[object, ...]) -> None:
    from secant.abi import decode, encode
    from secant.chain.cheatcodes import _from_eth_abi, _static_and_strings

    data = b"\x12\x34\x56\x78" + encode(list(types), [
        f"0x{v:040x}" if t == "address" and isinstance(v, int) else v
        for t, v in zip(types, values)])
    general = [_from_eth_abi(t, v) for t, v in zip(types, decode(list(types), data[4:]))]
    assert _static_and_strings(types, data) == general == list(values)
    # Anything a well-formed call would not have goes to the general decoder.
    assert _static_and_strings(types, data[:40]) is None
    assert _static_and_strings(("uint256[]",), data) is None
    bad = bytearray(data)
    bad[4 + 32 * (len(types) - 1) + 31] = 0xFF  # the last offset points past the end
    assert _static_and_strings(types, bytes(bad)) is None
