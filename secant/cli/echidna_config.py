"""Echidna's configuration file (``echidna.yaml``) read as secant's options.

``--config echidna.yaml`` (any ``.yaml``/``.yml``) takes the keys that have a secant
equivalent and gives them as ``secant.toml`` keys would be (:data:`KEYS`); the command line
still wins. The keys that say how Echidna itself runs (output format, corpus folder, ...)
or that secant cannot honour yet are listed in notes, never an error: a project's file is
written for Echidna, and the campaign runs without them. ``workers`` is secant's
``--workers``: processes, not Echidna's threads, with the same meaning.

Echidna's files are flat mappings of scalars and lists, so the reader takes only that part
of YAML (:func:`parse_flat_yaml`): ``key: value`` lines, ``#`` comments, quoted and plain
scalars, ``[a, b]`` lists and ``- item`` lists under a key. Anything else (a nested
mapping, a multi-line string) is a one-line error naming the line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from secant.errors import SecantError

_TEST_MODES = {"property": "property", "assertion": "assertion"}
"""Echidna's test modes and the oracle that checks the same (each mode checks one kind)."""


class EchidnaConfigError(SecantError):
    """An Echidna configuration file secant cannot read."""


def _integer(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    try:
        return int(value, 0)  # an address or amount quoted: "0x10000"
    except (TypeError, ValueError):
        raise ValueError(f"{value!r} is not an integer") from None


def _seconds(value: Any) -> str:
    return f"{_integer(value)}s"


def _test_mode(value: Any) -> str:
    if value not in _TEST_MODES:
        raise ValueError(f"testMode {value!r} has no secant equivalent yet (secant reads "
                         f"{', '.join(_TEST_MODES)})")
    return _TEST_MODES[value]


def _addresses(value: Any) -> list[str]:
    return [_address(item) for item in (value if isinstance(value, list) else [value])]


def _address(value: Any) -> str:
    return f"0x{_integer(value):040x}"


def _above_eip170(value: Any) -> bool:
    """Whether a code size limit lets larger code than EIP-170's 24,576 bytes deploy."""
    return _integer(value) > 0x6000


def _prefixes(value: Any) -> list[str]:
    return [str(item) for item in (value if isinstance(value, list) else [value])]


KEYS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "testMode": ("oracles", _test_mode),
    "prefix": ("property-prefix", _prefixes),
    "seqLen": ("max-sequence-length", _integer),
    "testLimit": ("calls", _integer),  # Echidna counts calls, not sequences
    "timeout": ("time", _seconds),
    "shrinkLimit": ("shrink-limit", _integer),
    "seed": ("seed", _integer),
    "sender": ("sender", _addresses),
    "balanceAddr": ("balance", _integer),
    "balanceContract": ("value", _integer),
    "maxTimeDelay": ("max-time-delay", _integer),
    "maxBlockDelay": ("max-block-delay", _integer),
    "allContracts": ("all-contracts", bool),
    "deployer": ("deployer", _address),
    "codeSize": ("unlimited-code-size", _above_eip170),
    "workers": ("workers", _integer),
}
"""Echidna's key -> (secant's option, the value converted to what the option takes)."""


def echidna_table(path: Path) -> tuple[dict[str, Any], list[str]]:
    """The options an Echidna file gives, as a ``secant.toml`` table, and notes on the rest."""
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise EchidnaConfigError(f"cannot read {path}: {exc}", "check the file") from None
    table: dict[str, Any] = {}
    ignored: list[str] = []
    data = parse_flat_yaml(text, path)
    for key, raw in data.items():
        if key == "filterBlacklist":
            continue  # read with filterFunctions
        if key == "filterFunctions":
            named = _prefixes(raw) if raw else []
            if named:  # none named: nothing is filtered, as in Echidna
                blacklist = data.get("filterBlacklist", True)
                table["exclude-function" if blacklist not in (False, "false") else
                      "only-function"] = named
            continue
        if key == "corpusDir":
            if raw:  # secant's own entries, in their format, beside Echidna's folders
                table["corpus"] = str(corpus_folder(path, str(raw)))
            continue
        if key not in KEYS:
            ignored.append(key)
            continue
        option, convert = KEYS[key]
        try:
            table[option] = convert(raw)
        except ValueError as exc:
            raise EchidnaConfigError(f"{path}: {key}: {exc}",
                                     f"remove {key} or give secant's --{option} instead"
                                     ) from None
    # Echidna calls the contracts the constructors created only when told to; secant's own
    # default for a contract without properties does (``secant.campaign.plan.calls_created``).
    table.setdefault("all-contracts", False)
    notes = [f"{path.name}: not read (no secant equivalent yet): {', '.join(ignored)}"
             ] if ignored else []
    return table, notes


def corpus_folder(config: Path, given: str) -> Path:
    """Where secant keeps its corpus for a peer's corpus folder named in ``config``.

    The sub-folder ``secant`` of it (Echidna's and Medusa's own files stay as they are, in
    their formats), relative to the configuration file's folder as the peers' own runs from
    the project root resolve it.
    """
    folder = Path(given)
    if not folder.is_absolute():
        folder = config.parent / folder
    return folder / "secant"


_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*:(?:\s+(.*))?$")


def parse_flat_yaml(text: str, path: Path) -> dict[str, Any]:
    """A flat YAML mapping of scalars and lists (the part of YAML Echidna's files use)."""
    result: dict[str, Any] = {}
    current: str | None = None  # the key whose "- item" lines follow
    for number, line in enumerate(text.splitlines(), 1):
        content = _strip_comment(line).rstrip()
        if not content.strip():
            continue
        where = f"{path}:{number}"
        if content.lstrip().startswith("- ") or content.strip() == "-":
            if current is None:
                raise EchidnaConfigError(f"{where}: a list item outside a list",
                                         "put it under a key")
            result[current].append(_scalar(content.strip()[1:].strip(), where))
            continue
        if content[0].isspace():
            raise EchidnaConfigError(f"{where}: nested mappings are not read",
                                     "write the key at the top level")
        match = _KEY.match(content)
        if match is None:
            raise EchidnaConfigError(f"{where}: not a 'key: value' line", "fix the line")
        key, value = match.group(1), (match.group(2) or "").strip()
        if not value:
            result[key], current = [], key
        else:
            result[key], current = _value(value, where), None
    return result


def _strip_comment(line: str) -> str:
    quote = None
    for index, char in enumerate(line):
        if quote is not None:
            if char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1].isspace()):
            return line[:index]
    return line


def _value(text: str, where: str) -> Any:
    if text.startswith("["):
        if not text.endswith("]"):
            raise EchidnaConfigError(f"{where}: a list must end on its line",
                                     "write it as [a, b] on one line or as '- a' lines")
        inner = text[1:-1].strip()
        return [_scalar(item.strip(), where) for item in _split(inner)] if inner else []
    if text.startswith("{"):
        raise EchidnaConfigError(f"{where}: nested mappings are not read",
                                 "write the key at the top level")
    return _scalar(text, where)


def _split(text: str) -> list[str]:
    parts, quote, start = [], None, 0
    for index, char in enumerate(text):
        if quote is not None:
            if char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char == ",":
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts


def _scalar(text: str, where: str) -> Any:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    if text in ("true", "True", "yes"):
        return True
    if text in ("false", "False", "no"):
        return False
    if text in ("null", "~", ""):
        return None
    try:
        return int(text, 0)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text
