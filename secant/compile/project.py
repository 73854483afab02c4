"""Foundry and Hardhat projects: compiled from source, or read from up-to-date artifacts.

Neither forge nor hardhat is needed. Every ``.sol`` file of the project's source folders
(Foundry: ``src``, ``test``, ``script``; Hardhat: ``contracts`` or ``paths.sources``) is
compiled with the project's remappings and compiler settings (:mod:`secant.compile.config`),
command-line choices overriding them (:func:`compile_options_for`). Files whose pragmas no
single compiler satisfies are split into groups, one compiler run (one
:class:`Compilation`) each: a greedy cover takes the version that satisfies the most files
left, the newest among equals, so a project usually compiles in one run. A group whose
sources exceed what solc-js compiles at once (:data:`JOB_BUDGET`) is compiled in several
jobs of files that import much the same (:func:`pack_roots`), one compilation each.

Build artifacts are read instead when nothing on the command line asks for other settings
and they are up to date: a build-info that holds the sources' texts must hold them as they
are now; without texts (Foundry's slim build-info), every file that defines a contract needs
an ``out/<File>.sol/`` folder and no source may be newer than the newest artifact.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from secant.compile.artifacts import Compilation
from secant.compile.config import FOUNDRY_CONFIG, Project, find_project_root, read_project
from secant.compile.errors import (
    CompilationFailed,
    CompilerUnavailable,
    InputError,
    NoDeployableContract,
    PragmaUnsatisfiable,
)
from secant.compile.evm_versions import canonical_evm_version
from secant.compile.foundry import forge_build, load_foundry
from secant.compile.hardhat import load_hardhat
from secant.compile.remappings import Remapping, merge_remappings
from secant.compile.semver import Version, VersionRange, format_version, parse_version
from secant.compile.solc import SolcManager
from secant.compile.solidity import CompileOptions, compile_sources
from secant.compile.sources import SourceSet, collect_sources, strip_comments

_CHECKOUT_SLACK = 2.0
"""Seconds a source may look newer than the artifacts: one checkout writes both at once."""
_DEFINES_CONTRACT_RE = re.compile(
    r"\b(?:contract|interface|library)\s+[A-Za-z_$][\w$]*\s*(?:is\b|\{)")

JOB_BUDGET = 1_000_000
"""Bytes of source text (the closure of its roots) one solc-js compile job may hold.

solc-js copies its standard-JSON input onto the WebAssembly stack (4 bytes a character, of
5 MiB) and stops with "memory access out of bounds" past about 1.2 MB of sources (measured
on solc 0.8.20 and 0.8.28); the rest of the stack is left to the compiler itself.
"""

HEAP_JOB_BUDGET = 2_000_000
"""The budget of a job for compilers from 0.6 on, whose large inputs secant's driver puts on
the heap (``solc_driver.js``): the stack no longer limits them, their memory and time do
(a 3.1 MB project in one job took 5 min and 2.2 GB, then failed writing its output; in jobs
of 2 MB it compiled)."""

_HEAP_FROM: Version = (0, 6, 0)


def project_of(path: Path) -> Project | None:
    """The Foundry or Hardhat project ``path`` is, or lies in; None for other inputs."""
    return read_project(find_project_root(path.resolve()))


def check_options(options: CompileOptions) -> CompileOptions:
    """``options`` with the EVM version spelled as solc spells it; InputError when malformed.

    Checks the remappings (``[context:]prefix=target``), the optimizer runs, the EVM version
    and the solc version, naming the command-line flag that sets each.
    """
    for text in options.remappings:
        remap = Remapping.parse(text)
        if remap is None or not remap.prefix:
            raise InputError(f"--remap {text!r} is not a remapping",
                             "write it as PREFIX=TARGET, e.g. --remap @oz/=lib/oz/contracts/")
    if options.optimize_runs is not None and not 0 <= options.optimize_runs < 2**32:
        raise InputError(f"--optimizer-runs {options.optimize_runs} is out of range",
                         "give a number from 0 to 4294967295 (200 is solc's default)")
    if options.solc_version is not None:
        try:
            parse_version(options.solc_version)
        except ValueError:
            raise InputError(f"--solc-version {options.solc_version!r} is not a version",
                             "give a version such as 0.8.26") from None
    if options.evm_version is not None:
        evm = canonical_evm_version(options.evm_version, "(--evm-version)")
        if evm != options.evm_version:
            return replace(options, evm_version=evm)
    return options


def compile_options_for(paths: Sequence[Path], base: CompileOptions) -> CompileOptions:
    """The options to compile ``paths`` with: ``base``, checked, over the project's settings.

    ``base`` holds what the command line chose (None where it chose nothing); the first
    Foundry or Hardhat project among ``paths`` (or holding one of them) fills in the rest:
    solc version, optimizer and runs, via-IR, EVM version. Remappings are not copied:
    the project's apply when its sources are read, after ``base.remappings``.
    :func:`secant.compile.loader.load` applies this to every input itself.
    """
    checked = check_options(base)
    for path in paths:
        project = project_of(path) if path.exists() else None
        if project is not None:
            return checked.with_settings(project.settings)
    return checked


def load_project(project: Project, options: CompileOptions, manager: SolcManager,
                 forge: bool = False) -> list[Compilation]:
    """The compilations of a project: its artifacts when up to date, else built from source.

    ``forge`` runs ``forge build`` (when forge is on PATH) instead of compiling a Foundry
    project whose artifacts are stale. Notes about the project's config go to
    ``manager.notes``.
    """
    manager.notes.extend(n for n in project.notes if n not in manager.notes)
    files = project.files()
    if not options.chooses_compiler_settings:
        if has_artifacts(project) and (not files or artifacts_fresh(project, files)):
            return read_artifacts(project)
        if forge and project.kind == "foundry" and shutil.which("forge"):
            forge_build(project.root)
            return read_artifacts(project)
    return compile_project(project, options, manager, files)


def read_artifacts(project: Project) -> list[Compilation]:
    """The project's build artifacts as compilations (``out/`` or ``artifacts/``)."""
    if project.kind == "foundry":
        return [load_foundry(project.root, build=False)]
    return load_hardhat(project.root)


