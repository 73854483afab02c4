"""Storage slots named by the accounts that key them, relative to a transaction.

The data flow of sequence fuzzing (``secant.engine.harvey.sequences``) links a function that writes
a slot to a function that reads it. Mapping entries keyed by accounts get a different slot
for every account (``balances[msg.sender]`` is ``keccak(sender . base)``), so a plain slot
number links ``deposit()`` by one sender only with ``withdraw()`` by that same sender.
``SlotNames`` names such slots by *who* keys them instead: ``("map", base, keys)`` where
each key is ``"caller"`` (the transaction's sender) or ``("arg", path)`` (an address
argument). ``approve(spender)`` then writes ``("map", 1, ("caller", ("arg", (0,))))`` and
``transferFrom(from, to, amount)`` reads ``("map", 1, (("arg", (0,)), "caller"))``: the same
entry of the same mapping once the accounts agree, which ``align`` arranges.

Slots are recognised by hashing, once per campaign, the campaign's accounts (its senders,
deployed contracts and the zero address) with the first ``MAX_BASE`` base slots, one or two
mapping levels deep, in Solidity's layout (``keccak(key . slot)``) and Vyper's
(``keccak(slot . key)``). Other slots keep their number.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from secant.engine.values import VType, args_leaves, get_at, set_at
from secant.evm.crypto import keccak256
from secant.types import Tx

MAX_BASE = 64
"""Mapping base slots recognised (state variables 0-63)."""

KeyName = str | tuple[str, tuple[int, ...]]
"""``"caller"`` or ``("arg", path)``."""

SlotKey = int | tuple[Any, ...]
"""A slot number, or ``("map", base, (KeyName, ...))``."""


def _word(value: int) -> bytes:
    return value.to_bytes(32, "big")


def _hash_int(data: bytes) -> int:
    return int.from_bytes(keccak256(data), "big")


class SlotNames:
    """Names the slots of mappings keyed by the campaign's accounts (module docstring)."""

    def __init__(self, accounts: Sequence[int], types_of: Callable[[Tx], Sequence[VType]],
                 enabled: bool = True) -> None:
        self._types_of = types_of
        # slot -> (base, the accounts keying it, outermost mapping first)
        self._entries = _entries(tuple(accounts)) if enabled else {}

    def name(self, slot: int, tx: Tx) -> SlotKey:
        """``slot`` as ``tx`` sees it: keyed by its sender or its address arguments."""
        entry = self._entries.get(slot)
        if entry is None:
            return slot
        base, accounts = entry
        names: list[KeyName] = []
        addresses: list[tuple[tuple[int, ...], Any]] | None = None
        for account in accounts:
            if account == tx.sender:
                names.append("caller")
                continue
            if addresses is None:
                addresses = [(path, get_at(tx.args, path)) for path, vt
                             in args_leaves(self._types_of(tx), tx.args)
                             if vt.kind == "address"]
            path = next((p for p, value in addresses if value == account), None)
            if path is None:
                return slot  # keyed by an account the transaction does not name
            names.append(("arg", path))
        return ("map", base, tuple(names))


@functools.lru_cache(maxsize=8)
def _entries(accounts: tuple[int, ...]) -> dict[int, tuple[int, tuple[int, ...]]]:
    """Every recognised slot (about 20 ms for ten accounts; shared by equal campaigns)."""
    entries: dict[int, tuple[int, tuple[int, ...]]] = {}
    for base in range(MAX_BASE):
        slot = _word(base)
        for first in accounts:
            key = _word(first)
            for solidity in (True, False):
                inner = _hash_int(key + slot if solidity else slot + key)
                entries[inner] = (base, (first,))
                inner_word = _word(inner)
                for second in accounts:
                    key2 = _word(second)
                    outer = _hash_int(key2 + inner_word if solidity else inner_word + key2)
                    entries[outer] = (base, (first, second))
    return entries


