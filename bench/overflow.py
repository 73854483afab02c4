"""Benchmark: what the integer-overflow oracle costs the campaign's loop.

Usage: ``.venv/bin/python bench/overflow.py [--execs 3000] [--repeat 4]``

For bench/contracts/Token.sol (solc 0.8, no ``unchecked``: the oracle is off) and the
integer-overflow fixtures of tests/oracles/test_vulnerabilities.py, the loop's executions per
CPU second (seed 0, best of ``--repeat``, the four variants interleaved so that a busy
machine slows them alike; building the campaign and shrinking are not timed):

* no oracle;
* ``integer-overflow`` alone, as it ships: the ``arithmetic`` recording sees wraps at block
  entry, and only runs where a site not yet reported wrapped are replayed with ``dataflow``;
* the same oracle without the ``arithmetic`` recording: every run in which a site not yet
  reported ran is replayed (what the block-entry evaluation saves);
* every registered oracle.

CPU time (``time.process_time``), not wall time: on a shared machine it is the steadier of
the two. Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from secant.campaign.campaign import Campaign
from secant.campaign.config import CampaignConfig
from secant.chain.chain import TestChain
from secant.compile.loader import load
from secant.engine.config import FuzzConfig
from secant.oracles.overflow import OverflowOracle

ROOT = Path(__file__).resolve().parents[1]
TOKEN = ROOT / "bench" / "contracts" / "Token.sol"


class EveryRunReplayed(OverflowOracle):
    """The oracle without the ``arithmetic`` recording (its precondition: a site ran)."""

    def __init__(self, chain: TestChain) -> None:
        super().__init__(chain)
        if self.needs:
            self.needs = frozenset({"calls"})


def rate(chain_of: Callable[[], TestChain], oracles: Sequence[Any] | None,
         execs: int) -> float:
    """Executions per CPU second of one fresh campaign's loop."""
    run = Campaign(chain_of(), CampaignConfig(FuzzConfig(seed=0, max_execs=execs),
                                              shrink_limit=0, reports=False),
                   oracles=oracles)
    started = time.process_time()
    run.workers[0].fuzz()
    return run.fuzzer.stats.execs / (time.process_time() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--execs", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=4)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))  # the fixtures' table lives in the tests
    from tests.oracles.test_vulnerabilities import SAFE, VULNERABLE, chain_of

    tokens = load([TOKEN])
    targets: list[tuple[str, Callable[[], TestChain]]] = [
        ("Token.sol (ERC-20, 0.8)",
         lambda: TestChain.setup(tokens, contract="Token", args=[10**30]))]
    for case in VULNERABLE + SAFE:
        if case.oracle == "integer-overflow":
            kind = "vulnerable" if case in VULNERABLE else "safe"
            targets.append((f"{case.contract} ({kind})", lambda case=case: chain_of(case)))
    variants: list[Sequence[Any] | None] = [[], [OverflowOracle], [EveryRunReplayed], None]
    print(f"\nThe loop's executions per CPU second, seed 0, {args.execs:,} executions, best "
          f"of {args.repeat}\n")
    print("| campaign | no oracle | `integer-overflow` | ratio | without `arithmetic` | ratio "
          "| every oracle | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    ratios = []
    for label, make in targets:
        rate(make, [], 300)  # warm-up: code tables, compiled block plans
        best = [0.0] * len(variants)
        for _ in range(args.repeat):
            for i, oracles in enumerate(variants):
                best[i] = max(best[i], rate(make, oracles, args.execs))
        none, alone, eager, every = best
        ratios.append(alone / none)
        print(f"| {label} | {none:,.0f} | {alone:,.0f} | {alone / none:.2f} | {eager:,.0f} | "
              f"{eager / none:.2f} | {every:,.0f} | {every / none:.2f} |", flush=True)
    print(f"\n`integer-overflow` alone keeps {min(ratios):.2f} of the loop's speed at worst, "
          f"{statistics.geometric_mean(ratios):.2f} as a geometric mean.")


if __name__ == "__main__":
    main()
