"""The data-flow oracles on real campaigns and hand-written cases.

Table-driven like tests/oracles/test_vulnerabilities.py (its ``Case`` and campaign helpers,
fixtures under tests/fixtures/vulnerabilities/dataflow): every vulnerable fixture is found
within a fixed seed and a small execution budget, and each near miss stays silent, both in
a campaign and on a hand-written case that runs the risky code.
"""

from __future__ import annotations

import pytest

from secant.abi import function_selector
from secant.chain.chain import TestChain
from secant.evm.analysis import analyze
from secant.evm.crypto import keccak256
from secant.evm.opcodes import CALL, DELEGATECALL, SSTORE
from secant.oracles import flows, registry
from secant.oracles.flows import FlowOracle
from secant.targets.contract import ContractTarget, deployment_flow
from secant.targets.taint import (
    BLOCK,
    BLOCKHASH_LABEL,
    COINBASE_LABEL,
    INPUT,
    NUMBER_LABEL,
    ORIGIN_CHECK,
    TIMESTAMP_LABEL,
    Dataflow,
)
from secant.targets.trace import dataflow_of
from secant.types import Finding, RunResult, Tx
from tests.compile.conftest import needs_node
from tests.oracles.test_vulnerabilities import ETHER, Case, campaign_of, chain_of, line_of

DF = "dataflow/"

# Budgets are about three times the executions the seed needs today (at least a few
# hundred); the comment after each case says how many it takes.
VULNERABLE = [
    # SWC-104: a send whose result is dropped, an old-style call.value()(), and a send in
    # 0.5 (each failing first with 0 wei: likely).
    Case(DF + "IgnoredSend.sol", "PayoutBook", "unchecked-call", 0, 300,
         marker="who.send(amount)", confidence="likely"),  # 34 (a send of 0 wei first)
    Case(DF + "LegacyRefund.sol", "RefundDesk", "unchecked-call", 0, 300,
         marker="to.call.value(paid)()", confidence="likely"),  # 5
    Case(DF + "EscrowRelease.sol", "Escrow", "unchecked-call", 0, 300,
         marker="payee.send(amount)", confidence="likely"),  # 33
    # SWC-116/120: a payout on the timestamp, one on a block number kept in storage, one
    # on a block hash (0.4), and an amount computed from the timestamp (0.6).
    Case(DF + "BlockLottery.sol", "SevenSeconds", "block-dependency", 0, 300, ETHER,
         marker="payable(msg.sender).transfer", confidence="likely"),  # 3
    Case(DF + "StoredDraw.sol", "NumberRaffle", "block-dependency", 0, 300, ETHER,
         marker="payable(msg.sender).transfer", confidence="likely"),  # 98
    Case(DF + "CoinFlip.sol", "CoinFlip", "block-dependency", 0, 300, ETHER,
         marker="msg.sender.transfer", confidence="likely"),  # 1
    Case(DF + "StakeReward.sol", "StakeReward", "block-dependency", 0, 500, ETHER,
         marker="msg.sender.transfer(reward)"),  # 158: a stake, then a later claim
    # A door drawn from a block hash by the constructor (0.7): only storage holds it.
    Case(DF + "DoorPrize.sol", "DoorPrize", "block-dependency", 0, 300, ETHER,
         marker="msg.sender.transfer", confidence="likely"),  # 106
    # SWC-112: a delegatecall to the caller's module (0.8, and 0.5 with a fixed selector),
    # and a proxy whose open upgrade stores the address it later delegates to (0.4).
    Case(DF + "PluginHost.sol", "PluginHost", "controlled-delegatecall", 0, 300,
         marker="module.delegatecall(data)"),  # 1
    Case(DF + "ModuleInit.sol", "ModularAccount", "controlled-delegatecall", 0, 300,
         marker="module.delegatecall("),  # 1
    Case(DF + "OpenUpgrade.sol", "WalletProxy", "controlled-delegatecall", 0, 1200, ETHER,
         marker="require(logic.delegatecall(msg.data))",
         confidence="likely"),  # 376: a user's upgrade, then a call through the fallback
    # Controlled call: a relay that calls what the sender says (0.8), an executor without
    # its owner check (0.4), a flash lender's callback (0.6).
    Case(DF + "Relay.sol", "Relay", "controlled-call", 0, 300,
         marker="to.call(data)"),  # 1
    Case(DF + "OpenExecutor.sol", "Executor", "controlled-call", 0, 300,
         marker="require(to.call(data))"),  # 1
    Case(DF + "FlashLender.sol", "FlashLender", "controlled-call", 0, 300, ETHER,
         marker="receiver.call{value: amount}(data)"),  # 62
    # SWC-115: the owner checked with tx.origin (0.8, 0.4), an admin modifier on it (0.6).
    Case(DF + "OriginOwner.sol", "OriginWallet", "tx-origin", 0, 300, ETHER,
         marker="require(tx.origin == owner"),  # 10
    Case(DF + "OriginVault.sol", "OriginVault", "tx-origin", 0, 300, ETHER,
         marker="require(tx.origin == owner)"),  # 9
    Case(DF + "OriginFees.sol", "FeeSwitch", "tx-origin", 0, 300,
         marker="if (tx.origin != admin)"),  # 24
    # A helper that holds no ether: the amount it pays is the caller's choice (0.4).
    Case(DF + "OriginPayout.sol", "OriginPayout", "tx-origin", 4, 700,
         marker="require(tx.origin == owner)"),  # 221; seeds 0-3 take 548 to 1,200
    # Gasless send (sFuzz): the costly attacker is a dethroned king (0.4), a member of a
    # payout loop (0.6), an outbid leader (0.8); each `send` drops its result.
    Case("gasless/Throne.sol", "Throne", "gasless-send", 0, 300,
         marker="king.send(compensation)"),  # 19: the costly attacker claims, then anyone
    Case("gasless/SplitPot.sol", "SplitPot", "gasless-send", 0, 300, ETHER,
         marker="members[i].send(share)"),  # 40: the costly attacker joins, a payout
    Case("gasless/RefundAuction.sol", "RefundAuction", "gasless-send", 0, 300,
         marker="leader.send(highest)"),  # 25: the costly attacker bids, then anyone
]