def has_artifacts(project: Project) -> bool:
    """Whether the project's artifacts folder holds any artifact."""
    out = project.root / project.out
    return out.is_dir() and any(out.rglob("*.json"))


def _build_info_sources(out: Path) -> dict[str, str]:
    """Source texts the build-info files under ``out`` were compiled from (may be empty)."""
    texts: dict[str, str] = {}
    for path in sorted((out / "build-info").glob("*.json")):
        if path.name.endswith(".output.json"):
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        sources = (data.get("input") or {}).get("sources") if isinstance(data, dict) else None
        for name, item in (sources or {}).items():
            if isinstance(item, dict) and isinstance(item.get("content"), str):
                texts[str(name)] = item["content"]
    return texts


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def artifacts_fresh(project: Project, files: Iterable[Path] | None = None) -> bool:
    """Whether the project's artifacts were built from its sources as they are now."""
    root = project.root
    out = root / project.out
    chosen = list(project.files() if files is None else files)
    texts = _build_info_sources(out)
    if texts:
        for file in chosen:
            if texts.get(file.relative_to(root).as_posix()) != _read(file):
                return False
        return all(_read(root / name) == text for name, text in texts.items()
                   if (root / name).is_file())
    if project.kind != "foundry":
        return False  # bare Hardhat artifacts name no sources: compile them again
    built = [p for p in out.glob("*/*.json") if p.parent.name != "build-info"]
    if not built:
        return False
    folders = {p.parent.name for p in built}
    for file in chosen:
        text = _read(file)
        if file.name not in folders and text is not None and \
                _DEFINES_CONTRACT_RE.search(strip_comments(text)):
            return False
    newest_artifact = max(p.stat().st_mtime for p in built)
    inputs = [*chosen, root / FOUNDRY_CONFIG, root / "remappings.txt"]
    for lib in project.libs:
        if lib != "node_modules" and (root / lib).is_dir():
            inputs.extend((root / lib).rglob("*.sol"))
    newest_source = max((p.stat().st_mtime for p in inputs if p.is_file()), default=0.0)
    return newest_source <= newest_artifact + _CHECKOUT_SLACK


def plan_groups(ranges: Mapping[str, VersionRange],
                versions: Iterable[Version]) -> list[tuple[Version | None, list[str]]]:
    """Split units into groups that one compiler version compiles together.

    ``ranges`` gives each unit the versions its pragmas (with its imports') allow. Greedy
    cover: the version satisfying the most units left (the newest among equals) takes
    them; units no version satisfies end in one last group with version None.
    """
    ordered = sorted(set(versions), reverse=True)
    left = dict(ranges)
    plan: list[tuple[Version | None, list[str]]] = []
    while left:
        best: Version | None = None
        members: list[str] = []
        for version in ordered:
            fit = [name for name, allowed in left.items() if allowed.contains(version)]
            if len(fit) > len(members):
                best, members = version, fit
        if best is None:
            plan.append((None, sorted(left)))
            break
        plan.append((best, members))
        for name in members:
            del left[name]
    return plan


