"""The mutators' dictionary: values worth trying, from the code and from runs.

Sources (issue 4): constants PUSHed by the target's bytecode (jump targets excluded),
operands seen in comparisons, values written to storage, and the addresses of senders and
contracts. Entries keep insertion order, so a draw from the campaign's ``Random`` depends
only on the seed; runtime entries are bounded (oldest dropped first) so a campaign that
sees millions of operands keeps a small dictionary.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from secant.evm.opcodes import JUMP, JUMPDEST, JUMPI, immediate_size


def code_constants(code: bytes) -> list[int]:
    """Values PUSHed by ``code``, in order, without code addresses and duplicates.

    Code addresses are not data: a PUSH right before JUMP/JUMPI is a jump target, and a
    pushed value that is a JUMPDEST of this code is, in solc's output, the return address of
    an internal call. Contracts with many internal functions push hundreds of them, which
    would drown the few real constants a dictionary draw should find.
    """
    pushes: list[tuple[int, int]] = []  # (value, pc after the push)
    jumpdests: set[int] = set()
    pc, n = 0, len(code)
    while pc < n:
        op = code[pc]
        width = immediate_size(op)
        if width:
            after = pc + 1 + width
            pushes.append((int.from_bytes(code[pc + 1:after], "big"), after))
            pc = after
        else:
            if op == JUMPDEST:
                jumpdests.add(pc)
            pc += 1
    found: dict[int, None] = {}
    for value, after in pushes:
        if value in jumpdests or (after < n and code[after] in (JUMP, JUMPI)):
            continue
        found[value] = None
    return list(found)


class Dictionary:
    """Interesting integers: static ones from code, bounded dynamic ones from runs."""

    def __init__(self, static: Iterable[int] = (), addresses: Iterable[int] = (),
                 limit: int = 4096) -> None:
        self._static: dict[int, None] = dict.fromkeys(static)
        self.addresses: list[int] = list(dict.fromkeys(addresses))
        self._dynamic: dict[int, None] = {}
        self.limit = limit
        self._view: list[int] | None = None

    def __len__(self) -> int:
        return len(self._static) + len(self._dynamic)

    def __contains__(self, value: int) -> bool:
        return value in self._static or value in self._dynamic

    def add(self, value: int) -> bool:
        """Add a value seen at run time; return True when it was new."""
        if value in self._static or value in self._dynamic:
            return False
        self._dynamic[value] = None
        if len(self._dynamic) > self.limit:
            del self._dynamic[next(iter(self._dynamic))]
        self._view = None
        return True

    def values(self) -> list[int]:
        """Every entry, static ones first (a cached list)."""
        if self._view is None:
            self._view = [*self._static, *self._dynamic]
        return self._view

    def choice(self, rng: random.Random) -> int | None:
        """A random entry, or None when empty."""
        view = self.values()
        return view[rng.randrange(len(view))] if view else None

    def address(self, rng: random.Random) -> int | None:
        """A random known address, or None."""
        return self.addresses[rng.randrange(len(self.addresses))] if self.addresses else None
