"""Power schedules on the Fuzzing Book's maze: executions until the target tile is reached.

Usage: ``.venv/bin/python bench/directed.py [--seeds 10] [--execs 200000]
[--schedules uniform,aflgo]``

Runs ``DirectedMaze`` (one function per tile, ``assert(false)`` on the target tile) under
each schedule with prediction on (Harvey's configuration B); ``aflgo`` is directed at the
assertion's line. Prints, per schedule, the median executions and seconds to the assertion
over the seeds (a seed that misses it within the budget counts as the budget; the median
is shown as ">budget" when half the seeds or more missed) and how many seeds reached it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from goals import median_cells

from secant.campaign.campaign import Campaign
from secant.campaign.config import CampaignConfig
from secant.campaign.directed import resolve_target
from secant.chain.chain import TestChain
from secant.compile.loader import load
from secant.engine.config import FuzzConfig

MAZE = Path(__file__).resolve().parents[1] / "examples" / "contracts" / "DirectedMaze.sol"


def target_line() -> int:
    """The line of the maze's ``assert(false)`` (the target tile)."""
    lines = MAZE.read_text().splitlines()
    return next(i + 1 for i, text in enumerate(lines) if "assert(false)" in text)


def run_one(schedule: str, seed: int, budget: int) -> tuple[int, float] | None:
    """Executions and seconds to the assertion, or None when the budget ran out first."""
    chain = TestChain.setup(load([MAZE]), contract="DirectedMaze")
    targets = (resolve_target(f"DirectedMaze.sol:{target_line()}", chain)
               if schedule == "aflgo" else frozenset())
    config = FuzzConfig(seed=seed, max_execs=budget, schedule=schedule, stop_on_finding=True)
    summary = Campaign(chain, CampaignConfig(config, target_pcs=targets)).run()
    if not summary["findings"]:
        return None
    finding = summary["findings"][0]
    return finding["execs_to_find"], finding["time_to_find_s"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--execs", type=int, default=200_000)
    parser.add_argument("--schedules", default="uniform,aflgo")
    args = parser.parse_args()
    print("| schedule | median execs | median s | seeds reached | execs per seed |")
    print("|---|---:|---:|---:|---|")
    for schedule in args.schedules.split(","):
        hits = [run_one(schedule, seed, args.execs) for seed in range(args.seeds)]
        median, seconds, reached = median_cells(hits, args.execs)
        each = " ".join(str(h[0]) if h else "-" for h in hits)
        print(f"| {schedule} | {median} | {seconds} | {reached} | {each} |",
              flush=True)


if __name__ == "__main__":
    main()