def _without_broken_extras(project: Project, sources: SourceSet, own: set[str],
                           manager: SolcManager) -> SourceSet:
    """``sources`` without the tests and scripts whose imports are not installed.

    A clone without its libraries (no ``forge install``, no ``npm install``) should still
    give the project's own contracts; a note names what was left out and why.
    """
    broken = {name: missing[0] for name in sources.roots if name not in own
              for missing in [sources.missing([name])] if missing}
    kept = [name for name in sources.roots if name not in broken]
    if not broken or not kept:
        return sources
    first, absent = next(iter(broken.items()))
    others = f" and {len(broken) - 1} more" if len(broken) > 1 else ""
    manager.notes.append(
        f"skipped {first}{others}: imported {absent} is not installed (install the "
        f"{project.kind} project's libraries to compile them)")
    return sources.subset(kept)


def pack_roots(closures: Mapping[str, Collection[str]], sizes: Mapping[str, int],
               budget: int = JOB_BUDGET) -> list[list[str]]:
    """Split roots into compile jobs whose sources stay within ``budget`` bytes.

    ``closures`` gives each root the units solc must be given to compile it (itself and its
    imports), ``sizes`` each unit's bytes. When all fit together they make one job, in
    their order. Otherwise first fit, largest closure first (then by name): a root joins
    the first job its closure adds nothing to or keeps within the budget, else starts one,
    so files importing the same libraries end up together and each library is counted once
    a job. A root larger than the budget gets a job of its own, which only roots it wholly
    contains join. Each job lists its roots in the order of ``closures``.
    """
    def weight(units: Iterable[str]) -> int:
        return sum(sizes.get(unit, 0) for unit in units)

    if not closures:
        return []
    if weight(set().union(*closures.values())) <= budget:
        return [list(closures)]
    members: list[list[str]] = []
    held: list[set[str]] = []
    totals: list[int] = []
    for root in sorted(closures, key=lambda name: (-weight(set(closures[name])), name)):
        needed = set(closures[root])
        for index, units in enumerate(held):
            extra = weight(needed - units)
            if needed <= units or totals[index] + extra <= budget:
                members[index].append(root)
                units |= needed
                totals[index] += extra
                break
        else:
            members.append([root])
            held.append(needed)
            totals.append(weight(needed))
    order = {name: index for index, name in enumerate(closures)}
    return [sorted(roots, key=order.__getitem__) for roots in members]


@dataclass(frozen=True)
class _Job:
    """One compiler run of a project: its root files, the options, the size of its input."""

    roots: list[str]
    options: CompileOptions
    files: int
    size: int
    largest: str | None = None
    """The root with the most imports when the job is over the budget, else None."""


def _jobs(sources: SourceSet, names: list[str], options: CompileOptions,
          manager: SolcManager, budget: int | None) -> list[_Job]:
    """The compile jobs of one version group (one job when its sources fit the budget).

    ``budget`` None: the compiler's own (:data:`JOB_BUDGET`, or :data:`HEAP_JOB_BUDGET`).
    """
    whole = sources.closure(names)
    if sources.size(whole) <= (JOB_BUDGET if budget is None else budget):
        return [_Job(names, options, len(whole), sources.size(whole))]
    pragma, where = sources.pragma(whole)
    kind, version = manager.select(pragma, options.solc_version, where)
    if kind == "native":  # the limit is solc-js's own
        return [_Job(names, options, len(whole), sources.size(whole))]
    if budget is None:
        budget = HEAP_JOB_BUDGET if version >= _HEAP_FROM else JOB_BUDGET
        if sources.size(whole) <= budget:
            return [_Job(names, options, len(whole), sources.size(whole))]
    # Every job of the group gets the compiler the whole group would have had: a job's
    # own pragmas may allow a newer one.
    pinned = replace(options, solc_version=format_version(version))
    closures = {name: sources.closure([name]) for name in names}
    jobs = []
    for roots in pack_roots(closures, {n: u.size for n, u in sources.units.items()}, budget):
        units = sources.closure(roots)
        size = sources.size(units)
        largest = max(roots, key=lambda r: (sources.size(closures[r]), r)) \
            if size > budget else None
        jobs.append(_Job(roots, pinned, len(units), size, largest))
    return jobs


