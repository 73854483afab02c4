"""Run state-test cases on secant's EVM and explain the first difference.

Each case starts from a fresh :class:`~secant.evm.state.WorldState` built from ``pre``, runs
its transaction under Cancun rules and is checked in this order: invalid transaction
expected vs raised, gas used (derived data), the exact post-state (derived data: first
differing address and field), the state root, the logs hash.
"""

from __future__ import annotations

import multiprocessing
import time
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from secant.evm.trie import logs_hash, state_root
from secant.statetest.fixtures import (
    AccountState,
    Case,
    FixtureError,
    StateTest,
    find_files,
    load_file,
)

if TYPE_CHECKING:  # the EVM is imported when a case runs, so parsing works without it
    from secant.evm.env import BlockEnv
    from secant.evm.state import WorldState
    from secant.evm.transaction import Transaction

_BLAKE2F_ROUNDS = "blake2f with ~8 million rounds"
_LOOP_EXP = "vmPerformance: a long loop of EXP"
_STATIC_CALLS = "50,000 static calls into 50 contracts of 20 KB"
SLOW_CASES: dict[str, str] = {
    "loopMul": "vmPerformance: millions of MUL/MULMOD in a loop (minutes)",
    "loopExp[8,0,0]": _LOOP_EXP,
    "loopExp[9,0,0]": _LOOP_EXP,
    "loopExp[10,0,0]": _LOOP_EXP,
    "loopExp[11,0,0]": _LOOP_EXP,
    "loopExp[12,0,0]": _LOOP_EXP,
    "loopExp[13,0,0]": _LOOP_EXP,
    "CALLBlake2f[9,0,0]": _BLAKE2F_ROUNDS,
    "CALLCODEBlake2f[9,0,0]": _BLAKE2F_ROUNDS,
    "static_Call50000bytesContract50_2": _STATIC_CALLS,
    "static_Call50000bytesContract50_3": _STATIC_CALLS,
    "Call50000_sha256[0,1,0]": "quadratic complexity: 50,000 calls to SHA-256",
}
"""Test name (or ``name[d,g,v]`` for a single case) → why it is slow.

Each listed case took over 4 s (up to minutes) on secant's EVM; pytest runs them only with
``SECANT_SLOW=1`` (marker ``slow``) and ``secant evm statetest --skip-slow`` leaves them out.
"""

PASS = "pass"
FAIL = "fail"
SKIP = "skip"


def is_slow(case: Case) -> bool:
    """Whether ``case`` (or its whole test) is listed in :data:`SLOW_CASES`."""
    return case.test.name in SLOW_CASES or case.name in SLOW_CASES


# ----------------------------------------------------------------------------- one case


def _hex_address(address: int) -> str:
    return f"0x{address:040x}"


def block_env(test: StateTest) -> BlockEnv:
    """Build the :class:`BlockEnv` of a test (PREVRANDAO from ``currentRandom``)."""
    from secant.evm.env import BlockEnv

    env = test.env
    return BlockEnv(
        coinbase=env.coinbase,
        number=env.number,
        timestamp=env.timestamp,
        gas_limit=env.gas_limit,
        base_fee=env.base_fee or 0,
        prev_randao=env.prev_randao if env.prev_randao is not None else env.difficulty,
        excess_blob_gas=env.excess_blob_gas or 0,
        chain_id=1,
    )


def pre_state(test: StateTest) -> WorldState:
    """Build a fresh world state holding the test's ``pre`` accounts."""
    from secant.evm.state import WorldState

    state = WorldState()
    for address, account in test.pre.items():
        state.set_account(address, nonce=account.nonce, balance=account.balance,
                          code=account.code or b"", storage=dict(account.storage))
    state.forget_history()
    return state


def transaction(case: Case) -> Transaction:
    """Build the concrete transaction of ``case``."""
    from secant.evm.transaction import Transaction

    template = case.test.transaction
    return Transaction(
        sender=template.sender,
        to=template.to,
        nonce=template.nonce,
        gas_limit=case.gas_limit,
        value=case.value,
        data=case.data,
        gas_price=template.gas_price,
        max_fee_per_gas=template.max_fee_per_gas,
        max_priority_fee_per_gas=template.max_priority_fee_per_gas,
        access_list=[(address, list(slots)) for address, slots in case.access_list or ()],
        max_fee_per_blob_gas=template.max_fee_per_blob_gas,
        blob_versioned_hashes=list(template.blob_versioned_hashes or ()),
        tx_type=case.tx_type,
    )


def expected_state(case: Case) -> dict[int, AccountState] | None:
    """Return the full expected post-state (pre + changed − deleted), if derived."""
    post = case.post
    if post is None:
        return None
    accounts = dict(case.test.pre)
    for address, change in post.changed.items():
        old = accounts.get(address)
        code = change.code if change.code is not None else (old.code if old else b"")
        accounts[address] = AccountState(change.nonce, change.balance, code, change.storage)
    for address in post.deleted:
        accounts.pop(address, None)
    return accounts


