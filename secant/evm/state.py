"""World state with an undo journal.

Every mutation appends one small tuple to ``journal``; ``snapshot()`` is the journal's length
and ``revert(snapshot)`` undoes entries back to it, so both cost O(changes since the
snapshot), never O(size of the state). Per-transaction bookkeeping (warm sets, transient
storage, original storage values, logs, the refund counter, created/destroyed accounts) lives
in a ``TxState`` that is journaled the same way, so a reverted call frame forgets it too.

Addresses and storage slots are plain ints; storage dicts never hold zero values.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from secant.evm.crypto import EMPTY_CODE_HASH, keccak256

# Journal entry tags (first element of each tuple).
_STORAGE = 0  # (tag, storage_dict, slot, old_value_or_None)
_BALANCE = 1  # (tag, account, old_balance)
_NONCE = 2  # (tag, account, old_nonce)
_CODE = 3  # (tag, account, old_code, old_code_hash)
_ACCOUNT = 4  # (tag, address, old_account_or_None)   account created or deleted
_SET_ADD = 5  # (tag, set, item)                      warm sets, touched, created, destroyed
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
        "touched",
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
        self.touched: set[int] = set()
        self.destroyed: set[int] = set()
        self.logs: list[Log] = []
        self.refund = 0


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

    def commit(self, snapshot: int) -> None:
        """Accept the changes since ``snapshot``.

        The entries stay in the journal so that an enclosing snapshot can still undo them;
        use ``forget_history`` to drop the whole journal once no snapshot is needed.
        """

    def forget_history(self) -> None:
        """Drop the journal: the current state becomes the base no snapshot can go below."""
        self.journal.clear()

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
