"""Coverage over time: samples taken on a campaign's events, and their plot.

A campaign samples (executions, seconds, paths, branch sides, instructions, findings) when
something it counts can change: a new corpus entry (a new path, usually new branch sides), a new
finding, and once at the end. That is a handful of samples per new seed, none per
execution, and the curves are exact step functions between samples (the counts only move
at those events; branch sides covered in an earlier transaction of a case without a new
path show at the next sample).

The plot has two panels, against executions and against seconds, with paths and branch
sides on the left axis and findings on the right one. It is drawn with matplotlib's Agg
canvas (no display, no global pyplot state) as PNG and SVG; the SVG carries no date and
fixed element ids, so the same campaign draws the same file. The samples are also written as
``timeline.csv`` (:meth:`Timeline.to_csv`): coverage at any moment of the campaign, so a
campaign of five minutes also tells what one of one minute would have covered.
"""

from __future__ import annotations

from collections.abc import Collection, Container, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from secant.engine.fuzzer import Fuzzer

FIELDS = ("execs", "seconds", "paths", "branches", "instructions", "findings")
"""What one sample holds, in order."""

Sample = tuple[int, float, int, int, int, int]
"""One sample: the values of ``FIELDS``."""


@dataclass
class Timeline:
    """Samples of a campaign's progress, in the order they were taken."""

    samples: list[Sample] = field(default_factory=list)
    _edges_seen: int = field(default=-1, repr=False)
    _branches: int = field(default=0, repr=False)
    _blocks_seen: int = field(default=-1, repr=False)
    _instructions: int = field(default=0, repr=False)

    def add(self, execs: int, seconds: float, paths: int, branches: int,
            instructions: int, findings: int) -> None:
        """Take a sample (one equal to the last but for the time is not kept twice)."""
        sample = (execs, seconds, paths, branches, instructions, findings)
        if self.samples and self.samples[-1][0] == execs and self.samples[-1][2:] == sample[2:]:
            return
        self.samples.append(sample)

    def sample(self, fuzzers: Sequence[Fuzzer], codes: Container[bytes], findings: int,
               block_sizes: Mapping[tuple[bytes, int], int] | None = None) -> None:
        """Sample a campaign's fuzzers and its count of findings.

        Branch sides are those of ``codes`` (the campaign's target codes), as its summary
        counts them; instructions are those of the covered blocks ``block_sizes`` knows
        (each target block's start and its number of instructions: the summary's count),
        0 without it.
        """
        blocks: Collection[tuple[bytes, int]]
        if len(fuzzers) == 1:
            paths = len(fuzzers[0].coverage.paths)
            edges = fuzzers[0].coverage.edges
            blocks = fuzzers[0].coverage.blocks
        else:
            paths = len(set().union(*(f.coverage.paths for f in fuzzers)))
            edges = set().union(*(f.coverage.edges for f in fuzzers))
            blocks = set().union(*(f.coverage.blocks for f in fuzzers))
        # Most new seeds bring no new edge or block (a new hit-count bucket): count only
        # when a set grew, so a long campaign does not rescan its coverage at every seed.
        if len(edges) != self._edges_seen:
            self._edges_seen = len(edges)
            self._branches = sum(1 for code_hash, _, _ in edges if code_hash in codes)
        if block_sizes is not None and len(blocks) != self._blocks_seen:
            self._blocks_seen = len(blocks)
            self._instructions = sum(block_sizes.get(block, 0) for block in blocks)
        self.add(sum(f.stats.execs for f in fuzzers), fuzzers[0].stats.elapsed, paths,
                 self._branches, self._instructions, findings)

    def to_json(self) -> list[dict[str, Any]]:
        """The samples as dicts (``FIELDS``)."""
        return [dict(zip(FIELDS, (e, round(s, 3), p, b, i, f)))
                for e, s, p, b, i, f in self.samples]

    def to_csv(self) -> str:
        """The samples as CSV with a header line (``FIELDS``), seconds to the millisecond."""
        rows = [",".join(FIELDS)]
        rows += [f"{e},{s:.3f},{p},{b},{i},{f}" for e, s, p, b, i, f in self.samples]
        return "\n".join(rows) + "\n"


def plot(timeline: Timeline, png: Path, svg: Path, title: str = "") -> None:
    """Draw paths, branch sides and findings against executions and seconds."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    # Every curve starts from nothing at the start of the campaign.
    samples = [(0, 0.0, 0, 0, 0, 0), *(s for s in timeline.samples if s[0] > 0)]
    execs, seconds, paths, branches, _, findings = (list(column) for column in zip(*samples))
    figure = Figure(figsize=(11, 4.2))
    FigureCanvasAgg(figure)
    # Fixed margins: a layout engine would double the drawing time.
    left, right = figure.subplots(1, 2, gridspec_kw={"left": 0.06, "right": 0.95,
                                                     "wspace": 0.32, "bottom": 0.12,
                                                     "top": 0.9})
    for axes, xs, label in ((left, execs, "executions"), (right, seconds, "seconds")):
        axes.step(xs, paths, where="post", label="paths", color="#1f77b4")
        axes.step(xs, branches, where="post", label="branch sides", color="#2ca02c")
        axes.set_xlabel(label)
        axes.set_ylabel("paths, branch sides covered")
        axes.set_ylim(bottom=0)
        axes.grid(True, alpha=0.3)
        twin = axes.twinx()
        twin.step(xs, findings, where="post", label="findings", color="#d62728")
        twin.set_ylabel("findings")
        twin.set_ylim(bottom=0, top=max(1, max(findings)) * 1.15)
        twin.yaxis.get_major_locator().set_params(integer=True)
        lines = axes.get_lines() + twin.get_lines()
        axes.legend(lines, [line.get_label() for line in lines], loc="lower right",
                    fontsize="small")
    if title:
        figure.suptitle(title)
    figure.savefig(png, dpi=100)
    # Same campaign, same SVG: no date, element ids from a fixed salt.
    with matplotlib.rc_context({"svg.hashsalt": "secant"}):
        figure.savefig(svg, metadata={"Date": None})
