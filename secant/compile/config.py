"""Project configuration: what a Foundry or Hardhat project asks of the compiler.

A :class:`Project` says which folders hold the sources to compile, which remappings resolve
their imports and which compiler settings the project asks for (:class:`CompilerSettings`,
None where it says nothing). Nothing of the project is run: ``foundry.toml`` is TOML, and a
Hardhat config is JavaScript of which only plain literals are read, with regular expressions.

Foundry: the ``[profile.default]`` table, or the profile ``FOUNDRY_PROFILE`` names laid over
it as Foundry does. Remappings, first match wins: ``remappings`` in ``foundry.toml``, then
``remappings.txt``, then one per library folder under each of ``libs`` (``name/`` to
``lib/name/src/`` when the library has a ``src/``, else to ``lib/name/``), then the
libraries' own remappings rebased onto their folders, then the ``node_modules`` packages that
hold Solidity files (``@scope/`` to ``node_modules/@scope/``).

Hardhat: ``solidity: "0.8.20"`` or ``solidity: {version: ..., settings: {optimizer:
{enabled, runs}, viaIR, evmVersion}}`` (also inside ``compilers: [...]`` and a Hardhat 3
``profiles.default``) and ``paths: {sources: ...}``. Imports of packages resolve in
``node_modules``; a ``remappings.txt`` is read too.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from secant.compile.errors import InputError
from secant.compile.evm_versions import canonical_evm_version
from secant.compile.remappings import Remapping, merge_remappings, read_remappings_file

FOUNDRY_CONFIG = "foundry.toml"
"""The file that makes a folder a Foundry project."""

HARDHAT_CONFIGS = ("hardhat.config.js", "hardhat.config.ts", "hardhat.config.cjs",
                   "hardhat.config.mjs")
"""The files that make a folder a Hardhat project."""

_ROOT_MARKERS = (FOUNDRY_CONFIG, *HARDHAT_CONFIGS, "remappings.txt", "truffle-config.js", ".git")
_VERSION_RE = re.compile(r"^\s*=?\s*v?(\d+\.\d+\.\d+)\s*$")
_NESTED_DEPTH = 2
"""How deep libraries of libraries are searched for their own remappings."""
_SCAN_BUDGET = 4000
"""Directory entries looked at per ``node_modules`` package when asking if it holds Solidity."""


@dataclass(frozen=True)
class CompilerSettings:
    """Compiler settings a project asks for; None where it says nothing."""

    solc_version: str | None = None
    optimize: bool | None = None
    optimize_runs: int | None = None
    via_ir: bool | None = None
    evm_version: str | None = None


@dataclass(frozen=True)
class Project:
    """A Foundry or Hardhat project as secant compiles it.

    ``source_dirs`` are compiled (recursively); contracts of ``main_dirs`` are the project's
    own (the fuzzing target is chosen among them). Folders are relative to ``root``.
    ``solc_versions`` lists the compilers a Hardhat config offers when it names several.
    """

    kind: str
    root: Path
    config_file: str
    source_dirs: tuple[str, ...]
    main_dirs: tuple[str, ...]
    libs: tuple[str, ...]
    out: str
    settings: CompilerSettings
    remappings: tuple[Remapping, ...]
    solc_versions: tuple[str, ...] = ()
    profile: str = "default"
    notes: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """``Foundry project`` or ``Hardhat project``, for messages."""
        return f"{self.kind.capitalize()} project"

    def files(self) -> list[Path]:
        """The ``.sol`` files under the source folders, sorted.

        Libraries, ``node_modules``, the artifacts folder and hidden folders are skipped even
        when a source folder holds them (``src = "."``).
        """
        skip = {(self.root / name).resolve() for name in (*self.libs, self.out, "node_modules")}
        found: set[Path] = set()
        for folder in self.source_dirs:
            for current, dirs, names in os.walk(self.root / folder):
                here = Path(current)
                dirs[:] = sorted(d for d in dirs if not d.startswith(".")
                                 and d != "node_modules" and (here / d).resolve() not in skip)
                found.update(here / n for n in names if n.endswith(".sol"))
        return sorted(found)

    def is_main(self, unit: str) -> bool:
        """Whether source unit ``unit`` lies in one of :attr:`main_dirs`."""
        return any(folder == "." or unit == folder or unit.startswith(folder + "/")
                   for folder in self.main_dirs)


def find_project_root(path: Path) -> Path:
    """Return the nearest ancestor of ``path`` holding a project marker, else its directory."""
    start = path if path.is_dir() else path.parent
    for candidate in (start, *start.parents):
        if any((candidate / marker).exists() for marker in _ROOT_MARKERS):
            return candidate
    return start


def hardhat_config_file(root: Path) -> Path | None:
    """The Hardhat config file of ``root``, or None."""
    return next((root / name for name in HARDHAT_CONFIGS if (root / name).is_file()), None)


def read_project(root: Path) -> Project | None:
    """The Foundry (preferred) or Hardhat project whose root is ``root``, else None."""
    if not root.is_dir():
        return None
    if (root / FOUNDRY_CONFIG).is_file():
        return read_foundry(root)
    config = hardhat_config_file(root)
    if config is not None:
        return read_hardhat(root, config)
    return None


def project_remappings(root: Path) -> tuple[Remapping, ...]:
    """The remappings of the project at ``root``; just its ``remappings.txt`` for others."""
    project = read_project(root)
    if project is not None:
        return project.remappings
    return read_remappings_file(root / "remappings.txt")


# --- Foundry -------------------------------------------------------------------------------


def _toml(path: Path, strict: bool) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        if not strict:
            return {}
        raise InputError(f"cannot read {path}: {exc}", "fix the TOML syntax") from None
    return data


def foundry_profile(root: Path) -> tuple[dict[str, Any], str, tuple[str, ...]]:
    """The keys of the active profile of ``root/foundry.toml``, its name, and notes.

    The active profile is ``FOUNDRY_PROFILE`` (default ``default``); a profile other than the
    default inherits every key it does not set from ``[profile.default]``. An unknown profile
    falls back to the default, as Foundry does. Keys are given with ``_`` (``via-ir`` is
    read as ``via_ir``).
    """
    path = root / FOUNDRY_CONFIG
    if not path.is_file():
        return {}, "default", ()
    profiles = _toml(path, strict=True).get("profile", {})
    profiles = profiles if isinstance(profiles, dict) else {}
    default = profiles.get("default", {})
    table: dict[str, Any] = dict(default) if isinstance(default, dict) else {}
    wanted = os.environ.get("FOUNDRY_PROFILE", "").strip() or "default"
    notes: tuple[str, ...] = ()
    if wanted != "default":
        chosen = profiles.get(wanted)
        if isinstance(chosen, dict):
            table.update(chosen)
        else:
            notes = (f"FOUNDRY_PROFILE={wanted} names no profile in {path.name}; "
                     "using the default profile",)
            wanted = "default"
    return {key.replace("-", "_"): value for key, value in table.items()}, wanted, notes


def _get(table: dict[str, Any], key: str, kind: type, what: str) -> Any:
    value = table.get(key)
    if value is None:
        return None
    # bool is an int to Python, but "optimizer_runs = true" is a mistake all the same
    if isinstance(value, bool) != (kind is bool) or not isinstance(value, kind):
        raise InputError(f"{key} in {FOUNDRY_CONFIG} must be {what}, not {value!r}",
                         f"fix {key} in {FOUNDRY_CONFIG}")
    return value


def _folder(table: dict[str, Any], key: str, default: str) -> str:
    value = _get(table, key, str, "a folder name")
    text = str(value if value is not None else default).strip()
    while text.startswith("./"):
        text = text[2:]
    return text.rstrip("/") or "."


def read_foundry(root: Path) -> Project:
    """Read ``root/foundry.toml`` (the active profile) into a :class:`Project`."""
    root = root.resolve()
    table, profile, notes = foundry_profile(root)
    solc = _get(table, "solc", str, "a version such as \"0.8.20\"")
    if solc is None:
        solc = _get(table, "solc_version", str, "a version such as \"0.8.20\"")
    version: str | None = None
    if solc is not None:
        match = _VERSION_RE.match(solc)
        if match is not None:
            version = match.group(1)
        else:
            notes += (f"solc = {solc!r} in {FOUNDRY_CONFIG} is not a version; secant picks "
                      "compiler versions from the pragmas (or pass --solc-version)",)
    runs = _get(table, "optimizer_runs", int, "a number")
    evm = _get(table, "evm_version", str, "an EVM version name")
    settings = CompilerSettings(
        solc_version=version,
        optimize=_get(table, "optimizer", bool, "true or false"),
        optimize_runs=runs,
        via_ir=_get(table, "via_ir", bool, "true or false"),
        evm_version=canonical_evm_version(evm, f"in {FOUNDRY_CONFIG}") if evm else None,
    )
    libs_value = _get(table, "libs", list, "a list of folder names")
    libs = tuple(str(lib).strip().rstrip("/") for lib in (libs_value if libs_value is not None
                                                         else ["lib"]))
    explicit = [Remapping.parse(str(line)) for line in
                _get(table, "remappings", list, "a list of remappings") or []]
    direct: list[Remapping] = []
    nested: list[Remapping] = []
    for lib in (*libs, *(() if "node_modules" in libs else ("node_modules",))):
        found, inner = _library_remappings(root, lib, 0)
        direct.extend(found)
        nested.extend(inner)
    remappings = merge_remappings((r for r in explicit if r is not None),
                                  read_remappings_file(root / "remappings.txt"), direct, nested)
    src = _folder(table, "src", "src")
    folders = (src, _folder(table, "test", "test"), _folder(table, "script", "script"))
    return Project(
        kind="foundry", root=root, config_file=FOUNDRY_CONFIG,
        source_dirs=tuple(dict.fromkeys(f for f in folders if (root / f).is_dir())),
        main_dirs=(src,), libs=libs, out=_folder(table, "out", "out"), settings=settings,
        remappings=remappings, profile=profile, notes=notes,
    )


def _library_remappings(root: Path, lib: str,
                        depth: int) -> tuple[list[Remapping], list[Remapping]]:
    """Remappings Foundry derives for the libraries in ``root/lib``, in two lists.

    First one per library folder; second the libraries' own remappings (rebased) and those
    of the libraries they hold, which come after every library folder's.
    """
    folder = root / lib
    if not folder.is_dir():
        return [], []
    packages = Path(lib).name == "node_modules"
    direct: list[Remapping] = []
    nested: list[Remapping] = []
    for dep in sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if packages and not _holds_solidity(dep):
            continue
        where = f"{lib}/{dep.name}"
        sub = "src/" if (dep / "src").is_dir() and not dep.name.startswith("@") else ""
        direct.append(Remapping("", f"{dep.name}/", f"{where}/{sub}"))
        if packages or depth >= _NESTED_DEPTH:
            continue
        table = _library_profile(dep)
        raw = table.get("remappings")
        own = [r for r in (Remapping.parse(str(line))
                           for line in (raw if isinstance(raw, list) else [])) if r is not None]
        own.extend(read_remappings_file(dep / "remappings.txt"))
        nested.extend(r.rebased(where) for r in own)
        inner_libs = table.get("libs")
        for inner in inner_libs if isinstance(inner_libs, list) else ["lib"]:
            found, deeper = _library_remappings(root, f"{where}/{str(inner).rstrip('/')}",
                                                depth + 1)
            nested.extend(found + deeper)
    return direct, nested


def _library_profile(folder: Path) -> dict[str, Any]:
    """A library's own default profile; a broken config in a library is not the user's."""
    path = folder / FOUNDRY_CONFIG
    if not path.is_file():
        return {}
    profiles = _toml(path, strict=False).get("profile", {})
    default = profiles.get("default", {}) if isinstance(profiles, dict) else {}
    table = default if isinstance(default, dict) else {}
    return {key.replace("-", "_"): value for key, value in table.items()}


def _holds_solidity(folder: Path) -> bool:
    """Whether a package folder holds a ``.sol`` file (looking at a bounded number of entries).

    ``node_modules`` is mostly JavaScript; only packages with Solidity get a remapping.
    """
    stack = [folder]
    seen = 0
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > _SCAN_BUDGET:
                return False
            if entry.name.endswith(".sol") and entry.is_file():
                return True
            if (entry.is_dir() and entry.name != "node_modules"
                    and not entry.name.startswith(".")):
                stack.append(Path(entry.path))
    return False


# --- Hardhat -------------------------------------------------------------------------------

_JS_TOKEN_RE = re.compile(
    r"(\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`)|(//[^\n]*|/\*.*?\*/)",
    re.DOTALL,
)
_STRING = r"""(["'`])([^"'`\n]*)\1"""


def _strip_js_comments(text: str) -> str:
    def blank(match: re.Match[str]) -> str:
        return match.group(1) if match.group(1) is not None else " "

    return _JS_TOKEN_RE.sub(blank, text)


def _inside(text: str, opening: int) -> str:
    """The text inside the bracket at ``opening`` up to its match (or the end)."""
    depth = 0
    for index in range(opening, len(text)):
        char = text[index]
        if char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return text[opening + 1:index]
    return text[opening + 1:]


def _block(text: str, key: str) -> str | None:
    """The object or array literal that ``key:`` holds in ``text``, without its brackets."""
    match = re.search(rf"\b{key}\s*:\s*([{{\[])", text)
    return _inside(text, match.start(1)) if match else None


def _string(text: str, key: str) -> str | None:
    match = re.search(rf"\b{key}\s*:\s*{_STRING}", text)
    return match.group(2) if match else None


def _boolean(text: str, key: str) -> bool | None:
    match = re.search(rf"\b{key}\s*:\s*(true|false)\b", text)
    return None if match is None else match.group(1) == "true"


def _number(text: str, key: str) -> int | None:
    match = re.search(rf"\b{key}\s*:\s*(\d[\d_]*)\b", text)
    return None if match is None else int(match.group(1).replace("_", ""))


def _objects(array: str) -> Iterator[str]:
    """The object literals at the top level of an array literal's text."""
    index = 0
    while (start := array.find("{", index)) != -1:
        inner = _inside(array, start)
        yield inner
        index = start + len(inner) + 2


def _hardhat_settings(block: str, version: str | None) -> CompilerSettings:
    optimizer = _block(block, "optimizer") or ""
    evm = _string(block, "evmVersion")
    return CompilerSettings(
        solc_version=version,
        optimize=_boolean(optimizer, "enabled"),
        optimize_runs=_number(optimizer, "runs"),
        via_ir=_boolean(block, "viaIR"),
        evm_version=canonical_evm_version(evm, "in the Hardhat config") if evm else None,
    )


def parse_hardhat_config(text: str) -> tuple[CompilerSettings, tuple[str, ...], str | None]:
    """Settings, offered solc versions and ``paths.sources`` from a Hardhat config's text.

    Only plain literals are understood; anything else (a variable, a function call) leaves
    the setting unset. With several compilers, their versions are offered and the settings
    of the first apply.
    """
    text = _strip_js_comments(text)
    versions: tuple[str, ...] = ()
    settings = CompilerSettings()
    literal = _string(text, "solidity")
    block = None if literal is not None else _block(text, "solidity")
    if literal is not None:
        versions = (literal.strip(),)
    elif block is not None:
        profiles = _block(block, "profiles")
        if profiles is not None:
            block = _block(profiles, "default") or block
        compilers = _block(block, "compilers")
        entries = list(_objects(compilers)) if compilers is not None else [block]
        versions = tuple(v.strip() for v in (_string(e, "version") for e in entries) if v)
        if entries:
            settings = _hardhat_settings(entries[0], None)
    versions = tuple(dict.fromkeys(v for v in versions if _VERSION_RE.match(v)))
    if len(versions) == 1:
        settings = CompilerSettings(versions[0], settings.optimize, settings.optimize_runs,
                                    settings.via_ir, settings.evm_version)
    paths = _block(text, "paths")
    sources = _string(paths, "sources") if paths is not None else None
    return settings, versions, sources


def read_hardhat(root: Path, config: Path | None = None) -> Project:
    """Read a Hardhat project's config (plain literals only) into a :class:`Project`."""
    root = root.resolve()
    config = config or hardhat_config_file(root)
    if config is None:
        raise InputError(f"{root} has no hardhat.config.js or .ts",
                         "give the folder that holds the Hardhat config")
    try:
        text = config.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {config}: {exc}", "check the file") from None
    settings, versions, sources = parse_hardhat_config(text)
    notes: tuple[str, ...] = ()
    if not versions and re.search(r"\bsolidity\s*:", _strip_js_comments(text)):
        notes = (f"the solc version in {config.name} is not a plain literal; secant picks "
                 "compiler versions from the pragmas (or pass --solc-version)",)
    folder = (sources or "contracts").strip()
    while folder.startswith("./"):
        folder = folder[2:]
    folder = folder.rstrip("/") or "."
    paths = _block(_strip_js_comments(text), "paths")
    artifacts = (_string(paths, "artifacts") if paths is not None else None) or "artifacts"
    return Project(
        kind="hardhat", root=root, config_file=config.name,
        source_dirs=(folder,) if (root / folder).is_dir() else (), main_dirs=(folder,),
        libs=(), out=artifacts.removeprefix("./").rstrip("/") or "artifacts",
        settings=settings, remappings=read_remappings_file(root / "remappings.txt"),
        solc_versions=versions if len(versions) > 1 else (), notes=notes,
    )
