"""Shrinking: each pass on plain predicates, then minimal findings of real campaigns.

The unit tests drive :class:`Shrinker` with a predicate over the case (the key shows when it
holds) and check one pass each: transactions dropped (suffixes, prefixes, runs), integers
searched down to the boundary within their type, bools, addresses, bytes, strings, arrays
and tuples simplified, senders, values and block deltas, the budget and the cache.

The quality tests run campaigns with a fixed seed and execution budget on
``tests/fixtures/shrink/Shrink.sol``, the assertion fixture and the bundled Baz example,
and state the minimal case each finding must shrink to.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Collection
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from secant.campaign.campaign import Campaign
from secant.campaign.config import CampaignConfig
from secant.chain.chain import TestChain
from secant.compile import Compilation, load
from secant.engine.config import FuzzConfig
from secant.engine.shrink import (
    DEFAULT_SHRINK_LIMIT,
    Key,
    Shrinker,
    ShrinkProgress,
    ShrinkSpace,
    shrink,
)
from secant.engine.values import VType
from secant.types import Tx, TxSeq
from tests.compile.conftest import needs_node, run_cli

ROOT = Path(__file__).resolve().parents[2]
SHRINK_SOL = ROOT / "tests" / "fixtures" / "shrink" / "Shrink.sol"
CHECKS_SOL = ROOT / "tests" / "fixtures" / "oracles" / "Checks.sol"
BAZ_SOL = ROOT / "examples" / "contracts" / "Baz.sol"

KEY: Key = ("bug",)
S1, S2, S3 = 0x10000, 0x20000, 0x30000  # the campaign's senders, simplest first
C1 = 0xC0FFEE  # a contract the chain names
U256, U8, I8, I256 = VType("uint", 256), VType("uint", 8), VType("int", 8), VType("int", 256)
BOOL, ADDRESS, BYTES, STRING = VType("bool"), VType("address", 160), VType("bytes"), \
    VType("string")
B32 = VType("fbytes", 32)


def space(**functions: tuple[VType, ...]) -> ShrinkSpace:
    """A space whose functions ``f`` are ``f(...)`` on the main contract."""
    return ShrinkSpace({(None, name): types for name, types in functions.items()},
                       (S1, S2, S3), (C1,))


def call(function: str, *args: Any, sender: int = S3, **fields: Any) -> Tx:
    return Tx(function, tuple(args), sender, **fields)


class Recorder:
    """A runner from a predicate: the key shows when the predicate holds; every run kept."""

    def __init__(self, fails: Callable[[TxSeq], bool]) -> None:
        self.fails = fails
        self.runs: list[TxSeq] = []

    def __call__(self, case: TxSeq) -> Collection[Key]:
        self.runs.append(case)
        return {KEY} if self.fails(case) else set()


def shrunk(case: TxSeq, fails: Callable[[TxSeq], bool], shrink_space: ShrinkSpace | None = None,
           limit: int = DEFAULT_SHRINK_LIMIT) -> tuple[TxSeq, Recorder]:
    runner = Recorder(fails)
    result = shrink(runner, KEY, case, limit, shrink_space)
    assert result.reproduced and fails(result.case)
    assert len(runner.runs) == len(set(runner.runs)) == result.execs  # each candidate once
    return result.case, runner


def names(case: TxSeq) -> list[str]:
    return [tx.function for tx in case]


# ---------------------------------------------------------------------- transactions
def test_the_shortest_failing_prefix_is_kept() -> None:
    case = tuple(call(name) for name in "abcdef")
    result, _ = shrunk(case, lambda c: "c" in names(c))
    assert names(result) == ["c"]
    # An order that matters keeps every step it needs and nothing after the last one.
    result, _ = shrunk(case, lambda c: names(c)[:2] == ["a", "b"])
    assert names(result) == ["a", "b"]


def test_transactions_are_dropped_from_the_front() -> None:
    case = tuple(call(name) for name in "abcdef")
    result, runner = shrunk(case, lambda c: names(c)[-1:] == ["f"])
    assert names(result) == ["f"]
    assert runner.runs[1:6] == [case[:n] for n in range(1, 6)]  # suffixes first, then
    assert runner.runs[6] == case[5:]  # the most of the front at once


def test_runs_of_transactions_are_dropped_from_the_middle() -> None:
    case = tuple(call(name) for name in "xaxxbxxcx")

    def in_order(c: TxSeq) -> bool:
        wanted = iter(names(c))
        return all(step in wanted for step in "abc")

    result, _ = shrunk(case, in_order)
    assert names(result) == ["a", "b", "c"]


def test_a_prefix_the_finding_names_is_tried_first() -> None:
    case = tuple(call(name) for name in "abcdef")
    runs: list[TxSeq] = []

    def run(c: TxSeq) -> dict[Key, TxSeq | None]:
        runs.append(c)
        index = names(c).index("b") if "b" in names(c) else None
        return {} if index is None else {KEY: c[:index + 1]}  # a property broken by b

    result = Shrinker(run, KEY).shrink(case)
    assert names(result.case) == ["b"] and result.complete
    assert runs[:2] == [case, case[:2]]


def test_storage_overrides_are_dropped() -> None:
    case = (call("a", storage=((1, 2),)), call("b", storage=((3, 4), (5, 6))))
    result, _ = shrunk(case, lambda c: len(c) == 2)
    assert [tx.storage for tx in result] == [(), ()]
    result, _ = shrunk(case, lambda c: len(c) == 2 and c[1].storage[:1] == ((3, 4),))
    assert [tx.storage for tx in result] == [(), ((3, 4), (5, 6))]


# ---------------------------------------------------------------------- integers
def first_arg(case: TxSeq) -> Any:
    return case[0].args[0]


def test_integers_binary_search_to_the_boundary() -> None:
    result, runner = shrunk((call("f", 10**66),), lambda c: first_arg(c) > 1000, space(f=(U256,)))
    assert first_arg(result) == 1001
    assert len(runner.runs) < 40  # not one run per bit of 10**66 (220)
    result, _ = shrunk((call("f", 12345),), lambda c: first_arg(c) >= 1, space(f=(U256,)))
    assert first_arg(result) == 1
    result, _ = shrunk((call("f", 7),), lambda c: True, space(f=(U256,)))
    assert first_arg(result) == 0
    result, _ = shrunk((call("f", 42),), lambda c: first_arg(c) == 42, space(f=(U256,)))
    assert first_arg(result) == 42  # nothing below fails: left as it is


def test_negative_integers_search_toward_zero_from_below() -> None:
    result, _ = shrunk((call("f", -10**30),), lambda c: first_arg(c) < -1000, space(f=(I256,)))
    assert first_arg(result) == -1001
    result, _ = shrunk((call("f", -5),), lambda c: first_arg(c) < 0, space(f=(I256,)))
    assert first_arg(result) == -1


@pytest.mark.parametrize("vt, value, fails, expected", [
    (U8, 255, lambda x: x >= 100, 100),
    (U8, 200, lambda x: x > 150 or x == 37, 151),  # 37 is never tried
    (I8, -128, lambda x: x <= -100, -100),
    (I8, 127, lambda x: x > 64, 65),
])
def test_small_integers_stay_within_their_type(vt: VType, value: int,
                                               fails: Callable[[int], bool],
                                               expected: int) -> None:
    result, runner = shrunk((call("f", value),), lambda c: fails(first_arg(c)), space(f=(vt,)))
    assert first_arg(result) == expected
    low, high = (0, 255) if vt.kind == "uint" else (-128, 127)
    assert all(low <= first_arg(run) <= high for run in runner.runs)


def test_bools_toward_false() -> None:
    result, _ = shrunk((call("f", True, 5),), lambda c: True, space(f=(BOOL, U256)))
    assert result[0].args == (False, 0)
    result, _ = shrunk((call("f", True, 5),), lambda c: c[0].args[0] is True,
                       space(f=(BOOL, U256)))
    assert result[0].args == (True, 0)


def test_addresses_toward_zero_then_the_senders_then_the_named_accounts() -> None:
    anywhere = 0xDEADBEEF
    result, _ = shrunk((call("f", anywhere),), lambda c: True, space(f=(ADDRESS,)))
    assert first_arg(result) == 0
    result, _ = shrunk((call("f", anywhere),), lambda c: first_arg(c) != 0, space(f=(ADDRESS,)))
    assert first_arg(result) == S1
    result, _ = shrunk((call("f", anywhere),), lambda c: first_arg(c) not in (0, S1, S2),
                       space(f=(ADDRESS,)))
    assert first_arg(result) == S3
    result, _ = shrunk((call("f", anywhere),), lambda c: first_arg(c) > S3, space(f=(ADDRESS,)))
    assert first_arg(result) == C1
    # A named address moves only toward the names before it.
    result, runner = shrunk((call("f", S2),), lambda c: first_arg(c) != 0, space(f=(ADDRESS,)))
    assert first_arg(result) == S1
    assert {first_arg(run) for run in runner.runs} == {S2, 0, S1}


# ---------------------------------------------------------------------- bytes and containers
def test_bytes_toward_empty_then_zero_bytes() -> None:
    data = bytes(range(1, 41))
    result, _ = shrunk((call("f", data),), lambda c: True, space(f=(BYTES,)))
    assert first_arg(result) == b""
    result, _ = shrunk((call("f", data),), lambda c: len(first_arg(c)) >= 3, space(f=(BYTES,)))
    assert first_arg(result) == b"\0\0\0"
    result, _ = shrunk((call("f", data),), lambda c: 7 in first_arg(c), space(f=(BYTES,)))
    assert first_arg(result) == b"\x07"
    result, _ = shrunk((call("f", b"\xff" * 32),), lambda c: first_arg(c)[31] == 0xFF,
                       space(f=(B32,)))
    assert first_arg(result) == bytes(31) + b"\xff"  # bytesN keep their size


def test_strings_toward_empty_then_a() -> None:
    result, _ = shrunk((call("f", "hello, world"),), lambda c: len(first_arg(c)) >= 2,
                       space(f=(STRING,)))
    assert first_arg(result) == "aa"
    result, _ = shrunk((call("f", "hello, world"),), lambda c: "w" in first_arg(c),
                       space(f=(STRING,)))
    assert first_arg(result) == "w"


def test_dynamic_arrays_toward_empty_and_fixed_arrays_keep_their_length() -> None:
    dynamic = VType("array", elem=U256)
    fixed = VType("array", length=3, elem=U8)
    result, _ = shrunk((call("f", (5, 9, 100, 3), (7, 8, 9)),), lambda c: True,
                       space(f=(dynamic, fixed)))
    assert result[0].args == ((), (0, 0, 0))
    result, _ = shrunk((call("f", (5, 9, 100, 3), (7, 8, 9)),),
                       lambda c: len(c[0].args[0]) >= 2 and c[0].args[1][2] > 4,
                       space(f=(dynamic, fixed)))
    assert result[0].args == ((0, 0), (0, 0, 5))
    nested = VType("array", elem=VType("array", elem=U256))
    result, _ = shrunk((call("f", ((1, 2, 3), (4, 5))),),
                       lambda c: any(len(inner) == 2 for inner in first_arg(c)),
                       space(f=(nested,)))
    assert first_arg(result) == ((0, 0),)


def test_tuples_shrink_field_by_field() -> None:
    record = VType("tuple", fields=(U256, BOOL, ADDRESS, BYTES))
    result, _ = shrunk((call("f", (77, True, 0xABC, b"xyz")),),
                       lambda c: first_arg(c)[0] > 10, space(f=(record,)))
    assert first_arg(result) == (11, False, 0, b"")


def test_a_function_the_space_does_not_know_keeps_its_arguments() -> None:
    result, _ = shrunk((call("g", 10**9, b"abc"),), lambda c: True, space(f=(U256,)))
    assert result[0].args == (10**9, b"abc")


# ---------------------------------------------------------------------- senders, values, blocks
def test_senders_toward_the_first_one() -> None:
    case = (call("a", sender=S3), call("b", sender=0x999))
    result, _ = shrunk(case, lambda c: len(c) == 2, space())
    assert [tx.sender for tx in result] == [S1, S1]
    result, _ = shrunk(case, lambda c: len(c) == 2 and c[0].sender != S1, space())
    assert [tx.sender for tx in result] == [S2, S1]


def test_values_and_block_deltas_toward_zero() -> None:
    case = (call("a", value=10**18, blocks=1000, time=10**6),)
    result, _ = shrunk(case, lambda c: True)
    assert (result[0].value, result[0].blocks, result[0].time) == (0, 0, 0)
    result, _ = shrunk(case, lambda c: c[0].value >= 5 and c[0].time >= 60)
    assert (result[0].value, result[0].blocks, result[0].time) == (5, 0, 60)


# ---------------------------------------------------------------------- budget, cache, order
def test_the_budget_is_respected_exactly() -> None:
    case = tuple(call(name, 10**40) for name in "abcdef")

    def fails(c: TxSeq) -> bool:
        return any(tx.function == "c" and tx.args[0] > 10**20 for tx in c)

    for limit in (1, 7, 30):
        runner = Recorder(fails)
        result = Shrinker(runner, KEY, limit, space(c=(U256,))).shrink(case)
        assert len(runner.runs) == result.execs == limit
        assert result.reproduced and not result.complete
        assert fails(result.case)
    runner = Recorder(lambda c: True)
    result = Shrinker(runner, KEY, 0).shrink(case)
    assert runner.runs == [] and not result.reproduced and result.case == case


def test_a_case_that_does_not_fail_again_is_kept() -> None:
    case = (call("a", 5),)
    result = shrink(Recorder(lambda c: False), KEY, case, 100, space(a=(U256,)))
    assert (result.case, result.execs, result.reproduced, result.complete) == (case, 1, False,
                                                                             False)
    assert result.stats() == {"execs": 1, "tx_before": 1, "tx_after": 1, "reproduced": False,
                              "complete": False}


def test_shrinking_is_deterministic_and_runs_each_candidate_once() -> None:
    case = tuple(call(name, 10**20 + i, sender=S3, value=i) for i, name in enumerate("xaxbx"))

    def fails(c: TxSeq) -> bool:
        wanted = tuple(tx for tx in c if tx.function in "ab")
        return names(wanted) == ["a", "b"] and wanted[1].args[0] > 500

    first, runner = shrunk(case, fails, space(a=(U256,), b=(U256,), x=(U256,)))
    second, again = shrunk(case, fails, space(a=(U256,), b=(U256,), x=(U256,)))
    assert first == second and runner.runs == again.runs
    assert first == (call("a", 0, sender=S1), call("b", 501, sender=S1))


def test_progress_rows() -> None:
    progress = ShrinkProgress(2)
    shrinker = Shrinker(Recorder(lambda c: True), KEY)
    shrinker.shrink((call("a"), call("b")))
    progress.active = shrinker
    assert progress.row() == f"finding 1/2: 2 -> 1 txs, {shrinker.execs} execs"
    progress.active, progress.done, progress.execs = None, 2, 12
    progress.tx_before, progress.tx_after = 5, 2
    assert progress.row() == "2/2 findings, 5 -> 2 txs, 12 execs"


# ---------------------------------------------------------------------- real campaigns
@functools.cache
def compiled(path: Path) -> list[Compilation]:
    return load([path])


def run_campaign(path: Path, contract: str, execs: int, seed: int = 0,
                 out: Path | None = None, **config: Any) -> Campaign:
    chain = TestChain.setup(compiled(path), contract=contract)
    campaign = Campaign(chain, CampaignConfig(FuzzConfig(seed=seed, max_execs=execs), out=out,
                                              **config))
    campaign.run()
    return campaign


def calls(sequence: list[dict[str, Any]]) -> list[tuple[str, list[Any], str]]:
    """A finding's sequence as (function name, args, sender)."""
    return [(step["function"].split("(")[0], step["args"], step["sender"])
            for step in sequence]