SAFE = [
    # A failed send puts the debt back (0.8), its outcome is stored for a retry (0.4), or
    # returned to the owner who asked for it (0.6).
    Case(DF + "CheckedSend.sol", "CheckedPayoutBook", "unchecked-call", budget=300),
    Case(DF + "RecordedSend.sol", "PaymentLog", "unchecked-call", budget=300),
    Case(DF + "TryPay.sol", "Treasurer", "unchecked-call", budget=300, value=ETHER),
    # A timestamp only stored and logged (0.8; 0.4 with SafeMath), a block number that
    # decides only whether a purchase is accepted (0.7).
    Case(DF + "DepositLog.sol", "DepositLog", "block-dependency", budget=300, value=ETHER),
    Case(DF + "TimedSavings.sol", "TimedSavings", "block-dependency", budget=300),
    Case(DF + "SaleWindow.sol", "SaleWindow", "block-dependency", budget=300),
    # A door the host picked, beside a timestamp the constructor only stored (0.7).
    Case(DF + "PickedDoor.sol", "PickedDoor", "block-dependency", budget=300, value=ETHER),
    # Delegatecalls to a linked library (0.8, 0.4), to the logic a proxy deployed itself
    # (0.5), to the contract itself in a multicall (0.7).
    Case(DF + "LibraryTally.sol", "Scoreboard", "controlled-delegatecall", budget=300),
    Case(DF + "LinkedCounter.sol", "Turnstile", "controlled-delegatecall", budget=300),
    Case(DF + "FixedLogic.sol", "FixedProxy", "controlled-delegatecall", budget=300),
    Case(DF + "SelfMulticall.sol", "Notes", "controlled-delegatecall", budget=300),
    # An owner's forwarder (0.4): only possible findings, whose key the table ignores.
    Case(DF + "OwnedForwarder.sol", "OwnedForwarder", "controlled-delegatecall", budget=600),
    # A chosen token with a fixed selector (0.8, and 0.7 by a low-level call), input data
    # sent to a fixed contract (0.5).
    Case(DF + "TokenPull.sol", "TokenPull", "controlled-call", budget=300),
    Case(DF + "TokenDeposit.sol", "TokenDeposit", "controlled-call", budget=300),
    Case(DF + "FixedForwarder.sol", "RegistryGateway", "controlled-call", budget=300),
    # tx.origin compared with msg.sender or guarding an event (0.8, 0.4), only stored and
    # logged (0.6).
    Case(DF + "EoaOnly.sol", "EoaCounter", "tx-origin", budget=300),
    Case(DF + "HumanOnly.sol", "HumanPiggyBank", "tx-origin", budget=300),
    Case(DF + "OriginAudit.sol", "AuditedSetting", "tx-origin", budget=300),
    Case(DF + "OriginPayout.sol", "CallerPayout", "tx-origin", budget=300),
    Case(DF + "OriginPayout.sol", "OriginPing", "tx-origin", budget=300),
    # A failed send credited for a later withdrawal (0.8), pull payments whose failed send
    # keeps the credit (0.5), a payout loop with all the gas and a checked result (0.7).
    Case("gasless/CheckedThrone.sol", "CheckedThrone", "gasless-send", budget=300),
    Case("gasless/PullRefunds.sol", "PullRefunds", "gasless-send", 1, 1000),  # send: 323
    Case("gasless/FullGasSplit.sol", "FullGasSplit", "gasless-send", budget=300, value=ETHER),
]


