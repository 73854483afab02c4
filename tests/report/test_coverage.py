"""Coverage reports: LCOV records, the HTML pages, the coverage-over-time plot."""

from __future__ import annotations

import html
import json
import re

from secant.compile.srcmap import SourceFile
from secant.report.coverage import Branch, Function, SourceCoverage, is_user_source, lcov
from secant.report.plot import FIELDS
from tests.compile.conftest import needs_node
from tests.report.conftest import FRONTIER, Finished, line_with


def records(text: str) -> list[dict[str, list[str]]]:
    """LCOV text as one dict per SF record: field -> its values in order."""
    found: list[dict[str, list[str]]] = []
    current: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line == "end_of_record":
            found.append(current)
            current = {}
            continue
        key, _, value = line.partition(":")
        current.setdefault(key, []).append(value)
    assert not current, "a record without end_of_record"
    return found


def test_lcov_writes_unreached_branches_as_dashes_and_counts_the_rest() -> None:
    source = SourceFile(0, "src/A.sol", content="contract A {\n  f\n  g\n}\n")
    report = SourceCoverage(source, lines={2: True, 3: False},
                            branches=[Branch(2, "A", b"h", 10, (4, 0)),
                                      Branch(2, "A", b"h", 20, (0, 0))],
                            functions={(2, "A.f"): Function("A.f", 2, True),
                                       (3, "A.f"): Function("A.f", 3, False)})
    [record] = records(lcov([report]))
    assert record["SF"] == ["src/A.sol"]
    assert record["DA"] == ["2,1", "3,0"] and record["LF"] == ["2"] and record["LH"] == ["1"]
    # Overloads keep distinct names; a JUMPI never reached is "-" on both sides.
    assert record["FN"] == ["2,A.f", "3,A.f@3"] and record["FNDA"] == ["1,A.f", "0,A.f@3"]
    assert record["BRDA"] == ["2,0,0,4", "2,0,1,0", "2,1,0,-", "2,1,1,-"]
    assert record["BRF"] == ["4"] and record["BRH"] == ["1"]


def test_library_and_generated_sources_are_not_reported() -> None:
    assert is_user_source(SourceFile(0, "src/Vault.sol", content="x"))
    assert not is_user_source(SourceFile(1, "lib/forge-std/src/Test.sol", content="x"))
    assert not is_user_source(SourceFile(2, "@oz/token/ERC20.sol", content="x",
                                         path=FRONTIER.parent / "node_modules" / "ERC20.sol"))
    assert not is_user_source(None)  # a generated Yul source has no SourceFile
    assert not is_user_source(SourceFile(3, "#utility.yul"))  # nor any text


@needs_node
def test_lcov_of_the_fixture_marks_covered_missed_and_unreached_code(
        frontier_run: Finished) -> None:
    [record] = records((frontier_run.out / "coverage.lcov").read_text())
    assert record["SF"] == [str(FRONTIER)]
    hits = dict(tuple(map(int, value.split(","))) for value in record["DA"])
    magic = line_with("0xdeadbeef")
    # Both sides of x > 100 ran; nothing behind the magic constant or the owner check did.
    assert hits[line_with("total += 1")] == hits[line_with("total += 2")] == 1
    assert hits[magic] == 1
    assert all(hits[line] == 0 for line in range(magic + 1, line_with("assert(") + 1))
    assert hits[line_with("unlocked = code")] == 0
    assert record["LF"] == [str(len(hits))]
    assert record["LH"] == [str(sum(hits.values()))]
    sides: dict[int, list[str]] = {}
    for value in record["BRDA"]:
        line, _, _, taken = value.split(",")
        sides.setdefault(int(line), []).append(taken)
    assert all(int(t) > 0 for t in sides[line_with("x > 100")])
    # Just-missed: the JUMPI ran, one side never; unreached: "-" on both sides.
    for line in (magic, line_with("require(msg.sender == owner")):
        assert sorted(int(t) > 0 for t in sides[line]) == [False, True]
    assert sides[line_with("assert(")] == ["-", "-"]
    assert record["BRF"] == [str(len(record["BRDA"]))]
    assert record["BRH"] == [str(sum(1 for t in sum(sides.values(), []) if t not in "-0"))]
    # The runs counted at the magic JUMPI are runs of the campaign.
    assert max(int(t) for t in sides[magic]) <= frontier_run.summary["execs"]


@needs_node
def test_html_shows_the_just_missed_branch_with_its_closest_input(
        frontier_run: Finished) -> None:
    folder = frontier_run.out / "coverage"
    index = (folder / "index.html").read_text()
    page = (folder / "tests_fixtures_report_Frontier.sol.html").read_text()
    for text in (index, page):  # self-contained: nothing loaded from elsewhere
        assert not re.search(r"<script|<link|<img|src=|@import|url\((?!#)", text)
        # Links go to the report's own pages or within the page (the inlined SVG's ids).
        assert all(re.fullmatch(r"#.*|[\w.-]+\.html(#L\d+)?", target)
                   for target in re.findall(r'href="([^"]*)"', text))
    assert 'href="tests_fixtures_report_Frontier.sol.html"' in index
    assert "<svg" in index and "Frontier (" in index
    magic = line_with("0xdeadbeef")
    row = re.search(rf'<tr class="(\w*)" id="L{magic}">(.*?)</tr>', page, re.S)
    assert row is not None and row.group(1) == "jm"
    assert re.search(rf'<tr class="miss" id="L{line_with("jackpots += 1")}">', page)
    assert re.search(rf'<tr class="hit" id="L{line_with("total += 2")}">', page)
    [entry] = [e for e in json.loads((frontier_run.out / "frontier.json").read_text())
               if e["line"] == magic]
    tip = html.unescape(re.search(r'<span class="tip">(.*?)</span>', row.group(2),
                                  re.S).group(1))
    # The hover shows the closest input as the corpus's JSON sequence, and the distance.
    assert json.dumps(entry["closest"]["sequence"], indent=1) in tip
    assert f"distance: {entry['distance']:.3e}" in tip and "constant never produced" in tip


@needs_node
def test_plot_files_are_written_from_samples_of_the_whole_campaign(
        frontier_run: Finished) -> None:
    png = (frontier_run.out / "coverage.png").read_bytes()
    svg = (frontier_run.out / "coverage.svg").read_text()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10_000
    assert "<svg" in svg and "executions" in svg and "seconds" in svg
    samples = [dict(zip(FIELDS, s)) for s in frontier_run.campaign.timeline.samples]
    for before, after in zip(samples, samples[1:]):
        assert all(after[k] >= before[k] for k in FIELDS)  # counts only grow
    summary = frontier_run.summary
    last = samples[-1]
    assert (last["execs"], last["paths"], last["branches"], last["instructions"]) == (
        summary["execs"], summary["paths"], summary["branches_covered"],
        summary["instructions_covered"])
    assert 0 < samples[0]["instructions"] < last["instructions"]
    assert len(samples) <= summary["corpus"] + len(summary["findings"]) + 1
    # timeline.csv: the same samples, a header first, seconds to the millisecond.
    header, *rows = (frontier_run.out / "timeline.csv").read_text().splitlines()
    assert header.split(",") == list(FIELDS)
    assert [[float(v) for v in row.split(",")] for row in rows] == [
        [e, round(s, 3), p, b, i, f] for e, s, p, b, i, f in
        frontier_run.campaign.timeline.samples]