@needs_node
def test_one_step_shrinks_to_one_call_with_the_simplest_arguments(tmp_path: Path) -> None:
    campaign = run_campaign(SHRINK_SOL, "OneStep", 3000, out=tmp_path)
    [finding] = campaign.findings.values()
    assert calls(finding.sequence) == [("boom", [1001, 0, 0, "0x", [0, 0]], "deployer")]
    assert finding.original_sequence[0]["args"][0] > 1001  # the case found is kept
    assert finding.shrink is not None and finding.shrink["reproduced"]
    assert finding.shrink["complete"] and finding.shrink["execs"] <= 100
    # The finding's file is rewritten shrunk, with the case found; the summary has both.
    [path] = (tmp_path / "findings").glob("*.json")
    on_disk = json.loads(path.read_text())
    assert on_disk["sequence"] == finding.sequence
    assert on_disk["original_sequence"] == finding.original_sequence
    assert on_disk["shrink"] == finding.shrink
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["findings"] == [on_disk]
    assert summary["shrink"] == {"limit": DEFAULT_SHRINK_LIMIT, "findings": 1,
                                 "execs": finding.shrink["execs"], "tx_before": 1,
                                 "tx_after": 1, "interrupted": False, "out_of_time": False,
                                 "cut_short": 0, "not_shrunk": 0}