def read_shapes(reads: set[SlotKey]) -> set[tuple[Any, int]]:
    """The (base, depth) of each mapping entry of ``reads`` (for ``links``)."""
    return {(key[1], len(key[2])) for key in reads if isinstance(key, tuple)}


def links(writes: set[SlotKey], reads: set[SlotKey],
          shapes: set[tuple[Any, int]] | None = None) -> bool:
    """Whether some slot of ``writes`` is, or can be made to be, one of ``reads``.

    ``shapes``: ``read_shapes(reads)``, when the caller keeps it.
    """
    if not writes.isdisjoint(reads):
        return True
    # Two entries of one mapping (same base, same depth) can be made one by alignment.
    if shapes is None:
        shapes = read_shapes(reads)
    return any(isinstance(key, tuple) and (key[1], len(key[2])) in shapes for key in writes)


def align(writer: Tx, writes: set[SlotKey], reads: set[SlotKey], reader: Tx,
          pairs: Sequence[tuple[tuple[Any, ...], tuple[Any, ...]]] | None = None) -> Tx:
    """``writer`` changed so that it writes an entry ``reader`` reads.

    Nothing changes when a plain slot links them. Otherwise the first linking pair of
    mapping entries decides: each of the writer's keys becomes the account the reader's key
    names there (its sender for ``"caller"``, an argument's value for ``("arg", path)``).
    A sender that changes also replaces the old sender in the writer's address arguments
    (``mint(to=self)`` keyed by ``to``, named after the caller). ``pairs``:
    ``entry_pairs(writes, reads)``, when the caller keeps it.
    """
    if any(isinstance(key, int) for key in writes & reads):
        return writer
    for wkey, rkey in entry_pairs(writes, reads) if pairs is None else pairs:
        found = [_account(name, reader) for name in rkey[2]]
        wanted = [account for account in found if account is not None]
        if len(wanted) < len(found):
            continue
        aligned = _with_accounts(writer, wkey[2], wanted)
        if aligned is not None:
            return aligned
    return writer


def entry_pairs(writes: set[SlotKey], reads: set[SlotKey]
           ) -> list[tuple[tuple[Any, ...], tuple[Any, ...]]]:
    """Entries of one mapping, one written and one read, in a fixed order.

    The order of a set of tuples holding strings varies between processes.
    """
    read_maps = sorted((key for key in reads if isinstance(key, tuple)), key=repr)
    found = []
    for wkey in sorted((key for key in writes if isinstance(key, tuple)), key=repr):
        for rkey in read_maps:
            if wkey[1] == rkey[1] and len(wkey[2]) == len(rkey[2]):
                found.append((wkey, rkey))
    return found


def _account(name: KeyName, tx: Tx) -> int | None:
    """The account a key name stands for in ``tx``."""
    if isinstance(name, str):
        return tx.sender  # "caller"
    try:
        value = get_at(tx.args, name[1])
    except (IndexError, TypeError):
        return None
    return value if isinstance(value, int) else None


def _with_accounts(writer: Tx, names: tuple[KeyName, ...], accounts: list[int]) -> Tx | None:
    """``writer`` with each named key set to its account, or None if they conflict."""
    senders = {account for name, account in zip(names, accounts) if name == "caller"}
    if len(senders) > 1:
        return None  # two levels want two different senders
    sender = senders.pop() if senders else writer.sender
    args = writer.args
    if sender != writer.sender:
        args = _replace_address(args, writer.sender, sender)
    for name, account in zip(names, accounts):
        if not isinstance(name, str):
            try:
                args = set_at(args, name[1], account)
            except (IndexError, TypeError):
                return None  # a shorter array than the learnt run had
    if sender == writer.sender and args == writer.args:
        return writer
    return replace(writer, sender=sender, args=args)


def _replace_address(value: Any, old: int, new: int) -> Any:
    """``value`` (an argument tuple) with every ``old`` integer leaf replaced by ``new``."""
    if isinstance(value, tuple):
        return tuple(_replace_address(item, old, new) for item in value)
    return new if value == old and isinstance(value, int) and not isinstance(value, bool) \
        else value
