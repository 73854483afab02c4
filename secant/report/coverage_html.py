"""The HTML coverage report: an index and one page per source file, self-contained.

Every page carries its own CSS and no script, link or font from elsewhere: the folder
can be opened from disk, archived by CI or mailed. The index lists the files (lines and
branch sides covered), the coverage-over-time plot (its SVG inlined) and the ranked
frontier (``secant.report.frontier``). A source page shows every line: green when it ran,
red when it has code that never ran, yellow when a JUMPI on it has a just-missed side
of the frontier (the compiler's own checks keep their ✗ without the colour).
Each JUMPI on a line shows its two sides (fall-through, jump) as ✓ (taken, with the
number of runs on hover), ✗ (just-missed) or · (never reached); hovering or focusing a ✗
shows what the side needs, the remaining distance, how often the site was tried, what
blocked it and the closest input as the JSON sequence the corpus files use.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from secant.files import write_atomic
from secant.report.coverage import Branch, SourceCoverage
from secant.report.frontier import BranchSide, FrontierEntry

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
table { border-collapse: collapse; }
th, td { padding: 2px 8px; text-align: left; vertical-align: top; }
table.list th { border-bottom: 1px solid #999; } table.list td { border-bottom: 1px solid #eee; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.wrap { max-width: 48ch; overflow-wrap: anywhere; }
table.src { font-family: ui-monospace, monospace; font-size: 13px; width: 100%; }
table.src td { padding: 0 6px; white-space: pre; }
table.src td.n { color: #888; text-align: right; user-select: none; }
table.src td.br { white-space: nowrap; }
tr.hit td.code { background: #dff0d8; } tr.miss td.code { background: #f8d7da; }
tr.jm td.code { background: #fff3cd; }
.side { cursor: default; padding: 0 1px; } .side.ok { color: #2e7d32; }
.side.un { color: #999; }
.side.jm { color: #b26a00; font-weight: bold; cursor: help; position: relative; }
.tip { display: none; position: absolute; left: 1.2em; top: 1.1em; z-index: 10;
       background: #fffbe6; border: 1px solid #c9a227; padding: 6px 8px; color: #222;
       font-weight: normal; white-space: pre-wrap; overflow-wrap: anywhere;
       font-size: 12px; min-width: 40ch;
       max-width: 100ch; max-height: 40em; overflow: auto; box-shadow: 2px 2px 6px #0003; }
.side.jm:hover .tip, .side.jm:focus .tip { display: block; }
.legend span { padding: 1px 6px; margin-right: 6px; }
.plot svg { max-width: 100%; height: auto; }
"""


def page_name(report: SourceCoverage) -> str:
    """The file name of a source's page: its unit name with unsafe characters replaced."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", report.name).strip("_") + ".html"


def write_html(folder: Path, reports: Sequence[SourceCoverage],
               entries: Sequence[FrontierEntry], title: str = "secant coverage",
               facts: Sequence[tuple[str, str]] = (), svg: str | None = None) -> Path:
    """Write ``folder/index.html`` and one page per source; return the index's path.

    ``facts`` are (label, value) rows for the index's head (executions, seconds, ...);
    ``svg`` is the coverage-over-time plot to inline.
    """
    folder.mkdir(parents=True, exist_ok=True)
    by_side = {entry.key: entry for entry in entries}
    names = {report.name: page_name(report) for report in reports}
    for stale in folder.glob("*.html"):  # pages of sources an earlier run had
        if stale.name != "index.html" and stale.name not in names.values():
            stale.unlink()
    for report in reports:
        write_atomic(folder / names[report.name], _source_page(report, by_side, title))
    index = folder / "index.html"
    write_atomic(index, _index(reports, entries, names, title, facts, svg))
    return index


def _page(title: str, body: str) -> str:
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>\n"
            f"<body>\n{body}\n</body></html>\n")


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _index(reports: Sequence[SourceCoverage], entries: Sequence[FrontierEntry],
           names: Mapping[str, str], title: str, facts: Sequence[tuple[str, str]],
           svg: str | None) -> str:
    esc = html.escape
    parts = [f"<h1>{esc(title)}</h1>"]
    if facts:
        parts.append("<table>" + "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>"
                                         for k, v in facts) + "</table>")
    parts.append("<h2>Files</h2><table class=\"list\"><tr><th>file</th><th>lines</th>"
                 "<th></th><th>branch sides</th><th></th><th>just-missed sides</th></tr>")
    for report in reports:
        taken, sides = report.branch_sides()
        missed = sum(len(b.just_missed()) for b in report.branches)
        parts.append(
            f"<tr><td><a href=\"{esc(names[report.name])}\">{esc(report.name)}</a></td>"
            f"<td class=\"num\">{report.lines_hit}/{len(report.lines)}</td>"
            f"<td class=\"num\">{_percent(report.lines_hit, len(report.lines))}</td>"
            f"<td class=\"num\">{taken}/{sides}</td>"
            f"<td class=\"num\">{_percent(taken, sides)}</td>"
            f"<td class=\"num\">{missed}</td></tr>")
    parts.append("</table>")
    if svg:
        parts.append(f"<h2>Coverage over time</h2><div class=\"plot\">{_strip_prolog(svg)}"
                     "</div>")
    ranked = [entry for entry in entries if entry.skipped is None]
    parts.append(f"<h2>Frontier ({len(ranked)} just-missed branch sides)</h2>")
    if ranked:
        parts.append("<p>Ranked by the code each side would open (instructions reachable "
                     "only past it); the reasons are secant's heuristics "
                     "(docs/reports.md).</p>")
        parts.append("<table class=\"list\"><tr><th>#</th><th>where</th><th>condition</th>"
                     "<th>needs</th><th>distance</th><th>tried</th><th>opens</th>"
                     "<th>blocked by</th></tr>")
        for rank, entry in enumerate(ranked, 1):
            page = names.get(entry.file)
            where = f"{entry.file}:{entry.line}" + (f" ({entry.function})"
                                                    if entry.function else "")
            link = (f"<a href=\"{esc(page)}#L{entry.line}\">{esc(where)}</a>" if page
                    else esc(where))
            reasons = "<br>".join(f"<b>{esc(r)}</b>: {esc(d)}" for r, d in entry.reasons)
            parts.append(
                f"<tr><td class=\"num\">{rank}</td><td>{link}</td>"
                f"<td class=\"wrap\"><code>{esc(entry.snippet)}</code></td>"
                f"<td class=\"wrap\">{esc(entry.needs(True))}</td>"
                f"<td class=\"num\">{esc(_distance(entry))}</td>"
                f"<td class=\"num\">{entry.tried}</td>"
                f"<td class=\"num\">{entry.opens[0]}</td>"
                f"<td class=\"wrap\">{reasons or '-'}</td></tr>")
        parts.append("</table>")
    return _page(title, "\n".join(parts))


def _strip_prolog(svg: str) -> str:
    """The ``<svg>`` element of an SVG file (no XML declaration or doctype)."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else ""


