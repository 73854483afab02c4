"""Solidity sources: imports, their resolution into source units, version pragmas.

secant reads every imported file itself and hands the compiler a standard-JSON input with
all contents inlined, so the output cache key covers every byte that was compiled and the
version pragmas of imported files constrain the compiler choice too. Source unit names
follow solc: relative imports (``./``, ``../``) resolve against the importing unit's name,
then remappings apply; a unit name is looked up under the base path, then each include path.
Where remappings and the project root come from is :mod:`secant.compile.config`'s business.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from secant.compile.config import find_project_root as find_project_root
from secant.compile.config import project_remappings as project_remappings
from secant.compile.errors import InputError
from secant.compile.remappings import Remapping as Remapping
from secant.compile.remappings import apply_remappings as apply_remappings
from secant.compile.semver import VersionRange

_TOKEN_RE = re.compile(
    r"(\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*')|(//[^\n]*|/\*.*?\*/)", re.DOTALL
)
_IMPORT_RE = re.compile(r"\bimport\b\s*(?:[^;\"']*?\bfrom\s*)?[\"']([^\"']+)[\"'][^;]*;")
_PRAGMA_RE = re.compile(r"\bpragma\s+solidity\s+([^;]+);")

NO_PRAGMA = "the sources"
"""What :meth:`SourceSet.pragma` names as where the pragma is when no unit states one."""


def strip_comments(text: str) -> str:
    """``text`` with ``//`` and ``/* */`` comments blanked (string literals kept)."""

    def blank(match: re.Match[str]) -> str:
        if match.group(1) is not None:
            return match.group(1)
        return re.sub(r"[^\n]", " ", match.group(2))

    return _TOKEN_RE.sub(blank, text)


def find_imports(text: str) -> list[str]:
    """Return the import paths of a Solidity source, in order."""
    return _IMPORT_RE.findall(strip_comments(text))


def find_pragmas(text: str) -> list[str]:
    """Return the version expressions of every ``pragma solidity`` in a source."""
    return [expr.strip() for expr in _PRAGMA_RE.findall(strip_comments(text))]


class _Escape(Exception):
    """A relative import climbs above the base path."""


def resolve_unit_name(import_path: str, importer: str) -> str:
    """Resolve an import path against the importing unit's name (solc's ``absolutePath``)."""
    parts = import_path.split("/")
    if parts[0] not in (".", ".."):
        return import_path
    result = [p for p in importer.split("/")[:-1] if p]
    for part in parts:
        if part == "..":
            if not result:
                raise _Escape(import_path)
            result.pop()
        elif part not in (".", ""):
            result.append(part)
    return "/".join(result)


@functools.lru_cache(maxsize=4096)
def _pragma_ranges(content: str) -> tuple[VersionRange, ...]:
    """The parsed version pragmas of a source (memoized: project builds ask per file)."""
    ranges = []
    for expr in find_pragmas(content):
        try:
            ranges.append(VersionRange.parse(expr))
        except ValueError:
            continue
    return tuple(ranges)


@dataclass
class SourceUnit:
    """One Solidity source: its unit name, file and text."""

    name: str
    path: Path
    content: str

    @functools.cached_property
    def size(self) -> int:
        """Bytes of the text in UTF-8 (what a compile job's size limit counts)."""
        return len(self.content.encode("utf-8"))