def _too_large(job: _Job, error: CompilationFailed | CompilerUnavailable) -> CompilationFailed:
    """The error of a job over the budget that solc-js could not compile."""
    megabytes = job.size / 1e6
    return CompilationFailed(
        f"{job.largest} and its imports total {megabytes:.1f} MB, more than solc-js can "
        f"compile in one job ({error.message})",
        f"put a native solc {job.options.solc_version} on PATH (or name it in SECANT_SOLC): "
        "it has no such limit")


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _run_jobs(jobs: list[_Job], sources: SourceSet, manager: SolcManager, own: set[str],
              origin: str, what: str, progress: Callable[[str], None]) -> list[Compilation]:
    """The compilations of ``jobs``, those compiling the project's own files first."""
    jobs = sorted(jobs, key=lambda job: not own.intersection(job.roots))
    done: dict[int, Compilation] = {}
    # Jobs over the budget run first: when solc-js cannot take one, it says so at once.
    ordered = sorted(enumerate(jobs), key=lambda item: item[1].largest is None)
    for number, (place, job) in enumerate(ordered, 1):
        head = f"compiling {number}/{len(jobs)}: {job.files} files, {job.size / 1e6:.1f} MB"
        announce = None if len(jobs) == 1 else \
            lambda label, head=head: progress(f"{head} ({label})")
        try:
            done[place] = compile_sources(sources.subset(job.roots), manager, job.options,
                                          [n for n in job.roots if n in own] or job.roots,
                                          origin, what, announce)
        except NoDeployableContract:
            continue  # files of free functions, structs or constants only
        except (CompilationFailed, CompilerUnavailable) as error:
            # solc-js fails internally (no diagnostics) on inputs too large for it.
            if job.largest is None or isinstance(error, CompilationFailed) and error.errors:
                raise
            raise _too_large(job, error) from None
    return [done[place] for place in sorted(done)]


def compile_project(project: Project, options: CompileOptions, manager: SolcManager,
                    files: Sequence[Path] | None = None, budget: int | None = None,
                    progress: Callable[[str], None] = _to_stderr) -> list[Compilation]:
    """Compile every source file of ``project`` from source (one compilation per job).

    ``options`` are the command line's choices; the project's settings fill in the rest.
    Each version group is one job, or, when its sources exceed ``budget`` bytes (default:
    the compiler's, :data:`JOB_BUDGET` or :data:`HEAP_JOB_BUDGET`) and solc-js compiles
    them, several (:func:`pack_roots`); jobs
    holding the project's own contracts come first. A file that several jobs import is
    compiled in each, so its contracts appear in each of their compilations, with the same
    code; callers look contracts up compilation by compilation and take the first, so a
    name defined in two files resolves within the first job that compiles either.
    With more than one job, ``progress`` (default: stderr) gets a line before each.
    """
    checked = check_options(options)
    effective = checked.with_settings(project.settings)
    chosen = list(project.files() if files is None else files)
    root = project.root
    if not chosen:
        folders = ", ".join(f"{d}/" for d in project.source_dirs or project.main_dirs)
        raise InputError(f"the {project.label} {root} has no .sol file in {folders}",
                         f"add contracts there or set the source folder in "
                         f"{project.config_file}")
    remappings = merge_remappings(checked.parsed_remappings(), project.remappings)
    sources = collect_sources(chosen, checked.base_path or root, remappings,
                              checked.include_paths)
    own = {name for name in sources.roots if project.is_main(name)}
    sources = _without_broken_extras(project, sources, own, manager)
    offered = {parse_version(v) for v in project.solc_versions}
    plan: list[tuple[Version | None, list[str]]]
    if effective.solc_version is not None:
        plan = [(None, list(sources.roots))]
    else:
        ranges = {name: sources.pragma(sources.closure([name]))[0] for name in sources.roots}
        plan = plan_groups(ranges, offered or manager.candidates())
        if not offered:  # the manager picks the version (a native solc first)
            plan = [(None, names) for _, names in plan]
        elif plan[-1][0] is None:
            raise PragmaUnsatisfiable(
                f"no compiler of {project.config_file} ({', '.join(project.solc_versions)}) "
                f"satisfies the pragmas of {', '.join(plan[-1][1])}",
                f"add a matching version to solidity.compilers in {project.config_file}")
    what = f"the {project.label} {root}"
    try:
        jobs = [job for version, names in plan
                for job in _jobs(sources, names, effective if version is None else
                                 replace(effective, solc_version=format_version(version)),
                                 manager, budget)]
        results = _run_jobs(jobs, sources, manager, own, project.kind, what, progress)
    except PragmaUnsatisfiable as error:
        if checked.solc_version is None and project.settings.solc_version is not None:
            raise PragmaUnsatisfiable(
                f"{error.message} (the version {project.settings.solc_version} set in "
                f"{project.config_file})",
                f"change the solc version in {project.config_file} or pass "
                "--solc-version") from None
        raise
    if not results:
        raise NoDeployableContract(f"{what} defines no contract",
                                   "add a contract to its source folders")
    return results
