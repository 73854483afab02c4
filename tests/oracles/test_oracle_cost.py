"""What the oracles cost on runs that cannot concern them, and that it loses no finding.

Every oracle is on by default, so each one must cost (almost) nothing where it cannot
report anything: a static look per code decides whether it needs a recording at all, a
cheap trigger per run decides whether a run is worth any work, and nothing is judged twice
(a run that can only show keys the campaign has is not replayed or worded again). These
tests pin each of those decisions on the fixtures, and check the static answers against
what the dataflow recording shows on campaigns' runs (an answer "never" that a run
contradicts would lose findings).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from secant.campaign.campaign import Campaign
from secant.campaign.config import CampaignConfig
from secant.chain.chain import TestChain
from secant.compile import load
from secant.compile.arith_types import watched_sites, wrapping_sites
from secant.engine.config import FuzzConfig
from secant.engine.events import FuzzListener
from secant.engine.oracle import Oracle
from secant.evm.crypto import keccak256
from secant.evm.opcodes import CALL, CALLCODE, DELEGATECALL, MLOAD, MSTORE, PUSH1, SUB
from secant.oracles import flows, registry
from secant.oracles.controlled_call import ControlledCallOracle
from secant.oracles.flows import call_sites
from secant.oracles.overflow import OverflowOracle
from secant.oracles.static_labels import origin_guards
from secant.oracles.tx_origin import TxOriginOracle
from secant.targets.contract import ContractRun, ContractTarget
from secant.targets.taint import ORIGIN_CHECK, STORED, Dataflow
from secant.targets.wraps import PLANS, BlockPlan
from secant.types import Finding, RunResult, Tx, TxSeq
from tests.compile.conftest import needs_node
from tests.oracles.test_dataflow import named_case
from tests.oracles.test_vulnerabilities import Case, campaign_of, chain_of

WORD = 1 << 256


def needs(case: Case) -> dict[str, frozenset[str]]:
    """What each rated oracle asks the campaign to record on ``case``'s chain."""
    chain = chain_of(case)
    return {oracle.name: oracle.needs for oracle in registry.build(chain)}


# ---------------------------------------------------------------------- static looks
@needs_node
def test_oracles_that_cannot_report_on_a_code_need_no_recording() -> None:
    # CreditLine pays with `transfer` (2300 gas: the attacker cannot call back), never
    # self-destructs and can send ether out: no re-entry, no destruction, nothing frozen.
    credit = needs(Case("leaking/UncheckedCredit.sol", "CreditLine", "leaking-ether"))
    assert credit["reentrancy"] == credit["suicidal"] == credit["freezing-ether"] == set()
    assert credit["leaking-ether"] == {"balances", "calls", "accounts"}
    # PayoutBook pays with `send`: no re-entry either.
    assert needs(named_case("PayoutBook"))["reentrancy"] == set()
    # A bank that calls its caller with all the gas can be re-entered.
    late = needs(Case("reentrancy/Banks.sol", "LateBookkeeping", "reentrancy"))
    assert late["reentrancy"] == {"storage", "balances", "calls"}
    # A raffle anyone can close: suicidal looks; it pays nobody but by its SELFDESTRUCT.
    raffle = needs(Case("suicidal/OpenClose.sol", "Raffle", "suicidal"))
    assert raffle["suicidal"] == {"accounts"} and raffle["reentrancy"] == set()


@needs_node
def test_a_send_and_a_transfer_ask_for_the_stipend_at_most() -> None:
    for case, bounded in ((named_case("PayoutBook"), True),
                          (Case("reentrancy/Banks.sol", "LateBookkeeping", "reentrancy"),
                           False)):
        chain = chain_of(case)
        assert chain.main is not None
        code = chain.code_at(chain.main.address)
        [site] = [s for s in call_sites(chain, code, keccak256(code)) if s.opcode == CALL]
        assert (site.gas is not None and site.gas <= 2300) is bounded


