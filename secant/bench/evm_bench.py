"""``secant bench evm``: EVM throughput on fixed workloads, next to py-evm in the same run.

Workloads (Solidity in ``bench/contracts/``, compiled with solc-js):
ERC-20 ``transfer`` (recipient cycling over 50 addresses), a storage-heavy loop, a
keccak-heavy nested-mapping workload and a CALL-heavy loop. Each is measured three ways:
secant without an inspector ("plain"), secant with the inspector the fuzzer attaches to every
run, a default ``TraceRecorder`` ("instrumented": block coverage, branch edges and comparison
operands, storage writes, panics), and py-evm. secant runs whole transactions (validation,
fees, refunds); py-evm runs its cheapest message path. Both restore the state after every
iteration. Figures are best-of-N rates.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from secant.bench.pyevm_baseline import PyEvmRunner, PyEvmUnavailable
from secant.evm.env import BlockEnv
from secant.evm.forks import CANCUN
from secant.evm.inspector import Inspector
from secant.evm.state import WorldState
from secant.evm.transaction import Transaction, apply_transaction
from secant.targets.trace import TraceRecorder

CONTRACTS = Path(__file__).resolve().parents[2] / "bench" / "contracts"
SENDER = 0xB0B0000000000000000000000000000000000001
GAS = 30_000_000


def _word(x: int) -> bytes:
    return x.to_bytes(32, "big")


@dataclass
class Workload:
    """One benchmark workload: a deployed contract and a calldata generator."""

    name: str
    detail: str
    target: int
    calldata: Callable[[int], bytes]
    opcodes: int = 0


@dataclass
class Figures:
    """Measured rates of one workload."""

    name: str
    detail: str
    opcodes_per_tx: int
    plain_tx_s: float
    traced_tx_s: float
    pyevm_tx_s: float | None
    extra: dict[str, Any] = field(default_factory=dict)


class _StepCounter(Inspector):
    wants_steps = True

    def __init__(self) -> None:
        self.steps = 0

    def on_step(self, frame: Any, pc: int, opcode: int, stack: list[int]) -> None:
        self.steps += 1


class Bench:
    """A chain with the benchmark contracts deployed."""

    def __init__(self) -> None:
        from secant.compile.loader import load

        compiled = {
            c.name: c
            for comp in load([CONTRACTS / "Token.sol", CONTRACTS / "Workloads.sol"])
            for c in comp.contracts
        }
        self.state = WorldState()
        self.state.set_account(SENDER, balance=10**30)
        self.env = BlockEnv(coinbase=0xC0FFEE, number=1, timestamp=1000, gas_limit=GAS)
        self.nonce = 0
        self.addresses: dict[str, int] = {}
        self.selectors: dict[str, bytes] = {}
        for name, args in (("Token", _word(10**27)), ("StorageLoop", b""),
                           ("MappingHash", b""), ("Caller", b"")):
            contract = compiled[name]
            result = self._tx(None, contract.creation.to_bytes() + args)
            if not result.success or result.created_address is None:
                raise RuntimeError(f"deploying {name} failed: {result.error}")
            self.addresses[name] = result.created_address
            for fn in contract.abi.functions:
                self.selectors[f"{name}.{fn.name}"] = bytes(fn.selector)
        self.state.forget_history()

    def _tx(self, to: int | None, data: bytes, inspector: Inspector | None = None) -> Any:
        tx = Transaction(sender=SENDER, to=to, nonce=self.nonce, gas_limit=GAS, gas_price=0,
                         data=data)
        result = apply_transaction(self.state, self.env, tx, CANCUN, inspector)
        if to is None:
            self.nonce += 1
        return result

    def workloads(self, quick: bool) -> list[Workload]:
        """The four workloads, sized for ~1-50 ms per transaction (smaller with quick)."""
        s = self.selectors
        rounds = 1 if quick else 4
        n_hash = 10 if quick else 40
        n_calls = 10 if quick else 40
        return [
            Workload("erc20-transfer", "Token.transfer(to, 1), 50 recipients",
                     self.addresses["Token"],
                     lambda i: s["Token.transfer"] + _word(0x2000 + i % 50) + _word(1)),
            Workload("storage-loop", f"StorageLoop.churn({rounds}): 64 slots per round",
                     self.addresses["StorageLoop"],
                     lambda i: s["StorageLoop.churn"] + _word(rounds)),
            Workload("keccak-mapping", f"MappingHash.fill({n_hash}, who)",
                     self.addresses["MappingHash"],
                     lambda i: s["MappingHash.fill"] + _word(n_hash) + _word(0xABC + i % 7)),
            Workload("call-loop", f"Caller.run({n_calls}): one CALL per iteration",
                     self.addresses["Caller"],
                     lambda i: s["Caller.run"] + _word(n_calls)),
        ]

    def count_opcodes(self, w: Workload) -> int:
        """Instructions executed by one transaction of ``w`` (untimed, stepping run)."""
        counter = _StepCounter()
        snapshot = self.state.snapshot()
        result = self._tx(w.target, w.calldata(0), counter)
        self.state.revert(snapshot)
        if not result.success:
            raise RuntimeError(f"{w.name} failed: {result.error}")
        return counter.steps

    def rate(self, w: Workload, recorder: TraceRecorder | None, iterations: int,
             repeats: int) -> float:
        """Best-of-``repeats`` transactions per second (instrumented when ``recorder`` is set).

        Each transaction is a fresh one-transaction test case for the recorder (containers
        reset, transaction 0 begun), as ``bench/engine.py`` measures the instrumented EVM.
        """
        state = self.state
        best = 0.0
        for _ in range(repeats):
            start = time.perf_counter()
            for i in range(iterations):
                snapshot = state.snapshot()
                if recorder is not None:
                    recorder.reset()
                    recorder.begin_tx(0)
                result = self._tx(w.target, w.calldata(i), recorder)
                state.revert(snapshot)
                if not result.success:
                    raise RuntimeError(f"{w.name} failed: {result.error}")
            best = max(best, iterations / (time.perf_counter() - start))
        return best

    def pyevm_runner(self) -> PyEvmRunner:
        """py-evm loaded with this chain's accounts."""
        return PyEvmRunner(
            ((a, acc.nonce, acc.balance, acc.code, dict(acc.storage))
             for a, acc in self.state.iter_accounts()),
            timestamp=self.env.timestamp, number=self.env.number,
        )


