"""The prefix-state cache: redo diffs, recorder checkpoints, the LRU, and above all that a
cached run returns exactly what a full replay returns."""

from __future__ import annotations

import functools
import random
from collections.abc import Sequence
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import pytest

from secant.campaign.worker import function_specs
from secant.chain.blockenv import BlockSettings
from secant.chain.chain import TestChain
from secant.compile import Compilation, load
from secant.engine.dictionary import Dictionary, code_constants
from secant.engine.mutators import FunctionSpec, Mutator
from secant.evm.env import BlockEnv
from secant.evm.state import StateDiff, WorldState
from secant.targets.contract import ContractRun, ContractTarget
from secant.targets.prefix_cache import PrefixCache, approx_entry_bytes
from secant.targets.trace import (
    RECORDINGS,
    RecorderCheckpoint,
    TraceRecorder,
    TransitionRecorder,
)
from secant.types import BlockSet, Tx, TxOutcome, TxSeq
from tests.compile.conftest import needs_node

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "contracts"

# Ether in and out (to fresh addresses too), contracts created and self-destructed in the
# same transaction, storage cleared (refunds, EIP-2200/3529 original values), transient
# storage, reverts and panics: everything a prefix can leave behind or a last tx can read.
STRESS = """\
// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

contract Child {
    uint256 public n;
    constructor() payable { n = 1; }
    function bump() external { n += 1; }
    function kill(address payable to) external { selfdestruct(to); }
}

contract Stress {
    mapping(uint256 => uint256) public slots;
    uint256 public counter;
    Child public child;
    uint256 public seen;

    function set(uint256 k, uint256 v) external { slots[k % 4] = v; }
    function clear(uint256 k) external { slots[k % 4] = 0; }
    function toggle(uint256 k) external {
        uint256 s = k % 4;
        slots[s] = slots[s] == 0 ? 7 : 0;
        slots[s] = slots[s] + 1;
        slots[s] = 0;
    }
    function deposit() external payable { counter += msg.value; }
    function pay(address payable to, uint256 amount) external {
        if (amount > address(this).balance) amount = address(this).balance;
        (bool ok,) = to.call{value: amount}("");
        require(ok, "pay failed");
    }
    function payFresh(uint160 seed) external payable {
        payable(address(uint160(seed % 16) + 0x1000)).transfer(msg.value);
    }
    function spawn() external payable { child = new Child{value: msg.value}(); }
    function bumpChild() external { if (address(child) != address(0)) child.bump(); }
    function spawnAndKill(address payable to) external payable {
        Child c = new Child{value: msg.value}();
        c.kill(to);
    }
    function killChild(address payable to) external {
        if (address(child) != address(0)) child.kill(to);
    }
    function remember(uint256 v) external {
        uint256 r;
        assembly { tstore(0, v) r := tload(0) }
        seen = r + seen % 3;
    }
    function maybe(uint256 k) external { slots[1] = k; require(k % 3 != 0, "no"); }
    function check(uint256 k) external { slots[2] = k; assert(k % 5 != 4); }
    function spin(uint8 n) external { for (uint256 i; i < n % 40; i++) counter += i; }
    function time() external {
        if (block.timestamp % 2 == 0) counter += 1; else slots[3] = block.number;
    }
}
"""


# ---------------------------------------------------------------------------- helpers
def dump(state: WorldState) -> dict[int, tuple[int, int, bytes, bytes, dict[int, int]]]:
    """Everything persistent in a world state, comparable with ==."""
    return {address: (a.nonce, a.balance, a.code, a.code_hash, dict(a.storage))
            for address, a in state.accounts.items()}


def assert_same(cached: ContractRun, plain: ContractRun) -> None:
    """Field by field (the steps the cache saved aside), with the field's name when one
    differs."""
    for f in fields(ContractRun):
        if not f.compare:
            continue
        assert getattr(cached, f.name) == getattr(plain, f.name), f.name
    # Not part of a result's equality, but input-to-state reads it: the block the last
    # transaction began in, whatever the run resumed from.
    assert cached.clock == plain.clock and plain.clock[1] > 0


def containers(recorder: TraceRecorder) -> dict[str, Any]:
    """The recorder's per-case containers (those a checkpoint saves)."""
    return {name: value for name, value in vars(recorder).items()
            if not name.startswith("_") and isinstance(value, list | set | BlockSet)}


