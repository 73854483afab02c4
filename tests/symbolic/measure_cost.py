"""Measure what the ``symbolic`` recording costs (docs/symbolic.md quotes the output).

Run: ``.venv/bin/python -m tests.symbolic.measure_cost`` (needs node for solc-js). For a
few cases of the test contracts it times runs with the campaign's default recording
(``panics``), with ``dataflow`` (the other stepped recording) and with ``symbolic``, best
of three rounds, and one flip of the deepest open branch. Wall-clock figures: not a test.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from secant.chain.chain import TestChain
from secant.compile import load
from secant.symbolic.solve import flip_branch
from secant.targets.contract import ContractTarget
from secant.targets.trace import symbolic_of
from secant.types import Tx, TxSeq

SOURCE = Path(__file__).with_name("Concolic.sol")
ROUNDS = 3
RUNS = 200


def best(action: Callable[[], object], runs: int) -> float:
    """Microseconds per call, best of ``ROUNDS`` rounds of ``runs`` calls."""
    times = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        for _ in range(runs):
            action()
        times.append((time.perf_counter() - started) / runs)
    return min(times) * 1e6


def main() -> None:
    compiled = load([SOURCE])
    cases: list[tuple[str, Callable[[TestChain], TxSeq]]] = [
        ("MultiParam", lambda chain: (Tx(
            "g(uint256,uint256,uint256,uint256,uint256,uint256,uint256,uint256)",
            (500, 12, 5, 0, 0, 0, 0, 3), chain.sender("user1").address),)),
        ("Stored", lambda chain: (
            Tx("set(uint256)", (5,), chain.sender("user1").address),
            Tx("check()", (), chain.sender("user1").address))),
        ("Mapped", lambda chain: (
            Tx("deposit(uint256)", (5000,), chain.sender("user1").address),
            Tx("spend(uint256,bytes)", (7, b"a note"), chain.sender("user1").address))),
    ]
    print(f"{'case':<12} {'panics us/run':>14} {'dataflow':>10} {'symbolic':>10} "
          f"{'sym/plain':>10} {'records':>8} {'pins':>5} {'flip ms':>8}")
    for name, make in cases:
        figures = []
        for recordings in ("panics", "dataflow", "symbolic"):
            chain = TestChain.setup(compiled, contract=name)
            target = ContractTarget(chain, frozenset({recordings}))
            case = make(chain)
            figures.append(best(lambda target=target, case=case: target.run(case), RUNS))
        chain = TestChain.setup(compiled, contract=name)
        target = ContractTarget(chain, frozenset({"symbolic"}))
        case = make(chain)
        result = target.run(case)
        run = symbolic_of(result, target)
        assert run is not None
        open_sides = run.open_sides(result.edges, tx=len(case) - 1)
        started = time.perf_counter()
        answer = flip_branch(case, run, open_sides[-1],
                             senders=[s.address for s in chain.senders])
        solve_ms = (time.perf_counter() - started) * 1000
        plain, flow, symbolic = figures
        print(f"{name:<12} {plain:>14.0f} {flow:>10.0f} {symbolic:>10.0f} "
              f"{symbolic / plain:>9.1f}x {len(run.branches):>8} {len(run.pins):>5} "
              f"{solve_ms:>7.1f}  ({answer.status})")


if __name__ == "__main__":
    main()
