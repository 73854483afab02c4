"""A tiny assembler for tests: ``asm("PUSH1 0x01 PUSH1 0x02 ADD")`` -> bytes."""

from __future__ import annotations

from secant.evm.opcodes import BY_NAME


def asm(source: str) -> bytes:
    """Assemble whitespace-separated mnemonics; PUSHn takes the next token as its value."""
    out = bytearray()
    tokens = source.split()
    i = 0
    while i < len(tokens):
        name = tokens[i].upper()
        out.append(BY_NAME[name])
        if name.startswith("PUSH") and name != "PUSH0":
            width = int(name[4:])
            out += int(tokens[i + 1], 0).to_bytes(width, "big")
            i += 1
        i += 1
    return bytes(out)
