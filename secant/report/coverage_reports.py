"""The coverage and frontier files a finished campaign writes into its output folder.

``OUT/coverage.lcov`` (``secant.report.coverage``), ``OUT/frontier.json``
(``secant.report.frontier``), ``OUT/coverage.png``, ``OUT/coverage.svg`` and
``OUT/timeline.csv`` (``secant.report.plot``) and ``OUT/coverage/index.html`` with a page per source
(``secant.report.coverage_html``). :func:`write_reports` takes what a campaign holds (its
chain, its target codes, its fuzzers, the edge counter it ran, its timeline) and leaves
the campaign layer out: the control-flow graph builder comes in as a function.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from secant.chain.chain import TestChain
from secant.chain.deploy import DeployedContract
from secant.engine.dictionary import code_constants
from secant.engine.fuzzer import Fuzzer
from secant.engine.mutators import FunctionSpec
from secant.evm.analysis import analyze
from secant.files import write_atomic
from secant.report.coverage import CodeCoverage, lcov, source_coverage
from secant.report.coverage_html import write_html
from secant.report.frontier import FrontierEntry, FrontierInputs, Graph, closest_cases, frontier
from secant.report.frontier import to_json as frontier_json
from secant.report.plot import Timeline, plot
from secant.targets.contract import ContractTarget

Codes = Mapping[bytes, tuple[DeployedContract, bytes]]
"""A campaign's target codes: code hash -> (a contract with that code, the code)."""


def code_coverage(codes: Codes, fuzzers: Sequence[Fuzzer],
                  counts: Mapping[tuple[bytes, int, bool], int], chain: TestChain
                  ) -> list[CodeCoverage]:
    """The coverage of every target code over all fuzzers, with its source map."""
    blocks: set[tuple[bytes, int]] = set().union(*(f.coverage.blocks for f in fuzzers))
    edges: set[tuple[bytes, int, bool]] = set().union(*(f.coverage.edges for f in fuzzers))
    found = []
    for code_hash, (contract, code) in codes.items():
        mapper = (contract.compilation.mapper(contract.compiled)
                  if contract.compiled is not None and contract.compilation is not None
                  else None)
        found.append(CodeCoverage(
            contract.name, code_hash, analyze(code, code_hash, chain.fork), mapper,
            frozenset(pc for h, pc in blocks if h == code_hash),
            frozenset((pc, side) for h, pc, side in edges if h == code_hash),
            {(pc, side): n for (h, pc, side), n in counts.items() if h == code_hash}))
    return found


def frontier_inputs(chain: TestChain, codes: Codes, covered: Sequence[CodeCoverage],
                    fuzzers: Sequence[Fuzzer], functions: Sequence[FunctionSpec],
                    senders: Sequence[int], counts: Mapping[tuple[bytes, int, bool], int],
                    graph_of: Callable[[bytes], Graph]) -> FrontierInputs:
    """What the frontier needs, from a campaign's chain, codes and fuzzers."""
    edges = {(c.code_hash, pc, side) for c in covered for pc, side in c.edges}
    main = chain.main.address if chain.main is not None else None
    called = {(main if spec.to is None else spec.to, spec.signature) for spec in functions}
    uncalled: dict[int, str] = {}
    for contract, _ in codes.values():
        for fn in contract.abi.functions:
            if (contract.address, fn.signature) not in called:
                uncalled[int.from_bytes(fn.selector, "big")] = fn.signature
    code_by_hash = {code_hash: code for code_hash, (_, code) in codes.items()}
    graphs: dict[bytes, Graph | None] = {}

    def graph(code_hash: bytes) -> Graph | None:
        if code_hash not in graphs:
            code = code_by_hash.get(code_hash)
            graphs[code_hash] = graph_of(code) if code is not None else None
        return graphs[code_hash]

    # A target of its own: replays leave the campaign's targets and caches alone.
    target = ContractTarget(chain, frozenset())
    return FrontierInputs(
        codes=covered, closest=closest_cases(fuzzers, edges), tried=counts, run=target.run,
        graph=graph, corpus=[seed.case for f in fuzzers for seed in f.corpus.seeds],
        constants=frozenset(v for _, code in codes.values() for v in code_constants(code)),
        accounts={address: name for name, address in chain.names().items()},
        senders=frozenset(senders),
        code_hashes={contract.address: code_hash for code_hash, (contract, _) in codes.items()},
        uncalled=uncalled, infeasible=infeasible_sides(fuzzers))


def infeasible_sides(fuzzers: Sequence[Fuzzer]) -> dict[tuple[bytes, int, bool], str]:
    """The sides the policies proved unreachable on a path (Harvey's concolic stage)."""
    found: dict[tuple[bytes, int, bool], str] = {}
    for fuzzer in fuzzers:
        found.update(fuzzer.policy.infeasible())
    return found


def write_reports(out: Path, chain: TestChain, codes: Codes, fuzzers: Sequence[Fuzzer],
                  functions: Sequence[FunctionSpec], senders: Sequence[int],
                  counts: Mapping[tuple[bytes, int, bool], int], timeline: Timeline,
                  graph_of: Callable[[bytes], Graph], summary: Mapping[str, Any]
                  ) -> list[FrontierEntry]:
    """Write the coverage files, the timeline and its plot, the HTML report and the frontier.

    Returns the frontier.
    """
    covered = code_coverage(codes, fuzzers, counts, chain)
    reports = source_coverage(covered)
    write_atomic(out / "coverage.lcov", lcov(reports))
    entries = frontier(frontier_inputs(chain, codes, covered, fuzzers, functions, senders,
                                       counts, graph_of))
    write_atomic(out / "frontier.json", json.dumps(frontier_json(entries), indent=1))
    contract = summary.get("contract") or "campaign"
    write_atomic(out / "timeline.csv", timeline.to_csv())
    plot(timeline, out / "coverage.png", out / "coverage.svg", f"secant: {contract}")
    facts = [("contract", str(contract)), ("seed", str(summary.get("seed", "-"))),
             ("executions", f"{summary.get('execs', 0):,}"),
             ("seconds", f"{summary.get('elapsed_s', 0):.1f}"),
             ("paths", str(summary.get("paths", "-"))),
             ("branch sides (all code)",
              f"{summary.get('branches_covered', '-')}/{summary.get('branches_total', '-')}"),
             ("instructions (all code)", f"{summary.get('instructions_covered', '-')}/"
                                         f"{summary.get('instructions_total', '-')}"),
             ("findings", str(len(summary.get("findings", ()))))]
    write_html(out / "coverage", reports, entries, f"secant coverage: {contract}", facts,
               (out / "coverage.svg").read_text())
    return entries
