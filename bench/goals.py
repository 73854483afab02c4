"""Shared by the quality benchmarks: when a campaign first reaches each goal, and medians.

``record_goals`` runs a campaign with an observer that notes the execution count and the
seconds at which each goal label first appears; ``median_cells`` turns the per-seed results
into table cells: a missed goal counts as the whole budget, and a median over seeds of which
half or more missed is shown as ">budget". The seconds are the median over the seeds that
reached the goal.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Collection, Sequence

from secant.campaign.campaign import Campaign
from secant.engine.events import OnRun
from secant.types import RunResult

Hit = tuple[int, float] | None
"""(executions, seconds) at which a goal was first reached, or None."""


def record_goals(campaign: Campaign, labels: Callable[[RunResult], list[str]],
                 goals: Collection[str] = ()) -> dict[str, tuple[int, float]]:
    """Run ``campaign``; return, per goal label, when it was first reached.

    With ``goals``, the campaign stops once all of them are reached (nothing after that
    point is measured).
    """
    fuzzer = campaign.fuzzer
    reached: dict[str, tuple[int, float]] = {}

    def observe(result: RunResult) -> None:
        # The observer runs inside execute(), after the execution was counted.
        for name in labels(result):
            reached.setdefault(name, (fuzzer.stats.execs, fuzzer.stats.elapsed))
        if goals and all(goal in reached for goal in goals):
            fuzzer.stop()

    campaign.listen(OnRun(observe))
    campaign.run()
    return reached


def median_cells(hits: Sequence[Hit], budget: int) -> tuple[str, str, str]:
    """Median executions, median seconds and "reached/seeds" for one goal."""
    seeds = len(hits)
    execs = [h[0] if h else budget for h in hits]
    seconds = [h[1] for h in hits if h]
    reached = len(seconds)
    if reached <= seeds // 2:
        return f">{budget}", "-", f"{reached}/{seeds}"
    return (f"{statistics.median(execs):.0f}", f"{statistics.median(seconds):.2f}",
            f"{reached}/{seeds}")


GOAL_TABLE_HEADER = ("| example | goal | config | median execs | median s | seeds reached |\n"
                     "|---|---|---|---:|---:|---:|")
"""The header of the rows ``print_goal_rows`` prints."""


def print_goal_rows(contract: str, goals: Sequence[str],
                    runs: dict[str, list[dict[str, tuple[int, float]]]], budget: int) -> None:
    """One table row per goal and configuration: medians over the per-seed ``runs``."""
    for goal in goals:
        for name, per_seed in runs.items():
            median, seconds, reached = median_cells([r.get(goal) for r in per_seed], budget)
            print(f"| {contract} | {goal} | {name} | {median} | {seconds} | {reached} |",
                  flush=True)