def run_both(plain: ContractTarget, cached: ContractTarget, case: TxSeq,
             overrides_last: bool = True) -> ContractRun:
    want = plain.run(case, overrides_last)
    got = cached.run(case, overrides_last)
    assert_same(got, want)
    # Containers a result does not carry (yet) match as well.
    assert containers(cached.recorder) == containers(plain.recorder)
    # What the last transaction left behind is the same too (oracles read the chain).
    assert dump(cached.chain.state) == dump(plain.chain.state)
    assert cached.chain.env == plain.chain.env
    return got


# ---------------------------------------------------------------------------- world state
def random_mutation(state: WorldState, rng: random.Random, addresses: list[int]) -> None:
    """One journaled change of any kind, including per-transaction bookkeeping."""
    address = rng.choice(addresses)
    roll = rng.randrange(12)
    if roll == 0:
        state.set_balance(address, rng.choice((0, 1, 10**18)))
    elif roll == 1:
        state.add_balance(address, rng.choice((1, 5)))
    elif roll == 2:
        state.increment_nonce(address)
    elif roll == 3:
        state.set_code(address, rng.choice((b"", b"\x60\x00", b"\x5b\x00")))
    elif roll in (4, 5, 6):
        state.set_storage(address, rng.randrange(4), rng.choice((0, 0, 1, 2, 2**255)))
    elif roll == 7:
        state.delete_account(address)
    elif roll == 8:
        state.set_account(address, nonce=1, balance=3, code=b"\x00", storage={1: 1, 2: 0})
    elif roll == 9:
        state.destroy_storage(address)
    elif roll == 10:
        state.mark(state.tx.warm_addresses, address)
        state.set_transient(address, 1, 5)
        state.add_refund(4800)
        state.add_log((address, (), b""))
    else:
        state.begin_transaction()


def test_changes_since_and_apply_reproduce_the_state_and_revert_cleanly() -> None:
    rng = random.Random(7)
    addresses = [0x10, 0x11, 0x12, 0x13, 0x14]
    for _ in range(300):
        state = WorldState()
        state.set_account(0x10, nonce=1, balance=100, code=b"\x00", storage={0: 1, 1: 2})
        state.set_account(0x11, balance=5)
        state.set_account(0x12, storage={3: 3})
        state.forget_history()
        base = state.snapshot()
        sealed = dump(state)
        for _ in range(rng.randrange(1, 30)):
            if rng.random() < 0.15:
                inner = state.snapshot()
                for _ in range(rng.randrange(1, 5)):
                    random_mutation(state, rng, addresses)
                if rng.random() < 0.5:
                    state.revert(inner)
            else:
                random_mutation(state, rng, addresses)
        after = dump(state)
        diff = state.changes_since(base)
        state.revert(base)
        assert dump(state) == sealed
        state.apply(diff)
        assert dump(state) == after
        # Applied twice (a cache hit after another): the diff itself is never changed.
        state.revert(base)
        state.apply(diff)
        assert dump(state) == after
        state.revert(base)
        assert dump(state) == sealed


def test_changes_since_leaves_out_what_did_not_change() -> None:
    state = WorldState()
    state.set_account(0x10, balance=100, storage={0: 1})
    state.forget_history()
    base = state.snapshot()
    assert len(state.changes_since(base)) == 0
    state.set_storage(0x10, 0, 2)
    state.set_storage(0x10, 0, 1)  # back to where it was: recorded, with its final value
    state.set_transient(0x10, 0, 9)
    state.add_refund(100)
    state.get_or_create(0x20)
    state.delete_account(0x20)  # created and gone: nothing to redo
    diff = state.changes_since(base)
    [change] = diff.accounts
    assert change.address == 0x10 and not change.replaced
    assert change.storage == ((0, 1),) and change.balance is None and change.nonce is None


def test_original_values_after_apply_are_the_prefix_values() -> None:
    state = WorldState()
    state.set_account(0x10, storage={0: 1})
    state.forget_history()
    base = state.snapshot()
    state.begin_transaction()
    state.set_storage(0x10, 0, 5)
    diff = state.changes_since(base)
    state.revert(base)
    state.apply(diff)
    # SSTORE records a slot's original value from the state at its first write in a
    # transaction: after the restore that is the prefix's value, as after a replay.
    assert state.storage_at(0x10, 0) == 5
    assert state.begin_transaction().original == {}


