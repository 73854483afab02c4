"""Benchmark: test-case executions/s with and without the prefix-state cache (Crowdsale).

Usage: ``.venv/bin/python bench/prefix_cache.py [--execs 6000] [--seed 0] [--prefixes 32]``

The workloads are fuzzer-like: a fixed pool of random prefixes (1-4 transactions) of
``Crowdsale`` (examples/contracts/Crowdsale.sol), each followed by many different random
last transactions, which is what mutating a seed's last transaction produces. Both
configurations run the very same list of cases (drawn up front from ``--seed``):

* bursts: a prefix's cases come in a row (a seed's energy spent at once), some prefixes
  mutated along the way (new prefixes: misses);
* interleaved: every case picks a random prefix of the pool (a cache smaller than the pool
  then thrashes, shown with an 8-entry cache);
* mixed: bursts in which 3 cases in 4 change a prefix transaction first (what demand-mode
  sequence fuzzing does to a demanding function), so most prefixes are new: the overhead
  of storing prefixes that are never used again.

Each cache runs with ``admit_after`` 1 (store a prefix at its first miss) and 2 (store it
when it comes back).

Last, whole campaigns: ``secant fuzz``'s engine on Crowdsale (demand-driven sequences,
the campaign's cache setting: 256 entries, admit 2, the round's seed prefix and its heads
expected) for ``--campaign-execs`` executions, with and without the cache; the same seed
gives the same campaign either way. "transactions run" is the share of the cases'
transactions that were executed rather than restored.

Figures only, no assertions (tests/targets/test_prefix_cache.py checks that the results
are identical).
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path
from typing import Any

from secant.campaign.campaign import function_specs
from secant.chain.chain import TestChain
from secant.compile.loader import load
from secant.engine.dictionary import Dictionary
from secant.engine.events import OnRun
from secant.engine.mutators import Mutator
from secant.targets.contract import ContractTarget
from secant.targets.prefix_cache import PrefixCache
from secant.types import TxSeq

CROWDSALE = Path(__file__).resolve().parents[1] / "examples" / "contracts" / "Crowdsale.sol"
BURST = 50  # last transactions per visit of a prefix


def workloads(chain: TestChain, seed: int, execs: int, pool_size: int
              ) -> dict[str, list[TxSeq]]:
    """The cases of each workload (see the module docstring)."""
    specs, _ = function_specs(chain)
    senders = [s.address for s in chain.senders]
    mutator = Mutator(specs, senders, Dictionary())
    rng = random.Random(seed)

    def tx_seq(length: int) -> TxSeq:
        return tuple(mutator.random_tx(rng.choice(specs), rng) for _ in range(length))

    pool = [tx_seq(rng.randint(1, 4)) for _ in range(pool_size)]
    bursts: list[TxSeq] = []
    while len(bursts) < execs:
        index = rng.randrange(len(pool))
        if rng.random() < 0.1:  # a prefix transaction mutated: a new prefix from now on
            prefix = pool[index]
            at = rng.randrange(len(prefix))
            pool[index] = prefix[:at] + tx_seq(1) + prefix[at + 1:]
        for _ in range(BURST):
            bursts.append(pool[index] + tx_seq(1))
    interleaved = [rng.choice(pool) + tx_seq(1) for _ in range(execs)]
    # Demand mode's mix: 3 in 4 cases change the prefix (a structural mutation or one of a
    # prefix transaction), so most prefixes are seen once: the cache's worst realistic case.
    mixed: list[TxSeq] = []
    while len(mixed) < execs:
        prefix = rng.choice(pool)
        for _ in range(BURST):
            if rng.random() < 0.75:
                at = rng.randrange(len(prefix))
                mixed.append(prefix[:at] + tx_seq(1) + prefix[at + 1:] + tx_seq(1))
            else:
                mixed.append(prefix + tx_seq(1))
    return {"bursts": bursts[:execs], "interleaved": interleaved, "mixed": mixed[:execs]}


def rate(chain: TestChain, cases: list[TxSeq], cache: PrefixCache | None) -> float:
    """Executions per second of ``cases`` on a fresh target."""
    target = ContractTarget(chain, prefix_cache=cache)
    started = time.perf_counter()
    for case in cases:
        target.run(case)
    return len(cases) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--execs", type=int, default=6000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--prefixes", type=int, default=32)
    parser.add_argument("--campaign-execs", type=int, default=20000)
    parser.add_argument("--campaign-config", default="demand",
                        help="sequence mode of the campaign runs: demand or eager")
    args = parser.parse_args()

    chain = TestChain.setup(load([CROWDSALE]), contract="Crowdsale")
    cases = workloads(chain, args.seed, args.execs, args.prefixes)
    print(f"Crowdsale, {args.execs} executions per run, pool of {args.prefixes} prefixes "
          f"(1-4 txs), seed {args.seed}")
    for name, workload in cases.items():
        mean = sum(map(len, workload)) / len(workload)
        plain = rate(chain, workload, None)
        print(f"{name} (mean case length {mean:.2f} txs)")
        print(f"  no cache                     {plain:10,.0f} exec/s")
        configs = [(256, 1), (256, 2)] + ([(8, 1)] if name == "interleaved" else [])
        for size, admit in configs:
            cache = PrefixCache(max_entries=size, admit_after=admit)
            cached = rate(chain, workload, cache)
            print(f"  cache {size:3d} entries, admit {admit}  {cached:10,.0f} exec/s  "
                  f"x{cached / plain:.2f}  hit rate {cache.hit_rate:5.1%}, "
                  f"{len(cache)} entries, {cache.nbytes / 1024:,.0f} KiB, "
                  f"{cache.evictions} evictions")
    print(f"campaign ({args.campaign_config} sequences, {args.campaign_execs} executions, "
          f"seed {args.seed})")
    plain = campaign_rate(args.seed, args.campaign_execs, args.campaign_config, False)
    cached = campaign_rate(args.seed, args.campaign_execs, args.campaign_config, True)
    print(f"  no cache                     {plain[0]:10,.0f} exec/s  mean case length "
          f"{plain[2]:.2f} txs")
    print(f"  campaign cache               {cached[0]:10,.0f} exec/s  x{cached[0] / plain[0]:.2f}"
          f"  hit rate {cached[1]:5.1%}, misses resumed from a shorter prefix "
          f"{cached[3]:5.1%}, transactions run {cached[4]:5.1%}")


def campaign_rate(seed: int, execs: int, sequences: str, cache: bool
                  ) -> tuple[float, float, float, float, float]:
    """Executions/s of a whole Crowdsale campaign, the cache hit rate, mean case length,
    the share of misses resumed from a shorter cached prefix, and the share of the cases'
    transactions that actually ran."""
    from secant.campaign.campaign import Campaign
    from secant.campaign.config import CampaignConfig
    from secant.engine.config import FuzzConfig

    chain = TestChain.setup(load([CROWDSALE]), contract="Crowdsale")
    campaign = Campaign(chain, CampaignConfig(
        FuzzConfig(seed=seed, max_execs=execs, sequences=sequences), prefix_cache=cache))
    lengths: list[int] = []
    campaign.listen(OnRun(lambda result: lengths.append(len(result.case))))
    ran = 0
    transact = chain.transact

    def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal ran
        ran += 1
        return transact(*args, **kwargs)

    chain.transact = counted  # type: ignore[method-assign]
    started = time.perf_counter()
    campaign.run()
    elapsed = time.perf_counter() - started
    cache_used = campaign.target.prefix_cache
    hit_rate = cache_used.hit_rate if cache_used else 0.0
    partial = cache_used.partial_hits / max(1, cache_used.misses) if cache_used else 0.0
    return (execs / elapsed, hit_rate, sum(lengths) / max(1, len(lengths)), partial,
            ran / max(1, sum(lengths)))


if __name__ == "__main__":
    main()
