"""The contract ABI: types, signatures, selectors, encoding, decoding, revert reasons.

Built on eth-abi. A contract's ABI JSON (any solc 0.4-0.8 or Vyper shape, including the
pre-0.4.16 ``constant``/``payable`` flags) becomes an :class:`Abi` of typed entries. Values
follow eth-abi's conventions (ints, bools, ``bytes``, ``str``, checksummed address strings,
tuples for tuples and lists for arrays); when encoding, addresses may also be ints or 20
bytes and structs may be dicts keyed by component name.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from Crypto.Hash import keccak

if TYPE_CHECKING:
    from eth_abi.codec import ABICodec

__all__ = [
    "PANIC_CODES",
    "Abi",
    "AbiConstructor",
    "AbiError",
    "AbiEvent",
    "AbiFunction",
    "AbiParam",
    "RevertReason",
    "decode",
    "decode_revert",
    "encode",
    "event_topic",
    "function_selector",
    "keccak256",
]

PANIC_CODES: dict[int, str] = {
    0x00: "generic compiler panic",
    0x01: "assertion failed",
    0x11: "arithmetic overflow or underflow",
    0x12: "division or modulo by zero",
    0x21: "invalid enum value",
    0x22: "incorrectly encoded storage byte array",
    0x31: "pop() on an empty array",
    0x32: "array index out of bounds",
    0x41: "out of memory (allocation too large)",
    0x51: "call to a zero-initialized internal function variable",
}
"""Solidity's ``Panic(uint256)`` codes and what they mean."""

ERROR_SELECTOR = bytes.fromhex("08c379a0")
"""Selector of ``Error(string)``, the revert reason of ``require``/``revert("...")``."""

PANIC_SELECTOR = bytes.fromhex("4e487b71")
"""Selector of ``Panic(uint256)`` (solc 0.8 assertions, overflow checks, ...)."""

_SHORT_TYPE_RE = re.compile(r"^(uint|int|fixed|ufixed|byte)(?=\[|$)")
_SHORT_TYPES = {"uint": "uint256", "int": "int256", "fixed": "fixed128x18",
                "ufixed": "ufixed128x18", "byte": "bytes1"}
_ARRAY_SUFFIX_RE = re.compile(r"\[(\d*)\]$")


# eth-abi is imported on the first encode or decode, not with this module: its grammar
# (parsimonious, eth_utils, pydantic) costs ~130 ms, which every ``secant`` command paid
# at start, even those that never encode. Hot callers pay one global read after that.
_codec: ABICodec | None = None


def _load_codec() -> ABICodec:
    global _codec
    from eth_abi.abi import default_codec

    _codec = default_codec
    return default_codec


def _decoding_errors() -> tuple[type[Exception], ...]:
    """What a failed decode raises (an ``except`` clause evaluates this only on an error)."""
    from eth_abi.exceptions import DecodingError

    return (DecodingError, ValueError, OverflowError)


def _eth_encode(types: Sequence[str], values: Sequence[Any]) -> bytes:
    codec = _codec or _load_codec()
    return bytes(codec.encode(list(types), list(values)))


def _eth_decode(types: Sequence[str], data: bytes, strict: bool = True) -> tuple[Any, ...]:
    codec = _codec or _load_codec()
    return tuple(codec.decode(list(types), bytes(data), strict=strict))


def keccak256(data: bytes) -> bytes:
    """Return the Keccak-256 hash of ``data``."""
    return keccak.new(data=data, digest_bits=256).digest()


def function_selector(signature: str) -> bytes:
    """Return the 4-byte selector of a signature such as ``transfer(address,uint256)``."""
    return keccak256(signature.encode("ascii"))[:4]


def event_topic(signature: str) -> bytes:
    """Return the topic-0 hash of an event signature, e.g. ``Transfer(address,uint256)``."""
    return keccak256(signature.encode("ascii"))


def _normalize_type(type_text: str) -> str:
    return _SHORT_TYPE_RE.sub(lambda m: _SHORT_TYPES[m.group(1)], type_text.strip())


def _encoding_type(canonical: str) -> str:
    """Return the eth-abi type string (``function`` is encoded as ``bytes24``)."""
    return re.sub(r"\bfunction\b", "bytes24", canonical)


