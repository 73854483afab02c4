"""Ablation of input prediction (Harvey's configurations A, B, C) on the bundled examples.

Usage: ``.venv/bin/python bench/ablation.py [--seeds 10] [--execs 20000] [--markdown]``

A: no prediction; B: prediction with iterated secant steps (``--predict-iterations 8``);
C: one-shot prediction (``--predict-iterations 0``). For each example and configuration it
prints the median executions and seconds to each goal over the seeds (a goal missed within
the budget counts as the budget and is marked with ">"), and how many seeds reached it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from goals import GOAL_TABLE_HEADER, print_goal_rows, record_goals

from secant.campaign.campaign import Campaign
from secant.campaign.config import CampaignConfig
from secant.chain.chain import TestChain
from secant.compile.loader import load
from secant.engine.config import FuzzConfig
from secant.targets.contract import ContractRun

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "contracts"
CONFIGS: dict[str, dict[str, object]] = {
    "A": dict(predict=False), "B": dict(predict=True, predict_iterations=8),
    "C": dict(predict=True, predict_iterations=0)}


def baz_label(result: ContractRun) -> str | None:
    """Which of baz's five paths a run took (2 is the failing assertion)."""
    last = result.last_outcome
    if result.panics:
        return "path 2 (assert)"
    if last.success and len(last.output) == 32:
        return f"path {int.from_bytes(last.output, 'big')}"
    return None


def panic_label(result: ContractRun) -> str | None:
    """The assertion goal of a single-bug example."""
    return "assertion" if result.panics else None


EXAMPLE_GOALS: list[tuple[str, str, Callable[[ContractRun], str | None], list[str]]] = [
    ("Baz.sol", "Baz", baz_label, [f"path {n}" for n in (1, 3, 4, 5)] + ["path 2 (assert)"]),
    ("DerivedConstant.sol", "DerivedConstant", panic_label, ["assertion"]),
    ("FuzzingBook.sol", "CrashMe", panic_label, ["assertion"]),
]


def run_one(file: str, contract: str, label: Callable[[ContractRun], str | None],
            config: dict[str, object], seed: int, budget: int, goals: list[str]
            ) -> dict[str, tuple[int, float]]:
    chain = TestChain.setup(load([EXAMPLES / file]), contract=contract)
    campaign = Campaign(chain, CampaignConfig(FuzzConfig(seed=seed, max_execs=budget,
                                                         **config)))  # type: ignore[arg-type]
    return record_goals(campaign, lambda result: [n] if (n := label(result)) else [], goals)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--execs", type=int, default=20000)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    print(GOAL_TABLE_HEADER)
    for file, contract, label, goals in EXAMPLE_GOALS:
        runs = {name: [run_one(file, contract, label, config, seed, args.execs, goals)
                       for seed in range(args.seeds)] for name, config in CONFIGS.items()}
        print_goal_rows(contract, goals, runs, args.execs)


if __name__ == "__main__":
    main()