# ---------------------------------------------------------------------------- recorder
def test_recorder_checkpoint_restores_every_container_freshly() -> None:
    for recorder in (TraceRecorder(), TransitionRecorder()):
        recorder.begin_tx(0)
        recorder.blocks.add((b"h", 1))
        recorder.edges.add((b"h", 2, True))
        recorder.branches.append((b"h", 2, True, "lt", 1, 2))
        recorder.sstores.append((b"h", 3, 4))
        if isinstance(recorder, TransitionRecorder):
            recorder.transitions.add((b"h", 1, 5))
        saved = {name: value.copy() for name, value in containers(recorder).items()}
        checkpoint = recorder.checkpoint()
        recorder.begin_tx(1)
        recorder.blocks.add((b"h", 9))
        recorder.branches.append((b"h", 9, False, "eq", 0, 0))
        for _ in range(2):
            recorder.restore(checkpoint)
            assert containers(recorder) == saved
            assert recorder.tx == 0
            recorder.branches.append((b"x", 0, True, "", 0, 0))  # must not leak into it
        assert checkpoint.container("branches") == tuple(saved["branches"])


# ---------------------------------------------------------------------------- the LRU
ENV = BlockSettings().block_env()


def put(cache: PrefixCache, key: int, branches: int = 0, env: BlockEnv = ENV) -> None:
    prefix = (Tx("f(uint256)", (key,), 1),)
    recorder = RecorderCheckpoint(0, (("branches", (("h", 0, True, "", 0, 0),) * branches),
                                      ("branch_marks", (0,))), ())
    cache.put(prefix, StateDiff(), env, recorder, (TxOutcome(True, False, b"", 21000),))


def get(cache: PrefixCache, key: int) -> bool:
    return cache.get((Tx("f(uint256)", (key,), 1),)) is not None


def test_lru_evicts_the_least_recently_used_entry() -> None:
    cache = PrefixCache(max_entries=3)
    for key in range(3):
        put(cache, key)
    assert get(cache, 0)  # 0 is now the most recently used: 1 goes first
    put(cache, 3)
    assert len(cache) == 3 and cache.evictions == 1
    assert not get(cache, 1)
    assert get(cache, 0) and get(cache, 2) and get(cache, 3)
    assert (cache.hits, cache.misses) == (4, 1)
    assert cache.hit_rate == pytest.approx(0.8)


def test_byte_bound_holds_and_oversized_entries_are_not_kept() -> None:
    small = PrefixCache(max_entries=1000)
    put(small, 0, branches=100)
    one = small.nbytes
    assert one > 100 * 100  # a branch event is well over 100 bytes
    cache = PrefixCache(max_entries=1000, max_bytes=int(one * 3.5))
    for key in range(10):
        put(cache, key, branches=100)
        assert cache.nbytes <= cache.max_bytes
    assert len(cache) == 3 and cache.evictions == 7
    assert cache.nbytes == 3 * one
    put(cache, 99, branches=10_000)
    assert cache.oversized == 1 and len(cache) == 3
    cache.clear()
    assert len(cache) == 0 and cache.nbytes == 0


def test_putting_a_key_again_replaces_its_entry() -> None:
    cache = PrefixCache()
    put(cache, 0, branches=10)
    put(cache, 0, branches=20)
    assert len(cache) == 1
    entry = cache.get((Tx("f(uint256)", (0,), 1),))
    assert entry is not None and cache.nbytes == entry.nbytes
    assert len(entry.recorder.container("branches")) == 20


def test_counters_start_at_zero_and_bounds_are_checked() -> None:
    cache = PrefixCache()
    assert cache.hit_rate == 0.0 and cache.stats()["entries"] == 0
    with pytest.raises(ValueError):
        PrefixCache(max_entries=0)