def _distance(entry: FrontierEntry) -> str:
    distance = entry.distance
    return "-" if distance is None else str(distance) if distance < 10**9 else f"{distance:.3e}"


def _source_page(report: SourceCoverage, by_side: Mapping[BranchSide, FrontierEntry],
                 title: str) -> str:
    esc = html.escape
    text = report.source.text() or ""
    branches: dict[int, list[Branch]] = {}
    for branch in report.branches:
        branches.setdefault(branch.line, []).append(branch)
    # Yellow for frontier sides; the compiler's checks keep their ✗ but not the colour.
    just_missed = {b.line for b in report.branches for side in b.just_missed()
                   if (entry := by_side.get((b.code_hash, b.pc, side))) is None
                   or entry.skipped is None}
    taken, sides = report.branch_sides()
    rows = []
    for number, line in enumerate(text.split("\n"), 1):
        state = ("jm" if number in just_missed else "hit" if report.lines.get(number)
                 else "miss" if number in report.lines else "")
        marks = " ".join(_branch_marks(branch, by_side) for branch in branches.get(number, ()))
        rows.append(f"<tr class=\"{state}\" id=\"L{number}\"><td class=\"n\">{number}</td>"
                    f"<td class=\"br\">{marks}</td><td class=\"code\">{esc(line)}</td></tr>")
    head = (f"<h1>{esc(report.name)}</h1><p><a href=\"index.html\">{esc(title)}</a> · lines "
            f"{report.lines_hit}/{len(report.lines)} · branch sides {taken}/{sides}</p>"
            "<p class=\"legend\"><span style=\"background:#dff0d8\">executed</span>"
            "<span style=\"background:#f8d7da\">not executed</span>"
            "<span style=\"background:#fff3cd\">just-missed branch (hover ✗)</span>"
            "✓ side taken · ✗ just-missed side · · never reached</p>")
    table = "<table class=\"src\">" + "\n".join(rows) + "</table>"
    return _page(f"{report.name} - {title}", head + table)


def _branch_marks(branch: Branch, by_side: Mapping[BranchSide, FrontierEntry]) -> str:
    """The two sides of one JUMPI: ✓ taken, ✗ just-missed (with its tip), · unreached."""
    marks = []
    for side, runs in zip((False, True), branch.taken):
        label = "jump" if side else "fall-through"
        if not branch.reached:
            marks.append(f"<span class=\"side un\" title=\"{label}: never reached\">·</span>")
        elif runs:
            marks.append(f"<span class=\"side ok\" title=\"{label}: taken by {runs} "
                         f"run{'s' if runs != 1 else ''}\">✓</span>")
        else:
            entry = by_side.get((branch.code_hash, branch.pc, side))
            tip = html.escape(_tip(branch, side, entry))
            marks.append(f"<span class=\"side jm\" tabindex=\"0\">✗<span class=\"tip\">{tip}"
                         "</span></span>")
    return "".join(marks)


def _tip(branch: Branch, side: bool, entry: FrontierEntry | None) -> str:
    """The text shown on hovering a just-missed side."""
    label = "jump" if side else "fall-through"
    lines = [f"{branch.contract} pc {branch.pc}, {label} side never taken"]
    if entry is None:
        return "\n".join(lines)
    lines.append(f"condition: {entry.snippet}")
    lines.append(entry.needs())
    lines.append(f"distance: {_distance(entry)}   tried: {entry.tried} runs   "
                 f"opens: {entry.opens[0]} instructions")
    if entry.skipped:
        lines.append(entry.skipped)
    lines.extend(f"blocked by: {reason}: {detail}" for reason, detail in entry.reasons)
    if entry.closest is not None:
        closest: Any = entry.sequence
        lines.append(f"closest input (found after {entry.closest.found_at} executions):")
        lines.append(json.dumps(closest, indent=1))
    return "\n".join(lines)