# ---------------------------------------------------------------------- overflow
BRANCHES = """pragma solidity 0.8.26;

contract Branches {
    uint256 public kept;
    bool public flag;
    mapping(uint256 => uint256) public table;

    function decide(uint256 a, uint256 b) external {
        unchecked {
            if (a * b > 7) { kept = 1; }                      // decides a branch
            require(uint64(a + b) != 3, "three");             // a check's condition
            while (b - a > 100) { a = b; }                    // a loop's condition
            kept = (a ** 2 > b) ? 1 : 2;                      // a ternary's condition
        }
    }

    function keep(uint256 a, uint256 b) external {
        unchecked {
            flag = a * 3 > b;                                 // a comparison kept
            if (table[a + 1] > 0) { kept = 1; }               // an index
            if (++b > 5) { kept = b; }                        // an increment kept
            if (a - b > 1) { kept = a - b; }                  // the same text kept below
            kept = (b > a) ? a * 5 : b;                       // a ternary's value
        }
    }

    function loops(uint256 a, uint8 c) external {
        unchecked {
            for (uint256 i = 0; i < a; i++) { kept += 1; }    // i < a: i + 1 fits
            for (uint256 k = a; k > 0; k--) { kept += 1; }    // k > 0: k - 1 fits
            for (uint8 j = 0; j < a; j++) { kept += 1; }      // compared as uint256
            for (uint256 m = 0; m <= a; m++) { kept += 1; }   // m may be the largest
            for (uint256 n = 0; n < a; n++) { n += c; }       // the body moves n
            for (uint8 p = 0; p < c; p++) { table[p] = 1; }   // an index reads p only
        }
    }
}
"""


@needs_node
def test_arithmetic_that_only_decides_a_branch_or_cannot_wrap_is_not_watched(
        tmp_path: Path) -> None:
    source = tmp_path / "Branches.sol"
    source.write_text(BRANCHES)
    [compilation] = load([source])
    contract = compilation.contract("Branches")
    sites = wrapping_sites(compilation, contract)
    text = BRANCHES.encode()

    def snippet(start: int, length: int) -> str:
        return text[start:start + length].decode()

    every = {snippet(site.op.start, site.op.length) for site in sites.values()}
    kept = {snippet(site.op.start, site.op.length)
            for site in watched_sites(compilation, sites).values()}
    assert {"a * b", "a + b", "b - a", "a ** 2"} <= every - kept  # branch-only in decide()
    # In keep(): stored, an index, an increment, a ternary's value, and `a - b`, which
    # decides the `if` and is stored too (one instruction may compute both).
    assert {"a * 3", "a + 1", "++b", "a * 5", "a - b"} <= kept
    # A loop's counter stepped within its bound never wraps.
    assert {"i++", "k--", "p++"} <= every - kept
    assert {"j++", "m++", "n++"} <= kept
    # A contract whose every wrapping site decides a branch costs nothing at all (the
    # maze of bench/maze_gen.py is one).
    only = tmp_path / "OnlyBranches.sol"
    only.write_text(BRANCHES.split("    function keep")[0] + "}\n")
    [compiled] = load([only])
    chain = TestChain.setup([compiled], contract="Branches")
    [oracle] = registry.build(chain, ["integer-overflow"])
    assert oracle.needs == frozenset()


@needs_node
def test_the_arithmetic_recording_watches_only_sites_whose_result_may_be_kept() -> None:
    chain = chain_of(Case("overflow/LegacyToken.sol", "LegacyToken", "integer-overflow"))
    [oracle] = registry.build(chain, ["integer-overflow"])
    assert isinstance(oracle, OverflowOracle) and chain.main is not None
    code_hash = keccak256(chain.code_at(chain.main.address))
    watched = {pc for plan in PLANS[code_hash].values() for pc in plan.sites}
    assert watched == {pc for _, pc in oracle.watched}  # `-=`, `+=`; not the require's `-`
    assert len(watched) == 2


