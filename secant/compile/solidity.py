"""Compile Solidity files: choose a compiler, build standard JSON, cache, parse the output."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from secant.compile.artifacts import Compilation, from_standard_json
from secant.compile.cache import OutputCache, content_key
from secant.compile.config import CompilerSettings
from secant.compile.errors import CompilationFailed, CompilerUnavailable
from secant.compile.evm_versions import evm_version_for
from secant.compile.legacy import PRAGMAS, TRANSLATION
from secant.compile.remappings import Remapping, merge_remappings
from secant.compile.semver import Version, VersionRange, format_version, parse_version
from secant.compile.solc import STANDARD_JSON, SolcManager, find_native, installed_versions
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
    and the choice is cached. None compiles: the chosen version's error, naming the
    releases tried (cached too when each of them refused the code itself).
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
        if not version_dependent(refused):
            raise
        if remembered is not None and remembered.get("version") is None:
            earlier = remembered.get("tried")
            raise _none_compiles(refused, chosen, [parse_version(str(v)) for v in earlier]
                                 if isinstance(earlier, list) else [], []) from None
        settled = True
        tried: list[Version] = []
        unavailable: list[Version] = []
        for version in fallback_versions(pragma, where == NO_PRAGMA, chosen,
                                         manager.candidates(), set(installed_versions()),
                                         before_payable(sources)):
            try:
                compiled = _compile_with(sources, manager, options, pragma, where, roots,
                                         origin, what, announce, _choice(manager, version))
            except CompilationFailed as error:
                settled = settled and bool(error.errors)
                tried.append(version)
                continue  # this release refuses the code too
            except CompilerUnavailable:
                settled = False
                unavailable.append(version)
                continue  # cannot be installed here now
            cache.put(decision, {"version": format_version(version)})
            manager.notes.append(_fallback_note(what, sources, where, chosen, compiled))
            return compiled
        if settled:  # every release refused the code itself: a second run says so at once
            cache.put(decision, {"version": None,
                                 "tried": [format_version(v) for v in tried]})
        raise _none_compiles(refused, chosen, tried, unavailable) from None


def _none_compiles(refused: CompilationFailed, chosen: Version, tried: list[Version],
                   unavailable: list[Version]) -> CompilationFailed:
    """The chosen release's error, naming the other releases that were tried in vain."""
    if not tried and not unavailable:
        return refused  # nothing else was allowed: the error says all
    also = []
    if tried:
        also.append(f"{_names(tried)} refuse{'s' if len(tried) == 1 else ''} it too")
    if unavailable:
        also.append(f"{_names(unavailable)} could not be installed")
    return CompilationFailed(
        f"{refused.message} (solc {format_version(chosen)}; {'; '.join(also)})",
        "fix the source at that line, or pass --solc-version with the release the code was "
        "written for", refused.errors)


def _names(versions: list[Version]) -> str:
    texts = [format_version(v) for v in versions]
    return texts[0] if len(texts) == 1 else f"{', '.join(texts[:-1])} and {texts[-1]}"


FALLBACK_ATTEMPTS = 4
"""Other releases tried, at most, among those from 0.4 on when the chosen one refuses code
that states a version range (each may be an npm install the first time)."""

VERSION_DEPENDENT_ERRORS = ("ParserError", "DeclarationError", "TypeError", "SyntaxError",
                            "Error")
"""Kinds of compiler errors that another release may not raise: syntax and names that came
or went between releases (``constant`` functions, ``throw``, assembly labels), and type
rules that changed within a line (0.4.x). Releases before 0.4.11 call all of those just
``Error``."""

OLDER_LINES = ((0, 7), (0, 6), (0, 5), (0, 4), (0, 3), (0, 2))
"""The release lines whose newest release is tried, newest first, for sources that state
no version (before 0.4.10 pragmas were rare, before 0.4.0 they did not exist) and that the
newest compiler refuses."""


_MSG_VALUE_RE = re.compile(r"\bmsg\.value\b")
_PAYABLE_RE = re.compile(r"\bpayable\b")


def before_payable(sources: SourceSet) -> bool:
    """Whether the sources take ether without ever saying ``payable``: code of before 0.4.

    From 0.4.0 on, a function accepts ether only when marked ``payable``, so code that reads
    ``msg.value`` and marks nothing was written for a compiler without the keyword, where
    every function (the fallback too) takes ether. A 0.4 compiler may still accept it, with
    every function refusing ether: the contract compiles but no longer does what it says.
    """
    texts = [unit.content for unit in sources.units.values()]
    return (any(_MSG_VALUE_RE.search(text) for text in texts)
            and not any(_PAYABLE_RE.search(text) for text in texts))


def version_dependent(error: CompilationFailed) -> bool:
    """Whether a compiler error is of a kind another release may not raise."""
    return any(f" {kind}: " in f" {line}" for line in error.errors
               for kind in VERSION_DEPENDENT_ERRORS)


def fallback_versions(pragma: VersionRange, no_pragma: bool, chosen: Version,
                      candidates: set[Version], installed: set[Version],
                      pre_payable: bool = False) -> list[Version]:
    """Releases to try, in order, when ``chosen`` refuses code that the ``pragma`` allows.

    Sources without a pragma: the newest release of each older line (:data:`OLDER_LINES`),
    newest first: code written before pragmas existed reaches the 0.3 and 0.2 compilers.
    A range: its oldest release (written for it, most likely), the newest of each other
    line it spans (newest first), then a few in between among the installed ones (no
    download; the middle one when none is), at most :data:`FALLBACK_ATTEMPTS`. These
    among the releases from 0.4 on when the range allows any (pragmas came with 0.4: a
    range reaches older releases through a loose bound such as ``<0.5.0``, and its oldest
    release says nothing then), then the newest of each line before 0.4 it allows. Each
    once; ``chosen`` never. ``pre_payable`` (:func:`before_payable`) puts the lines before
    0.4 first for sources without a pragma: their ether-taking functions keep taking it.
    """
    allowed = sorted(v for v in candidates if pragma.contains(v) and v != chosen)
    picks: list[Version] = []
    if no_pragma:
        for line in OLDER_LINES:
            newest = max((v for v in allowed if v[:2] == line and v < chosen), default=None)
            if newest is not None:
                picks.append(newest)
        if pre_payable:
            picks.sort(key=lambda v: v >= PRAGMAS)  # stable: newest first within each part
        return picks
    modern = [v for v in allowed if v >= PRAGMAS]
    older = [v for v in allowed if v < PRAGMAS]
    picks = _range_picks(modern or older, chosen, installed)
    if modern:
        picks += [max(v for v in older if v[:2] == line)
                  for line in sorted({v[:2] for v in older}, reverse=True)]
    return list(dict.fromkeys(picks))


def _range_picks(allowed: list[Version], chosen: Version,
                 installed: set[Version]) -> list[Version]:
    """:func:`fallback_versions` among ``allowed`` (sorted): oldest, lines, in between."""
    if not allowed:
        return []
    picks = [allowed[0]]
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
    # "-3": decisions taken before the releases before 0.4 were tried (or put first for code
    # that takes ether without `payable`) are not read back.
    return content_key("solc-fallback-3", format_version(chosen),
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
    # A legacy compiler's output is secant's translation of its answer (secant.compile.legacy).
    translation = [TRANSLATION] if kind == "solc-js" and version < STANDARD_JSON else []
    key = content_key("solc", kind, format_version(version), std_input, *translation)
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