@needs_node
def test_two_and_three_step_bugs_keep_exactly_their_steps() -> None:
    [two] = run_campaign(SHRINK_SOL, "TwoStep", 3000).findings.values()
    assert calls(two.sequence) == [("arm", [51], "deployer"), ("fire", [52], "deployer")]
    [three] = run_campaign(SHRINK_SOL, "ThreeStep", 5000).findings.values()
    assert calls(three.sequence) == [("open", [101], "deployer"), ("load", [201], "deployer"),
                                     ("fire", [301], "deployer")]
    # Found with noise (six transactions when this test was written; the search decides).
    assert three.shrink is not None
    assert (three.shrink["tx_before"], three.shrink["tx_after"]) == (
        len(three.original_sequence), 3)
    assert three.source is not None and three.source.endswith("Shrink.sol:95")


@needs_node
def test_a_property_shrinks_to_the_two_steps_that_break_it() -> None:
    campaign = run_campaign(SHRINK_SOL, "Staged", 10000, seed=1)
    [finding] = campaign.findings.values()
    assert calls(finding.sequence) == [("step", [1], "deployer"), ("step", [2], "deployer")]
    assert finding.detail == "echidna_stage_below_two() returned false after 2 transactions"
    found = len(finding.original_sequence)  # 3 when this test was written
    assert finding.original_detail.endswith(f"after {found} transactions")
    if found > 2:
        assert finding.to_json()["original_detail"] == finding.original_detail