def _storage_difference(actual: Mapping[int, int], expected: Mapping[int, int]) -> str | None:
    for slot in sorted(actual.keys() | expected.keys()):
        got, want = actual.get(slot, 0), expected.get(slot, 0)
        if got != want:
            return f"storage[{slot:#x}] = {got:#x}, expected {want:#x}"
    return None


def _account_difference(
    address: int, actual: WorldState, expected: AccountState | None, deleted: bool,
    ignore_balance: bool,
) -> str | None:
    account = actual.get(address)
    name = _hex_address(address)
    if account is None and expected is None:
        return None
    if account is None:
        assert expected is not None
        return f"{name}: missing (expected nonce {expected.nonce}, balance {expected.balance})"
    if expected is None:
        why = "should be deleted" if deleted else "should not exist"
        return f"{name}: {why} (has nonce {account.nonce}, balance {account.balance})"
    if account.nonce != expected.nonce:
        return f"{name}: nonce {account.nonce}, expected {expected.nonce}"
    if account.balance != expected.balance and not ignore_balance:
        delta = account.balance - expected.balance
        return (f"{name}: balance {account.balance}, expected {expected.balance} "
                f"(diff {delta:+d})")
    code = expected.code or b""
    if account.code != code:
        return f"{name}: code of {len(account.code)} bytes, expected {len(code)} bytes"
    difference = _storage_difference(account.storage, expected.storage)
    return f"{name}: {difference}" if difference else None


def state_difference(case: Case, actual: WorldState, *, gas_differs: bool = False) -> str | None:
    """Describe the first account/field where ``actual`` departs from the derived state.

    With ``gas_differs`` the balances of the sender and the coinbase are not compared:
    a wrong gas charge already explains them.
    """
    expected = expected_state(case)
    if expected is None or case.post is None:
        return None
    fee_accounts = {case.test.transaction.sender, case.test.env.coinbase} if gas_differs else set()
    addresses = sorted(expected.keys() | {a for a, _ in actual.iter_accounts()})
    differences = [
        d for a in addresses
        if (d := _account_difference(a, actual, expected.get(a), a in case.post.deleted,
                                     a in fee_accounts))
    ]
    if not differences:
        return None
    more = f" (+{len(differences) - 1} more accounts)" if len(differences) > 1 else ""
    return differences[0] + more


def actual_state_root(state: WorldState) -> bytes:
    """State root of ``state``."""
    return state_root(
        (address, a.nonce, a.balance, a.storage, a.code_hash)
        for address, a in state.iter_accounts()
    )


def _crash(error: BaseException) -> str:
    frames = traceback.extract_tb(error.__traceback__)
    where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    message = " ".join(str(error).split())[:160]
    return f"crash: {type(error).__name__}: {message}{where}"


def run_case(case: Case) -> str | None:
    """Run ``case``; return None if it passes, else a one-line reason."""
    from secant.evm.forks import CANCUN
    from secant.evm.transaction import InvalidTransaction, apply_transaction

    state = pre_state(case.test)
    env = block_env(case.test)
    tx = transaction(case)
    gas_used: int | None = None
    logs: list[tuple[int, tuple[int, ...], bytes]] = []
    try:
        result = apply_transaction(state, env, tx, CANCUN)
    except InvalidTransaction as error:
        if case.expect_exception is None:
            return f"unexpected invalid transaction: {error}"
    except Exception as error:  # an EVM bug: report it, keep going
        return _crash(error)
    else:
        if case.expect_exception is not None:
            return f"expected {case.expect_exception}, but the transaction was accepted"
        gas_used = result.gas_used
        logs = [(a, tuple(t), d) for a, t, d in result.logs]

    problems: list[str] = []
    gas_differs = case.post is not None and gas_used is not None and gas_used != case.post.gas_used
    if gas_differs:
        assert case.post is not None and gas_used is not None
        problems.append(f"gas used {gas_used}, expected {case.post.gas_used} "
                        f"(diff {gas_used - case.post.gas_used:+d})")
    difference = None
    if gas_used is not None:
        difference = state_difference(case, state, gas_differs=gas_differs)
    if difference:
        problems.append(difference)
    elif not gas_differs:
        root = actual_state_root(state)
        if root != case.state_root:
            problems.append(f"state root 0x{root.hex()}, expected 0x{case.state_root.hex()}")
    got_logs = logs_hash(logs)
    if got_logs != case.logs_hash:
        problems.append(f"logs hash differs ({len(logs)} logs emitted)")
    return "; ".join(problems) if problems else None


# ----------------------------------------------------------------------------- many cases


@dataclass
class CaseOutcome:
    """The outcome of one case (picklable, for worker processes)."""

    id: str
    status: str
    reason: str = ""
    seconds: float = 0.0