@dataclass
class SourceSet:
    """The closure of some root files under their imports, ready for standard JSON.

    ``imports`` maps each unit to the unit names its imports resolve to (found or not).
    """

    base: Path
    roots: list[str]
    units: dict[str, SourceUnit] = field(default_factory=dict)
    remappings: tuple[Remapping, ...] = ()
    include_paths: tuple[Path, ...] = ()
    imports: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def pragma(self, names: Iterable[str] | None = None) -> tuple[VersionRange, str]:
        """Return the intersection of the version pragmas and the units that state them.

        Over every unit, or over ``names`` only.
        """
        result = VersionRange.any()
        where: list[str] = []
        chosen = self.units.values() if names is None else \
            [self.units[n] for n in names if n in self.units]
        for unit in chosen:
            for allowed in _pragma_ranges(unit.content):
                result = result.intersect(allowed)
                where.append(unit.name)
        return result, ", ".join(dict.fromkeys(where)) or NO_PRAGMA

    def closure(self, names: Iterable[str]) -> list[str]:
        """``names`` and every unit they import, directly or not (units that were found)."""
        seen: dict[str, None] = {}
        stack = [n for n in names if n in self.units]
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen[name] = None
            stack.extend(n for n in self.imports.get(name, ()) if n in self.units)
        return list(seen)

    def size(self, names: Iterable[str] | None = None) -> int:
        """Bytes of the units' texts: every unit's, or those of ``names`` (units of the set)."""
        chosen = self.units if names is None else dict.fromkeys(names)
        return sum(self.units[n].size for n in chosen if n in self.units)

    def missing(self, names: Iterable[str]) -> list[str]:
        """Imports of ``names`` (and of what they import) that no file was found for."""
        return list(dict.fromkeys(n for unit in self.closure(names)
                                  for n in self.imports.get(unit, ()) if n not in self.units))

    def subset(self, roots: Iterable[str]) -> SourceSet:
        """The source set of ``roots`` (units of this set) and what they import."""
        chosen = list(roots)
        names = set(self.closure(chosen))
        return SourceSet(self.base, chosen,
                         {n: u for n, u in self.units.items() if n in names},
                         self.remappings, self.include_paths,
                         {n: i for n, i in self.imports.items() if n in names})

    def search_roots(self) -> list[str]:
        """Directories to read units from: the base path, then the include paths."""
        return [str(self.base), *(str(p) for p in self.include_paths)]

    def standard_input(self, settings: dict[str, Any]) -> dict[str, Any]:
        """Return a standard-JSON input compiling every unit with ``settings``."""
        sources = {name: {"content": self.units[name].content} for name in sorted(self.units)}
        full = dict(settings)
        if self.remappings:
            full["remappings"] = [str(r) for r in self.remappings]
        return {"language": "Solidity", "sources": sources, "settings": full}


def _locate(name: str, base: Path, include_paths: tuple[Path, ...]) -> Path | None:
    candidate = Path(name)
    if candidate.is_absolute():
        return candidate if candidate.is_file() else None
    for directory in (base, *include_paths):
        path = directory / name
        if path.is_file():
            return path
    return None


def _unit_name(path: Path, base: Path) -> str:
    return path.resolve().relative_to(base).as_posix() if base != Path("/") else \
        path.resolve().as_posix().lstrip("/")


def collect_sources(files: list[Path], base: Path | None = None,
                    remappings: tuple[Remapping, ...] | None = None,
                    include_paths: tuple[Path, ...] = ()) -> SourceSet:
    """Read ``files`` and everything they import.

    ``base`` defaults to the project root of the first file; remappings default to the
    project's. When a relative import climbs above the base, absolute unit names are used.
    """
    files = [f.resolve() for f in files]
    for file in files:
        if not file.is_file():
            raise InputError(f"{file} does not exist", "check the path")
    root = (base or find_project_root(files[0])).resolve()
    remaps = project_remappings(root) if remappings is None else remappings
    includes = tuple(p.resolve() for p in include_paths)
    if (root / "node_modules").is_dir():
        includes = (*includes, root / "node_modules")
    if not all(f.is_relative_to(root) for f in files):
        root = Path("/")
    try:
        return _collect(files, root, remaps, includes)
    except _Escape:
        return _collect(files, Path("/"), remaps, includes)


def _collect(files: list[Path], base: Path, remappings: tuple[Remapping, ...],
             include_paths: tuple[Path, ...]) -> SourceSet:
    result = SourceSet(base, [], {}, remappings, include_paths)
    queue: list[tuple[str, Path]] = []
    for file in files:
        name = _unit_name(file, base)
        result.roots.append(name)
        queue.append((name, file))
    while queue:
        name, path = queue.pop(0)
        if name in result.units:
            continue
        try:
            content = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read {path}: {exc}", "check the file") from None
        result.units[name] = SourceUnit(name, path, content)
        resolved = [apply_remappings(resolve_unit_name(imported, name), name, remappings)
                    for imported in find_imports(content)]
        result.imports[name] = tuple(resolved)
        for unit in resolved:
            if unit in result.units:
                continue
            found = _locate(unit, base, include_paths)
            if found is None:
                # Leave it to the compiler, which reports the import with file:line.
                continue
            queue.append((unit, found))
    return result
