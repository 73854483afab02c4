"""ABI values as Solidity source: typed literals, arrays built in memory, checksummed addresses.

A reproducer (``secant.report.reproducer``) calls the contracts with
``abi.encodeWithSignature(signature, args...)``; every argument must then have exactly its
parameter's type, or the encoding differs from the one secant ran. :func:`expression`
writes a value of the fuzzer's representation (``secant.types``: ints for integers and
addresses, bytes, str, bools, tuples for arrays) as such an expression:

* integers as explicit conversions (``uint8(7)``, ``int16(-3)``, ``type(int256).min``);
* ``address(0x...)`` with an EIP-55 checksum (solc rejects unchecksummed address literals),
  or a name the caller gives the address (``ATTACKER1``, ``address(bank)``);
* ``bytes4(hex"...")``, ``bytes(hex"...")``, ``true``/``false``;
* strings as quoted literals when they are printable ASCII, else ``string(hex"<UTF-8>")``;
* a fixed-size array of static elements as an inline array (``[uint8(1), uint8(2)]``);
  any other array as a memory variable filled element by element, declared in statements
  the caller writes before the call.

Structs (ABI tuples) and function pointers raise :class:`Inexpressible`: a struct literal
needs the struct's Solidity name and scope, which the ABI does not always give; the caller
then passes the calldata secant encoded as a ``hex"..."`` literal instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from secant.abi import AbiParam
from secant.evm.crypto import keccak256

_ARRAY = re.compile(r"^(.*)\[(\d*)\]$")
_INT = re.compile(r"^(u?)int(\d*)$")
_FIXED_BYTES = re.compile(r"^bytes(\d+)$")


class Inexpressible(ValueError):
    """The value's type has no literal form here (a struct, a function pointer)."""


def checksum(address: int) -> str:
    """``0x`` and the address in EIP-55 mixed case."""
    text = f"{address:040x}"
    digest = keccak256(text.encode()).hex()
    return "0x" + "".join(c.upper() if c.isalpha() and int(digest[i], 16) >= 8 else c
                          for i, c in enumerate(text))


def string_literal(text: str) -> str:
    """A Solidity expression of type ``string memory`` holding ``text`` exactly."""
    if all(" " <= c <= "~" for c in text):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return f'string(hex"{text.encode("utf-8", "surrogatepass").hex()}")'


@dataclass
class Builder:
    """Writes expressions; arrays that need a memory variable add ``statements``.

    ``names`` maps addresses to Solidity expressions of type ``address`` (senders and
    contracts the reproducer names); ``prefix`` keeps the variables of two builders apart.
    """

    names: Mapping[int, str] = field(default_factory=dict)
    prefix: str = "v"
    statements: list[str] = field(default_factory=list)
    _count: int = 0

    def _variable(self) -> str:
        self._count += 1
        return f"{self.prefix}{self._count}"

    def expression(self, type_text: str, value: object,
                   components: tuple[AbiParam, ...] = ()) -> str:
        """``value`` of ABI type ``type_text`` as a Solidity expression of exactly that type."""
        array = _ARRAY.match(type_text)
        if array is not None:
            return self._array(array.group(1), array.group(2), value, components)
        if type_text.startswith("tuple") or type_text == "function":
            raise Inexpressible(f"{type_text} values have no literal form")
        return _scalar(type_text, value, self.names)

    def _array(self, element: str, size: str, value: object,
               components: tuple[AbiParam, ...]) -> str:
        if not isinstance(value, tuple | list):
            raise Inexpressible(f"an array value must be a sequence, not {value!r}")
        items = list(value)
        if size and _static_scalar(element) and items:
            # An inline array's type is that of its first element, T[k] memory.
            return "[" + ", ".join(self.expression(element, v, components)
                                   for v in items) + "]"
        name = self._variable()
        type_name = solidity_type(element, components)
        if size:
            self.statements.append(f"{type_name}[{size}] memory {name};")
        else:
            self.statements.append(f"{type_name}[] memory {name} = "
                                   f"new {type_name}[]({len(items)});")
        for index, item in enumerate(items):
            self.statements.append(f"{name}[{index}] = "
                                   f"{self.expression(element, item, components)};")
        return name


def solidity_type(type_text: str, components: tuple[AbiParam, ...] = ()) -> str:
    """The Solidity name of an ABI type (tuples have none here)."""
    if type_text.startswith("tuple") or type_text == "function":
        raise Inexpressible(f"{type_text} has no Solidity type name here")
    return type_text


def _static_scalar(type_text: str) -> bool:
    return (_ARRAY.match(type_text) is None and type_text not in ("bytes", "string")
            and not type_text.startswith("tuple") and type_text != "function")


def _scalar(type_text: str, value: object, names: Mapping[int, str]) -> str:
    writer = _SCALARS.get(type_text)
    if writer is not None:
        return writer(value, names)
    integer = _INT.match(type_text)
    if integer is not None:
        if not isinstance(value, int) or isinstance(value, bool):
            raise Inexpressible(f"{type_text} wants an integer, not {value!r}")
        bits = int(integer.group(2) or 256)
        name = f"{integer.group(1)}int{bits}"
        if integer.group(1) == "" and value == -(1 << (bits - 1)):
            return f"type({name}).min"  # the literal's negation would not fit
        return f"{name}({value})"
    fixed = _FIXED_BYTES.match(type_text)
    if fixed is not None:
        data = _bytes(value)
        if len(data) != int(fixed.group(1)):
            raise Inexpressible(f"{type_text} wants {fixed.group(1)} bytes, not {len(data)}")
        return f'{type_text}(hex"{data.hex()}")'
    raise Inexpressible(f"no literal form for ABI type {type_text}")


def _bytes(value: object) -> bytes:
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    if isinstance(value, str) and value.startswith("0x"):
        return bytes.fromhex(value[2:])
    raise Inexpressible(f"a byte string is expected, not {value!r}")


def _address(value: object, names: Mapping[int, str]) -> str:
    if isinstance(value, bytes):
        value = int.from_bytes(value, "big")
    if isinstance(value, str):
        value = int(value, 16)
    if not isinstance(value, int) or isinstance(value, bool):
        raise Inexpressible(f"an address is expected, not {value!r}")
    named = names.get(value)
    if named is not None:
        return named
    return "address(0)" if value == 0 else f"address({checksum(value)})"


def _bool(value: object, names: Mapping[int, str]) -> str:
    return "true" if value else "false"


def _dynamic_bytes(value: object, names: Mapping[int, str]) -> str:
    return f'bytes(hex"{_bytes(value).hex()}")'


def _string(value: object, names: Mapping[int, str]) -> str:
    if isinstance(value, bytes):
        return f'string(hex"{value.hex()}")'
    if not isinstance(value, str):
        raise Inexpressible(f"a string is expected, not {value!r}")
    return string_literal(value)


_SCALARS: dict[str, Callable[[object, Mapping[int, str]], str]] = {
    "address": _address, "bool": _bool, "bytes": _dynamic_bytes, "string": _string,
}
