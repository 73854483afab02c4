"""Import remappings ``[context:]prefix=target``: parsing, merging, applying like solc.

Where the remappings of a project come from (``foundry.toml``, ``remappings.txt``, libraries
under ``lib/``, ``node_modules``) is :mod:`secant.compile.config`'s business; this module only
knows what a remapping is.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Remapping:
    """An import remapping ``[context:]prefix=target``."""

    context: str
    prefix: str
    target: str

    @classmethod
    def parse(cls, text: str) -> Remapping | None:
        """Parse one remapping line; None for blanks, comments and lines without ``=``."""
        text = text.strip()
        if not text or text.startswith("#") or "=" not in text:
            return None
        left, target = text.split("=", 1)
        context, prefix = left.split(":", 1) if ":" in left else ("", left)
        return cls(context.strip(), prefix.strip(), target.strip())

    def __str__(self) -> str:
        head = f"{self.context}:" if self.context else ""
        return f"{head}{self.prefix}={self.target}"

    def rebased(self, folder: str) -> Remapping:
        """The remapping as seen from the project that holds its library in ``folder``.

        A library's own ``remappings.txt`` names targets relative to the library; the project
        that includes the library under ``lib/name`` needs them relative to itself.
        """
        base = folder.rstrip("/") + "/"
        context = base + _plain(self.context) if self.context else ""
        return Remapping(context, self.prefix, base + _plain(self.target))


def _plain(path: str) -> str:
    """``path`` without a leading ``./``."""
    while path.startswith("./"):
        path = path[2:]
    return path


def merge_remappings(*groups: Iterable[Remapping]) -> tuple[Remapping, ...]:
    """Concatenate ``groups``, keeping only the first remapping of each context and prefix.

    Earlier groups win. Keeping one per prefix matters: solc takes the *last* of equal
    prefixes while the order of the groups says which one the user meant.
    """
    seen: dict[tuple[str, str], Remapping] = {}
    for group in groups:
        for remap in group:
            seen.setdefault((remap.context, remap.prefix), remap)
    return tuple(seen.values())


def read_remappings_file(path: Path) -> tuple[Remapping, ...]:
    """The remappings of a ``remappings.txt`` (one a line, ``#`` comments); () when absent."""
    if not path.is_file():
        return ()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return ()
    return tuple(r for r in (Remapping.parse(line) for line in lines) if r is not None)


def apply_remappings(name: str, importer: str, remappings: tuple[Remapping, ...]) -> str:
    """Apply the best remapping (longest context, then longest prefix) like solc does."""
    best: Remapping | None = None
    for remap in remappings:
        if not importer.startswith(remap.context) or not name.startswith(remap.prefix):
            continue
        if best is None or (len(remap.context), len(remap.prefix)) > (
            len(best.context), len(best.prefix)
        ):
            best = remap
    if best is None:
        return name
    return best.target + name[len(best.prefix):]