@needs_node
def test_baz_shrinks_to_a_42_and_small_b_c() -> None:
    [finding] = run_campaign(BAZ_SOL, "Baz", 3000).findings.values()
    assert calls(finding.sequence) == [("baz", [42, 3, -3], "deployer")]
    assert finding.original_sequence[0]["args"][0] == 42
    assert abs(finding.original_sequence[0]["args"][1]) > 10**70


@needs_node
def test_each_failing_check_shrinks_to_its_own_minimal_call() -> None:
    # The minimal call of each failing check, by its line in Checks.sol.
    minimal = {11: ("check", [1]), 14: ("check", [2]), 16: ("check", [3]),
               19: ("check", [4]), 21: ("check", [5]), 26: ("divide", [0, 0]),
               31: ("grow", [56]), 38: ("pick", [3])}
    campaign = run_campaign(CHECKS_SOL, "Checks", 3000)
    by_line = {}
    for finding in campaign.findings.values():
        assert finding.source is not None and len(finding.sequence) == 1
        by_line[int(finding.source.rsplit(":", 1)[1])] = calls(finding.sequence)[0][:2]
    assert {line: minimal[line] for line in by_line} == by_line
    assert set(by_line) >= {11, 14, 16, 19, 21}  # the five asserts at least
    assert campaign.shrinking is not None and campaign.shrinking.done == len(by_line)