@dataclass(frozen=True)
class AbiParam:
    """One input, output or event field: name, JSON type, tuple components."""

    name: str
    type: str
    components: tuple[AbiParam, ...] = ()
    indexed: bool = False
    internal_type: str | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AbiParam:
        """Build from one ABI JSON parameter object."""
        return cls(
            name=str(data.get("name", "") or ""),
            type=_normalize_type(str(data["type"])),
            components=tuple(cls.from_json(c) for c in data.get("components", []) or []),
            indexed=bool(data.get("indexed", False)),
            internal_type=data.get("internalType"),
        )

    @property
    def canonical(self) -> str:
        """The type as it appears in signatures, e.g. ``(uint256,address)[]``."""
        if self.type.startswith("tuple"):
            inner = ",".join(c.canonical for c in self.components)
            return f"({inner}){self.type[5:]}"
        return self.type

    @property
    def is_dynamic(self) -> bool:
        """Whether the encoding has dynamic size (matters for indexed event fields)."""
        if self.type in ("bytes", "string") or self.type.endswith("[]"):
            return True
        match = _ARRAY_SUFFIX_RE.search(self.type)
        if match is not None:
            return self._element().is_dynamic
        if self.type == "tuple":
            return any(c.is_dynamic for c in self.components)
        return False

    def _element(self) -> AbiParam:
        match = _ARRAY_SUFFIX_RE.search(self.type)
        assert match is not None
        return AbiParam(self.name, self.type[: match.start()], self.components)

    def normalize(self, value: Any) -> Any:
        """Convert a user value to what eth-abi expects for this type."""
        if _ARRAY_SUFFIX_RE.search(self.type):
            element = self._element()
            return [element.normalize(v) for v in value]
        if self.type == "tuple":
            if isinstance(value, Mapping):
                value = [value[c.name] for c in self.components]
            return tuple(c.normalize(v) for c, v in zip(self.components, value, strict=True))
        if self.type == "address":
            if isinstance(value, int):
                return value.to_bytes(20, "big")
            if isinstance(value, str) and value.lower() == value:
                return bytes.fromhex(value.removeprefix("0x").rjust(40, "0"))
            return value
        if self.type.startswith("bytes") or self.type == "function":
            if isinstance(value, str):
                return bytes.fromhex(value.removeprefix("0x"))
        return value


def _params(items: Sequence[Mapping[str, Any]] | None) -> tuple[AbiParam, ...]:
    return tuple(AbiParam.from_json(item) for item in items or [])


def _json_kind(value: object) -> str:
    """What JSON calls ``value``'s type, with its article (for error messages)."""
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "null" if value is None else f"a {type(value).__name__}"


def _signature(name: str, params: Sequence[AbiParam]) -> str:
    return f"{name}({','.join(p.canonical for p in params)})"


def _types(params: Sequence[AbiParam]) -> list[str]:
    return [_encoding_type(p.canonical) for p in params]


def encode(types: Sequence[str], values: Sequence[Any]) -> bytes:
    """ABI-encode ``values`` as the tuple of ``types`` (canonical type strings)."""
    return bytes(_eth_encode([_encoding_type(_normalize_type(t)) for t in types],
                                list(values)))


def decode(types: Sequence[str], data: bytes, strict: bool = True) -> tuple[Any, ...]:
    """ABI-decode ``data`` as the tuple of ``types``."""
    return tuple(_eth_decode([_encoding_type(_normalize_type(t)) for t in types], data,
                                strict=strict))


def _encode_params(params: Sequence[AbiParam], args: Sequence[Any]) -> bytes:
    if len(args) != len(params):
        raise ValueError(f"expected {len(params)} arguments, got {len(args)}")
    values = [p.normalize(a) for p, a in zip(params, args)]
    return bytes(_eth_encode(_types(params), values))


def _mutability(data: Mapping[str, Any]) -> str:
    if "stateMutability" in data:
        return str(data["stateMutability"])
    if data.get("payable"):
        return "payable"
    if data.get("constant"):
        return "view"
    return "nonpayable"