def named_case(contract: str) -> Case:
    """The table's case of ``contract`` (the hand-written tests below reuse them)."""
    return next(case for case in (*VULNERABLE, *SAFE) if case.contract == contract)


# The instructions whose every site in the near miss's code the campaign must have run.
RISKY = {"unchecked-call": {CALL}, "block-dependency": {CALL},
         "controlled-delegatecall": {DELEGATECALL}, "controlled-call": {CALL},
         "tx-origin": {SSTORE}, "gasless-send": {CALL}}
# Near misses that store nothing: their payment is the risky code.
RISKY_OF = {"CallerPayout": {CALL}, "OriginPing": {CALL}}


@needs_node
@pytest.mark.parametrize("case", VULNERABLE, ids=[case.id for case in VULNERABLE])
def test_a_vulnerable_contract_is_found(case: Case) -> None:
    chain = chain_of(case)
    campaign = campaign_of(case, chain, case.contract)
    campaign.run()
    findings = [f for f in campaign.findings.values()
                if f.contract == case.contract and f.confidence == case.confidence]
    assert findings, f"{case.id}: nothing within {case.budget} executions"
    finding = findings[0]
    oracle = campaign.oracles[0]
    assert isinstance(oracle, FlowOracle) and oracle.needs == {"calls"}
    assert finding.oracle == finding.kind == case.oracle
    assert finding.swc in ((oracle.swc or ""), "SWC-120")
    assert finding.case and finding.sequence and finding.execs_to_find <= case.budget
    assert f"Severity {oracle.severity}, confidence {case.confidence}:" in finding.detail
    assert finding.source is not None
    assert finding.source.endswith(f"{case.file.split('/')[-1]}:{line_of(case)}")
    # The finding's case shows the bug again on a fresh chain, with a fresh oracle.
    fresh = chain_of(case)
    [again] = registry.build(fresh, [case.oracle])
    target = ContractTarget(fresh, again.needs | {"panics"})
    replayed = again.check(target.run(finding.case), target)
    assert finding.key in {f.key for f in replayed}


@needs_node
@pytest.mark.parametrize("case", SAFE, ids=[case.id for case in SAFE])
def test_a_near_miss_is_not_reported(case: Case) -> None:
    chain = chain_of(case)
    campaign = campaign_of(case, chain, None)
    summary = campaign.run()
    assert summary["findings"] == []
    # The risky code did run: the verdict is the oracle's, not a lack of coverage.
    assert chain.main is not None
    code = chain.code_at(chain.main.address)
    code_hash = keccak256(code)
    end = code_end(code)
    sites = [(start, pc) for start, instructions in analyze(code, code_hash, chain.fork).blocks
             for pc, op, _ in instructions
             if op in RISKY_OF.get(case.contract, RISKY[case.oracle]) and pc < end]
    covered = campaign.fuzzer.coverage.blocks
    assert sites and all((code_hash, start) in covered for start, _ in sites)