@needs_node
def test_a_run_like_one_judged_clean_is_not_replayed_for_overflow(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # schedule's sum wraps at a kept site, and the value kept is the clamp: judged clean
    # once, then a run like it (another delay that wraps, same sender) is not replayed.
    chain = chain_of(Case("overflow/GuardedSums.sol", "GuardedSums", "integer-overflow"))
    [oracle] = registry.build(chain, ["integer-overflow"])
    target = ContractTarget(chain, oracle.needs | {"panics"})
    replays: list[RunResult] = []
    real = flows.replayed

    def counting(result: RunResult, post: object) -> Dataflow | None:
        replays.append(result)
        return real(result, post)  # type: ignore[arg-type]

    monkeypatch.setattr(flows, "replayed", counting)

    def schedule(sender: str, delay: int) -> list[object]:
        tx = Tx("schedule(uint256)", (delay,), chain.sender(sender).address)
        return list(oracle.check(target.run((tx,)), target))

    assert schedule("attacker1", 5) == [] and replays == []  # nothing wrapped
    assert schedule("attacker1", WORD - 1) == [] and len(replays) == 1
    assert schedule("attacker1", WORD - 2) == [] and len(replays) == 1
    assert schedule("attacker2", WORD - 1) == [] and len(replays) == 2  # another slot


def test_a_block_s_memory_words_are_evaluated_without_a_copy_of_memory() -> None:
    # solc's mapping slot: two words stored and read back (here a word and the slot); the
    # plan keeps them as the block's own words, and the frame's memory is never needed.
    code = ((0, PUSH1, 7), (2, PUSH1, 0), (4, MSTORE, 0), (5, PUSH1, 0), (7, MLOAD, 0),
            (8, SUB, 0))
    plan = BlockPlan(code, {8: (SUB, 256, False)})
    frame = type("Frame", (), {"stack": [8], "memory": None})()
    assert plan.evaluate(frame) == [(8, True)]  # 7 - 8 wraps; memory was not touched
    frame.stack = [6]
    assert plan.evaluate(frame) == []


# ---------------------------------------------------------------------- the flow oracles
def campaign_replays(case: Case, monkeypatch: pytest.MonkeyPatch, oracle: str,
                     budget: int) -> tuple[list[TxSeq], dict[tuple[object, ...], int]]:
    """The cases a campaign of ``oracle`` alone replayed, and when it found each key."""
    chain = chain_of(case)
    campaign = campaign_of(Case(case.file, case.contract, oracle, case.seed, budget,
                                case.value), chain, None)
    replayed: list[TxSeq] = []
    real = ContractTarget.recording

    def counting(self: ContractTarget, result: RunResult, name: str,
                 replay: bool = True) -> object:
        before = self.replays
        found = real(self, result, name, replay)
        if self.replays > before:
            replayed.append(result.case)
        return found

    monkeypatch.setattr(ContractTarget, "recording", counting)
    campaign.run()
    return replayed, {key: f.execs_to_find for key, f in campaign.findings.items()}


@needs_node
def test_a_chosen_callee_is_replayed_only_while_a_rating_is_missing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # PluginHost delegates to whatever module the caller names: nearly every run is such
    # a delegation. Once it is reported *certain* (an attacker) and *possible* (the
    # deployer), only *likely* (the callee out of storage) is left, which the host's own
    # frame cannot produce: its runs are not replayed any more.
    host = named_case("PluginHost")
    replayed, found = campaign_replays(host, monkeypatch, "controlled-delegatecall", 600)
    ratings = sorted(str(key[-1]) for key in found)
    assert ratings == ["certain", "possible"] and len(replayed) < 30


@needs_node
def test_tx_origin_guards_are_the_jumpis_that_may_test_a_comparison_of_it() -> None:
    wallet = chain_of(named_case("OriginWallet"))
    [oracle] = registry.build(wallet, ["tx-origin"])
    assert isinstance(oracle, TxOriginOracle) and oracle.guards is not None
    assert len(oracle.guards) == 2  # setOwner's and pay's `require(tx.origin == owner)`
    # Once both are reported, no run is a candidate any more.
    oracle.reported |= set(oracle.guards)
    target = ContractTarget(wallet, oracle.needs)
    owner = wallet.deployer.address
    result = target.run((Tx("setOwner(address)", (owner,), owner),))
    assert isinstance(result, ContractRun) and not oracle.candidate(result)
    # `require(tx.origin == msg.sender)` is no guard; `if (tx.origin == owner)` may be.
    counter = chain_of(named_case("EoaCounter"))
    [eoa] = registry.build(counter, ["tx-origin"])
    assert isinstance(eoa, TxOriginOracle) and eoa.guards is not None
    assert len(eoa.guards) == 1


@needs_node
def test_a_run_that_never_read_tx_origin_is_no_tx_origin_candidate() -> None:
    # Even where the static look cannot tell the guards (large code gives it up), a run
    # that ran no block reading tx.origin cannot have compared it: no replay.
    counter = chain_of(named_case("EoaCounter"))
    [oracle] = registry.build(counter, ["tx-origin"])
    assert isinstance(oracle, TxOriginOracle)
    oracle.guards = None
    target = ContractTarget(counter, oracle.needs)
    owner = counter.deployer.address
    bumped = target.run((Tx("bump()", (), owner),))
    assert isinstance(bumped, ContractRun) and oracle.candidate(bumped)
    reset = target.run((Tx("bump()", (), owner), Tx("reset()", (), owner)))
    assert isinstance(reset, ContractRun) and oracle.candidate(reset)  # bump read it
    alone = target.run((Tx("reset()", (), owner),))
    assert isinstance(alone, ContractRun) and alone.outcomes[0].success
    assert alone.writes and not oracle.candidate(alone)


@needs_node
def test_the_replayer_s_prefix_cache_gives_the_records_of_a_full_replay(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The replays of one campaign, in its order (its rounds share prefixes, which the
    # replaying target restores from its cache), against replays from the start.
    wallet = named_case("OriginWallet")
    replayed, _ = campaign_replays(wallet, monkeypatch, "tx-origin", 300)
    monkeypatch.undo()
    chain = chain_of(wallet)
    plain = ContractTarget(chain, frozenset({"calls"}))
    post = ContractTarget(chain, frozenset({"calls"}))
    assert len(replayed) > 5 and any(len(case) > 1 for case in replayed)
    for case in replayed:
        result = plain.run(case)
        again = flows.replayed(result, post)
        full = ContractTarget(chain, frozenset({"dataflow"}))
        full.run(case)
        assert again is not None and again == full.recorder.dataflow


# ---------------------------------------------------------------------- soundness
# Fixtures, and the label their runs must meet for the test to say anything.
SOUNDNESS = [("Relay", ""), ("PluginHost", ""), ("WalletProxy", "stored"),
             ("TokenDeposit", "stored"), ("RegistryGateway", "stored"), ("SplitPot", "stored"),
             ("OriginWallet", "origin"), ("OriginVault", "origin"), ("FeeSwitch", "origin"),
             ("AuditedSetting", ""), ("EoaCounter", "origin")]


@needs_node
@pytest.mark.parametrize(("contract", "met"), SOUNDNESS, ids=[c for c, _ in SOUNDNESS])
def test_the_static_answers_hold_on_every_replayed_run(contract: str, met: str) -> None:
    # Every run of a short campaign (every oracle) is replayed with the dataflow
    # recording: wherever the storage label reaches a target's call in the records, the
    # chooser oracles had said it may; every JUMPI of a target that tests a comparison of
    # tx.origin is among tx-origin's guards.
    case = named_case(contract)
    chain = chain_of(case)
    cases: list[TxSeq] = []

    class Keep(FuzzListener):
        def on_run(self, result: RunResult) -> None:
            cases.append(result.case)

    campaign = campaign_of(Case(case.file, case.contract, "controlled-call", case.seed, 250,
                                case.value), chain, None)
    campaign.listen(Keep())
    campaign.run()
    oracle = ControlledCallOracle(chain)
    targets = {code_hash for code_hash, _ in oracle.code_of.values()}
    every = [(code_hash, code) for code_hash, code in oracle.code_of.values()]
    for attacker in chain.attacker_contracts:
        code = chain.code_at(attacker.address)
        every.append((keccak256(code), code))
    guards = origin_guards(every, chain.fork, oracle.delegates_unknown())
    plain = ContractTarget(chain, frozenset({"calls"}))
    stepped = ContractTarget(chain, frozenset({"dataflow"}))
    sites = {(code_hash, site.pc): site for code_hash, code in oracle.code_of.values()
             for site in call_sites(chain, code, code_hash)}
    assert cases
    stored = origin = 0  # the labels met
    for case_ in cases[:250]:
        result = plain.run(case_)
        stepped.run(case_)
        flow = stepped.recorder.dataflow
        for sink in flow.sinks:
            if sink.code_hash not in targets or sink.opcode not in (CALL, CALLCODE,
                                                                     DELEGATECALL):
                continue
            labels = sink.target_labels | (sink.selector_labels if sink.opcode != DELEGATECALL
                                           else 0)
            if labels & STORED:
                stored += 1
                site = sites[(sink.code_hash, sink.pc)]
                assert oracle.stored_possible(result, [(sink.code_hash, site)]), case_
        if guards is not None:
            for branch in flow.branches:
                if branch.code_hash in targets and branch.labels & ORIGIN_CHECK:
                    origin += 1
                    assert (branch.code_hash, branch.pc) in guards, case_
    assert {"stored": stored, "origin": origin}.get(met, 1) > 0


# ---------------------------------------------------------------------- idle oracles
class AskIdle(FuzzListener):
    """Asks the idle oracles about every run the fuzzer judges, as if they were not idle."""

    def __init__(self, campaign: Campaign, oracles: list[Oracle]) -> None:
        self.campaign = campaign
        self.checks = [oracle.check for oracle in oracles]
        self.runs = 0
        self.said: list[Finding] = []

    def on_run(self, result: RunResult) -> None:
        self.runs += 1
        for check in self.checks:
            self.said += check(result, self.campaign.fuzzer.post)


@needs_node
def test_idle_oracles_are_not_asked_and_would_have_found_nothing() -> None:
    # CreditLine cannot be re-entered, destroyed or frozen and keeps no owner slot (the
    # static looks above): those oracles are idle, and the fuzzer never calls them.
    chain = chain_of(Case("leaking/UncheckedCredit.sol", "CreditLine", "leaking-ether"))
    campaign = Campaign(chain, CampaignConfig(FuzzConfig(seed=0, max_execs=400)))
    fuzzer = campaign.fuzzer
    idle = [oracle for oracle in fuzzer.oracles if oracle.idle()]
    assert {"reentrancy", "suicidal", "freezing-ether"} <= {o.name for o in idle}
    assert "leaking-ether" not in {o.name for o in idle}
    asked = AskIdle(campaign, idle)
    campaign.listen(asked)
    calls: list[str] = []
    for oracle in idle:
        def counted(result: RunResult, post: object, name: str = oracle.name) -> list[Finding]:
            calls.append(name)
            return []
        oracle.check = counted  # type: ignore[method-assign]
    summary = campaign.run()
    assert calls == []  # never asked by the fuzzer
    # Asked on every run all the same, they find nothing: idle loses no finding.
    assert asked.runs > 300 and asked.said == []
    assert set(summary["oracles"]) >= {o.name for o in idle}  # still listed as on