@dataclass
class FileReport:
    """The outcomes of one file's cases, or why the file could not be read."""

    file: str
    outcomes: list[CaseOutcome] = field(default_factory=list)
    error: str | None = None


def run_file(file: Path, *, skip_slow: bool = False, only_slow: bool = False) -> FileReport:
    """Run every case of ``file`` (the slow ones too unless ``skip_slow``).

    ``only_slow`` runs just the :data:`SLOW_CASES` and skips the rest.
    """
    report = FileReport(str(file))
    try:
        tests = load_file(file)
    except FixtureError as error:
        report.error = error.one_line()
        return report
    for test in tests:
        for case in test.cases:
            slow = is_slow(case)
            if (slow and skip_slow) or (only_slow and not slow):
                why = SLOW_CASES.get(case.name) or SLOW_CASES.get(test.name, "")
                report.outcomes.append(CaseOutcome(case.id, SKIP, why))
                continue
            start = time.perf_counter()
            reason = run_case(case)
            seconds = time.perf_counter() - start
            report.outcomes.append(
                CaseOutcome(case.id, PASS if reason is None else FAIL, reason or "", seconds))
    return report


def _run_file_job(job: tuple[str, bool]) -> FileReport:
    return run_file(Path(job[0]), skip_slow=job[1])


@dataclass
class Summary:
    """Totals of a run, the failure lines, and counts per folder."""

    passed: int = 0
    failed: int = 0
    skipped: int = 0
    failures: list[str] = field(default_factory=list)
    by_folder: dict[str, list[int]] = field(default_factory=dict)
    timings: list[tuple[float, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when nothing failed."""
        return self.failed == 0

    def totals(self) -> str:
        """``N passed, M failed, K skipped``."""
        return f"{self.passed} passed, {self.failed} failed, {self.skipped} skipped"

    def add(self, report: FileReport) -> list[str]:
        """Count one file's outcomes; return its FAIL lines."""
        counts = self.by_folder.setdefault(str(Path(report.file).parent), [0, 0, 0])
        lines: list[str] = []
        if report.error is not None:
            self.failed += 1
            counts[1] += 1
            lines.append(f"FAIL {report.file}: {report.error}")
        for outcome in report.outcomes:
            if outcome.status == PASS:
                self.passed += 1
                counts[0] += 1
            elif outcome.status == FAIL:
                self.failed += 1
                counts[1] += 1
                lines.append(f"FAIL {outcome.id}: {outcome.reason}")
            else:
                self.skipped += 1
                counts[2] += 1
            if outcome.seconds:
                self.timings.append((outcome.seconds, outcome.id))
        self.failures.extend(lines)
        return lines


def iter_reports(files: list[Path], *, skip_slow: bool = False,
                 jobs: int = 1) -> Iterable[FileReport]:
    """Run ``files`` (in worker processes when ``jobs`` > 1), yielding reports in order."""
    if jobs <= 1 or len(files) <= 1:
        for file in files:
            yield run_file(file, skip_slow=skip_slow)
        return
    with multiprocessing.Pool(min(jobs, len(files))) as pool:
        yield from pool.imap(_run_file_job, [(str(f), skip_slow) for f in files], chunksize=1)


def run_paths(
    paths: Iterable[str | Path],
    *,
    skip_slow: bool = False,
    jobs: int = 1,
    verbose: bool = False,
    emit: Callable[[str], None] | None = None,
) -> Summary:
    """Run every case of the fixture files in ``paths`` (files or folders).

    ``emit`` receives one ``FAIL <file>::<test>[d,g,v]: reason`` line per failing case
    (with ``verbose`` also PASS/SKIP lines, counts per folder and the slowest cases) and,
    last, the totals ``N passed, M failed, K skipped``. A file that cannot be parsed counts
    as one failure (``FAIL <file>: reason``). Raises
    :class:`~secant.statetest.fixtures.FixtureError` for a path that does not exist.
    """
    files = find_files(Path(p) for p in paths)
    summary = Summary()
    for report in iter_reports(files, skip_slow=skip_slow, jobs=jobs):
        lines = summary.add(report)
        if emit is None:
            continue
        if verbose:
            for outcome in report.outcomes:
                if outcome.status == FAIL:
                    emit(f"FAIL {outcome.id}: {outcome.reason}")
                elif outcome.status == PASS:
                    emit(f"PASS {outcome.id} ({outcome.seconds:.3f}s)")
                else:
                    emit(f"SKIP {outcome.id}: slow ({outcome.reason})")
            if report.error is not None:
                emit(lines[0])
        else:
            for line in lines:
                emit(line)
    if emit is not None:
        if verbose:
            for folder, (passed, failed, skipped) in sorted(summary.by_folder.items()):
                emit(f"  {folder}: {passed} passed, {failed} failed, {skipped} skipped")
            for seconds, case_id in sorted(summary.timings, reverse=True)[:10]:
                emit(f"  slowest: {seconds:.3f}s {case_id}")
        emit(summary.totals())
    return summary