def code_end(code: bytes) -> int:
    """Where solc's CBOR metadata starts (its length is the code's last two bytes).

    Its hash bytes may decode as any opcode (0.4's bzzr0 hash holds a DELEGATECALL byte
    in LinkedCounter.sol's Turnstile): they are no site the campaign could run.
    """
    start = len(code) - 2 - int.from_bytes(code[-2:], "big")
    return start if 0 <= start < len(code) and code[start] in (0xA1, 0xA2, 0xA3) else len(code)


# ---------------------------------------------------------------------- hand-written cases
Step = tuple[str, str, tuple[object, ...], int, int]  # sender, function, args, value, time


def address(chain: TestChain, name: object) -> object:
    """A sender or attacker contract by name; anything else as it is."""
    if not isinstance(name, str):
        return name
    if name in ("normal", "reentrancy", "costly"):
        return chain.attacker(name).address
    return chain.sender(name).address


def case_of(chain: TestChain, steps: list[Step]) -> tuple[Tx, ...]:
    return tuple(Tx(function, tuple(address(chain, a) for a in args),
                    chain.sender(sender).address, value, time=time)
                 for sender, function, args, value, time in steps)


def replay(case: Case, steps: list[Step], force: bool = False
           ) -> tuple[list[Finding], Dataflow]:
    """The oracle's findings on one hand-written case, and the run's dataflow records.

    The target records the data flow itself (no replay); ``force`` makes the oracle judge
    even where its static look says the bug cannot be there.
    """
    chain = chain_of(case)
    [oracle] = registry.build(chain, [case.oracle])
    assert isinstance(oracle, FlowOracle)
    if force:
        oracle.needs = frozenset({"calls"})
    target = ContractTarget(chain, frozenset({"dataflow", "calls", "panics"}))
    result = target.run(case_of(chain, steps))
    flow = dataflow_of(result, target)
    assert flow is not None
    return oracle.check(result, target), flow


@needs_node
def test_a_checked_send_is_no_finding_and_needs_no_recording() -> None:
    safe = named_case("CheckedPayoutBook")
    chain = chain_of(safe)
    [oracle] = registry.build(chain, [safe.oracle])
    assert oracle.needs == frozenset()  # every flag is tested right after its call
    steps: list[Step] = [("user1", "credit(address)", ("normal",), 1000, 0),
                         ("user1", "payOut(address)", ("normal",), 0, 0)]
    findings, flow = replay(safe, steps, force=True)
    [call] = [c for c in flow.calls if c.opcode == CALL]
    assert not call.success and call.checked == "branch" and findings == []
    # The same steps on the unchecked book: certain, since ether stayed behind.
    [finding], flow = replay(named_case("PayoutBook"), steps)
    [call] = flow.calls
    assert not call.success and call.checked == "" and call.value == 1000
    assert "confidence certain" in finding.detail and "1000 wei stayed" in finding.detail


@needs_node
def test_a_successful_or_reverted_send_is_no_finding() -> None:
    book = named_case("PayoutBook")
    # Paid to an account that takes it: the call worked.
    findings, flow = replay(book, [("user1", "credit(address)", ("user2",), 1000, 0),
                                   ("user1", "payOut(address)", ("user2",), 0, 0)])
    assert findings == [] and [c.success for c in flow.calls] == [True]


@needs_node
def test_a_stored_timestamp_that_decides_nothing_is_no_finding() -> None:
    log = named_case("DepositLog")
    steps: list[Step] = [("user1", "deposit()", (), ETHER, 0),
                         ("user1", "withdraw(uint256)", (1000,), 0, 7200)]
    findings, flow = replay(log, steps)
    assert findings == []
    # The timestamp reached storage and the `if`, but not the payout's guards.
    [payout] = [s for s in flow.sinks if s.opcode == CALL and s.value == 1000]
    assert not payout.value_labels & BLOCK and not flow.guard_labels(payout) & BLOCK
    assert any(s.opcode == SSTORE and s.value_labels & BLOCK for s in flow.sinks)
    late = [s for s in flow.sinks if s.opcode == SSTORE and flow.guard_labels(s) & BLOCK]
    assert len(late) == 1  # lateWithdrawals += 1, inside the if


