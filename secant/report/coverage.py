"""Source coverage: covered instructions and branch sides mapped to lines of source files.

A campaign covers basic blocks and branch edges of runtime codes. Through each code's
source map, an instruction belongs to the line where its source range *starts* (a JUMPI of
an ``if`` maps to the whole statement, which starts on the ``if`` line). A line is
*executed* when one of its instructions ran, *not executed* when it has instructions and
none ran. A JUMPI has two sides, the fall-through (branch 0 in LCOV) and the jump
(branch 1); a side is *just-missed* when its JUMPI ran but the side was never taken
(sFuzz's word).

Which sources count: only the files of the compilation with text. Code that solc
generates (the Yul helpers of ABI decoding and checked arithmetic, ids outside the
compilation's sources) has no line to show, and library sources (a unit name under
``lib/`` or anything under ``node_modules``) are left out too: the reports are about the
code under test. The same rule is applied by the LCOV file, the HTML report and the
frontier (``secant.report.frontier``).
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from secant.compile.srcmap import PcMapper, SourceFile
from secant.engine.events import FuzzListener
from secant.evm.analysis import CodeAnalysis
from secant.evm.opcodes import JUMPI
from secant.types import RunResult

LIBRARY_ROOTS = ("lib", "node_modules")
"""First components of unit names that mark a library source (Foundry's lib/, npm's)."""


def is_library_source(source: SourceFile) -> bool:
    """Whether ``source`` is a library's (left out of every report, see the module doc)."""
    name = PurePosixPath(source.name.replace("\\", "/"))
    if name.parts and name.parts[0] in LIBRARY_ROOTS:
        return True
    parts = set(name.parts) | (set(source.path.parts) if source.path is not None else set())
    return "node_modules" in parts


def is_user_source(source: SourceFile | None) -> bool:
    """Whether a source file is reported: it has text and is not a library's."""
    return source is not None and source.text() is not None and not is_library_source(source)


class EdgeCounter(FuzzListener):
    """Counts, per branch edge ``(code hash, pc, side)``, the runs that took it.

    A run's ``edges`` is a set, so a run counts once however often it took the edge: for
    a just-missed side, the count of its other side is how often the site was tried. One
    C-level ``Counter.update`` per run (not per branch); probes are not runs (``on_run``).
    """

    def __init__(self) -> None:
        self.counts: Counter[tuple[bytes, int, bool]] = Counter()

    def on_run(self, result: RunResult) -> None:
        """Count the edges of a run."""
        self.counts.update(result.edges)


@dataclass(frozen=True)
class CodeCoverage:
    """What a campaign covered of one runtime code, with the map from its pcs to sources.

    ``blocks`` are covered block starts, ``edges`` covered ``(JUMPI pc, side)`` with side
    True for the jump; ``hits`` counts the executions that took each side (a covered side
    missing from it counts once).
    """

    contract: str
    code_hash: bytes
    analysis: CodeAnalysis
    mapper: PcMapper | None
    blocks: frozenset[int]
    edges: frozenset[tuple[int, bool]]
    hits: Mapping[tuple[int, bool], int] = field(default_factory=dict)

    def covered_pcs(self) -> set[int]:
        """The pcs of every instruction in a covered block."""
        block_pcs = self.analysis.block_pcs()
        return {pc for start in self.blocks for pc in block_pcs.get(start, ())}

    def taken(self, pc: int, side: bool) -> int:
        """Executions that took one side of the JUMPI at ``pc`` (0: never)."""
        if (pc, side) not in self.edges:
            return 0
        return max(1, self.hits.get((pc, side), 0))


@dataclass(frozen=True)
class Branch:
    """One JUMPI of one code at a source line, with the executions that took each side.

    ``taken`` is (fall-through, jump); ``reached`` says whether the JUMPI ran at all.
    """

    line: int
    contract: str
    code_hash: bytes
    pc: int
    taken: tuple[int, int]

    @property
    def reached(self) -> bool:
        """Whether some run executed the JUMPI."""
        return any(self.taken)

    def just_missed(self) -> list[bool]:
        """The sides (True: the jump) never taken although the JUMPI ran."""
        if not self.reached:
            return []
        return [side for side in (False, True) if not self.taken[int(side)]]


@dataclass
class Function:
    """A function or modifier with code: its first line and whether any of it ran."""

    name: str
    line: int
    hit: bool = False


