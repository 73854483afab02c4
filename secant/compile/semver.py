"""Compiler versions and the version ranges of ``pragma solidity`` / ``# pragma version``.

A range follows the semver rules solc uses: comparators ``^ ~ >= <= > < =`` on full or
partial versions (``0.4``, ``0.4.x``, ``*``), hyphen ranges ``a - b``, whitespace for "and",
``||`` for "or". A range is reduced to a union of half-open intervals ``[low, high)``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

Version = tuple[int, int, int]
"""A release version ``(major, minor, patch)``; build and pre-release tags are dropped."""

_VERSION_RE = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")
_COMPARATOR_RE = re.compile(r"(\^|~|>=|<=|>|<|=)?\s*v?([0-9xX*]+(?:\.[0-9xX*]+){0,2})")
_HYPHEN_RE = re.compile(r"v?([0-9xX*.]+)\s+-\s+v?([0-9xX*.]+)")
_MAX: Version = (1 << 30, 0, 0)


def parse_version(text: str) -> Version:
    """Parse ``0.8.19``, ``v0.8.19`` or ``0.8.19+commit.7dd6d404...`` into a tuple."""
    match = _VERSION_RE.search(text)
    if match is None:
        raise ValueError(f"not a version: {text!r}")
    return int(match.group(1)), int(match.group(2)), int(match.group(3))


def format_version(version: Version) -> str:
    """``(0, 8, 19)`` -> ``"0.8.19"``."""
    return ".".join(str(part) for part in version)


def _bump(parts: list[int], index: int) -> Version:
    """Increment component ``index`` and zero the ones after it."""
    full = (parts + [0, 0, 0])[:3]
    full[index] += 1
    for k in range(index + 1, 3):
        full[k] = 0
    return full[0], full[1], full[2]


def _interval(op: str, text: str) -> tuple[Version, Version]:
    """Return the interval ``[low, high)`` of one comparator; an empty one has ``low >= high``."""
    parts: list[int] = []
    for piece in text.split("."):
        if piece in ("x", "X", "*"):
            break
        parts.append(int(piece))
    n = len(parts)
    full: Version = tuple((parts + [0, 0, 0])[:3])  # type: ignore[assignment]
    zero: Version = (0, 0, 0)
    if op in ("", "="):
        if n == 0:
            return zero, _MAX
        return full, _bump(parts, n - 1)
    if op == ">=":
        return full, _MAX
    if op == ">":
        if n == 0:
            return _MAX, _MAX
        return _bump(parts, n - 1), _MAX
    if op == "<":
        return zero, full if n else zero
    if op == "<=":
        return zero, _bump(parts, n - 1) if n else _MAX
    if op == "^":
        if n == 0:
            return zero, _MAX
        first_nonzero = next((i for i, p in enumerate(parts) if p != 0), n - 1)
        return full, _bump(parts, min(first_nonzero, n - 1))
    if op == "~":
        if n == 0:
            return zero, _MAX
        return full, _bump(parts, 1 if n >= 2 else 0)
    raise ValueError(f"unknown comparator {op!r}")


@dataclass(frozen=True)
class VersionRange:
    """A union of half-open version intervals, parsed from a pragma expression."""

    text: str
    intervals: tuple[tuple[Version, Version], ...]

    @classmethod
    def parse(cls, text: str) -> VersionRange:
        """Parse a range expression such as ``>=0.4.22 <0.6.0 || ^0.8.0``."""
        intervals: list[tuple[Version, Version]] = []
        for alternative in text.split("||"):
            alt = alternative.strip()
            low: Version = (0, 0, 0)
            high: Version = _MAX
            hyphen = _HYPHEN_RE.search(alt)
            if hyphen is not None:
                lo, _ = _interval(">=", hyphen.group(1))
                _, hi = _interval("<=", hyphen.group(2))
                low, high = max(low, lo), min(high, hi)
                alt = alt[: hyphen.start()] + " " + alt[hyphen.end() :]
            rest = alt.strip()
            while rest:
                match = _COMPARATOR_RE.match(rest)
                if match is None:
                    raise ValueError(f"cannot parse version range {text!r}")
                lo, hi = _interval(match.group(1) or "", match.group(2))
                low, high = max(low, lo), min(high, hi)
                rest = rest[match.end() :].strip()
            if low < high:
                intervals.append((low, high))
        return cls(text.strip(), tuple(intervals))

    @classmethod
    def any(cls) -> VersionRange:
        """Return the range every version satisfies."""
        return cls("*", (((0, 0, 0), _MAX),))

    def contains(self, version: Version) -> bool:
        """Whether ``version`` satisfies the range."""
        return any(low <= version < high for low, high in self.intervals)

    def intersect(self, other: VersionRange) -> VersionRange:
        """Return the versions satisfying both ranges."""
        out = []
        for a_low, a_high in self.intervals:
            for b_low, b_high in other.intervals:
                low, high = max(a_low, b_low), min(a_high, b_high)
                if low < high:
                    out.append((low, high))
        text = " ".join(t for t in (self.text, other.text) if t != "*") or "*"
        return VersionRange(text, tuple(out))

    def newest(self, versions: list[Version] | set[Version]) -> Version | None:
        """Return the newest of ``versions`` in the range, or None."""
        matching = [v for v in versions if self.contains(v)]
        return max(matching) if matching else None
