"""Compile Solidity files: choose a compiler, build standard JSON, cache, parse the output."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from secant.compile.artifacts import Compilation, from_standard_json
from secant.compile.cache import OutputCache, content_key
from secant.compile.config import CompilerSettings
from secant.compile.errors import CompilationFailed, CompilerUnavailable
from secant.compile.evm_versions import evm_version_for
from secant.compile.remappings import Remapping, merge_remappings
from secant.compile.semver import Version, VersionRange, format_version, parse_version
from secant.compile.solc import SolcManager, find_native, installed_versions
from secant.compile.sources import (
    NO_PRAGMA,
    SourceSet,
    collect_sources,
    find_project_root,
    project_remappings,
)

CONTRACT_OUTPUTS = (
    "abi",
    "evm.bytecode.object",
    "evm.bytecode.sourceMap",
    "evm.bytecode.linkReferences",
    "evm.deployedBytecode.object",
    "evm.deployedBytecode.sourceMap",
    "evm.deployedBytecode.linkReferences",
    "evm.deployedBytecode.immutableReferences",
    "evm.methodIdentifiers",
    "storageLayout",
)
"""Per-contract standard-JSON outputs requested (versions ignore the ones they lack)."""


DEFAULT_RUNS = 200
"""Optimizer runs when neither the command line nor the project says (solc's default)."""


@dataclass(frozen=True)
class CompileOptions:
    """How to compile: compiler choice, optimizer, EVM version, import resolution, caching.

    None means "not chosen": a project's own setting (``foundry.toml``, Hardhat config)
    applies, else the default (newest version the pragmas allow, optimizer off at
    :data:`DEFAULT_RUNS` runs, no via-IR, the compiler's default EVM version).
    ``remappings`` (``[context:]prefix=target``) take precedence over the project's.
    """

    solc_version: str | None = None
    optimize: bool | None = None
    optimize_runs: int | None = None
    evm_version: str | None = None
    via_ir: bool | None = None
    remappings: tuple[str, ...] = ()
    include_paths: tuple[Path, ...] = ()
    base_path: Path | None = None
    use_cache: bool = True
    allow_install: bool = True

    def with_settings(self, settings: CompilerSettings) -> CompileOptions:
        """These options with ``settings`` filling in what they leave unchosen (None)."""
        filled = {f.name: getattr(settings, f.name) for f in fields(settings)
                  if getattr(self, f.name) is None and getattr(settings, f.name) is not None}
        return replace(self, **filled) if filled else self

    @property
    def chooses_compiler_settings(self) -> bool:
        """Whether a compiler setting or remapping was chosen here (not left to the project)."""
        return any(getattr(self, f.name) is not None for f in fields(CompilerSettings)) or \
            bool(self.remappings or self.include_paths)

    def parsed_remappings(self) -> tuple[Remapping, ...]:
        """``remappings`` parsed (malformed entries are skipped)."""
        return tuple(r for r in (Remapping.parse(t) for t in self.remappings) if r is not None)


def solc_settings(version: Version, options: CompileOptions) -> dict[str, Any]:
    """Return the standard-JSON ``settings`` for ``version`` (remappings come from sources).

    An EVM version newer than ``version`` knows is lowered to the newest it does know.
    """
    runs = DEFAULT_RUNS if options.optimize_runs is None else options.optimize_runs
    settings: dict[str, Any] = {
        "optimizer": {"enabled": bool(options.optimize), "runs": runs},
        "outputSelection": {"*": {"*": list(CONTRACT_OUTPUTS), "": ["ast"]}},
    }
    evm = evm_version_for(options.evm_version, version) if options.evm_version else None
    if evm:
        settings["evmVersion"] = evm
    if options.via_ir and version >= (0, 8, 13):
        settings["viaIR"] = True
    return settings


def gather(files: list[Path], options: CompileOptions) -> SourceSet:
    """Read ``files`` and their imports with the options' remappings and include paths.

    The options' remappings come before the project's (found from the first file).
    """
    extra = options.parsed_remappings()
    remappings = None
    if extra:
        root = options.base_path or files[0].resolve().parent
        remappings = merge_remappings(extra, project_remappings(find_project_root(root)))
    return collect_sources(files, options.base_path, remappings, options.include_paths)


def compile_sources(sources: SourceSet, manager: SolcManager, options: CompileOptions,
                    roots: Sequence[str] | None = None, origin: str = "solc",
                    what: str | None = None,
                    announce: Callable[[str], None] | None = None) -> Compilation:
    """Compile a gathered source set with the version its pragmas (or options) call for.

    ``roots`` (default: the set's roots) are the units whose contracts are the input's own;
    ``what`` names the input in error messages (default: the roots). ``announce`` is told
    the compiler chosen (e.g. ``solc 0.8.28``) before it runs (or the cache answers).

    When secant chose the version (no ``--solc-version``) and that compiler refuses the
    code with an error another release may not have, other releases the pragmas allow are
    tried (:func:`fallback_versions`); the first that compiles is kept, a note names it,
    and the choice is cached. None compiles: the chosen version's error.
    """
    pragma, where = sources.pragma()
    if options.solc_version is not None:
        return _compile_with(sources, manager, options, pragma, where, roots, origin, what,
                             announce)
    kind, chosen = manager.select(pragma, None, where)
    cache = OutputCache(enabled=options.use_cache)
    decision = _decision_key(sources, options, chosen)
    remembered = cache.get(decision)
    if remembered is not None and isinstance(remembered.get("version"), str):
        version = parse_version(remembered["version"])
        try:
            compiled = _compile_with(sources, manager, options, pragma, where, roots, origin,
                                     what, announce, _choice(manager, version))
        except (CompilationFailed, CompilerUnavailable):
            pass  # the remembered version is gone or refuses now: decide again
        else:
            manager.notes.append(_fallback_note(what, sources, where, chosen, compiled))
            return compiled
    try:
        return _compile_with(sources, manager, options, pragma, where, roots, origin, what,
                             announce, (kind, chosen))
    except CompilationFailed as refused:
        if not version_dependent(refused) or (remembered is not None
                                              and remembered.get("version") is None):
            raise
        settled = True
        for version in fallback_versions(pragma, where == NO_PRAGMA, chosen,
                                         manager.candidates(), set(installed_versions())):
            try:
                compiled = _compile_with(sources, manager, options, pragma, where, roots,
                                         origin, what, announce, _choice(manager, version))
            except CompilationFailed as error:
                settled = settled and bool(error.errors)
                continue  # this release refuses the code too
            except CompilerUnavailable:
                settled = False
                continue  # cannot be installed here now
            cache.put(decision, {"version": format_version(version)})
            manager.notes.append(_fallback_note(what, sources, where, chosen, compiled))
            return compiled
        if settled:  # every release refused the code itself: a second run says so at once
            cache.put(decision, {"version": None})
        raise


FALLBACK_ATTEMPTS = 4
"""Other releases tried, at most, when the chosen one refuses the code (each may be an npm
install the first time)."""

VERSION_DEPENDENT_ERRORS = ("ParserError", "DeclarationError", "TypeError", "SyntaxError")
"""Kinds of compiler errors that another release may not raise: syntax and names that came
or went between releases (``constant`` functions, ``throw``, assembly labels)."""

OLDER_LINES = ((0, 7), (0, 6), (0, 5), (0, 4))
"""The release lines whose newest release is tried, newest first, for sources that state
no version (before 0.4.10 pragmas were rare) and that the newest compiler refuses."""


def version_dependent(error: CompilationFailed) -> bool:
    """Whether a compiler error is of a kind another release may not raise."""
    return any(f" {kind}: " in f" {line}" for line in error.errors
               for kind in VERSION_DEPENDENT_ERRORS)


def fallback_versions(pragma: VersionRange, no_pragma: bool, chosen: Version,
                      candidates: set[Version], installed: set[Version]) -> list[Version]:
    """Releases to try, in order, when ``chosen`` refuses code that the ``pragma`` allows.

    Sources without a pragma: the newest release of each older line (:data:`OLDER_LINES`).
    A range: its oldest release (written for it, most likely), the newest of each other
    line it spans (newest first), then a few in between among the installed ones (no
    download; the middle one when none is). At most :data:`FALLBACK_ATTEMPTS`, each
    once; ``chosen`` never.
    """
    allowed = sorted(v for v in candidates if pragma.contains(v) and v != chosen)
    picks: list[Version] = []
    if no_pragma:
        for line in OLDER_LINES:
            newest = max((v for v in allowed if v[:2] == line and v < chosen), default=None)
            if newest is not None:
                picks.append(newest)
        return picks[:FALLBACK_ATTEMPTS]
    if not allowed:
        return []
    picks.append(allowed[0])
    lines = sorted({v[:2] for v in allowed} - {chosen[:2]}, reverse=True)
    picks += [max(v for v in allowed if v[:2] == line) for line in lines]
    # In between, installed releases only (a broken file must not cost many downloads);
    # with none installed, the middle one.
    between = [v for v in allowed[1:] if v not in picks]
    ready = [v for v in between if v in installed] or between[len(between) // 2:][:1]
    slots = FALLBACK_ATTEMPTS - len(picks)
    if ready and slots > 0:
        size = -(-len(ready) // slots)
        picks += [chunk[len(chunk) // 2] for chunk in
                  (ready[start:start + size] for start in range(0, len(ready), size))]
    return list(dict.fromkeys(picks))[:FALLBACK_ATTEMPTS]


def _choice(manager: SolcManager, version: Version) -> tuple[str, Version]:
    """``version`` as a native solc when that is the one on PATH, else as solc-js."""
    native = find_native() if manager.use_native else None
    return ("native", version) if native is not None and native.version == version else \
        ("solc-js", version)


def _decision_key(sources: SourceSet, options: CompileOptions, chosen: Version) -> str:
    """The cache key of the release that compiled these sources when ``chosen`` did not."""
    return content_key("solc-fallback", format_version(chosen),
                       {name: unit.content for name, unit in sources.units.items()},
                       [str(r) for r in sources.remappings], options.optimize,
                       options.optimize_runs, options.evm_version, options.via_ir)


def _fallback_note(what: str | None, sources: SourceSet, where: str, chosen: Version,
                   compiled: Compilation) -> str:
    subject = what or ", ".join(sources.roots)
    refused = "states no solidity version and does not compile with the newest solc" \
        if where == NO_PRAGMA else \
        f"does not compile with solc {format_version(chosen)}, the release its pragmas chose"
    return f"{subject} {refused}; compiled with {compiled.compiler} (pass --solc-version " \
        "to choose)"


def _compile_with(sources: SourceSet, manager: SolcManager, options: CompileOptions,
                  pragma: VersionRange, where: str, roots: Sequence[str] | None,
                  origin: str, what: str | None,
                  announce: Callable[[str], None] | None,
                  compiler_choice: tuple[str, Version] | None = None) -> Compilation:
    """``compile_sources`` with the compiler of ``compiler_choice`` (kind, version).

    Without one, the compiler the ``pragma`` range (or the options) calls for.
    """
    kind, version = compiler_choice or manager.select(pragma, options.solc_version, where)
    std_input = sources.standard_input(solc_settings(version, options))
    cache = OutputCache(enabled=options.use_cache)
    key = content_key("solc", kind, format_version(version), std_input)
    output = cache.get(key)
    compiler = manager.get(kind, version)
    label = f"solc {format_version(version)}" + (" (native)" if kind == "native" else "")
    if announce is not None:
        announce(label)
    if output is None:
        output = compiler.compile(std_input, sources.search_roots())
        failed = any(e.get("severity") == "error" for e in output.get("errors", []) or [])
        if not failed:
            cache.put(key, output)
    contents = {name: unit.content for name, unit in sources.units.items()}
    paths = {name: unit.path for name, unit in sources.units.items()}
    for name in output.get("sources") or {}:
        if name not in paths:
            located = _find(name, sources)
            if located is not None:
                paths[name] = located
    chosen = sources.roots if roots is None else list(roots)
    return from_standard_json(output, contents, paths, chosen, label, origin, what)


def _find(name: str, sources: SourceSet) -> Path | None:
    for root in sources.search_roots():
        path = Path(root) / name
        if path.is_file():
            return path
    return None


def compile_files(files: list[Path], options: CompileOptions | None = None,
                  manager: SolcManager | None = None) -> list[Compilation]:
    """Compile each file (with its imports) separately, sharing one compiler per version."""
    options = options or CompileOptions()
    own = manager is None
    active = manager or SolcManager(allow_install=options.allow_install)
    try:
        return [compile_sources(gather([f], options), active, options) for f in files]
    finally:
        if own:
            active.close()