def test_admission_after_two_misses_remembers_a_bounded_number_of_prefixes() -> None:
    cache = PrefixCache(max_entries=1, admit_after=2)
    key = (Tx("f(uint256)", (0,), 1),)
    assert not cache.admit(key) and cache.admit(key)
    assert PrefixCache().admit(key)  # the default stores at the first miss
    for k in range(5):  # 4 * max_entries missed prefixes are remembered
        assert not cache.admit((Tx("f(uint256)", (k,), 1),))
    assert not cache.admit((Tx("f(uint256)", (0,), 1),))  # forgotten: a first miss again
    assert cache.admit((Tx("f(uint256)", (4,), 1),))
    with pytest.raises(ValueError):
        PrefixCache(admit_after=0)


def test_expected_prefixes_and_their_heads_are_admitted_at_the_first_miss() -> None:
    cache = PrefixCache(admit_after=2)
    a, b, c = (Tx("f(uint256)", (k,), 1) for k in range(3))
    cache.expect((a, b, c))
    assert cache.expected((a,)) and cache.expected((a, b)) and cache.expected((a, b, c))
    assert not cache.expected((b,)) and not cache.expected((a, c))
    assert cache.admit((a, b)) and not cache.expected((a, b))  # admitted once
    assert not cache.admit((b,))  # not expected: the second miss stores it
    # A stored head is no longer expected.
    cache.put((a,), StateDiff(), BlockEnv(), RecorderCheckpoint(0, (), ()),
              (TxOutcome(True, False, b"", 0),))
    assert not cache.expected((a,))


def test_lengths_of_the_entries_follow_puts_and_evictions() -> None:
    cache = PrefixCache(max_entries=2)
    a, b, c = (Tx("f(uint256)", (k,), 1) for k in range(3))
    empty = (StateDiff(), BlockEnv(), RecorderCheckpoint(0, (), ()))
    cache.put((a,), *empty, ())
    cache.put((a, b, c), *empty, ())
    assert cache.lengths_below(5) == [3, 1] and cache.lengths_below(3) == [1]
    cache.put((a, b, c), *empty, ())  # replaced, not counted twice
    cache.put((b, c), *empty, ())  # evicts (a,)
    assert cache.lengths_below(9) == [3, 2]
    cache.clear()
    assert cache.lengths_below(9) == []


def test_entry_size_grows_with_what_it_holds() -> None:
    empty = RecorderCheckpoint(0, (), ())
    outcome = (TxOutcome(True, False, b"", 0),)
    base = approx_entry_bytes((), StateDiff(), empty, outcome)
    bigger = approx_entry_bytes((), StateDiff(), empty, (TxOutcome(True, False, b"x" * 1000, 0),))
    assert bigger >= base + 1000


# ---------------------------------------------------------------------------- equivalence
@functools.cache
def compiled(path: Path) -> list[Compilation]:
    return load([path])


@pytest.fixture(scope="module")
def stress_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("stress") / "Stress.sol"
    path.write_text(STRESS)
    return path


EVERY_RECORDING = frozenset(RECORDINGS) - {"transitions"}
TRANSITIONS = frozenset({"transitions"})
"""What the equivalence tests record (transitions have a test of their own)."""


def chain_of(path: Path, contract: str) -> TestChain:
    return TestChain.setup(compiled(path), contract=contract)


class Cases:
    """Fuzzer-like test cases: a pool of prefixes, each with many different last txs."""

    def __init__(self, chain: TestChain, seed: int, extra: Sequence[Tx] = ()) -> None:
        specs, _ = function_specs(chain)
        assert chain.main is not None
        senders = [s.address for s in chain.senders]
        addresses = senders + [c.address for c in chain.contracts]
        dictionary = Dictionary(code_constants(chain.code_at(chain.main.address)), addresses)
        self.specs: list[FunctionSpec] = specs
        self.mutator = Mutator(specs, senders, dictionary)
        self.rng = random.Random(seed)
        self.extra = list(extra)

    def tx(self) -> Tx:
        rng = self.rng
        if self.extra and rng.random() < 0.3:
            tx = rng.choice(self.extra)
        else:
            tx = self.mutator.random_tx(rng.choice(self.specs), rng)
        roll = rng.random()
        if roll < 0.2:
            tx = replace(tx, blocks=rng.choice((0, 1, 7200)), time=rng.choice((1, 12, 61 * 86400)))
        elif roll < 0.25:
            tx = replace(tx, value=10**30)  # above every balance: an invalid transaction
        return tx

    def prefixes(self, count: int) -> list[TxSeq]:
        return [tuple(self.tx() for _ in range(self.rng.randint(1, 4))) for _ in range(count)]


