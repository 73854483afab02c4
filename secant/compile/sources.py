"""Solidity sources: project layout, remappings, import resolution, version pragmas.

secant reads every imported file itself and hands the compiler a standard-JSON input with
all contents inlined, so the output cache key covers every byte that was compiled and the
version pragmas of imported files constrain the compiler choice too. Source unit names
follow solc: relative imports (``./``, ``../``) resolve against the importing unit's name,
then remappings apply; a unit name is looked up under the base path, then each include path.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from secant.compile.errors import InputError
from secant.compile.semver import VersionRange

_TOKEN_RE = re.compile(
    r"(\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*')|(//[^\n]*|/\*.*?\*/)", re.DOTALL
)
_IMPORT_RE = re.compile(r"\bimport\b\s*(?:[^;\"']*?\bfrom\s*)?[\"']([^\"']+)[\"'][^;]*;")
_PRAGMA_RE = re.compile(r"\bpragma\s+solidity\s+([^;]+);")
_ROOT_MARKERS = ("foundry.toml", "hardhat.config.js", "hardhat.config.ts", "hardhat.config.cjs",
                 "hardhat.config.mjs", "remappings.txt", "truffle-config.js", ".git")


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


@dataclass(frozen=True)
class Remapping:
    """An import remapping ``[context:]prefix=target``."""

    context: str
    prefix: str
    target: str

    @classmethod
    def parse(cls, text: str) -> Remapping | None:
        """Parse one remapping line; None for blanks and comments."""
        text = text.strip()
        if not text or text.startswith("#") or "=" not in text:
            return None
        left, target = text.split("=", 1)
        context, prefix = left.split(":", 1) if ":" in left else ("", left)
        return cls(context.strip(), prefix.strip(), target.strip())

    def __str__(self) -> str:
        head = f"{self.context}:" if self.context else ""
        return f"{head}{self.prefix}={self.target}"


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


def find_project_root(path: Path) -> Path:
    """Return the nearest ancestor of ``path`` holding a project marker, else its directory."""
    start = path if path.is_dir() else path.parent
    for candidate in (start, *start.parents):
        if any((candidate / marker).exists() for marker in _ROOT_MARKERS):
            return candidate
    return start


def read_foundry_config(root: Path) -> dict[str, Any]:
    """Return the ``[profile.default]`` table of ``foundry.toml`` (empty when absent)."""
    path = root / "foundry.toml"
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}", "fix the TOML syntax") from None
    profile = data.get("profile", {}).get("default", {})
    return profile if isinstance(profile, dict) else {}


def project_remappings(root: Path) -> tuple[Remapping, ...]:
    """Remappings from foundry.toml, remappings.txt and Foundry's ``lib/<name>`` defaults."""
    found: list[Remapping] = []
    config = read_foundry_config(root)
    for line in config.get("remappings", []) or []:
        remap = Remapping.parse(str(line))
        if remap is not None:
            found.append(remap)
    txt = root / "remappings.txt"
    if txt.is_file():
        for line in txt.read_text(encoding="utf-8").splitlines():
            remap = Remapping.parse(line)
            if remap is not None:
                found.append(remap)
    if (root / "foundry.toml").is_file():
        for lib in config.get("libs", ["lib"]) or ["lib"]:
            lib_dir = root / str(lib)
            if not lib_dir.is_dir():
                continue
            for dep in sorted(p for p in lib_dir.iterdir() if p.is_dir()):
                prefix = f"{dep.name}/"
                if any(r.prefix == prefix for r in found):
                    continue
                sub = "src/" if (dep / "src").is_dir() else ""
                found.append(Remapping("", prefix, f"{lib}/{dep.name}/{sub}"))
    return tuple(dict.fromkeys(found))


@dataclass
class SourceUnit:
    """One Solidity source: its unit name, file and text."""

    name: str
    path: Path
    content: str


@dataclass
class SourceSet:
    """The closure of some root files under their imports, ready for standard JSON."""

    base: Path
    roots: list[str]
    units: dict[str, SourceUnit] = field(default_factory=dict)
    remappings: tuple[Remapping, ...] = ()
    include_paths: tuple[Path, ...] = ()

    def pragma(self) -> tuple[VersionRange, str]:
        """Return the intersection of all version pragmas and the units that state them."""
        result = VersionRange.any()
        where: list[str] = []
        for unit in self.units.values():
            for expr in find_pragmas(unit.content):
                try:
                    result = result.intersect(VersionRange.parse(expr))
                except ValueError:
                    continue
                where.append(unit.name)
        return result, ", ".join(dict.fromkeys(where)) or "the sources"

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
        for imported in find_imports(content):
            unit = apply_remappings(resolve_unit_name(imported, name), name, remappings)
            if unit in result.units:
                continue
            found = _locate(unit, base, include_paths)
            if found is None:
                # Leave it to the compiler, which reports the import with file:line.
                continue
            queue.append((unit, found))
    return result
