"""Benchmark: what one execution and one step cost, contract by contract.

Usage: ``.venv/bin/python bench/steps.py [--execs 10000] [--seed 0] [PATH[:CONTRACT[:LENGTH]] ...]``

The concolic stage's share (``secant.engine.harvey.concolic``) is a share of the campaign's
*steps*, the transactions the target actually ran (``FuzzStats.steps_run``: those the prefix
cache restored cost nothing), and z3's resource count is charged in steps too. That rests
on a step costing about the same on every contract while an execution does not (a maze
case runs many moves, Baz's one call). This prints, for each contract, a campaign of
``--execs`` executions without the stage: its executions, steps and transactions, and the
microseconds per execution and per step (the fuzz loop's time only, without compilation or
deployment). With no PATH it measures the bundled examples; a maze of the maze benchmark
(``bench/maze_gen.py``) is given as ``Maze.sol:Maze:17`` (17: its sequence length).

Figures only, no assertions.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from secant.campaign.campaign import Campaign
from secant.campaign.config import CampaignConfig
from secant.campaign.plan import Selection, plan
from secant.chain.chain import ChainConfig
from secant.compile import CompileOptions, load
from secant.engine.config import FuzzConfig

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = ("Baz.sol", "Crowdsale.sol", "StatefulMaze.sol", "HarveyFoo.sol", "Allowances.sol")


def measure(path: Path, contract: str | None, length: int, execs: int, seed: int
            ) -> tuple[int, int, int, float]:
    """Executions, steps run, transactions and the fuzz loop's seconds of one campaign."""
    compilations = load([path], CompileOptions())
    config = CampaignConfig(FuzzConfig(seed=seed, max_execs=execs, max_sequence_length=length,
                                       symbolic_share=0.0), out=None, shrink_limit=0)
    [chosen] = plan(compilations, Selection(contract=contract), ChainConfig(), config,
                    project=False)
    campaign = Campaign(chosen.make_chain(), chosen.config, oracles=chosen.oracles,
                        functions=chosen.functions, senders=chosen.senders,
                        block_steps=chosen.block_steps)
    started = time.perf_counter()
    campaign.run()
    seconds = time.perf_counter() - started
    stats = campaign.fuzzer.stats
    return stats.execs, stats.steps_run, stats.transactions, seconds


def main() -> None:
    """Measure each target and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="*", help="PATH[:CONTRACT[:SEQUENCE LENGTH]]")
    parser.add_argument("--execs", type=int, default=10_000, help="executions per campaign")
    parser.add_argument("--seed", type=int, default=0, help="campaign seed")
    args = parser.parse_args()
    targets = args.targets or [str(REPO / "examples" / "contracts" / name) for name in EXAMPLES]
    print("| contract | executions | steps run | transactions | us / execution | us / step |")
    print("|---|---|---|---|---|---|")
    for target in targets:
        path, _, rest = target.partition(":")
        contract, _, length = rest.partition(":")
        execs, steps, txs, seconds = measure(Path(path), contract or None,
                                             int(length or 16), args.execs, args.seed)
        name = f"{Path(path).name}{':' + contract if contract else ''}"
        print(f"| {name} | {execs:,} | {steps:,} | {txs:,} | {seconds / execs * 1e6:,.0f} "
              f"| {seconds / max(steps, 1) * 1e6:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