@needs_node
def test_a_noisy_case_shrinks_on_the_chain_without_touching_the_campaign() -> None:
    chain = TestChain.setup(compiled(SHRINK_SOL), contract="TwoStep")
    campaign = Campaign(chain, CampaignConfig(FuzzConfig(seed=0, max_execs=10)))
    worker = campaign.workers[0]
    user, attacker = chain.sender("user2").address, chain.attackers[0].address
    noisy = (Tx("reload(uint256)", (12,), user), Tx("arm(uint256)", (10**60,), attacker),
             Tx("reload(uint256)", (5,), user, value=0, blocks=3, time=100),
             Tx("fire(uint256)", (2**255,), attacker), Tx("reload(uint256)", (1,), user))
    [key] = worker.replay(noisy)
    result = Shrinker(worker.finding_keys, key, 500, worker.shrink_space()).shrink(noisy)
    deployer = chain.deployer.address
    assert result.case == (Tx("arm(uint256)", (51,), deployer),
                           Tx("fire(uint256)", (52,), deployer))
    assert result.complete and result.execs < 100
    # Replays leave the campaign as it was: no run, no finding, no corpus entry.
    assert worker.fuzzer.stats.execs == 0 and campaign.findings == {}
    assert len(worker.fuzzer.corpus) == 0