REWOUND = EVERY_RECORDING - {"dataflow", "symbolic"}
"""The recordings a target resumes from its last run's boundaries with (the stepping ones
keep tracker state of their own)."""


def equivalence(chain_a: TestChain, chain_b: TestChain, seed: int, cases: int,
                recordings: frozenset[str] = EVERY_RECORDING, max_entries: int = 256,
                extra: Sequence[Tx] = (), admit_after: int = 1, expect: bool = False,
                use_cache: bool = True) -> PrefixCache:
    plain = ContractTarget(chain_a, recordings, resume=False)
    cache = PrefixCache(max_entries=max_entries, admit_after=admit_after)
    cached = ContractTarget(chain_b, recordings, prefix_cache=cache if use_cache else None)
    gen = Cases(chain_a, seed, list(extra))
    pool = gen.prefixes(6)
    rng = gen.rng
    for _ in range(cases):
        roll = rng.random()
        prefix = rng.choice(pool)
        if expect and rng.random() < 0.2:
            # As the fuzzer does before a round on a seed: its prefix and heads are wanted.
            cache.expect(prefix)
        if roll < 0.1:
            case: TxSeq = (gen.tx(),)
        elif roll < 0.2:
            # A prefix transaction mutated: a new prefix (a miss, then hits if reused).
            index = rng.randrange(len(prefix))
            prefix = prefix[:index] + (gen.tx(),) + prefix[index + 1:]
            pool[rng.randrange(len(pool))] = prefix
            case = prefix + (gen.tx(),)
        elif roll < 0.3:
            case = prefix  # the prefix itself run as a case: its own prefix is cached
        elif roll < 0.35:
            last = cached._last_case
            case = last[:rng.randrange(len(last) + 1)] + (gen.tx(),)  # a last run's head
        elif roll < 0.37:
            # Another target runs on the same chain in between (an oracle's replay): its
            # reset leaves nothing to rewind to.
            ContractTarget(chain_b, frozenset({"panics"}), resume=False).run(prefix)
            case = cached._last_case + (gen.tx(),)
        else:
            case = prefix + (gen.tx(),)
        result = run_both(plain, cached, case)
        if roll > 0.9 and len(case) < 6:
            pool.append(case)  # sequences grow: a whole case becomes a prefix
        if result.last_outcome.success and rng.random() < 0.05:
            # The same case again (a hit); its result must not share lists with the first.
            again = cached.run(case)
            assert_same(again, result)
            assert again.branches is not result.branches
    if use_cache:
        assert cache.hits > 0 and cache.misses > 0
    if cached.recorder.rewindable:
        assert cached.rewinds > 0  # runs resumed from the last run's boundary were compared
    if expect:
        assert cache.expected_stores > 0  # heads were stored mid-run and compared
    return cache


@needs_node
@pytest.mark.parametrize("seed", [0, 1])
def test_cached_runs_equal_full_replays_on_crowdsale(seed: int) -> None:
    path = EXAMPLES / "Crowdsale.sol"
    chain_a, chain_b = chain_of(path, "Crowdsale"), chain_of(path, "Crowdsale")
    user = chain_a.sender("user1").address
    # Reaching the goal, the success and refund phases and withdraw needs these.
    extra = [Tx("invest()", (), user, 10**23), Tx("setPhase(uint256)", (1,), user),
             Tx("setPhase(uint256)", (2,), user, time=61 * 86400), Tx("withdraw()", (), user),
             Tx("refund()", (), user), Tx("setOwner(address)", (user,), user),
             Tx("invest()", (), user, 10**18)]
    cache = equivalence(chain_a, chain_b, seed, 400, extra=extra, expect=seed == 1)
    assert cache.hit_rate > 0.3
    # Misses that resumed from a shorter cached prefix were compared too.
    assert cache.partial_hits > 0


@needs_node
def test_cached_runs_equal_full_replays_on_harvey_foo() -> None:
    path = EXAMPLES / "HarveyFoo.sol"
    user = chain_of(path, "Foo").sender("user1").address
    extra = [Tx("SetY(int256)", (42,), user), Tx("CopyY()", (), user), Tx("Bar()", (), user)]
    equivalence(chain_of(path, "Foo"), chain_of(path, "Foo"), 3, 300, extra=extra)


