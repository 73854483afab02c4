"""A fuzzing campaign on a deployed chain: executor, engine, oracles, outputs.

:class:`Campaign` wires a :class:`TestChain` to the engine: the contract target runs test
cases, the mutator gets the main contract's fuzzable functions, the five senders and a
dictionary seeded with the bytecode's constants and every known address, and the assertion
oracle turns panics into findings. Findings and new corpus entries are written to the
output directory the moment they appear (``findings/``, ``corpus/``), so nothing found is
lost if the campaign dies; ``summary.json`` is written at the end.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from secant.chain.chain import TestChain
from secant.chain.deploy import DeployedContract
from secant.engine.corpus import Seed
from secant.engine.dictionary import Dictionary, code_constants
from secant.engine.fuzzer import FuzzConfig, Fuzzer
from secant.engine.mutators import FunctionSpec
from secant.engine.values import vtype
from secant.evm.analysis import analyze
from secant.evm.crypto import keccak256
from secant.evm.opcodes import JUMPI
from secant.oracles.assertion import AssertionOracle
from secant.targets.contract import ContractTarget, ExecResult
from secant.targets.prefix_cache import PrefixCache
from secant.targets.trace import TransitionRecorder
from secant.types import Finding, TxSeq, case_to_json

if TYPE_CHECKING:
    from secant.campaign.directed import DirectedDistance


@dataclass
class CampaignConfig:
    """A campaign: the engine's configuration, an output directory, a directed target."""

    fuzz: FuzzConfig
    out: Path | None = None
    target_pcs: frozenset[int] = frozenset()
    # Resume from the cached state after an unchanged prefix instead of replaying it.
    prefix_cache: bool = True


def function_specs(chain: TestChain) -> tuple[list[FunctionSpec], list[str]]:
    """The main contract's fuzzable functions as mutator specs, and notes on skipped ones."""
    specs: list[FunctionSpec] = []
    notes: list[str] = []
    for fn in chain.fuzzable_functions():
        signature = fn.signature if fn.kind == "function" else fn.kind
        try:
            types = tuple(vtype(p) for p in fn.inputs)
        except ValueError as exc:
            notes.append(f"skipping {signature}: {exc}")
            continue
        specs.append(FunctionSpec(signature, None, types, fn.payable))
    return specs, notes


