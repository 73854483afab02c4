"""Sequence fuzzing ablation: Harvey's demand-driven (A) vs eager (D), sFuzz adaptive on/off.

Usage: ``.venv/bin/python bench/sequences.py [--seeds 10] [--first-seed 0] [--execs 50000]
[--examples Foo,StatefulMaze,Crowdsale,OppositeGame,MultipleObjectives,CallerBank,Grants,
Allowances]``

Configurations (all with input prediction, AFLFast):

* A: demand-driven sequences (path ids over the last transaction, aggressive probes with
  p = 0.125), sFuzz's adaptive seeds on (secant's default);
* A-noadapt: A without the adaptive seeds;
* D: eager sequences (path ids over all transactions, every seed mutated structurally,
  no aggressive mode), adaptive seeds on;
* A-uniform, D-uniform (on request): the same with the uniform schedule;
* A-concrete-slots, D-concrete-slots (on request): the data flow without caller-keyed
  slots (``balances[msg.sender]`` is a different slot number for every sender).

For each example goal it prints the median executions and seconds to reach it over the seeds
(a missed goal counts as the budget; ">budget" when half the seeds or more missed it) and
how many seeds reached it.
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
    "A-uniform": dict(sequences="demand", adaptive=True, schedule="uniform"),
    "D-uniform": dict(sequences="eager", adaptive=True, schedule="uniform"),
    "A": dict(sequences="demand", adaptive=True),
    "A-noadapt": dict(sequences="demand", adaptive=False),
    "D": dict(sequences="eager", adaptive=True),
    "A-concrete-slots": dict(sequences="demand", adaptive=True, caller_slots=False),
    "D-concrete-slots": dict(sequences="eager", adaptive=True, caller_slots=False),
}
Labeller = Callable[[Campaign, ContractRun], list[str]]


def assertion_lines(campaign: Campaign, result: ContractRun) -> list[str]:
    """One label per failing assertion: its source line."""
    if not result.panics:
        return []
    return [f"assert {Path(site.source).name}" for site in campaign.oracles[0].check(result, None)
            if site.source]


def crowdsale_phases(campaign: Campaign, result: ContractRun) -> list[str]:
    """ILF's Crowdsale: a successful withdraw() or refund()."""
    last = result.case[-1]
    if result.last_outcome.success and last.function in ("withdraw()", "refund()"):
        return [last.function]
    return []


def opposite_game(campaign: Campaign, result: ContractRun) -> list[str]:
    """sFuzz Fig. 1: Try's payout branch (the value check ran and held)."""
    hit = any(lhs == rhs == 10 ** 17 for *_, lhs, rhs in result.branches)
    return ["Try pays out"] if hit else []


EXAMPLE_GOALS: list[tuple[str, str, Labeller, list[str]]] = [
    ("HarveyFoo.sol", "Foo", assertion_lines, ["assert HarveyFoo.sol:17"]),
    ("StatefulMaze.sol", "StatefulMaze", assertion_lines,
     ["assert StatefulMaze.sol:40", "assert StatefulMaze.sol:46",
      "assert StatefulMaze.sol:55"]),
    ("Crowdsale.sol", "Crowdsale", crowdsale_phases, ["withdraw()", "refund()"]),
    ("SFuzzExamples.sol", "OppositeGame", opposite_game, ["Try pays out"]),
    ("SFuzzExamples.sol", "MultipleObjectives", assertion_lines,
     ["assert SFuzzExamples.sol:11", "assert SFuzzExamples.sol:14"]),
    ("CallerBank.sol", "CallerBank", assertion_lines, ["assert CallerBank.sol:28"]),
    ("Grants.sol", "Grants", assertion_lines, ["assert Grants.sol:25"]),
    ("Allowances.sol", "Allowances", assertion_lines, ["assert Allowances.sol:26"]),
]


def run_one(file: str, contract: str, label: Labeller, config: dict[str, object], seed: int,
            budget: int, goals: list[str]) -> dict[str, tuple[int, float]]:
    """Executions and seconds at which each goal was first reached in one campaign."""
    chain = TestChain.setup(load([EXAMPLES / file]), contract=contract)
    campaign = Campaign(chain, CampaignConfig(FuzzConfig(seed=seed, max_execs=budget,
                                                         **config)))  # type: ignore[arg-type]
    return record_goals(campaign, lambda result: label(campaign, result), goals)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--execs", type=int, default=50_000)
    parser.add_argument("--examples", default=",".join(c for _, c, _, _ in EXAMPLE_GOALS))
    parser.add_argument("--configs", default="A,A-noadapt,D",
                        help=f"comma-separated, from {', '.join(CONFIGS)}")
    args = parser.parse_args()
    wanted = args.examples.split(",")
    configs = args.configs.split(",")
    print(GOAL_TABLE_HEADER)
    for file, contract, label, goals in EXAMPLE_GOALS:
        if contract not in wanted:
            continue
        seeds = range(args.first_seed, args.first_seed + args.seeds)
        runs = {name: [run_one(file, contract, label, CONFIGS[name], seed, args.execs, goals)
                       for seed in seeds] for name in configs}
        print_goal_rows(contract, goals, runs, args.execs)


if __name__ == "__main__":
    main()