@needs_node
def test_a_block_number_decides_a_payout_through_storage() -> None:
    raffle = named_case("NumberRaffle")
    chain = chain_of(raffle)
    odd = chain.env.number % 2 == 0  # a block advanced before `enter` makes it odd
    steps: list[Step] = [("user1", "enter()", (), 0, 0), ("user2", "draw()", (), 0, 0)]
    txs = [Tx(f, (), chain.sender(s).address, v, 1 if odd and f == "enter()" else 0, t)
           for s, f, _, v, t in steps]
    [oracle] = registry.build(chain, [raffle.oracle])
    target = ContractTarget(chain, oracle.needs | {"dataflow"})
    result = target.run(tuple(txs))
    [finding] = oracle.check(result, target)
    assert finding.swc == "SWC-116" and "block.number" in finding.detail
    assert "transaction 2 of 2" in finding.detail
    # Nothing read the block number in the second transaction: storage carried it.
    flow = dataflow_of(result, target)
    assert flow is not None and flow.storage == {}  # draw() zeroed the ticket


@needs_node
def test_a_door_the_constructor_drew_from_block_values_decides_the_prize() -> None:
    drawn = named_case("DoorPrize")
    chain = chain_of(drawn)
    assert chain.main is not None
    main = chain.main.address
    # The draw's labels stay on the door's slot (slot 0, after the host's 20 bytes); the
    # host's msg.sender label in the same slot is the deployment's own, not kept.
    assert deployment_flow(chain) == {
        (main, 0): NUMBER_LABEL | COINBASE_LABEL | BLOCKHASH_LABEL}
    [oracle] = registry.build(chain, [drawn.oracle])
    assert oracle.needs == {"calls"}  # no block value in the runtime code: storage holds it
    door = chain.state.storage_at(main, 0) >> 160 & 0xFF
    [finding], flow = replay(drawn, [("attacker1", "open(uint8)", (door,), 0, 0)])
    assert finding.swc == "SWC-120" and finding.confidence == "likely"
    assert "blockhash" in finding.detail and "block.coinbase" in finding.detail
    # Nothing of the transaction read a block value: the storage the constructor filled did.
    [payout] = [s for s in flow.sinks if s.opcode == CALL and s.value]
    assert flow.guard_labels(payout) & BLOCK and not payout.value_labels & BLOCK
    # The host's pick: the same payout, decided by a slot without block values.
    picked = named_case("PickedDoor")
    chain = chain_of(picked)
    assert chain.main is not None and deployment_flow(chain) == {
        (chain.main.address, 1): TIMESTAMP_LABEL}  # openedAt
    [oracle] = registry.build(chain, [picked.oracle])
    assert oracle.needs == {"calls"}
    [door] = chain.main.args
    findings, flow = replay(picked, [("attacker1", "open(uint8)", (door,), 0, 0)])
    assert findings == [] and any(s.opcode == CALL and s.value for s in flow.sinks)


@needs_node
def test_a_delegatecall_to_a_linked_library_is_no_finding() -> None:
    tally = named_case("Scoreboard")
    findings, flow = replay(tally, [("attacker1", "record(uint256)", (5,), 0, 0)])
    [delegation] = [s for s in flow.sinks if s.opcode == DELEGATECALL]
    assert findings == [] and delegation.target_labels == 0
    # The library's writes carry the input it was handed.
    assert any(s.opcode == SSTORE and s.value_labels & INPUT for s in flow.sinks)
    host = named_case("PluginHost")
    [finding] = replay(host, [("deployer", "run(address,bytes)", ("user1", b""), 0, 0)])[0]
    assert "confidence possible" in finding.detail  # the deployer's own choice


@needs_node
def test_what_the_owners_delegate_wrote_is_still_the_owners_choice() -> None:
    owned = named_case("OwnedForwarder")
    findings, flow = replay(owned, [("deployer", "setDelegate(address)", ("costly",), 0, 0),
                                    ("user1", "forward(bytes)", (b"",), 0, 0),
                                    ("user1", "forward(bytes)", (b"",), 0, 0)])
    # The costly attacker's fallback counts its calls in slot 0, the forwarder's delegate:
    # the second call runs at the address the delegated code stored, not one a user chose.
    first, second = [s for s in flow.sinks if s.opcode == DELEGATECALL]
    assert second.target == first.target + 1
    assert any(s.opcode == SSTORE and s.tx == 1 and s.value == second.target
               for s in flow.sinks)
    assert findings and {f.confidence for f in findings} == {"possible"}


