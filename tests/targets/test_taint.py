"""The dataflow recording: taint labels through stack, memory, storage and calls, the JUMPIs
guarding each state change, and how the recorder switches it on (hand-assembled code)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from secant.abi import Abi
from secant.chain.chain import SetupTransaction, TestChain
from secant.chain.deploy import DeployedContract
from secant.compile import load
from secant.evm.env import BlockEnv
from secant.evm.forks import CANCUN
from secant.evm.instructions.system import create_address
from secant.evm.opcodes import CALL, JUMP, JUMPI, SELFDESTRUCT, SSTORE
from secant.evm.state import WorldState
from secant.evm.transaction import Transaction, TxResult, apply_transaction
from secant.targets.contract import ContractTarget, deployment_flow
from secant.targets.prefix_cache import PrefixCache
from secant.targets.taint import (
    BLOCKHASH_LABEL,
    CALL_BITS,
    CALL_SUCCESS,
    CALLER_LABEL,
    COINBASE_LABEL,
    GASLIMIT_LABEL,
    INPUT,
    NUMBER_LABEL,
    ORIGIN_CHECK,
    ORIGIN_LABEL,
    PREVRANDAO_LABEL,
    RETURNDATA,
    STORED,
    TIMESTAMP_LABEL,
    VALUE_LABEL,
    Dataflow,
    FlowSink,
    label_names,
)
from secant.targets.trace import TraceRecorder, dataflow_of, make_recorder
from secant.types import RunResult, Tx
from tests.compile.conftest import needs_node
from tests.evm.asm import asm

SENDER = 0x5E17DE2
TARGET = 0xC0DE
OTHER = 0x07E4
PANIC = "PUSH4 0x4e487b71 PUSH1 0xe0 SHL PUSH0 MSTORE PUSH1 0x11 PUSH1 4 MSTORE PUSH1 0x24 " \
        "PUSH0 REVERT"


def assemble(source: str) -> bytes:
    """``asm`` with labels: ``@name`` is a JUMPDEST, ``:name`` pushes its address."""
    tokens = source.split()
    labels: dict[str, int] = {}
    pc = 0
    skip = False
    for token in tokens:
        if skip:
            skip = False
            continue
        name = token.upper()
        if token.startswith("@"):
            labels[token[1:]] = pc
            pc += 1
        elif token.startswith(":"):
            pc += 3
        elif name.startswith("PUSH") and name != "PUSH0":
            pc += 1 + int(name[4:])
            skip = True
        else:
            pc += 1
    out: list[str] = []
    for token in tokens:
        if token.startswith("@"):
            out.append("JUMPDEST")
        elif token.startswith(":"):
            out += ["PUSH2", hex(labels[token[1:]])]
        else:
            out.append(token)
    return asm(" ".join(out))


def run(code: bytes, *datas: bytes, others: dict[int, bytes] | None = None,
        recorder: TraceRecorder | None = None, timestamp: int = 1000
        ) -> tuple[Dataflow, list[TxResult]]:
    """Send one transaction to ``code`` per calldata in ``datas``, as one test case."""
    state = WorldState()
    state.set_account(SENDER, balance=10**24)
    state.set_account(TARGET, code=code, balance=1000)
    for address, other in (others or {}).items():
        state.set_account(address, code=other)
    env = BlockEnv(coinbase=0xC01B, gas_limit=30_000_000, number=10, timestamp=timestamp,
                   prev_randao=77)
    recorder = recorder or TraceRecorder(("dataflow",))
    results = []
    for index, data in enumerate(datas or (b"",)):
        recorder.begin_tx(index)
        tx = Transaction(sender=SENDER, to=TARGET, nonce=index, gas_limit=1_000_000,
                         gas_price=10, data=data)
        results.append(apply_transaction(state, env, tx, CANCUN, recorder))
    return recorder.dataflow, results


def word(value: int) -> bytes:
    return value.to_bytes(32, "big")


def stores(flow: Dataflow) -> dict[int, FlowSink]:
    """The SSTOREs of a run by slot."""
    return {sink.target: sink for sink in flow.sinks if sink.opcode == SSTORE}


def guard_pcs(flow: Dataflow, sink: FlowSink) -> list[int]:
    return [flow.branches[index].pc for index in sink.guards]


# ---------------------------------------------------------------------- sources and stack
def test_every_source_has_its_label() -> None:
    sources = ["PUSH0 CALLDATALOAD", "CALLDATASIZE", "TIMESTAMP", "NUMBER", "COINBASE",
               "PREVRANDAO", "GASLIMIT", "ORIGIN", "CALLER", "PUSH1 1 NUMBER SUB BLOCKHASH",
               "CALLVALUE", "ADDRESS"]
    code = " ".join(f"{source} PUSH1 {slot} SSTORE" for slot, source in enumerate(sources))
    flow, [done] = run(asm(code + " STOP"), word(5))
    assert done.success
    labels = [stores(flow)[slot].value_labels for slot in range(len(sources))]
    assert labels == [INPUT, INPUT, TIMESTAMP_LABEL, NUMBER_LABEL, COINBASE_LABEL,
                      PREVRANDAO_LABEL, GASLIMIT_LABEL, ORIGIN_LABEL, CALLER_LABEL,
                      NUMBER_LABEL | BLOCKHASH_LABEL, VALUE_LABEL, 0]
    assert label_names(labels[9]) == ["block.number", "blockhash"]
    # The per-case storage map keeps what was written, by (address, slot).
    assert flow.storage[(TARGET, 2)] == TIMESTAMP_LABEL and (TARGET, 11) not in flow.storage


def test_a_jump_to_a_destination_the_input_chose_is_recorded() -> None:
    # A JUMPDEST at 6; the input's word 0 is added to a constant 6: with 0 the jump lands,
    # then a JUMPI whose destination is the constant 12 (no record) and a JUMP by a
    # constant (no record either).
    code = asm("PUSH1 6 PUSH0 CALLDATALOAD ADD JUMP JUMPDEST PUSH1 1 PUSH1 12 JUMPI "
               "JUMPDEST PUSH1 16 JUMP JUMPDEST STOP")
    flow, [done] = run(code, word(0))
    assert done.success
    jumps = [sink for sink in flow.sinks if sink.opcode in (JUMP, JUMPI)]
    assert [(sink.pc, sink.target, sink.target_labels) for sink in jumps] == [(5, 6, INPUT)]
    # A destination off every JUMPDEST: the transaction fails, the jump is recorded.
    flow, [failed] = run(code, word(1))
    assert not failed.success
    assert [(sink.pc, sink.target) for sink in flow.sinks if sink.opcode == JUMP] == [(5, 7)]


def test_operations_join_their_operands_and_stack_moves_keep_labels() -> None:
    # slot 0: input + timestamp; slot 1: DUP3 of the input; slot 2: SWAP'd timestamp;
    # slot 3: ISZERO(number); slot 4: a constant after POP.
    code = asm("PUSH0 CALLDATALOAD TIMESTAMP NUMBER"  # [input, time, number]
               " DUP3 DUP3 ADD PUSH0 SSTORE"
               " DUP3 PUSH1 1 SSTORE"
               " SWAP1 PUSH1 2 SSTORE"  # [input, number, time] -> stores time
               " ISZERO PUSH1 3 SSTORE"
               " POP PUSH1 7 PUSH1 4 SSTORE STOP")
    flow, _ = run(code, word(1))
    by_slot = stores(flow)
    assert [by_slot[slot].value_labels for slot in range(5)] == [
        INPUT | TIMESTAMP_LABEL, INPUT, TIMESTAMP_LABEL, NUMBER_LABEL, 0]
    assert by_slot[0].target_labels == 0
    # A slot computed from input (a mapping key) is the SSTORE's slot label.
    flow, _ = run(asm("PUSH1 1 PUSH0 CALLDATALOAD SSTORE STOP"), word(9))
    assert stores(flow)[9].target_labels == INPUT


# ---------------------------------------------------------------------- memory
def test_memory_keeps_labels_per_byte() -> None:
    code = asm("PUSH0 CALLDATALOAD PUSH0 MSTORE"  # [0, 32): input
               " TIMESTAMP PUSH1 0x20 MSTORE"  # [32, 64): time
               " PUSH1 0x20 MLOAD PUSH0 SSTORE"  # the time word alone
               " PUSH1 0x10 MLOAD PUSH1 1 SSTORE"  # a word across both
               " PUSH1 0x20 PUSH0 KECCAK256 PUSH1 2 SSTORE"  # a hash of the input word
               " NUMBER PUSH1 0x3f MSTORE8 PUSH1 0x20 MLOAD PUSH1 3 SSTORE"  # one byte more
               " PUSH1 0x20 PUSH0 PUSH1 0x80 CALLDATACOPY PUSH1 0x80 MLOAD PUSH1 4 SSTORE"
               " PUSH1 0x20 PUSH1 0x20 PUSH1 0xc0 MCOPY PUSH1 0xc0 MLOAD PUSH1 5 SSTORE"
               " PUSH1 0x20 PUSH0 PUSH1 0x20 CODECOPY PUSH1 0x20 MLOAD PUSH1 6 SSTORE STOP")
    flow, [done] = run(code, word(3))
    assert done.success
    by_slot = stores(flow)
    assert [by_slot[slot].value_labels for slot in range(7)] == [
        TIMESTAMP_LABEL, INPUT | TIMESTAMP_LABEL, INPUT, TIMESTAMP_LABEL | NUMBER_LABEL,
        INPUT, TIMESTAMP_LABEL | NUMBER_LABEL, 0]


# ---------------------------------------------------------------------- storage
def test_storage_labels_cross_transactions_and_a_revert_undoes_them() -> None:
    # Calldata byte 0 picks: 1 stores the timestamp in slot 1; 2 copies slot 1 to slot 2;
    # 3 stores the number in slot 1 and reverts.
    code = assemble("PUSH0 CALLDATALOAD PUSH1 0xf8 SHR"
                    " DUP1 PUSH1 1 EQ :store JUMPI DUP1 PUSH1 2 EQ :copy JUMPI"
                    " NUMBER PUSH1 1 SSTORE PUSH0 PUSH0 REVERT"
                    " @store TIMESTAMP PUSH1 1 SSTORE STOP"
                    " @copy PUSH1 1 SLOAD PUSH1 2 SSTORE STOP")
    flow, results = run(code, b"\x01", b"\x03", b"\x02")
    assert [r.success for r in results] == [True, False, True]
    copy = [s for s in flow.sinks if s.opcode == SSTORE and s.tx == 2]
    assert [s.value_labels for s in copy] == [TIMESTAMP_LABEL | STORED]
    # The reverted write of the number left no label behind.
    assert flow.storage == {(TARGET, 1): TIMESTAMP_LABEL,
                            (TARGET, 2): TIMESTAMP_LABEL | STORED}
    assert [f.success for f in flow.frames] == [True, False, True]


# ---------------------------------------------------------------------- branches and guards
def test_a_require_guards_the_rest_of_the_frame_and_an_if_until_its_join() -> None:
    code = assemble(
        "TIMESTAMP :ok JUMPI PUSH0 PUSH0 REVERT"  # require(timestamp != 0)
        " @ok PUSH1 1 PUSH0 SSTORE"  # guarded by the require
        " NUMBER PUSH1 10 EQ ISZERO :join JUMPI"  # if (number == 10) { ... }
        " PUSH1 1 PUSH1 1 SSTORE"  # inside the if
        " @join PUSH1 1 PUSH1 2 SSTORE"  # after it
        " PUSH0 CALLDATALOAD PUSH1 1 ADD DUP1 PUSH0 CALLDATALOAD LT :fine JUMPI " + PANIC
        + " @fine PUSH1 3 SSTORE STOP")  # an overflow check on input
    flow, [done] = run(code, word(5))
    assert done.success
    by_slot = stores(flow)
    require, if_, overflow = [b.pc for b in flow.branches]
    assert [b.labels for b in flow.branches] == [TIMESTAMP_LABEL, NUMBER_LABEL, INPUT]
    assert guard_pcs(flow, by_slot[0]) == [require]
    assert guard_pcs(flow, by_slot[1]) == [require, if_]
    assert guard_pcs(flow, by_slot[2]) == [require]
    # A check that can only end in a Panic guards nothing: it decides nothing.
    assert overflow not in guard_pcs(flow, by_slot[3])
    assert flow.guard_labels(by_slot[1]) == TIMESTAMP_LABEL | NUMBER_LABEL


def test_an_if_else_guards_both_bodies_up_to_the_end_of_the_else() -> None:
    code = assemble("TIMESTAMP PUSH1 1 AND :else JUMPI"  # if (odd time) else-body first
                    " PUSH1 1 PUSH0 SSTORE :end JUMP"
                    " @else PUSH1 1 PUSH1 1 SSTORE"
                    " @end PUSH1 1 PUSH1 2 SSTORE STOP")
    for timestamp, slot in ((1000, 0), (1001, 1)):
        flow, _ = run(code, timestamp=timestamp)
        by_slot = stores(flow)
        [branch] = flow.branches
        assert guard_pcs(flow, by_slot[slot]) == [branch.pc] and 1 - slot not in by_slot
        assert guard_pcs(flow, by_slot[2]) == []


def test_an_out_of_line_body_is_guarded_until_it_jumps_back() -> None:
    # via-IR's layout: the body sits after the function's end and returns to a JUMPDEST
    # right after the JUMPI; a require whose revert is out of line guards everything.
    code = assemble("TIMESTAMP PUSH1 1 AND :body JUMPI"
                    " @cont PUSH1 1 PUSH1 2 SSTORE NUMBER ISZERO :fail JUMPI"
                    " @rest PUSH1 1 PUSH1 3 SSTORE STOP"
                    " @body PUSH1 1 PUSH1 1 SSTORE :cont JUMP"
                    " @fail PUSH0 PUSH0 REVERT")
    for timestamp in (1000, 1001):
        flow, [done] = run(code, timestamp=timestamp)
        by_slot = stores(flow)
        if_, require = [b.pc for b in flow.branches]
        assert done.success and flow.branches[1].labels == NUMBER_LABEL
        assert guard_pcs(flow, by_slot[2]) == [] and guard_pcs(flow, by_slot[3]) == [require]
        if timestamp % 2:
            assert guard_pcs(flow, by_slot[1]) == [if_]


def test_only_labelled_conditions_are_recorded_once_per_frame() -> None:
    # A loop of three rounds on a constant counter, then one on the input.
    code = assemble("PUSH1 3 @loop PUSH1 1 SWAP1 SUB DUP1 :loop JUMPI POP"
                    " PUSH0 CALLDATALOAD :end JUMPI @end STOP")
    flow, _ = run(code, word(1))
    assert [(b.labels, b.taken) for b in flow.branches] == [(INPUT, True)]


# ---------------------------------------------------------------------- tx.origin
def test_origin_compared_with_anything_but_the_caller_is_marked() -> None:
    code = asm("ORIGIN CALLER EQ PUSH0 SSTORE"  # tx.origin == msg.sender
               " ORIGIN PUSH1 1 SLOAD EQ PUSH1 1 SSTORE"  # tx.origin == owner (stored)
               " ORIGIN PUSH20 0x" + "11" * 20 + " SUB PUSH1 2 SSTORE"  # the optimizer's !=
               " CALLER PUSH1 3 SSTORE PUSH1 3 SLOAD ORIGIN XOR PUSH1 4 SSTORE STOP")
    flow, _ = run(code)
    by_slot = stores(flow)
    assert not by_slot[0].value_labels & ORIGIN_CHECK
    assert by_slot[1].value_labels & ORIGIN_CHECK and by_slot[2].value_labels & ORIGIN_CHECK
    # A caller read back from storage is somebody's stored address, not this caller.
    assert by_slot[4].value_labels & ORIGIN_CHECK


# ---------------------------------------------------------------------- calls
REVERTER = asm("PUSH0 PUSH0 REVERT")
ECHO = asm("CALLER PUSH0 MSTORE PUSH0 CALLDATALOAD PUSH0 SSTORE PUSH1 0x20 PUSH0 RETURN")


def call(value: int = 0, to: int = OTHER) -> str:
    """CALL ``to`` with ``value`` and the 32 bytes at memory 0 as input, output to 0x40."""
    return (f"PUSH1 0x20 PUSH1 0x40 PUSH1 0x20 PUSH0 PUSH2 {hex(value)} PUSH2 {hex(to)} GAS "
            "CALL")


def test_what_a_caller_does_with_a_flag_is_recorded() -> None:
    uses = {"": "POP", "branch": ":next JUMPI @next", "storage": "PUSH1 9 SSTORE",
            "return": "PUSH0 MSTORE PUSH1 0x20 PUSH0 RETURN"}
    for checked, use in uses.items():
        code = assemble(f"{call()} {use} STOP")
        flow, [done] = run(code, others={OTHER: REVERTER})
        [flag] = flow.calls
        assert done.success and not flag.success and flag.checked == checked, checked
        assert (flag.opcode, flag.target, flag.address) == (CALL, OTHER, TARGET)
    # The flag's labels: any call's, and its own bit.
    flow, _ = run(asm(f"{call()} PUSH1 9 SSTORE STOP"), others={OTHER: REVERTER})
    labels = stores(flow)[9].value_labels
    assert labels & CALL_SUCCESS and bin(labels & CALL_BITS).count("1") == 1


def test_a_call_that_cannot_start_fails_and_a_good_one_succeeds() -> None:
    # The target holds 1000 wei: sending 2000 fails before any message starts.
    flow, [done] = run(asm(f"{call(2000)} POP {call(0)} POP STOP"), others={OTHER: ECHO})
    assert done.success
    assert [(c.value, c.success, c.checked) for c in flow.calls] == [(2000, False, ""),
                                                                     (0, True, "")]
    [first, second] = [s for s in flow.sinks if s.opcode == CALL]
    assert (first.success, second.success) == (False, True)


def test_input_and_output_of_a_call_carry_labels_across_frames() -> None:
    # The callee stores its calldata word (the caller's timestamp) and returns its CALLER.
    code = asm(f"TIMESTAMP PUSH0 MSTORE {call(5)} POP"
               " PUSH1 0x40 MLOAD PUSH1 1 SSTORE"  # the output, copied to memory
               " RETURNDATASIZE PUSH1 2 SSTORE STOP")
    flow, [done] = run(code, others={OTHER: ECHO})
    assert done.success
    [sink] = [s for s in flow.sinks if s.opcode == CALL]
    assert (sink.value, sink.target, sink.success) == (5, OTHER, True)
    assert sink.data_labels == sink.selector_labels == TIMESTAMP_LABEL
    assert sink.target_labels == sink.value_labels == 0
    callee = stores(flow)[0]
    assert callee.address == OTHER and callee.value_labels == TIMESTAMP_LABEL
    by_slot = stores(flow)
    assert by_slot[1].value_labels == RETURNDATA | CALLER_LABEL
    assert by_slot[2].value_labels == RETURNDATA | CALLER_LABEL
    assert [(f.depth, f.address, f.success) for f in flow.frames] == [(0, TARGET, True),
                                                                      (1, OTHER, True)]


def test_selfdestruct_is_a_sink_with_its_guards() -> None:
    code = assemble("CALLER :go JUMPI STOP @go PUSH0 CALLDATALOAD SELFDESTRUCT")
    flow, [done] = run(code, word(OTHER))
    [sink] = flow.sinks
    assert done.success and sink.opcode == SELFDESTRUCT and sink.target == OTHER
    assert sink.target_labels == INPUT and flow.guard_labels(sink) == CALLER_LABEL


# ---------------------------------------------------------------------- the recorder
def test_the_recording_is_off_unless_asked_and_side_calls_do_not_step() -> None:
    plain = make_recorder(("panics",))
    assert not plain.wants_steps
    flow, _ = run(asm("TIMESTAMP PUSH0 SSTORE STOP"), recorder=plain)
    assert flow.sinks == [] and flow.frames == []
    recorder = make_recorder(("dataflow", "transitions"))
    assert recorder.wants_steps
    with recorder.side_call():
        assert not recorder.wants_steps
    assert recorder.wants_steps


def test_a_checkpoint_keeps_the_storage_labels_for_the_next_transaction() -> None:
    recorder = TraceRecorder(("dataflow",))
    flow, _ = run(asm("TIMESTAMP PUSH0 SSTORE STOP"), recorder=recorder)
    saved = recorder.checkpoint()
    recorder.restore(saved)
    assert recorder.flow_storage == {(TARGET, 0): TIMESTAMP_LABEL}
    assert recorder.flow_storage is not flow.storage
    assert len(recorder.flow_sinks) == 1


# ---------------------------------------------------------------------- the deployment's labels
def creation(runtime: bytes, child: bytes) -> bytes:
    """Initcode that stores the timestamp in slot 0 and the caller in slot 1, creates a
    contract from ``child`` (its own initcode) and returns ``runtime`` (both <= 32 bytes)."""
    return asm(f"TIMESTAMP PUSH0 SSTORE CALLER PUSH1 1 SSTORE"
               f" PUSH{len(child)} 0x{child.hex()} PUSH0 MSTORE"
               f" PUSH1 {len(child)} PUSH1 {32 - len(child)} PUSH0 CREATE POP"
               f" PUSH{len(runtime)} 0x{runtime.hex()} PUSH0 MSTORE"
               f" PUSH1 {len(runtime)} PUSH1 {32 - len(runtime)} RETURN")


def test_the_set_up_runs_again_on_a_state_of_its_own() -> None:
    runtime = asm("NUMBER POP PUSH0 SLOAD PUSH1 2 SSTORE STOP")  # slot 0 copied to slot 2
    chain = TestChain()
    deployer = chain.deployer.address
    first = chain.transact_raw(deployer, None, creation(runtime, asm("NUMBER PUSH0 SSTORE")), 0)
    chain.seal()
    # A deployment after the seal: the log carries on from the sealed state.
    second = chain.transact_raw(deployer, None, creation(runtime, asm("STOP")), 0)
    chain.seal()
    parent, later = first.created_address, second.created_address
    assert parent is not None and later is not None
    child = create_address(parent, 1)
    assert chain.setup_transactions == 2
    journal, nonce = len(chain.state.journal), chain.state.nonce(deployer)
    recorder = TraceRecorder(("dataflow",))
    assert chain.replay_setup(recorder, recorder.begin_tx)
    assert recorder.flow_storage == {
        (parent, 0): TIMESTAMP_LABEL, (parent, 1): CALLER_LABEL, (child, 0): NUMBER_LABEL,
        (later, 0): TIMESTAMP_LABEL, (later, 1): CALLER_LABEL}
    assert (len(chain.state.journal), chain.state.nonce(deployer)) == (journal, nonce)
    # The block values are kept, the deployment's sender is not (a case's own label).
    chain.main = chain.book.add(DeployedContract("Parent", parent, Abi.from_json([]), "main"))
    kept = {(parent, 0): TIMESTAMP_LABEL, (child, 0): NUMBER_LABEL,
            (later, 0): TIMESTAMP_LABEL}
    assert deployment_flow(chain) == kept
    # A case's storage starts from them; a target without the recording asks nothing.
    target = ContractTarget(chain, frozenset({"dataflow"}))
    sender = chain.sender("user1").address
    target.run((Tx("fallback", (), sender),))
    assert target.recorder.flow_storage == {**kept, (parent, 2): TIMESTAMP_LABEL | STORED}
    assert ContractTarget(chain).recorder.flow_base == {}


def test_a_set_up_that_runs_otherwise_or_reads_no_block_value_gives_no_labels(
        monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = asm("PUSH0 SLOAD PUSH1 2 SSTORE STOP")
    chain = TestChain()
    done = chain.transact_raw(chain.deployer.address, None, creation(runtime, asm("STOP")), 0)
    chain.seal()
    assert done.created_address is not None
    chain.book.add(DeployedContract("Plain", done.created_address, Abi.from_json([]), "main"))
    # No code on the chain holds a block-value opcode: the set-up is not run again.
    with monkeypatch.context() as patched:
        patched.setattr(chain, "replay_setup", lambda *_: pytest.fail("replayed"))
        assert deployment_flow(chain) == {}
    # A transaction that ends otherwise than it did (here: its logged gas) stops the replay.
    [*_, step] = chain._setup_log
    assert isinstance(step, SetupTransaction)
    chain._setup_log[-1] = replace(step, gas_used=step.gas_used + 1)
    recorder = TraceRecorder(("dataflow",))
    assert not chain.replay_setup(recorder, recorder.begin_tx)


def test_dataflow_of_reads_the_recorder_only_while_it_holds_the_run() -> None:
    class Target:
        recorder = TraceRecorder(("dataflow",))

    target = Target()
    run(asm("STOP"), recorder=target.recorder)
    result = RunResult((), [], 0, branches=target.recorder.branches)
    flow = dataflow_of(result, target)
    assert flow is not None and flow.frames == target.recorder.flow_frames
    target.recorder.reset()  # the next run
    assert dataflow_of(result, target) is None
    assert dataflow_of(result, None) is None
    plain = TraceRecorder()
    assert dataflow_of(RunResult((), [], 0, branches=plain.branches), plain) is None



@needs_node
def test_a_prefix_restored_from_the_cache_records_the_same_flows() -> None:
    path = Path(__file__).resolve().parents[1] / "fixtures" / "vulnerabilities" / "dataflow"
    compiled = load([path / "DepositLog.sol"])
    chains = [TestChain.setup(compiled, contract="DepositLog", value=10**18) for _ in range(2)]
    plain = ContractTarget(chains[0], frozenset({"dataflow"}))
    cache = PrefixCache(admit_after=1)
    cached = ContractTarget(chains[1], frozenset({"dataflow"}), prefix_cache=cache)
    user = chains[0].sender("user1").address
    prefix = (Tx("deposit()", (), user, 10**18), Tx("withdraw(uint256)", (5,), user, time=7200))
    for last in (Tx("withdraw(uint256)", (1,), user), Tx("withdraw(uint256)", (2,), user),
                 Tx("deposit()", (), user, 3, time=60)):
        plain.run(prefix + (last,))
        cached.run(prefix + (last,))
        assert cached.recorder.dataflow == plain.recorder.dataflow
        assert cached.recorder.flow_storage  # the timestamp written by the prefix's deposit
    assert cache.hits >= 2