@dataclass
class SourceCoverage:
    """Line, branch and function coverage of one source file over every code using it."""

    source: SourceFile
    lines: dict[int, bool] = field(default_factory=dict)
    branches: list[Branch] = field(default_factory=list)
    functions: dict[tuple[int, str], Function] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The source's unit name."""
        return self.source.name

    @property
    def file(self) -> str:
        """The file as LCOV names it: its path when known, else its unit name."""
        return str(self.source.path) if self.source.path is not None else self.source.name

    @property
    def lines_hit(self) -> int:
        """Lines with code that ran."""
        return sum(1 for hit in self.lines.values() if hit)

    def branch_sides(self) -> tuple[int, int]:
        """(branch sides taken, branch sides) of the file."""
        sides = [t for branch in self.branches for t in branch.taken]
        return sum(1 for t in sides if t), len(sides)


def source_coverage(codes: Iterable[CodeCoverage]) -> list[SourceCoverage]:
    """Per user source file (see the module doc), the coverage of every code mapped to it.

    Files are told apart by path (unit name without one), so codes of two compilations
    of the same file add up in one report.
    """
    files: dict[str, SourceCoverage] = {}
    for code in codes:
        if code.mapper is None:
            continue
        covered = code.covered_pcs()
        sources = code.mapper.sources
        reports: dict[int, SourceCoverage | None] = {}  # source id -> its report or None
        owners: dict[tuple[int, int, int], tuple[int, str] | None] = {}
        for pc, op, _ in code.analysis.instructions:
            entry = code.mapper.entry(pc)
            if entry is None or entry.file < 0:
                continue
            if entry.file not in reports:
                source = sources.get(entry.file)
                reports[entry.file] = (None if source is None or not is_user_source(source)
                                       else files.setdefault(_file_key(source),
                                                             SourceCoverage(source)))
            report = reports[entry.file]
            if report is None:
                continue
            source = report.source
            line = line_of(source, entry.offset)
            hit = pc in covered
            report.lines[line] = report.lines.get(line, False) or hit
            span = (entry.file, entry.offset, entry.length)
            if span not in owners:
                function = source.enclosing_function(entry.offset, entry.offset + entry.length)
                owner = (f"{function.contract}." if function is not None and function.contract
                         else "")
                owners[span] = (None if function is None else
                                (line_of(source, function.start), f"{owner}{function.name}"))
            key = owners[span]
            if key is not None:
                found = report.functions.setdefault(key, Function(key[1], key[0]))
                found.hit = found.hit or hit
            if op == JUMPI:
                report.branches.append(Branch(line, code.contract, code.code_hash, pc,
                                              (code.taken(pc, False), code.taken(pc, True))))
    for report in files.values():
        report.branches.sort(key=lambda b: (b.line, b.contract, b.pc))
    return sorted(files.values(), key=lambda report: report.name)


def _file_key(source: SourceFile) -> str:
    return str(source.path.resolve()) if source.path is not None else source.name


def line_of(source: SourceFile, offset: int) -> int:
    """The 1-based line of a byte offset of ``source``."""
    return max(1, bisect.bisect_right(source.line_starts(), offset))


def lcov(reports: Iterable[SourceCoverage], test_name: str = "secant") -> str:
    """The LCOV tracefile of ``reports``: FN/FNDA, DA (1 or 0), BRDA per JUMPI side.

    ``BRDA:line,block,branch,taken``: ``block`` numbers the JUMPIs of a line (by contract
    and pc), ``branch`` is 0 for the fall-through and 1 for the jump, ``taken`` counts the
    executions that took the side, ``-`` when the JUMPI never ran.
    """
    out: list[str] = []
    for report in reports:
        out.append(f"TN:{test_name}")
        out.append(f"SF:{report.file}")
        names: dict[str, int] = {}
        functions = []
        for (line, name), function in sorted(report.functions.items()):
            # LCOV keys functions by name: overloads get their line as a suffix.
            names[name] = names.get(name, 0) + 1
            unique = name if names[name] == 1 else f"{name}@{line}"
            functions.append((line, unique, function.hit))
        for line, name, _ in functions:
            out.append(f"FN:{line},{name}")
        for _, name, hit in functions:
            out.append(f"FNDA:{int(hit)},{name}")
        out.append(f"FNF:{len(functions)}")
        out.append(f"FNH:{sum(1 for _, _, hit in functions if hit)}")
        for line, hit in sorted(report.lines.items()):
            out.append(f"DA:{line},{int(hit)}")
        out.append(f"LF:{len(report.lines)}")
        out.append(f"LH:{report.lines_hit}")
        block_of_line: dict[int, int] = {}
        for branch in report.branches:
            block = block_of_line.get(branch.line, 0)
            block_of_line[branch.line] = block + 1
            for side, taken in enumerate(branch.taken):
                out.append(f"BRDA:{branch.line},{block},{side},"
                           f"{taken if branch.reached else '-'}")
        taken, total = report.branch_sides()
        out.append(f"BRF:{total}")
        out.append(f"BRH:{taken}")
        out.append("end_of_record")
    return "\n".join(out) + ("\n" if out else "")