@needs_node
def test_a_fixed_selector_to_a_chosen_token_is_no_controlled_call() -> None:
    pull = named_case("TokenPull")
    findings, flow = replay(pull, [("attacker1", "pull(address,uint256)", ("normal", 5), 0,
                                    0)])
    [call] = [s for s in flow.sinks if s.opcode == CALL]
    assert findings == [] and call.target_labels & INPUT and not call.selector_labels & INPUT
    relay = named_case("Relay")
    transfer = function_selector("transfer(address,uint256)") + bytes(64)
    [finding] = replay(relay, [("attacker1", "forward(address,bytes)", ("user1", transfer),
                                0, 0)])[0]
    assert "confidence certain" in finding.detail
    # Paying a chosen account without data is no controlled call either.
    assert replay(relay, [("attacker1", "forward(address,bytes)", ("user1", b""), 0, 0)]
                  )[0] == []


@needs_node
def test_origin_against_sender_or_guarding_nothing_is_no_finding() -> None:
    counter = named_case("EoaCounter")
    findings, flow = replay(counter, [("deployer", "bump()", (), 0, 0),
                                      ("deployer", "ping()", (), 0, 0),
                                      ("deployer", "reset()", (), 0, 0)])
    assert findings == []
    checks = [b for b in flow.branches if b.labels & ORIGIN_CHECK]
    assert len(checks) == 1  # ping's `if (tx.origin == owner)`, which guards no change
    wallet = named_case("OriginWallet")
    [finding] = replay(wallet, [("deployer", "setOwner(address)", ("user1",), 0, 0)])[0]
    assert "wrote storage slot 0x0" in finding.detail
    # A sender that is not the owner fails the check: nothing changed, nothing reported.
    assert replay(wallet, [("user1", "setOwner(address)", ("user1",), 0, 0)])[0] == []


@needs_node
def test_a_lazy_replay_judges_as_the_recording_does_and_leaves_the_run_alone() -> None:
    wallet = named_case("OriginWallet")
    steps: list[Step] = [("user1", "setOwner(address)", ("user1",), 0, 0),
                         ("deployer", "pay(address,uint256)", ("user2", 10), 0, 0),
                         ("deployer", "setOwner(address)", ("user1",), 0, 0)]
    eager, _ = replay(wallet, steps)
    chain = chain_of(wallet)
    [oracle] = registry.build(chain, [wallet.oracle])
    target = ContractTarget(chain, oracle.needs | {"panics"})
    assert "dataflow" not in target.recordings and not target.recorder.wants_steps
    result = target.run(case_of(chain, steps))
    branches, state = list(result.branches), chain.state.storage_at(chain.main.address, 0)
    lazy = oracle.check(result, target)
    assert sorted(f.key for f in lazy) == sorted(f.key for f in eager) and len(lazy) == 2
    # The campaign's run is untouched and the chain ends where the run left it.
    assert result.branches == branches and target.recorder.flow_sinks == []
    assert chain.state.storage_at(chain.main.address, 0) == state
    # A run that cannot show the bug is not replayed at all.
    quiet = target.run(case_of(chain, [("user1", "setOwner(address)", ("user1",), 0, 0)]))
    assert not oracle.candidate(quiet) and oracle.check(quiet, target) == []