@dataclass(frozen=True)
class AbiFunction:
    """A function (or fallback/receive, with ``kind`` set accordingly)."""

    name: str
    inputs: tuple[AbiParam, ...]
    outputs: tuple[AbiParam, ...]
    state_mutability: str
    kind: str = "function"

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AbiFunction:
        """Build from a ``function``, ``fallback`` or ``receive`` ABI entry."""
        kind = str(data.get("type", "function"))
        return cls(str(data.get("name", kind)), _params(data.get("inputs")),
                   _params(data.get("outputs")), _mutability(data), kind)

    # Computed once per function (the instance is frozen): a property suite asks for its
    # properties' selectors after every step.
    @functools.cached_property
    def signature(self) -> str:
        """``name(type1,type2)``."""
        return _signature(self.name, self.inputs)

    @functools.cached_property
    def selector(self) -> bytes:
        """The 4-byte function selector."""
        return function_selector(self.signature)

    @property
    def payable(self) -> bool:
        """Whether the function accepts ether."""
        return self.state_mutability == "payable"

    @property
    def read_only(self) -> bool:
        """Whether the function is ``view`` or ``pure``."""
        return self.state_mutability in ("view", "pure")

    def encode_call(self, args: Sequence[Any] = ()) -> bytes:
        """Calldata: the selector followed by the encoded arguments."""
        return self.selector + _encode_params(self.inputs, args)

    def decode_call(self, calldata: bytes) -> tuple[Any, ...]:
        """Return the arguments in ``calldata`` (which starts with the selector)."""
        return tuple(_eth_decode(_types(self.inputs), calldata[4:]))

    def decode_output(self, data: bytes) -> tuple[Any, ...]:
        """Return the decoded return values."""
        return tuple(_eth_decode(_types(self.outputs), data))


@dataclass(frozen=True)
class AbiConstructor:
    """The constructor: its inputs and whether it is payable."""

    inputs: tuple[AbiParam, ...]
    state_mutability: str = "nonpayable"

    @property
    def payable(self) -> bool:
        """Whether deployment may send ether."""
        return self.state_mutability == "payable"


@dataclass(frozen=True)
class AbiEvent:
    """An event with its topic hash and a log decoder."""

    name: str
    inputs: tuple[AbiParam, ...]
    anonymous: bool = False

    @property
    def signature(self) -> str:
        """``Name(type1,type2)``."""
        return _signature(self.name, self.inputs)

    @property
    def topic(self) -> bytes:
        """Topic 0 of the event's logs (unless anonymous)."""
        return event_topic(self.signature)

    def decode_log(self, topics: Sequence[bytes], data: bytes) -> dict[str, Any]:
        """Decode a log; dynamic indexed fields come back as their 32-byte topic hash."""
        rest = list(topics[0 if self.anonymous else 1:])
        indexed = [p for p in self.inputs if p.indexed]
        plain = [p for p in self.inputs if not p.indexed]
        values = iter(_eth_decode(_types(plain), data)) if plain else iter(())
        topic_iter = iter(rest[: len(indexed)])
        result: dict[str, Any] = {}
        for position, param in enumerate(self.inputs):
            key = param.name or f"arg{position}"
            if param.indexed:
                topic = next(topic_iter)
                result[key] = topic if param.is_dynamic else \
                    _eth_decode([_encoding_type(param.canonical)], topic)[0]
            else:
                result[key] = next(values)
        return result


@dataclass(frozen=True)
class AbiError:
    """A custom error type (``error Name(...)``)."""

    name: str
    inputs: tuple[AbiParam, ...]

    @property
    def signature(self) -> str:
        """``Name(type1,type2)``."""
        return _signature(self.name, self.inputs)

    @property
    def selector(self) -> bytes:
        """The 4-byte error selector that starts its revert data."""
        return function_selector(self.signature)

    def decode(self, data: bytes) -> tuple[Any, ...]:
        """Return the error's arguments from revert data (selector included)."""
        return tuple(_eth_decode(_types(self.inputs), data[4:]))


@dataclass(frozen=True)
class RevertReason:
    """Decoded revert data: kind is ``empty``, ``error``, ``panic``, ``custom`` or ``raw``."""

    kind: str
    data: bytes
    message: str = ""
    name: str | None = None
    args: tuple[Any, ...] = ()
    panic_code: int | None = None

    def __str__(self) -> str:
        if self.kind == "empty":
            return "reverted without data"
        if self.kind == "error":
            return f"Error({self.message!r})"
        if self.kind == "panic":
            return f"Panic(0x{self.panic_code or 0:02x}: {self.message})"
        if self.kind == "custom":
            return f"{self.name}({', '.join(repr(a) for a in self.args)})"
        return f"reverted with data 0x{self.data.hex()}"