def run(quick: bool = False, with_pyevm: bool = True,
        report: Callable[[str], None] | None = None) -> tuple[list[Figures], str | None]:
    """Measure every workload; return the figures and why py-evm was skipped (if it was)."""
    bench = Bench()
    runner: PyEvmRunner | None = None
    skipped: str | None = None
    if with_pyevm:
        try:
            runner = bench.pyevm_runner()
        except PyEvmUnavailable as error:
            skipped = f"py-evm not installed: {error.hint}"
    iterations = 30 if quick else 300
    repeats = 1 if quick else 3
    out: list[Figures] = []
    for w in bench.workloads(quick):
        opcodes = bench.count_opcodes(w)
        per_tx_cost = max(1, opcodes // 500)
        n = max(5, iterations // per_tx_cost)
        # Warm-up: decoding and compiling the plain and traced tables happens once per code.
        bench.rate(w, None, max(2, n // 10), 1)
        bench.rate(w, TraceRecorder(), max(2, n // 10), 1)
        plain = bench.rate(w, None, n, repeats)
        traced = bench.rate(w, TraceRecorder(), n, repeats)
        pyevm: float | None = None
        if runner is not None:
            pyevm = _pyevm_rate(runner, w, max(3, n // 8), repeats)
        out.append(Figures(w.name, w.detail, opcodes, plain, traced, pyevm))
        if report is not None:
            report(f"measured {w.name}")
    return out, skipped


def _pyevm_rate(runner: PyEvmRunner, w: Workload, iterations: int, repeats: int) -> float:
    runner.call(SENDER, w.target, w.calldata(0), GAS)  # warm-up
    best = 0.0
    for _ in range(repeats):
        start = time.perf_counter()
        for i in range(iterations):
            if not runner.call(SENDER, w.target, w.calldata(i), GAS):
                raise RuntimeError(f"py-evm: {w.name} failed")
        best = max(best, iterations / (time.perf_counter() - start))
    return best