@needs_node
def test_shrink_limit_zero_reports_the_findings_as_found(tmp_path: Path) -> None:
    on = run_campaign(SHRINK_SOL, "TwoStep", 3000)
    off = run_campaign(SHRINK_SOL, "TwoStep", 3000, out=tmp_path, shrink_limit=0)
    [found] = off.findings.values()
    [shrunk_finding] = on.findings.values()
    assert found.shrink is None and found.sequence == shrunk_finding.original_sequence
    assert off.shrinking is None
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert "shrink" not in summary and "original_sequence" not in summary["findings"][0]
    # Shrinking runs after the search and changes none of it.
    assert (on.summary()["execs"], on.summary()["paths"]) == (off.summary()["execs"],
                                                               off.summary()["paths"])


@needs_node
def test_the_budget_bounds_each_finding_of_a_campaign() -> None:
    campaign = run_campaign(SHRINK_SOL, "ThreeStep", 5000, shrink_limit=10)
    [finding] = campaign.findings.values()
    assert finding.shrink is not None
    assert finding.shrink["execs"] == 10 and not finding.shrink["complete"]
    assert len(finding.sequence) <= len(finding.original_sequence)


@needs_node
def test_fuzz_prints_the_shrunk_case_and_takes_shrink_limit(tmp_path: Path) -> None:
    proc = run_cli("fuzz", str(SHRINK_SOL), "-c", "TwoStep", "--execs", "3000", "-q",
                   "--out", str(tmp_path / "a"))
    assert proc.returncode == 0, proc.stderr
    assert '"function": "arm(uint256)", "args": [51]' in proc.stdout
    [finding] = json.loads((tmp_path / "a" / "summary.json").read_text())["findings"]
    assert (f"(shrunk from {len(finding['original_sequence'])} transactions in "
            f"{finding['shrink']['execs']} execs" in proc.stdout)
    proc = run_cli("fuzz", str(SHRINK_SOL), "-c", "TwoStep", "--execs", "3000", "-q",
                   "--out", str(tmp_path / "b"), "--shrink-limit", "0")
    assert proc.returncode == 0, proc.stderr
    assert "shrunk from" not in proc.stdout
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert "shrink" not in summary