@needs_node
def test_steps_run_count_only_the_transactions_the_cache_did_not_restore(
        stress_source: Path) -> None:
    chain_a, chain_b = chain_of(stress_source, "Stress"), chain_of(stress_source, "Stress")
    plain = ContractTarget(chain_a, EVERY_RECORDING)
    cached = ContractTarget(chain_b, EVERY_RECORDING,
                            prefix_cache=PrefixCache(max_entries=16, admit_after=1))
    user = chain_a.sender("user1").address
    a, b, c, d = (Tx("set(uint256,uint256)", (slot, slot + 1), user) for slot in range(4))
    # (case, steps with the cache): a miss runs all; a hit runs the last transaction; a
    # miss whose head (a, b) was cached resumes there and runs two.
    for case, steps in [((a,), 1), ((a, b, c), 3), ((a, b, c), 1), ((a, b, d), 1),
                        ((a, b, c, d), 2), ((a, b, c, d), 1)]:
        assert run_both(plain, cached, case).steps_run == steps
        assert plain.run(case).steps_run == len(case)


@needs_node
@pytest.mark.parametrize(("seed", "admit_after"), [(0, 1), (1, 1), (2, 2)])
def test_cached_runs_equal_full_replays_with_ether_creations_and_refunds(
        stress_source: Path, seed: int, admit_after: int) -> None:
    chain_a, chain_b = chain_of(stress_source, "Stress"), chain_of(stress_source, "Stress")
    user = chain_a.sender("user1").address
    extra = [Tx("deposit()", (), user, 10**18), Tx("spawn()", (), user, 10**15),
             Tx("killChild(address)", (user,), user), Tx("spawnAndKill(address)", (user,), user, 5),
             Tx("payFresh(uint160)", (3,), user, 7), Tx("set(uint256,uint256)", (1, 9), user),
             Tx("toggle(uint256)", (1,), user), Tx("clear(uint256)", (1,), user),
             Tx("check(uint256)", (4,), user)]
    equivalence(chain_a, chain_b, seed, 400, extra=extra, admit_after=admit_after,
                expect=admit_after == 2)


@needs_node
def test_equivalence_with_transitions_and_a_tiny_cache(stress_source: Path) -> None:
    chain_a, chain_b = chain_of(stress_source, "Stress"), chain_of(stress_source, "Stress")
    cache = equivalence(chain_a, chain_b, 5, 300, recordings=frozenset(RECORDINGS),
                        max_entries=2)
    assert cache.evictions > 0 and len(cache) <= 2


@needs_node
def test_storage_overrides_keep_their_semantics(stress_source: Path) -> None:
    chain_a, chain_b = chain_of(stress_source, "Stress"), chain_of(stress_source, "Stress")
    cache = PrefixCache()
    plain = ContractTarget(chain_a, resume=False)
    cached = ContractTarget(chain_b, prefix_cache=cache, resume=False)
    user = chain_a.sender("user1").address
    set_slot = Tx("set(uint256,uint256)", (1, 9), user)
    overridden = replace(Tx("toggle(uint256)", (1,), user), storage=((1, 3), (4, 2)))
    last = Tx("maybe(uint256)", (5,), user, storage=((1, 8),))
    # The overrides of a prefix tx are ignored with overrides_last: the key drops them...
    run_both(plain, cached, (set_slot, overridden, last))
    run_both(plain, cached, (set_slot, replace(overridden, storage=()), last))
    assert cache.hits == 1 and len(cache) == 1
    # ...and without it they apply, so such a prefix bypasses the cache.
    lookups = cache.hits + cache.misses
    run_both(plain, cached, (set_slot, overridden, last), overrides_last=False)
    assert cache.hits + cache.misses == lookups and len(cache) == 1


