"""A small two-pass EVM assembler for the hand-written attacker contracts.

A program is a sequence of items:

- an opcode mnemonic (``"ADD"``, ``"CALLDATALOAD"``; ``"PUSH1"``..``"PUSH32"`` are not written
  by hand, see ints below);
- an ``int``: pushed with the narrowest PUSH that holds it (``PUSH1 0`` for zero, so the code
  runs on forks without PUSH0);
- :class:`Label`: marks a jump destination and emits ``JUMPDEST`` there;
- :class:`Ref`: pushes a label's address (always ``PUSH2``, so sizes are known in one pass).

Example::

    assemble([4, "CALLDATASIZE", "LT", Ref("short"), "JUMPI", "STOP",
              Label("short"), 0, 0, "REVERT"])
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from secant.evm.opcodes import BY_NAME, PUSH0

__all__ = ["Item", "Label", "Ref", "assemble", "deployer"]


@dataclass(frozen=True)
class Label:
    """A jump destination called ``name`` (assembled as ``JUMPDEST``)."""

    name: str


@dataclass(frozen=True)
class Ref:
    """Push the address of the label called ``name`` (assembled as ``PUSH2 <pc>``)."""

    name: str


Item = str | int | Label | Ref
"""One element of an assembly program."""


def _push(value: int) -> bytes:
    if value < 0 or value >= 1 << 256:
        raise ValueError(f"cannot push {value}: not a 256-bit word")
    width = max(1, (value.bit_length() + 7) // 8)
    return bytes([PUSH0 + width]) + value.to_bytes(width, "big")


def _size(item: Item) -> int:
    if isinstance(item, Label):
        return 1
    if isinstance(item, Ref):
        return 3
    if isinstance(item, int):
        return len(_push(item))
    return 1


def assemble(program: Iterable[Item]) -> bytes:
    """Return the bytecode of ``program``; raises ``ValueError`` on unknown names or labels."""
    items = list(program)
    labels: dict[str, int] = {}
    pc = 0
    for item in items:
        if isinstance(item, Label):
            if item.name in labels:
                raise ValueError(f"label {item.name!r} defined twice")
            labels[item.name] = pc
        pc += _size(item)
    out = bytearray()
    for item in items:
        if isinstance(item, Label):
            out.append(BY_NAME["JUMPDEST"])
        elif isinstance(item, Ref):
            if item.name not in labels:
                raise ValueError(f"undefined label {item.name!r}")
            out += bytes([BY_NAME["PUSH2"]]) + labels[item.name].to_bytes(2, "big")
        elif isinstance(item, int):
            out += _push(item)
        else:
            name = item.upper()
            if name not in BY_NAME or name.startswith("PUSH"):
                raise ValueError(f"unknown or unsupported mnemonic {item!r} (push ints instead)")
            out.append(BY_NAME[name])
    return bytes(out)


def deployer(runtime: bytes) -> bytes:
    """Return creation code that deploys ``runtime`` unchanged (CODECOPY + RETURN)."""
    prefix_size = 0
    while True:  # the prefix's size depends on the PUSH widths of its own offsets
        prefix = assemble([len(runtime), "DUP1", prefix_size, 0, "CODECOPY", 0, "RETURN"])
        if len(prefix) == prefix_size:
            return prefix + runtime
        prefix_size = len(prefix)
