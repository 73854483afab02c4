"""Benchmark: the whole greybox loop's executions/s next to the bare EVM's (ERC-20 transfer).

Usage: ``.venv/bin/python bench/engine.py [--execs 20000] [--seed 0]``

Three figures on ``Token.transfer(address,uint256)`` (bench/contracts/Token.sol):

* bare EVM: reset to the post-deployment snapshot and send one prepared transfer, no
  instrumentation (what a blackbox replay costs);
* instrumented EVM: the same with the fuzzer's trace recorder attached;
* the loop: ``Fuzzer.fuzz`` with Harvey's policy (mutation, prediction), cost vectors,
  path ids and the corpus, fuzzing only ``transfer``; once without oracles, with
  demand-driven sequences, and with every registered oracle checking every run.

The loop's own overhead per execution is the loop's time minus the instrumented EVM's.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from secant.chain.chain import TestChain
from secant.compile.loader import load
from secant.engine.config import FuzzConfig
from secant.engine.dictionary import Dictionary, code_constants
from secant.engine.fuzzer import Fuzzer
from secant.engine.harvey.policy import HarveyPolicy
from secant.engine.mutators import FunctionSpec
from secant.engine.policy import InputSpace, Proposal
from secant.engine.values import vtype
from secant.oracles import registry
from secant.targets.contract import ContractTarget
from secant.targets.trace import TraceRecorder
from secant.types import Tx

TOKEN = Path(__file__).resolve().parent / "contracts" / "Token.sol"


def bare_rate(chain: TestChain, data: bytes, sender: int, traced: bool, count: int) -> float:
    assert chain.main is not None
    to = chain.main.address
    recorder = TraceRecorder() if traced else None
    started = time.perf_counter()
    for _ in range(count):
        chain.reset()
        if recorder is not None:
            recorder.reset()
            recorder.begin_tx(0)
        chain.transact(sender, to, data, 0, inspector=recorder)
    return count / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--execs", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    chain = TestChain.setup(load([TOKEN]), contract="Token", args=[10**30])
    assert chain.main is not None
    deployer = chain.deployer.address
    transfer = chain.main.abi.function("transfer")
    data = transfer.encode_call([chain.sender("user1").address, 12345])
    bare = bare_rate(chain, data, deployer, False, args.execs)
    traced = bare_rate(chain, data, deployer, True, args.execs)

    loop, fuzzer = loop_rate(chain, args.seed, args.execs, "off")
    overhead_us = (1 / loop - 1 / traced) * 1e6
    evm_us = 1e6 / traced
    print(f"ERC-20 transfer, {args.execs} executions each")
    print(f"  bare EVM (plain)          {bare:10,.0f} exec/s")
    print(f"  bare EVM (instrumented)   {traced:10,.0f} exec/s  ({evm_us:.0f} us/exec)")
    assert isinstance(fuzzer.policy, HarveyPolicy)
    print(f"  greybox loop              {loop:10,.0f} exec/s  (corpus {len(fuzzer.corpus)}, "
          f"predictions {fuzzer.policy.harvey.prediction.attempts}, single transactions)")
    print(f"loop overhead per execution: {overhead_us:.0f} us "
          f"({overhead_us / evm_us:.2f}x the instrumented EVM)")
    # With demand-driven sequences, transfer demands longer sequences (its balance reads
    # open new paths), so an execution is several transactions: report both rates.
    sequenced, fuzzer = loop_rate(chain, args.seed, args.execs, "demand")
    txs = fuzzer.stats.transactions / max(1, fuzzer.stats.execs)
    print(f"  greybox loop, demand-driven sequences  {sequenced:10,.0f} exec/s  "
          f"({sequenced * txs:,.0f} tx/s, {txs:.2f} tx/exec)")
    checked, fuzzer = loop_rate(chain, args.seed, args.execs, "off", with_oracles=True)
    names = ", ".join(oracle.name for oracle in fuzzer.oracles)
    print(f"  greybox loop, every oracle ({names})  {checked:10,.0f} exec/s  "
          f"({checked / loop:.2f}x the loop without oracles)")


def loop_rate(chain: TestChain, seed: int, execs: int, sequences: str,
              with_oracles: bool = False) -> tuple[float, Fuzzer]:
    """Executions/s of ``Fuzzer.fuzz`` on transfer alone, after one initial execution."""
    assert chain.main is not None
    transfer = chain.main.abi.function("transfer")
    target = ContractTarget(chain)
    spec = FunctionSpec(transfer.signature, None, tuple(vtype(p) for p in transfer.inputs),
                        False)
    senders = [s.address for s in chain.senders]
    dictionary = Dictionary(code_constants(chain.code_at(chain.main.address)), senders)
    policy = HarveyPolicy(InputSpace([spec], senders, dictionary))
    oracles = registry.build(chain) if with_oracles else []
    fuzzer = Fuzzer(target.run, policy,
                    FuzzConfig(seed=seed, max_execs=execs, sequences=sequences),
                    oracles=oracles, post=target)
    first = Tx(transfer.signature, (senders[1], 1), chain.deployer.address)
    fuzzer.execute(Proposal((first,), "init"))
    started = time.perf_counter()
    fuzzer.fuzz()
    return (fuzzer.stats.execs - 1) / (time.perf_counter() - started), fuzzer


if __name__ == "__main__":
    main()