def test_a_shrinker_only_needs_the_space_it_is_given() -> None:
    # ShrinkSpace.of dedups and orders what a campaign names: 0, senders, other names.
    from secant.engine.mutators import FunctionSpec

    made = ShrinkSpace.of([FunctionSpec("f(uint8)", None, (U8,), False)], [S1, S2, S1],
                          [S2, C1, C1])
    assert made.types == {(None, "f(uint8)"): (U8,)}
    assert made.address_order() == (0, S1, S2, C1)
    assert replace(made, senders=()).address_order() == (0, S2, C1)


@needs_node
def test_the_progress_display_shows_shrinking() -> None:
    from io import StringIO

    from rich.console import Console

    from secant.campaign.progress import ProgressView
    from secant.engine.events import FuzzListener

    chain = TestChain.setup(compiled(SHRINK_SOL), contract="ThreeStep")
    campaign = Campaign(chain, CampaignConfig(FuzzConfig(seed=0, max_execs=5000)))
    view = ProgressView(campaign)
    seen: list[str] = []

    def text() -> str:
        console = Console(file=StringIO(), width=120)
        console.print(view.render())
        output = console.file.getvalue()  # type: ignore[attr-defined]
        assert isinstance(output, str)
        return output

    class Watch(FuzzListener):
        def on_progress(self) -> None:
            if campaign.shrinking is not None and campaign.shrinking.active is not None:
                seen.append(campaign.shrinking.row())

    campaign.listen(Watch())
    campaign.run()
    [finding] = campaign.findings.values()
    found = len(finding.original_case or ())
    assert found > 3  # the search's case has noise to shrink away
    assert seen[0].startswith(f"finding 1/1: {found} -> {found} txs, 1 execs")
    assert seen[-1].startswith(f"finding 1/1: {found} -> 3 txs")
    assert len(seen) == campaign.shrinking.execs  # type: ignore[union-attr]
    shown = [line for line in text().splitlines() if "shrinking" in line]
    assert len(shown) == 1 and shown[0].split("shrinking", 1)[1].strip() == (
        f"1/1 findings, {found} -> 3 txs, {len(seen)} execs")


@needs_node
def test_ctrl_c_keeps_the_smallest_case_so_far_and_stops_shrinking() -> None:
    # Seed 5's case (8 transactions) loses some within the first twelve replays.
    campaign = run_campaign(SHRINK_SOL, "ThreeStep", 5000, seed=5, shrink_limit=0)
    [finding] = campaign.findings.values()
    found = finding.case
    worker = campaign.workers[0]
    replay = worker.replay
    runs: list[TxSeq] = []

    def interrupted_replay(case: TxSeq) -> Any:
        if len(runs) == 12:
            raise KeyboardInterrupt
        runs.append(case)
        return replay(case)

    worker.replay = interrupted_replay  # type: ignore[method-assign]
    campaign.config.shrink_limit = DEFAULT_SHRINK_LIMIT
    summary = campaign.finish()
    assert finding.shrink is not None and finding.shrink["interrupted"]
    assert finding.shrink["execs"] == 12 and not finding.shrink["complete"]
    assert finding.original_case == found and finding.case != found
    assert finding.case is not None and len(finding.case) < len(found or ())
    assert finding.key in replay(finding.case)  # the case kept still fails
    assert summary["shrink"]["interrupted"] and summary["shrink"]["findings"] == 1
    assert campaign.finish()["shrink"] == summary["shrink"]  # not shrunk again