def decode_revert(data: bytes, errors: Sequence[AbiError] = ()) -> RevertReason:
    """Decode revert data as ``Error(string)``, ``Panic(uint256)`` or a custom error."""
    data = bytes(data)
    if not data:
        return RevertReason("empty", data)
    selector = data[:4]
    try:
        if selector == ERROR_SELECTOR:
            (raw,) = _eth_decode(["bytes"], data[4:], strict=False)
            return RevertReason("error", data, bytes(raw).decode("utf-8", "replace"), "Error")
        if selector == PANIC_SELECTOR:
            (code,) = _eth_decode(["uint256"], data[4:], strict=False)
            name = PANIC_CODES.get(code, f"unknown panic code 0x{code:x}")
            return RevertReason("panic", data, name, "Panic", (code,), code)
        for error in errors:
            if error.selector == selector:
                args = error.decode(data)
                return RevertReason("custom", data, error.signature, error.name, args)
    except _decoding_errors():
        pass
    return RevertReason("raw", data)


@dataclass(frozen=True)
class Abi:
    """A parsed contract ABI."""

    entries: tuple[Mapping[str, Any], ...]
    functions: tuple[AbiFunction, ...] = ()
    events: tuple[AbiEvent, ...] = ()
    errors: tuple[AbiError, ...] = ()
    constructor: AbiConstructor | None = None
    fallback: AbiFunction | None = None
    receive: AbiFunction | None = None
    _by_selector: dict[bytes, AbiFunction] = field(default_factory=dict, repr=False,
                                                   compare=False)

    @classmethod
    def from_json(cls, data: str | bytes | Sequence[Mapping[str, Any]]) -> Abi:
        """Parse an ABI given as JSON text or as the decoded list."""
        items = json.loads(data) if isinstance(data, str | bytes) else data
        if isinstance(items, Mapping) and "abi" in items:
            items = items["abi"]
        if not isinstance(items, list | tuple):
            raise ValueError(f"it is {_json_kind(items)}, not a list of entries")
        for entry in items:
            if not isinstance(entry, Mapping):
                raise ValueError(f"an entry is {_json_kind(entry)}, not an object")
        functions: list[AbiFunction] = []
        events: list[AbiEvent] = []
        errors: list[AbiError] = []
        constructor = fallback = receive = None
        for entry in items:
            kind = entry.get("type", "function")
            if kind == "function":
                functions.append(AbiFunction.from_json(entry))
            elif kind == "event":
                events.append(AbiEvent(str(entry["name"]), _params(entry.get("inputs")),
                                       bool(entry.get("anonymous", False))))
            elif kind == "error":
                errors.append(AbiError(str(entry["name"]), _params(entry.get("inputs"))))
            elif kind == "constructor":
                constructor = AbiConstructor(_params(entry.get("inputs")), _mutability(entry))
            elif kind == "fallback":
                fallback = AbiFunction.from_json(entry)
            elif kind == "receive":
                receive = AbiFunction.from_json(entry)
        by_selector = {f.selector: f for f in functions}
        return cls(tuple(items), tuple(functions), tuple(events), tuple(errors), constructor,
                   fallback, receive, by_selector)

    def to_json(self) -> list[dict[str, Any]]:
        """Return the ABI entries as plain JSON data."""
        return [dict(entry) for entry in self.entries]

    def function(self, name_or_signature: str) -> AbiFunction:
        """Return the function with this signature, or the only one with this name."""
        matches = [f for f in self.functions
                   if f.signature == name_or_signature or f.name == name_or_signature]
        if len(matches) != 1:
            what = "no" if not matches else "several"
            raise KeyError(f"{what} function matches {name_or_signature!r}")
        return matches[0]

    def by_selector(self, selector: bytes) -> AbiFunction | None:
        """Return the function whose selector is ``selector``, or None."""
        return self._by_selector.get(bytes(selector[:4]))

    def event_by_topic(self, topic: bytes) -> AbiEvent | None:
        """Return the non-anonymous event whose topic-0 is ``topic``, or None."""
        return next((e for e in self.events if not e.anonymous and e.topic == topic), None)

    def decode_revert(self, data: bytes) -> RevertReason:
        """Decode revert data using this ABI's custom errors."""
        return decode_revert(data, self.errors)


def integer_leaves(value: object) -> list[int]:
    """Every integer in a decoded ABI value tree (addresses are ints; booleans are not)."""
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [value]
    if isinstance(value, tuple | list):
        return [leaf for item in value for leaf in integer_leaves(item)]
    return []