@needs_node
@pytest.mark.parametrize(("seed", "use_cache"), [(0, True), (1, False)])
def test_runs_resumed_from_the_last_run_equal_full_replays(stress_source: Path, seed: int,
                                                           use_cache: bool) -> None:
    chain_a, chain_b = chain_of(stress_source, "Stress"), chain_of(stress_source, "Stress")
    user = chain_a.sender("user1").address
    extra = [Tx("deposit()", (), user, 10**18), Tx("spawn()", (), user, 10**15),
             Tx("killChild(address)", (user,), user), Tx("spawnAndKill(address)", (user,), user, 5),
             Tx("set(uint256,uint256)", (1, 9), user), Tx("toggle(uint256)", (1,), user),
             Tx("check(uint256)", (4,), user), Tx("remember(uint256)", (3,), user),
             replace(Tx("maybe(uint256)", (7,), user), storage=((1, 8),))]
    equivalence(chain_a, chain_b, seed, 300, recordings=REWOUND, extra=extra,
                use_cache=use_cache)


@needs_node
def test_a_case_resumes_at_the_last_boundary_it_shares_with_the_last_run(
        stress_source: Path) -> None:
    chain_a, chain_b = chain_of(stress_source, "Stress"), chain_of(stress_source, "Stress")
    plain = ContractTarget(chain_a, REWOUND, resume=False)
    resumed = ContractTarget(chain_b, REWOUND)
    user = chain_a.sender("user1").address
    a, b, c, d = (Tx("set(uint256,uint256)", (slot, slot + 1), user) for slot in range(4))
    probe = replace(c, storage=((2, 5),))
    # (case, steps run): the shared head of the last case is not run again, the whole
    # last case neither when it is extended; a transaction whose reads were overridden
    # ends what the next case can share.
    for case, steps in [((a, b, c), 3), ((a, b, d), 1), ((a, b, d, c), 1), ((a, d), 1),
                        ((a, d), 1), ((b, a), 2), ((b, a, probe), 1), ((b, a, probe, d), 2),
                        ((b, a, c, d), 2)]:
        assert run_both(plain, resumed, case).steps_run == steps, case
    # Another target on the chain resets it: nothing is left to resume from.
    ContractTarget(chain_b, resume=False).run((d,))
    assert run_both(plain, resumed, (b, a, c, d, a)).steps_run == 5
    assert ContractTarget(chain_b, TRANSITIONS).recorder.rewindable is False


WATCHED = """\
// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

contract Watched {
    uint256 public x;
    function add(uint256 v) external { x += v % 7; }
    function echidna_small() external view returns (bool) {
        if (x > 40) { return x % 3 != 0; }
        return true;
    }
    function afterInvariant() external view {
        if (x % 2 == 1) { require(x != 13, "thirteen"); }
    }
}
"""


@needs_node
def test_resumed_runs_equal_full_replays_with_properties_watching(tmp_path: Path) -> None:
    from secant.oracles.property import PropertyOracle

    path = tmp_path / "Watched.sol"
    path.write_text(WATCHED)
    chain_a, chain_b = chain_of(path, "Watched"), chain_of(path, "Watched")
    plain = ContractTarget(chain_a, REWOUND, resume=False,
                           step_observers=[PropertyOracle(chain_a)])
    resumed = ContractTarget(chain_b, REWOUND, step_observers=[PropertyOracle(chain_b)])
    user = chain_a.sender("user1").address
    a, b, c, d = (Tx("add(uint256)", (v,), user) for v in (3, 5, 6, 13))
    # The properties' side calls after each transaction (and afterInvariant's after the
    # last) are recorded with the run: a resumed run must hold exactly a full run's.
    for case in [(a, b, c), (a, b, d), (a, b, d, c), (a, b, d, c, a), (a, c), (a, c, c, c)]:
        run_both(plain, resumed, case)
    assert resumed.rewinds > 0


@needs_node
def test_cached_runs_are_deterministic(stress_source: Path) -> None:
    def session() -> tuple[list[dict[str, Any]], dict[str, float]]:
        chain = chain_of(stress_source, "Stress")
        cache = PrefixCache(max_entries=4)
        target = ContractTarget(chain, prefix_cache=cache)
        gen = Cases(chain, 11)
        pool = gen.prefixes(5)
        out = []
        for _ in range(150):
            result = target.run(gen.rng.choice(pool) + (gen.tx(),))
            out.append({f.name: getattr(result, f.name) for f in fields(ContractRun)})
        return out, cache.stats()

    first, second = session(), session()
    assert first == second
    assert first[1]["hits"] > 0
