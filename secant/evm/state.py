"""World state with an undo journal.

Every mutation appends one small tuple to ``journal``; ``snapshot()`` is the journal's length
and ``revert(snapshot)`` undoes entries back to it, so both cost O(changes since the
snapshot), never O(size of the state). Per-transaction bookkeeping (warm sets, transient
storage, original storage values, logs, the refund counter, created/destroyed accounts) lives
in a ``TxState`` that is journaled the same way, so a reverted call frame forgets it too.

``changes_since(snapshot)`` turns the journal since a snapshot into a redo diff
(``StateDiff``) that ``apply`` replays, journaled, onto the state at that snapshot: the
test-case prefix cache (``secant.targets.prefix_cache``) is built on it.

Addresses and storage slots are plain ints; storage dicts never hold zero values.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from secant.evm.crypto import EMPTY_CODE_HASH, keccak256

# Journal entry tags (first element of each tuple). Tags above _ACCOUNT are per-transaction
# bookkeeping, which ``WorldState.changes_since`` skips by that order.
_STORAGE = 0  # (tag, storage_dict, slot, old_value_or_None)
_BALANCE = 1  # (tag, account, old_balance)
_NONCE = 2  # (tag, account, old_nonce)
_CODE = 3  # (tag, account, old_code, old_code_hash)
_ACCOUNT = 4  # (tag, address, old_account_or_None)   account created or deleted
_SET_ADD = 5  # (tag, set, item)                      warm sets, created, destroyed
_TSTORE = 6  # (tag, dict, key, old_value_or_None)
_LOG = 7  # (tag, logs_list)
_REFUND = 8  # (tag, tx_state, old_refund)


class Account:
    """One account. Mutate it only through ``WorldState`` so that changes are journaled."""

    __slots__ = ("nonce", "balance", "code", "code_hash", "storage")

    def __init__(
        self,
        nonce: int = 0,
        balance: int = 0,
        code: bytes = b"",
        storage: dict[int, int] | None = None,
        code_hash: bytes | None = None,
    ) -> None:
        self.nonce = nonce
        self.balance = balance
        self.code = code
        self.code_hash = code_hash or (keccak256(code) if code else EMPTY_CODE_HASH)
        self.storage: dict[int, int] = storage if storage is not None else {}

    def is_empty(self) -> bool:
        """EIP-161 emptiness: no nonce, no balance, no code."""
        return self.nonce == 0 and self.balance == 0 and not self.code

    def __repr__(self) -> str:
        return (
            f"Account(nonce={self.nonce}, balance={self.balance}, code={len(self.code)}B, "
            f"storage={len(self.storage)} slots)"
        )


Log = tuple[int, tuple[int, ...], bytes]
"""A log entry: (emitting address, topics, data)."""


class TxState:
    """Bookkeeping that lives for one transaction."""

    __slots__ = (
        "warm_addresses",
        "warm_slots",
        "transient",
        "original",
        "created",
        "destroyed",
        "logs",
        "refund",
    )

    def __init__(self) -> None:
        self.warm_addresses: set[int] = set()
        self.warm_slots: set[tuple[int, int]] = set()
        self.transient: dict[tuple[int, int], int] = {}
        # Storage values at the start of the transaction, recorded at a slot's first write.
        self.original: dict[tuple[int, int], int] = {}
        self.created: set[int] = set()
        self.destroyed: set[int] = set()
        self.logs: list[Log] = []
        self.refund = 0


class AccountChange(NamedTuple):
    """The state of one account after some changes: one record of a :class:`StateDiff`.

    When ``replaced`` is true the account object itself changed since the snapshot (it was
    created, deleted or re-created): ``exists`` says whether an account is there now and, if
    so, ``nonce``, ``balance``, ``code``/``code_hash`` and ``storage`` (every non-zero slot)
    are its whole state. Otherwise the account is the one that was there at the snapshot and
    only what changed is set: None fields kept their value, ``storage`` holds the final value
    of every slot written since (0: cleared). A named tuple: cheap to build and immutable.
    """

    address: int
    replaced: bool
    exists: bool = True
    nonce: int | None = None
    balance: int | None = None
    code: bytes | None = None
    code_hash: bytes | None = None
    storage: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class StateDiff:
    """A redo record: the final value of everything that changed since a snapshot.

    Built by :meth:`WorldState.changes_since` and replayed by :meth:`WorldState.apply`.
    Only persistent state is in it (accounts and storage); per-transaction bookkeeping (warm
    sets, transient storage, logs, refunds, original values) ends with its transaction.
    """

    accounts: tuple[AccountChange, ...] = ()

    def __len__(self) -> int:
        return len(self.accounts)


class WorldState:
    """Accounts keyed by address, with snapshot/revert through an undo journal."""

    def __init__(self) -> None:
        self.accounts: dict[int, Account] = {}
        self.journal: list[tuple[Any, ...]] = []
        self.tx = TxState()

    # ----------------------------------------------------------------- snapshots
    def snapshot(self) -> int:
        """Return an id to ``revert`` to later. Snapshots nest and stay valid after a revert."""
        return len(self.journal)

    def revert(self, snapshot: int) -> None:
        """Undo every change made since ``snapshot``."""
        journal = self.journal
        accounts = self.accounts
        while len(journal) > snapshot:
            entry = journal.pop()
            tag = entry[0]
            if tag == _STORAGE:
                _, storage, slot, old = entry
                if old is None:
                    storage.pop(slot, None)
                else:
                    storage[slot] = old
            elif tag == _BALANCE:
                entry[1].balance = entry[2]
            elif tag == _SET_ADD:
                entry[1].discard(entry[2])
            elif tag == _NONCE:
                entry[1].nonce = entry[2]
            elif tag == _ACCOUNT:
                _, address, old_account = entry
                if old_account is None:
                    accounts.pop(address, None)
                else:
                    accounts[address] = old_account
            elif tag == _TSTORE:
                _, table, key, old = entry
                if old is None:
                    table.pop(key, None)
                else:
                    table[key] = old
            elif tag == _LOG:
                entry[1].pop()
            elif tag == _REFUND:
                entry[1].refund = entry[2]
            elif tag == _CODE:
                _, account, code, code_hash = entry
                account.code = code
                account.code_hash = code_hash

    def forget_history(self) -> None:
        """Drop the journal: the current state becomes the base no snapshot can go below."""
        self.journal.clear()

    def changes_since(self, snapshot: int) -> StateDiff:
        """The redo diff of the changes made since ``snapshot`` (current values, not history).

        Derived from the journal entries written since the snapshot, so it costs O(those
        entries), and it reads nothing on the hot paths. Applied with :meth:`apply` to the
        state as it was at ``snapshot``, it reproduces the current accounts and storage.
        """
        accounts = self.accounts
        # The journal names accounts and storage dicts by object, not by address. An object
        # that is no longer in ``accounts`` belongs to an address whose account was replaced
        # or deleted since (each such change is an _ACCOUNT entry), so that address gets a
        # full record below and the object's own entries can be skipped.
        owner_of = {id(a): address for address, a in accounts.items()}
        storage_owner_of = {id(a.storage): address for address, a in accounts.items()}
        first_owner: dict[int, Account | None] = {}
        balances: set[int] = set()
        nonces: set[int] = set()
        codes: set[int] = set()
        slots: dict[int, dict[int, None]] = {}
        for entry in self.journal[snapshot:]:
            tag = entry[0]
            if tag > _ACCOUNT:
                continue  # per-transaction bookkeeping (see ``StateDiff``)
            if tag == _STORAGE:
                address = storage_owner_of.get(id(entry[1]))
                if address is not None:
                    written = slots.get(address)
                    if written is None:
                        written = slots[address] = {}
                    written[entry[2]] = None
            elif tag == _ACCOUNT:
                if entry[1] not in first_owner:
                    first_owner[entry[1]] = entry[2]
            else:
                address = owner_of.get(id(entry[1]))
                if address is not None:
                    (balances if tag == _BALANCE else nonces if tag == _NONCE else codes
                     ).add(address)

        changes: list[AccountChange] = []
        replaced = {address for address, old in first_owner.items()
                    if accounts.get(address) is not old}
        for address in sorted(replaced):
            account = accounts.get(address)
            if account is None:
                changes.append(AccountChange(address, True, exists=False))
            else:
                changes.append(AccountChange(
                    address, True, True, account.nonce, account.balance, account.code,
                    account.code_hash, tuple(account.storage.items())))
        for address in sorted((balances | nonces | codes | slots.keys()) - replaced):
            account = accounts[address]
            storage = account.storage
            code = address in codes
            changes.append(AccountChange(
                address, False, True,
                account.nonce if address in nonces else None,
                account.balance if address in balances else None,
                account.code if code else None,
                account.code_hash if code else None,
                tuple((slot, storage.get(slot, 0)) for slot in slots.get(address, ()))))
        return StateDiff(tuple(changes))

    def touched_since(self, snapshot: int) -> tuple[set[int], set[tuple[int, int]]]:
        """The accounts and slots the changes made since ``snapshot`` may have changed.

        The accounts whose balance, nonce or code was set, or which were created, replaced
        or deleted; the (address, slot) pairs written. A superset: a value written back to
        what it was still counts. Derived from the journal, like ``changes_since``.
        """
        accounts: set[int] = set()
        slots: set[tuple[int, int]] = set()
        entries = self.journal[snapshot:]
        if not entries:
            return accounts, slots
        owner_of: dict[int, int] | None = None
        storage_owner_of: dict[int, int] | None = None
        for entry in entries:
            tag = entry[0]
            if tag > _ACCOUNT:
                continue  # per-transaction bookkeeping
            if tag == _ACCOUNT:
                accounts.add(entry[1])
            elif tag == _STORAGE:
                if storage_owner_of is None:
                    storage_owner_of = {id(a.storage): address
                                        for address, a in self.accounts.items()}
                address = storage_owner_of.get(id(entry[1]))
                if address is not None:  # else an account replaced since: an _ACCOUNT entry
                    slots.add((address, entry[2]))
            else:
                if owner_of is None:
                    owner_of = {id(a): address for address, a in self.accounts.items()}
                address = owner_of.get(id(entry[1]))
                if address is not None:
                    accounts.add(address)
        return accounts, slots

    def apply(self, diff: StateDiff) -> None:
        """Replay ``diff`` onto the state it was taken from (journaled, so ``revert`` undoes it).

        The state must be as it was at the diff's snapshot. The values are set as recorded,
        without the EIP-161 clean-up that balance changes do: the recorded state already is
        the result of it.
        """
        accounts = self.accounts
        journal = self.journal
        for change in diff.accounts:
            address = change.address
            if change.replaced:
                journal.append((_ACCOUNT, address, accounts.get(address)))
                if not change.exists:
                    accounts.pop(address, None)
                    continue
                assert change.nonce is not None and change.balance is not None
                assert change.code is not None
                accounts[address] = Account(change.nonce, change.balance, change.code,
                                            dict(change.storage), change.code_hash)
                continue
            account = accounts[address]
            if change.nonce is not None:
                journal.append((_NONCE, account, account.nonce))
                account.nonce = change.nonce
            if change.balance is not None:
                journal.append((_BALANCE, account, account.balance))
                account.balance = change.balance
            if change.code is not None:
                journal.append((_CODE, account, account.code, account.code_hash))
                account.code = change.code
                account.code_hash = change.code_hash or (
                    keccak256(change.code) if change.code else EMPTY_CODE_HASH)
            storage = account.storage
            for slot, value in change.storage:
                journal.append((_STORAGE, storage, slot, storage.get(slot)))
                if value:
                    storage[slot] = value
                else:
                    storage.pop(slot, None)

    def begin_transaction(self) -> TxState:
        """Start fresh per-transaction bookkeeping and return it."""
        self.tx = TxState()
        return self.tx

    # ----------------------------------------------------------------- reading
    def get(self, address: int) -> Account | None:
        """The account at ``address``, or None if it does not exist."""
        return self.accounts.get(address)

    def exists(self, address: int) -> bool:
        """Whether an account exists at ``address`` (it may be empty)."""
        return address in self.accounts

    def is_alive(self, address: int) -> bool:
        """Exists and is not empty (EIP-161)."""
        account = self.accounts.get(address)
        return account is not None and not account.is_empty()

    def balance(self, address: int) -> int:
        """Balance of ``address`` (0 if absent)."""
        account = self.accounts.get(address)
        return account.balance if account is not None else 0

    def nonce(self, address: int) -> int:
        """Nonce of ``address`` (0 if absent)."""
        account = self.accounts.get(address)
        return account.nonce if account is not None else 0

    def code(self, address: int) -> bytes:
        """Code of ``address`` (empty if absent)."""
        account = self.accounts.get(address)
        return account.code if account is not None else b""

    def storage_at(self, address: int, slot: int) -> int:
        """Storage value at ``slot`` of ``address`` (0 if unset)."""
        account = self.accounts.get(address)
        return account.storage.get(slot, 0) if account is not None else 0

    def iter_accounts(self) -> Iterator[tuple[int, Account]]:
        """Every (address, account) pair, in insertion order."""
        return iter(list(self.accounts.items()))

    # ----------------------------------------------------------------- writing
    def set_account(
        self,
        address: int,
        nonce: int = 0,
        balance: int = 0,
        code: bytes = b"",
        storage: dict[int, int] | None = None,
    ) -> Account:
        """Create or replace the account at ``address`` (journaled)."""
        account = Account(nonce, balance, code, {k: v for k, v in (storage or {}).items() if v})
        self.journal.append((_ACCOUNT, address, self.accounts.get(address)))
        self.accounts[address] = account
        return account

    def get_or_create(self, address: int) -> Account:
        """The account at ``address``, creating an empty one if needed (journaled)."""
        account = self.accounts.get(address)
        if account is None:
            account = Account()
            self.journal.append((_ACCOUNT, address, None))
            self.accounts[address] = account
        return account

    def delete_account(self, address: int) -> None:
        """Remove the account at ``address`` with its storage (journaled)."""
        account = self.accounts.pop(address, None)
        if account is not None:
            self.journal.append((_ACCOUNT, address, account))

    # Balance changes follow the specs' ``modify_state``: an account that a change leaves
    # empty (EIP-161) ceases to exist, which is how touched empty accounts are cleared.
    def set_balance(self, address: int, value: int) -> None:
        """Set the balance of ``address``, creating the account if needed."""
        account = self.get_or_create(address)
        self.journal.append((_BALANCE, account, account.balance))
        account.balance = value
        if not value and account.is_empty():
            self.delete_account(address)

    def add_balance(self, address: int, amount: int) -> None:
        """Add ``amount`` (may be negative) to the balance of ``address``."""
        account = self.get_or_create(address)
        self.journal.append((_BALANCE, account, account.balance))
        account.balance += amount
        if not account.balance and account.is_empty():
            self.delete_account(address)

    def transfer(self, sender: int, recipient: int, amount: int) -> None:
        """Move ``amount`` wei; the caller has checked the sender's balance."""
        accounts = self.accounts
        src = accounts[sender]
        self.journal.append((_BALANCE, src, src.balance))
        src.balance -= amount
        if not src.balance and src.is_empty():
            self.delete_account(sender)
        dst = accounts.get(recipient)
        if dst is None:
            dst = self.get_or_create(recipient)
        self.journal.append((_BALANCE, dst, dst.balance))
        dst.balance += amount
        if not dst.balance and dst.is_empty():
            self.delete_account(recipient)

    def increment_nonce(self, address: int) -> None:
        """Add one to the nonce of ``address``."""
        account = self.get_or_create(address)
        self.journal.append((_NONCE, account, account.nonce))
        account.nonce += 1

    def set_nonce(self, address: int, nonce: int) -> None:
        """Set the nonce of ``address`` (cheatcodes do; transactions only increment it)."""
        account = self.get_or_create(address)
        self.journal.append((_NONCE, account, account.nonce))
        account.nonce = nonce

    def set_code(self, address: int, code: bytes) -> None:
        """Install ``code`` at ``address``."""
        account = self.get_or_create(address)
        self.journal.append((_CODE, account, account.code, account.code_hash))
        account.code = code
        account.code_hash = keccak256(code) if code else EMPTY_CODE_HASH

    def set_storage(self, address: int, slot: int, value: int) -> None:
        """Write one storage slot (zero deletes it)."""
        storage = self.get_or_create(address).storage
        self.journal.append((_STORAGE, storage, slot, storage.get(slot)))
        if value:
            storage[slot] = value
        else:
            storage.pop(slot, None)

    def destroy_storage(self, address: int) -> None:
        """Clear all storage of ``address`` (journaled slot by slot)."""
        account = self.accounts.get(address)
        if account is None:
            return
        storage = account.storage
        for slot in list(storage):
            self.journal.append((_STORAGE, storage, slot, storage.pop(slot)))

    # ----------------------------------------------------------------- per-transaction sets
    def mark(self, which: set[Any], item: Any) -> bool:
        """Add ``item`` to one of the transaction's sets (journaled); True if it was new."""
        if item in which:
            return False
        which.add(item)
        self.journal.append((_SET_ADD, which, item))
        return True

    def set_transient(self, address: int, slot: int, value: int) -> None:
        """EIP-1153 TSTORE."""
        table = self.tx.transient
        key = (address, slot)
        self.journal.append((_TSTORE, table, key, table.get(key)))
        if value:
            table[key] = value
        else:
            table.pop(key, None)

    def add_log(self, log: Log) -> None:
        """Append a log to the transaction's logs."""
        logs = self.tx.logs
        logs.append(log)
        self.journal.append((_LOG, logs))

    def add_refund(self, amount: int) -> None:
        """Change the refund counter by ``amount`` (may be negative)."""
        tx = self.tx
        self.journal.append((_REFUND, tx, tx.refund))
        tx.refund += amount
