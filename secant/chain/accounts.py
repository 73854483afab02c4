"""The externally owned accounts that send transactions on the test chain.

As ILF does, the chain has five senders by default: the deployer (who created the target and
is usually its owner), two more trusted users and two attackers, each with a large balance.
Each sender carries its role (deployer, user, attacker).

Addresses are derived from fixed labels (``keccak256("secant sender <name>")``), so every
run, every machine and every seed sees the same accounts.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from secant.evm.crypto import keccak256

__all__ = [
    "DEFAULT_BALANCE",
    "Role",
    "Sender",
    "default_senders",
    "derived_address",
    "find_sender",
]

DEFAULT_BALANCE = 10**9 * 10**18
"""Balance of every sender: one billion ether, enough for any value a fuzzer sends."""


class Role(StrEnum):
    """What a sender stands for in the scenarios a fuzzer explores."""

    DEPLOYER = "deployer"
    USER = "user"
    ATTACKER = "attacker"


def derived_address(label: str) -> int:
    """Return the deterministic address for ``label``: the low 20 bytes of its Keccak hash."""
    return int.from_bytes(keccak256(f"secant {label}".encode())[12:], "big")


@dataclass(frozen=True)
class Sender:
    """An externally owned account with a role; ``name`` is unique on a chain."""

    address: int
    role: Role
    name: str

    @property
    def trusted(self) -> bool:
        """Whether the sender is the deployer or a trusted user (not an attacker)."""
        return self.role is not Role.ATTACKER

    @property
    def hex(self) -> str:
        """The address as ``0x`` and 40 hex digits."""
        return f"0x{self.address:040x}"

    def __str__(self) -> str:
        return f"{self.name} ({self.hex})"


def default_senders(users: int = 2, attackers: int = 2,
                    deployer: int | None = None) -> tuple[Sender, ...]:
    """Return the deployer, then ``users`` trusted users, then ``attackers`` attackers.

    Names are ``deployer``, ``user1``.., ``attacker1``..; the deployer always comes first,
    at ``deployer`` when given (Echidna's ``deployer``, Medusa's ``deployerAddress``).
    """
    if users < 0 or attackers < 0:
        raise ValueError("the number of users and attackers cannot be negative")
    senders = [Sender(derived_address("sender deployer") if deployer is None else deployer,
                      Role.DEPLOYER, "deployer")]
    senders += [Sender(derived_address(f"sender user{i}"), Role.USER, f"user{i}")
                for i in range(1, users + 1)]
    senders += [Sender(derived_address(f"sender attacker{i}"), Role.ATTACKER, f"attacker{i}")
                for i in range(1, attackers + 1)]
    return tuple(senders)


def find_sender(senders: tuple[Sender, ...], key: Sender | int | str) -> Sender:
    """Return the sender given as itself, its address, its name or its role's first member."""
    if isinstance(key, Sender):
        return key
    for sender in senders:
        if key in (sender.address, sender.name, sender.hex):
            return sender
    if isinstance(key, str):
        for sender in senders:
            if sender.role.value == key:
                return sender
        if key.lower().startswith("0x"):
            try:
                return find_sender(senders, int(key, 16))
            except (ValueError, KeyError):
                pass
    names = ", ".join(s.name for s in senders)
    raise KeyError(f"no sender {key!r} (senders: {names})")
