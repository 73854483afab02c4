"""Merkle-Patricia trie roots, computed in one pass over a whole mapping.

There is no node database: :func:`trie_root` sorts the keys and builds the trie bottom-up,
which is all that state tests and post-state checks need. Keys are handled as strings of hex
nibbles, so grouping and common prefixes are plain string operations.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from secant.evm.crypto import keccak256
from secant.evm.rlp import encode, encode_bytes, encode_int, encode_list_payload

EMPTY_TRIE_ROOT = keccak256(b"\x80")
"""Root of the empty trie: keccak256(rlp(b"")) = 0x56e81f17...b421."""

_EMPTY_CHILD = b"\x80"  # rlp(b""): an absent branch child or branch value
_HEX = "0123456789abcdef"


def _hex_prefix(nibbles: str, leaf: bool) -> bytes:
    """Compact (hex-prefix) encoding of a nibble path with the leaf/extension flag."""
    flag = 2 if leaf else 0
    if len(nibbles) % 2:
        return bytes.fromhex(_HEX[flag + 1] + nibbles)
    return bytes.fromhex(_HEX[flag] + "0" + nibbles)


def _reference(node: bytes) -> bytes:
    """How a parent embeds an encoded child: inline below 32 bytes, else by its hash."""
    if len(node) < 32:
        return node
    return encode_bytes(keccak256(node))


def _common_prefix_length(a: str, b: str, start: int) -> int:
    """Length of the common prefix of ``a[start:]`` and ``b[start:]``."""
    limit = min(len(a), len(b))
    i = start
    while i < limit and a[i] == b[i]:
        i += 1
    return i - start


def _node(items: Sequence[tuple[str, bytes]], depth: int) -> bytes:
    """RLP of the node holding ``items`` (sorted, distinct keys sharing ``depth`` nibbles)."""
    if len(items) == 1:
        key, value = items[0]
        path = _hex_prefix(key[depth:], True)
        return encode_list_payload(encode_bytes(path) + encode_bytes(value))
    first_key = items[0][0]
    shared = _common_prefix_length(first_key, items[-1][0], depth)
    if shared:
        child = _node(items, depth + shared)
        path = _hex_prefix(first_key[depth : depth + shared], False)
        return encode_list_payload(encode_bytes(path) + _reference(child))
    # Branch: the key ending here (at most one; it sorts first) holds the branch value.
    value = _EMPTY_CHILD
    start = 0
    if len(first_key) == depth:
        value = encode_bytes(items[0][1])
        start = 1
    children: list[bytes] = []
    index = start
    count = len(items)
    for nibble in _HEX:
        end = index
        while end < count and items[end][0][depth] == nibble:
            end += 1
        if end == index:
            children.append(_EMPTY_CHILD)
        else:
            children.append(_reference(_node(items[index:end], depth + 1)))
        index = end
    return encode_list_payload(b"".join(children) + value)


def trie_root(items: Mapping[bytes, bytes], secure: bool = True) -> bytes:
    """Root hash of the Merkle-Patricia trie holding ``items``.

    With ``secure`` (the state and storage tries) each key is replaced by its keccak-256.
    Entries with an empty value are absent from a trie, so they are skipped.
    """
    pairs: list[tuple[str, bytes]] = [
        ((keccak256(key) if secure else bytes(key)).hex(), bytes(value))
        for key, value in items.items()
        if value
    ]
    if not pairs:
        return EMPTY_TRIE_ROOT
    pairs.sort()
    return keccak256(_node(pairs, 0))


def storage_root(storage: Mapping[int, int]) -> bytes:
    """Root of an account's storage trie: key = slot as 32 bytes, value = rlp(value)."""
    return trie_root(
        {slot.to_bytes(32, "big"): encode_int(value) for slot, value in storage.items() if value}
    )


def account_rlp(nonce: int, balance: int, storage_hash: bytes, code_hash: bytes) -> bytes:
    """RLP of an account as stored in the state trie."""
    return encode([nonce, balance, storage_hash, code_hash])


def state_root(
    accounts: Iterable[tuple[int, int, int, Mapping[int, int], bytes]],
) -> bytes:
    """State root over (address, nonce, balance, storage, code_hash) tuples."""
    return trie_root(
        {
            address.to_bytes(20, "big"): account_rlp(
                nonce, balance, storage_root(storage), code_hash
            )
            for address, nonce, balance, storage, code_hash in accounts
        }
    )


def logs_hash(logs: Iterable[tuple[int, Sequence[int], bytes]]) -> bytes:
    """keccak256(rlp([[address, [topics...], data], ...])), the state tests' ``logs``."""
    return keccak256(
        encode(
            [
                [address.to_bytes(20, "big"), [t.to_bytes(32, "big") for t in topics], data]
                for address, topics, data in logs
            ]
        )
    )
