"""Benchmark: what the ``dataflow`` recording costs the EVM (secant/targets/taint.py).

Usage: ``.venv/bin/python bench/dataflow.py [--repeat 3]``

On each workload of ``secant bench evm`` (secant/bench/evm_bench.py), the transactions per
second of the instrumented EVM (the trace recorder a campaign attaches) next to the same
with the ``dataflow`` recording on, best of ``--repeat`` rounds, and their ratio. The
data-flow oracles switch the recording on only for the runs they replay
(docs/oracles.md, "Data-flow oracles").
"""

from __future__ import annotations

import argparse

from secant.bench.evm_bench import Bench
from secant.targets.trace import TraceRecorder


def main() -> None:
    """Print one row per workload."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds; the best one counts")
    args = parser.parse_args()
    bench = Bench()
    print(f"{'workload':16} {'instrumented':>14} {'+ dataflow':>14} {'overhead':>9}")
    for workload in bench.workloads(quick=False):
        count = 300 if workload.name == "erc20-transfer" else 30
        for make in (TraceRecorder, lambda: TraceRecorder(("panics", "dataflow"))):
            bench.rate(workload, make(), 5, 1)  # warm-up
        traced = bench.rate(workload, TraceRecorder(), count, args.repeat)
        flow = bench.rate(workload, TraceRecorder(("panics", "dataflow")), count, args.repeat)
        print(f"{workload.name:16} {traced:10,.0f} tx/s {flow:10,.0f} tx/s "
              f"{traced / flow:8.2f}x")


if __name__ == "__main__":
    main()