@needs_node
def test_a_run_like_one_judged_clean_is_not_replayed(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = named_case("EoaCounter")
    chain = chain_of(counter)
    [oracle] = registry.build(chain, [counter.oracle])
    assert isinstance(oracle, FlowOracle)
    target = ContractTarget(chain, oracle.needs)
    calls: list[int] = []
    real = flows.replayed

    def counting(result: RunResult, post: object) -> Dataflow | None:
        calls.append(1)
        return real(result, post)  # type: ignore[arg-type]

    monkeypatch.setattr(flows, "replayed", counting)
    bump = case_of(chain, [("user1", "bump()", (), 0, 0)])
    assert oracle.check(target.run(bump), target) == [] and len(calls) == 1
    # The same path and slots by another sender: judged clean already.
    other = case_of(chain, [("user2", "bump()", (), 0, 0)])
    assert oracle.check(target.run(other), target) == [] and len(calls) == 1
    # A new path (reset after bump) is replayed.
    longer = case_of(chain, [("user2", "bump()", (), 0, 0), ("deployer", "reset()", (), 0, 0)])
    assert oracle.check(target.run(longer), target) == [] and len(calls) == 2


@needs_node
def test_a_path_whose_checks_are_reported_is_not_replayed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    wallet = named_case("OriginWallet")
    chain = chain_of(wallet)
    [oracle] = registry.build(chain, [wallet.oracle])
    assert isinstance(oracle, FlowOracle)
    target = ContractTarget(chain, oracle.needs)
    calls: list[int] = []
    real = flows.replayed

    def counting(result: RunResult, post: object) -> Dataflow | None:
        calls.append(1)
        return real(result, post)  # type: ignore[arg-type]

    monkeypatch.setattr(flows, "replayed", counting)
    set_owner = [("deployer", "setOwner(address)", ("deployer",), 0, 0)]
    [finding] = oracle.check(target.run(case_of(chain, set_owner)), target)
    assert len(calls) == 1
    # The owner again, on the same path with another argument: the check that guards the
    # write is reported already, so the run is not replayed (and shows nothing new).
    again = [("deployer", "setOwner(address)", ("user2",), 0, 0)]
    assert oracle.check(target.run(case_of(chain, again)), target) == [] and len(calls) == 1
    # A payment is a new path: replayed, and its own check reported too.
    pay = [*set_owner, ("deployer", "pay(address,uint256)", ("user1", 10), 0, 0)]
    found = oracle.check(target.run(case_of(chain, pay)), target)
    assert len(calls) == 2 and len({f.key for f in found} - {finding.key}) == 1
    assert oracle.check(target.run(case_of(chain, pay)), target) == [] and len(calls) == 2


SCHEDULER = Case(DF + "SignatureCall.sol", "Scheduler", "controlled-call")


def signed_call(chain: TestChain) -> tuple[Tx, ...]:
    """attacker1 has Scheduler call user2's ``transfer(address,uint256)``.

    Built by hand: ``case_of`` would take the signature string for a sender's name.
    """
    args = (chain.sender("user2").address, "transfer(address,uint256)", bytes(64))
    return (Tx("run(address,string,bytes)", args, chain.sender("attacker1").address),)


@needs_node
def test_a_selector_hashed_from_a_string_argument_is_a_controlled_call() -> None:
    # KECCAK256 takes the labels of the bytes it hashes: the recording sees the input.
    chain = chain_of(SCHEDULER)
    [oracle] = registry.build(chain, [SCHEDULER.oracle])
    target = ContractTarget(chain, frozenset({"dataflow", "calls", "panics"}))
    [finding] = oracle.check(target.run(signed_call(chain)), target)
    assert "confidence certain" in finding.detail


@needs_node
def test_a_campaign_run_with_a_hashed_selector_is_replayed() -> None:
    # The selector is keccak256 of the string argument, never among the case's bytes: the
    # precondition also compares it with the hash of each byte string of the case.
    chain = chain_of(SCHEDULER)
    [oracle] = registry.build(chain, [SCHEDULER.oracle])
    assert isinstance(oracle, FlowOracle)
    target = ContractTarget(chain, oracle.needs | {"panics"})
    result = target.run(signed_call(chain))
    assert result.outcomes[0].success and oracle.candidate(result)
    [finding] = oracle.check(result, target)
    assert finding.swc == "SWC-107" and "confidence certain" in finding.detail
    # A chosen token called with a fixed selector is no candidate.
    pull = named_case("TokenPull")
    chain = chain_of(pull)
    [oracle] = registry.build(chain, [pull.oracle])
    assert isinstance(oracle, FlowOracle)
    target = ContractTarget(chain, oracle.needs)
    token = chain.attacker("normal").address
    case = (Tx("pull(address,uint256)", (token, 5), chain.sender("attacker1").address),)
    assert not oracle.candidate(target.run(case))