class Campaign:
    """One fuzzing campaign (see the module docstring)."""

    def __init__(self, chain: TestChain, config: CampaignConfig) -> None:
        self.chain = chain
        self.config = config
        directed = bool(config.target_pcs)
        # Eager sequences (Harvey's configuration D) identify paths over all transactions.
        # A prefix is stored at its second miss: most structural mutants have a new prefix
        # that never comes back, and storing one costs about a transaction
        # (bench/prefix_cache.py).
        cache = (PrefixCache(admit_after=2)
                 if config.prefix_cache and config.fuzz.sequences != "off" else None)
        self.target = ContractTarget(chain, TransitionRecorder() if directed else None,
                                     path_scope="all" if config.fuzz.sequences == "eager"
                                     else "last", prefix_cache=cache)
        specs, self.notes = function_specs(chain)
        if not specs:
            from secant.errors import SecantError
            main = chain.main.name if chain.main else "the contract"
            raise SecantError(f"{main} has no function to fuzz (only view/pure functions or "
                              "unsupported parameter types)",
                              "pick another contract with --contract")
        self.codes: dict[bytes, tuple[DeployedContract, bytes]] = {}
        constants: list[int] = []
        for contract in chain.contracts:
            if contract.role == "attacker":
                continue
            code = chain.code_at(contract.address)
            if code:
                self.codes.setdefault(keccak256(code), (contract, code))
                constants.extend(code_constants(code))
        addresses = [s.address for s in chain.senders] + [c.address for c in chain.contracts]
        dictionary = Dictionary(constants, addresses)
        self.fuzzer = Fuzzer(self.target.run, specs, [s.address for s in chain.senders],
                             dictionary, config.fuzz)
        opcodes = {op for code_hash, (_, code) in self.codes.items()
                   for _, op, _ in analyze(code, code_hash, chain.fork).instructions}
        # msg.value can go up to what a sender holds (a crowdsale's goal may be large).
        self.fuzzer.mutator.max_value = min(chain.balance(s) for s in chain.senders)
        self.fuzzer.mutator.reads_time = 0x42 in opcodes  # TIMESTAMP
        self.fuzzer.mutator.reads_number = 0x43 in opcodes  # NUMBER
        self.oracle = AssertionOracle(chain, chain.fork)
        self.directed: DirectedDistance | None = None
        if directed:
            from secant.campaign.directed import DirectedDistance
            assert chain.main is not None
            self.directed = DirectedDistance(chain.code_at(chain.main.address), chain.fork,
                                             config.target_pcs)
            self.fuzzer.seed_distance = self.directed
            self.fuzzer.observers.append(self.directed.observe)
            self.fuzzer.before_pick.append(lambda: self._refresh_distances())
        if cache is not None:
            # A round mutates the seed's last transaction under one prefix again and again,
            # and its structural mutations keep the head of that prefix: store the prefix
            # and its heads at their first miss.
            self.fuzzer.on_round.append(
                lambda case: cache.expect(case[:-1]) if len(case) > 1 else None)
        self.findings: dict[tuple[object, ...], Finding] = {}
        self.fuzzer.on_result = self._check
        self.fuzzer.on_new_seed = self._saved_seed
        self.on_finding: Callable[[Finding], None] | None = None
        if config.out is not None:
            (config.out / "corpus").mkdir(parents=True, exist_ok=True)
            (config.out / "findings").mkdir(parents=True, exist_ok=True)

    def _refresh_distances(self) -> None:
        if self.directed is not None:
            self.directed.refresh(self.fuzzer.corpus)

    # ------------------------------------------------------------------ events
    def _check(self, result: ExecResult) -> bool:
        """Oracles on a run with panics; return True when a new finding appeared."""
        new = False
        for site in self.oracle.check(result):
            if site.key in self.findings:
                continue
            stats = self.fuzzer.stats
            finding = Finding(
                kind=site.kind, swc=site.swc, contract=site.contract.name,
                function=site.function or self._function_name(result.case),
                pc=site.pc, source=site.source, detail=site.detail, key=site.key,
                case=result.case, sequence=case_to_json(result.case, self.chain.names()),
                execs_to_find=stats.execs, time_to_find_s=stats.elapsed,
            )
            self.findings[site.key] = finding
            self._write_finding(finding)
            if self.on_finding is not None:
                self.on_finding(finding)
            new = True
        return new

    @staticmethod
    def _function_name(case: TxSeq) -> str:
        return case[-1].function.split("(", 1)[0] if case else ""

    def _saved_seed(self, seed: Seed) -> None:
        out = self.config.out
        if out is None:
            return
        entry = {"path_id": seed.path_id, "origin": seed.origin, "found_at": seed.found_at,
                 "sequence": case_to_json(seed.case, self.chain.names())}
        name = out / "corpus" / f"{len(self.fuzzer.corpus) - 1:06d}.json"
        name.write_text(json.dumps(entry, indent=1))

    def _write_finding(self, finding: Finding) -> None:
        out = self.config.out
        if out is None:
            return
        name = out / "findings" / f"{len(self.findings):04d}-{finding.kind}-{finding.pc}.json"
        name.write_text(json.dumps(finding.to_json(), indent=1))

    # ------------------------------------------------------------------ running
    def run(self) -> dict[str, Any]:
        """Fuzz until the budget is spent; write and return the summary."""
        self.fuzzer.fuzz()
        return self.finish()

    def finish(self) -> dict[str, Any]:
        """Write ``summary.json`` (also after an interrupted run) and return it."""
        summary = self.summary()
        if self.config.out is not None:
            (self.config.out / "summary.json").write_text(json.dumps(summary, indent=1))
        return summary

    def extra_progress(self) -> list[tuple[str, str]]:
        """More rows for the progress display (sequence and adaptive counters)."""
        fuzzer = self.fuzzer
        stats = fuzzer.stats
        lengths = fuzzer.corpus.lengths()
        rows = [("sequence lengths", ", ".join(f"{n}:{c}" for n, c in lengths.items()))]
        if fuzzer.config.sequences == "demand":
            rate = stats.probe_hits / stats.probes if stats.probes else 0.0
            rows.append(("aggressive probes", f"{stats.probes:,} ({stats.probe_hits} new "
                                              f"paths, {rate:.1%}); demanding: "
                                              f"{len(fuzzer.sequences.demanding)} function(s)"))
        cache = self.target.prefix_cache
        if cache is not None:
            rows.append(("prefix cache", f"{cache.hit_rate:.1%} hits, {cache.partial_hits:,} "
                                         f"misses resumed from a shorter prefix, "
                                         f"{len(cache)} entries"))
        if fuzzer.adaptive is not None:
            from_adaptive = sum(1 for seed in fuzzer.corpus.seeds if seed.adaptive)
            rows.append(("adaptive seeds", f"{len(fuzzer.adaptive)} just-missed branches, "
                                           f"{stats.adaptive_picks} picks, {from_adaptive} "
                                           "corpus entries"))
        return rows

    def coverage_figures(self) -> dict[str, int]:
        """Covered and total branch sides and instructions of the target contracts."""
        fork = self.chain.fork
        coverage = self.fuzzer.coverage
        branches_total = instructions_total = instructions_covered = 0
        for code_hash, (_, code) in self.codes.items():
            analysis = analyze(code, code_hash, fork)
            block_pcs = analysis.block_pcs()
            instructions_total += len(analysis.instructions)
            branches_total += 2 * sum(1 for _, op, _ in analysis.instructions if op == JUMPI)
            instructions_covered += sum(len(block_pcs.get(pc, ())) for h, pc in coverage.blocks
                                        if h == code_hash)
        branches_covered = sum(1 for h, _, _ in coverage.edges if h in self.codes)
        return {"branches_covered": branches_covered, "branches_total": branches_total,
                "instructions_covered": instructions_covered,
                "instructions_total": instructions_total}

    def summary(self) -> dict[str, Any]:
        """The campaign's ``summary.json``."""
        main = self.chain.main
        summary = self.fuzzer.summary()
        summary.update(self.coverage_figures())
        summary["contract"] = main.name if main else None
        summary["seed"] = self.config.fuzz.seed
        summary["schedule"] = self.config.fuzz.schedule
        summary["findings"] = [f.to_json() for f in self.findings.values()]
        cache = self.target.prefix_cache
        if cache is not None:
            summary["prefix_cache"] = {"hits": cache.hits, "misses": cache.misses,
                                       "hit_rate": round(cache.hit_rate, 4),
                                       "partial_hits": cache.partial_hits,
                                       "entries": len(cache)}
        summary["notes"] = list(self.notes)
        return summary
