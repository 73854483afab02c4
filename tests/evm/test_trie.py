"""Merkle-Patricia trie roots: known vectors, py-trie cross-checks, fixture pre-states."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trie import HexaryTrie  # test-only cross-check

from secant.evm.crypto import EMPTY_CODE_HASH, keccak256
from secant.evm.rlp import encode
from secant.evm.trie import EMPTY_TRIE_ROOT, logs_hash, state_root, storage_root, trie_root
from secant.statetest.fixtures import fixtures_root

EMPTY_ROOT_HEX = "56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421"
# keccak(rlp([])): the ``logs`` of a state-test case without logs.
EMPTY_LOGS_HEX = "1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347"


def _reference_root(items: dict[bytes, bytes], secure: bool) -> bytes:
    t = HexaryTrie({})
    for key, value in items.items():
        t[keccak256(key) if secure else key] = value
    root: bytes = t.root_hash
    return root


def test_empty() -> None:
    assert EMPTY_TRIE_ROOT.hex() == EMPTY_ROOT_HEX
    assert trie_root({}).hex() == EMPTY_ROOT_HEX
    assert trie_root({}, secure=False).hex() == EMPTY_ROOT_HEX
    assert storage_root({}).hex() == EMPTY_ROOT_HEX
    assert storage_root({5: 0}).hex() == EMPTY_ROOT_HEX  # zero slots are omitted
    assert state_root([]).hex() == EMPTY_ROOT_HEX


# Vectors from ethereum/tests TrieTests (trietest.json / trieanyorder.json), non-secure.
@pytest.mark.parametrize(
    ("items", "root"),
    [
        ({b"doe": b"reindeer", b"dog": b"puppy", b"dogglesworth": b"cat"},
         "8aad789dff2f538bca5d8ea56e8abe10f4c7ba3a5dea95fea4cd6e7c3a1168d3"),
        # "emptyValues": the inserts that survive the deletions
        ({b"do": b"verb", b"horse": b"stallion", b"doge": b"coin", b"dog": b"puppy"},
         "5991bb8c6514148a29db676a14ac506cd2cd5775ace63c30a4fe457715e9ac84"),
        # an empty value is a deletion
        ({b"do": b"verb", b"horse": b"stallion", b"doge": b"coin", b"dog": b"puppy",
          b"ether": b""},
         "5991bb8c6514148a29db676a14ac506cd2cd5775ace63c30a4fe457715e9ac84"),
    ],
)
def test_known_roots(items: dict[bytes, bytes], root: str) -> None:
    assert trie_root(items, secure=False).hex() == root


def test_small_nodes_are_inlined() -> None:
    items = {b"\x01": b"a", b"\x02": b"b"}  # every node under 32 bytes
    assert trie_root(items, secure=False) == _reference_root(items, secure=False)


_keys = st.binary(min_size=0, max_size=6)
_values = st.binary(min_size=1, max_size=40)


@settings(max_examples=300)
@given(st.dictionaries(_keys, _values, max_size=40), st.booleans())
def test_matches_py_trie(items: dict[bytes, bytes], secure: bool) -> None:
    assert trie_root(items, secure=secure) == _reference_root(items, secure)


@settings(max_examples=100)
@given(st.dictionaries(st.integers(0, 2**256 - 1) | st.integers(0, 50),
                       st.integers(0, 2**256 - 1) | st.integers(0, 3), max_size=30))
def test_storage_root(storage: dict[int, int]) -> None:
    expected = _reference_root(
        {k.to_bytes(32, "big"): encode(v) for k, v in storage.items() if v}, secure=True
    )
    assert storage_root(storage) == expected


def test_state_root_single_account() -> None:
    address = 0xA94F5374FCE5EDBC8E2A8697C15331677E6EBF0B
    account = encode([1, 10**18, EMPTY_TRIE_ROOT, EMPTY_CODE_HASH])
    expected = _reference_root({address.to_bytes(20, "big"): account}, secure=True)
    assert state_root([(address, 1, 10**18, {}, EMPTY_CODE_HASH)]) == expected


def test_logs_hash() -> None:
    assert logs_hash([]).hex() == EMPTY_LOGS_HEX
    logs: list[tuple[int, list[int], bytes]] = [(0x1234, [1, 2**256 - 1], b"\xff" * 33),
                                                 (0x10, [], b"")]
    expected = keccak256(encode([
        [(0x1234).to_bytes(20, "big"), [(1).to_bytes(32, "big"), b"\xff" * 32], b"\xff" * 33],
        [(0x10).to_bytes(20, "big"), [], b""],
    ]))
    assert logs_hash(logs) == expected


# --- fixture pre-states: an invalid transaction leaves the state unchanged, so the
# expected ``hash`` of such a case is the root of ``pre``.

INVALID_TX_FILES = [
    "ethereum-tests/GeneralStateTests/stEIP1559/lowFeeCap.json",
    "ethereum-tests/GeneralStateTests/stEIP1559/lowGasLimit.json",
    "ethereum-tests/GeneralStateTests/stEIP1559/lowGasPriceOldTypes.json",
]


def _hexint(text: str) -> int:
    return int(text, 16) if text not in ("", "0x") else 0


def _pre_root(pre: dict[str, Any]) -> bytes:
    accounts = []
    for address, acct in pre.items():
        code = bytes.fromhex(acct["code"][2:])
        storage = {_hexint(k): _hexint(v) for k, v in acct["storage"].items()}
        accounts.append((int(address, 16), _hexint(acct["nonce"]), _hexint(acct["balance"]),
                         storage, keccak256(code)))
    return state_root(accounts)


@pytest.mark.parametrize("relative", INVALID_TX_FILES)
def test_fixture_pre_state_roots(relative: str) -> None:
    root = fixtures_root()
    if root is None or not (root / relative).is_file():
        pytest.skip("no EVM fixtures: neither ../shared/evm-fixtures nor $SECANT_EVM_FIXTURES "
                    "exists")
    tests = json.loads((root / relative).read_text())
    checked = 0
    for test in tests.values():
        for case in test["post"]["Cancun"]:
            if "expectException" in case:
                assert _pre_root(test["pre"]).hex() == case["hash"][2:]
                checked += 1
    assert checked
