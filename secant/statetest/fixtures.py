"""Typed model of the state-test JSON format and of the derived expected post-states.

One fixture file maps test names to tests; each test has an ``env``, a ``pre`` state, a
``transaction`` template whose ``data``/``gasLimit``/``value`` are lists, and
``post["Cancun"]``, a list of cases selecting one entry of each list by index. Next to the
official files, ``derived/poststate/<same relative path>`` holds, for most cases, the full
expected post-state (changed accounts, deleted accounts, gas used); it is attached to the
matching :class:`Case` as :class:`ExpectedPost`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from secant.errors import SecantError

FORK = "Cancun"
"""The ``post`` key whose cases are run."""

FIXTURES_ENV = "SECANT_EVM_FIXTURES"
"""Environment variable naming the fixture root (overrides ``../shared/evm-fixtures``)."""

DERIVED_DIR = Path("derived") / "poststate"
"""Where, relative to an ancestor of a fixture file, its derived post-state lives."""

AccessList = tuple[tuple[int, tuple[int, ...]], ...]
"""An EIP-2930 access list: (address, (storage slots...)) pairs."""


_BIGINT = "0x:bigint "


class FixtureError(SecantError):
    """A fixture file cannot be read or does not follow the state-test format."""


# ----------------------------------------------------------------------------- model


@dataclass(frozen=True)
class Env:
    """The block environment of a test (``env``)."""

    coinbase: int
    gas_limit: int
    number: int
    timestamp: int
    difficulty: int
    base_fee: int | None
    prev_randao: int | None
    excess_blob_gas: int | None


@dataclass(frozen=True)
class AccountState:
    """An account of ``pre``, or of a derived post-state (``code`` None: unchanged)."""

    nonce: int
    balance: int
    code: bytes | None
    storage: Mapping[int, int]


@dataclass(frozen=True)
class TransactionTemplate:
    """The ``transaction`` of a test: scalar fields plus the indexed lists."""

    sender: int
    to: int | None
    nonce: int
    data: tuple[bytes, ...]
    gas_limit: tuple[int, ...]
    value: tuple[int, ...]
    gas_price: int | None
    max_fee_per_gas: int | None
    max_priority_fee_per_gas: int | None
    max_fee_per_blob_gas: int | None
    blob_versioned_hashes: tuple[bytes, ...] | None
    access_lists: tuple[AccessList | None, ...] | None


@dataclass(frozen=True)
class ExpectedPost:
    """A derived full post-state: accounts that changed, accounts deleted, gas used."""

    gas_used: int
    changed: Mapping[int, AccountState]
    deleted: frozenset[int]


@dataclass(frozen=True, eq=False)
class Case:
    """One entry of ``post["Cancun"]``: a concrete transaction and its expected outcome."""

    test: StateTest = field(repr=False)
    position: int
    data_index: int
    gas_index: int
    value_index: int
    data: bytes
    gas_limit: int
    value: int
    access_list: AccessList | None
    tx_type: int
    expect_exception: str | None
    state_root: bytes
    logs_hash: bytes
    txbytes: bytes
    post: ExpectedPost | None = None
    post_unavailable: str | None = None

    @property
    def indexes(self) -> str:
        """``[d,g,v]``: the data, gas and value indexes."""
        return f"[{self.data_index},{self.gas_index},{self.value_index}]"

    @property
    def name(self) -> str:
        """``<test>[d,g,v]``."""
        return f"{self.test.name}{self.indexes}"

    @property
    def id(self) -> str:
        """``<file>::<test>[d,g,v]``, as printed in failure lines."""
        return f"{self.test.file}::{self.name}"


@dataclass
class StateTest:
    """One named test of a fixture file and its cases."""

    file: Path
    name: str
    env: Env
    pre: dict[int, AccountState]
    transaction: TransactionTemplate
    cases: list[Case] = field(default_factory=list)
    derived_file: Path | None = None


# ----------------------------------------------------------------------------- parsing


class _Context:
    """Where in a fixture parsing is, for error messages."""

    def __init__(self, file: Path) -> None:
        self.file = file
        self.where = ""

    def error(self, message: str) -> FixtureError:
        where = f" ({self.where})" if self.where else ""
        return FixtureError(f"{self.file}{where}: {message}",
                            "is it a filled state-test JSON file?")


def _hex_int(value: Any, ctx: _Context, what: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if not isinstance(value, str) or not value.startswith("0x"):
        raise ctx.error(f"{what}: expected a 0x-prefixed hex number, got {value!r}")
    if value == "0x":
        return 0
    if value.startswith(_BIGINT):  # retesteth's marker for a number beyond 256 bits
        value = value[len(_BIGINT):]
    try:
        return int(value, 16)
    except ValueError:
        raise ctx.error(f"{what}: not a hex number: {value!r}") from None


def _hex_bytes(value: Any, ctx: _Context, what: str) -> bytes:
    if not isinstance(value, str) or not value.startswith("0x"):
        raise ctx.error(f"{what}: expected 0x-prefixed hex bytes, got {value!r}")
    try:
        return bytes.fromhex(value[2:])
    except ValueError:
        raise ctx.error(f"{what}: not hex bytes: {value[:40]!r}") from None


def _opt_int(obj: Mapping[str, Any], key: str, ctx: _Context) -> int | None:
    value = obj.get(key)
    return None if value is None else _hex_int(value, ctx, key)


def _req(obj: Any, key: str, ctx: _Context) -> Any:
    if not isinstance(obj, dict):
        raise ctx.error(f"expected an object holding {key!r}")
    if key not in obj:
        raise ctx.error(f"missing {key!r}")
    return obj[key]


def _list(value: Any, ctx: _Context, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise ctx.error(f"{what}: expected a list")
    return value


def _storage(value: Any, ctx: _Context) -> dict[int, int]:
    if not isinstance(value, dict):
        raise ctx.error("storage: expected an object")
    storage: dict[int, int] = {}
    for slot, word in value.items():
        number = _hex_int(word, ctx, "storage value")
        if number:
            storage[_hex_int(slot, ctx, "storage slot")] = number
    return storage


def _account(value: Any, ctx: _Context, code_required: bool) -> AccountState:
    code = None
    if code_required or (isinstance(value, dict) and "code" in value):
        code = _hex_bytes(_req(value, "code", ctx), ctx, "code")
    return AccountState(
        nonce=_hex_int(_req(value, "nonce", ctx), ctx, "nonce"),
        balance=_hex_int(_req(value, "balance", ctx), ctx, "balance"),
        code=code,
        storage=_storage(value.get("storage", {}), ctx),
    )


def _env(value: Any, ctx: _Context) -> Env:
    ctx.where = "env"
    return Env(
        coinbase=_hex_int(_req(value, "currentCoinbase", ctx), ctx, "currentCoinbase"),
        gas_limit=_hex_int(_req(value, "currentGasLimit", ctx), ctx, "currentGasLimit"),
        number=_hex_int(_req(value, "currentNumber", ctx), ctx, "currentNumber"),
        timestamp=_hex_int(_req(value, "currentTimestamp", ctx), ctx, "currentTimestamp"),
        difficulty=_hex_int(value.get("currentDifficulty", "0x"), ctx, "currentDifficulty"),
        base_fee=_opt_int(value, "currentBaseFee", ctx),
        prev_randao=_opt_int(value, "currentRandom", ctx),
        excess_blob_gas=_opt_int(value, "currentExcessBlobGas", ctx),
    )


def _access_list(value: Any, ctx: _Context) -> AccessList | None:
    if value is None:
        return None
    entries = []
    for entry in _list(value, ctx, "access list"):
        address = _hex_int(_req(entry, "address", ctx), ctx, "access list address")
        slots = tuple(_hex_int(s, ctx, "access list slot")
                      for s in _list(_req(entry, "storageKeys", ctx), ctx, "storageKeys"))
        entries.append((address, slots))
    return tuple(entries)


def _transaction(value: Any, ctx: _Context) -> TransactionTemplate:
    ctx.where = "transaction"
    to_text = _req(value, "to", ctx)
    hashes = value.get("blobVersionedHashes")
    access_lists = value.get("accessLists")
    return TransactionTemplate(
        sender=_hex_int(_req(value, "sender", ctx), ctx, "sender"),
        to=None if to_text in ("", None) else _hex_int(to_text, ctx, "to"),
        nonce=_hex_int(_req(value, "nonce", ctx), ctx, "nonce"),
        data=tuple(_hex_bytes(d, ctx, "data") for d in _list(_req(value, "data", ctx), ctx,
                                                             "data")),
        gas_limit=tuple(_hex_int(g, ctx, "gasLimit")
                        for g in _list(_req(value, "gasLimit", ctx), ctx, "gasLimit")),
        value=tuple(_hex_int(v, ctx, "value")
                    for v in _list(_req(value, "value", ctx), ctx, "value")),
        gas_price=_opt_int(value, "gasPrice", ctx),
        max_fee_per_gas=_opt_int(value, "maxFeePerGas", ctx),
        max_priority_fee_per_gas=_opt_int(value, "maxPriorityFeePerGas", ctx),
        max_fee_per_blob_gas=_opt_int(value, "maxFeePerBlobGas", ctx),
        blob_versioned_hashes=None if hashes is None else tuple(
            _hex_bytes(h, ctx, "blobVersionedHashes") for h in _list(hashes, ctx, "hashes")),
        access_lists=None if access_lists is None else tuple(
            _access_list(a, ctx) for a in _list(access_lists, ctx, "accessLists")),
    )


def _tx_type(template: TransactionTemplate, access_list: AccessList | None,
             txbytes: bytes) -> int:
    """Return the EIP-2718 type: the type byte of ``txbytes``, else inferred from fields."""
    if txbytes and txbytes[0] < 0x80:
        return txbytes[0]
    if txbytes:
        return 0
    if template.blob_versioned_hashes is not None:
        return 3
    if template.max_fee_per_gas is not None:
        return 2
    if access_list is not None:
        return 1
    return 0


def _pick(values: Sequence[Any], index: int, ctx: _Context, what: str) -> Any:
    if not 0 <= index < len(values):
        raise ctx.error(f"{what} index {index} out of range (0..{len(values) - 1})")
    return values[index]


def _case(test: StateTest, position: int, value: Any, ctx: _Context) -> Case:
    ctx.where = f"post.{FORK}[{position}]"
    indexes = _req(value, "indexes", ctx)
    d, g, v = (_req(indexes, k, ctx) for k in ("data", "gas", "value"))
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in (d, g, v)):
        raise ctx.error("indexes must be integers")
    template = test.transaction
    access_list = None
    if template.access_lists is not None:
        access_list = _pick(template.access_lists, d, ctx, "accessLists")
    txbytes = _hex_bytes(value.get("txbytes", "0x"), ctx, "txbytes")
    expect = value.get("expectException")
    if expect is not None and not isinstance(expect, str):
        raise ctx.error("expectException must be a string")
    return Case(
        test=test,
        position=position,
        data_index=d,
        gas_index=g,
        value_index=v,
        data=_pick(template.data, d, ctx, "data"),
        gas_limit=_pick(template.gas_limit, g, ctx, "gasLimit"),
        value=_pick(template.value, v, ctx, "value"),
        access_list=access_list,
        tx_type=_tx_type(template, access_list, txbytes),
        expect_exception=expect or None,
        state_root=_hex_bytes(_req(value, "hash", ctx), ctx, "hash"),
        logs_hash=_hex_bytes(_req(value, "logs", ctx), ctx, "logs"),
        txbytes=txbytes,
    )


def _expected_post(entry: Any, ctx: _Context) -> ExpectedPost:
    changed = _req(entry, "changed", ctx)
    if not isinstance(changed, dict):
        raise ctx.error("changed: expected an object")
    return ExpectedPost(
        gas_used=_hex_int(_req(entry, "gasUsed", ctx), ctx, "gasUsed"),
        changed={_hex_int(a, ctx, "address"): _account(acct, ctx, code_required=False)
                 for a, acct in changed.items()},
        deleted=frozenset(_hex_int(a, ctx, "deleted address")
                          for a in _list(entry.get("deleted", []), ctx, "deleted")),
    )


def derived_path(file: Path) -> Path | None:
    """Return the derived post-state file of fixture ``file``, if one exists.

    It is ``<ancestor>/derived/poststate/<file relative to ancestor>`` for the nearest
    ancestor where that file exists.
    """
    file = file.resolve()
    for ancestor in file.parents:
        candidate = ancestor / DERIVED_DIR / file.relative_to(ancestor)
        if candidate.is_file():
            return candidate
    return None


def _attach_derived(tests: dict[str, StateTest], path: Path) -> None:
    ctx = _Context(path)
    data = _read_json(path)
    for name, entries in data.items():
        if name.startswith("_") or name not in tests:
            continue
        test = tests[name]
        test.derived_file = path
        ctx.where = name
        entries = _list(entries, ctx, name)
        if len(entries) != len(test.cases):
            raise ctx.error(f"{len(entries)} derived entries for {len(test.cases)} cases")
        for position, (case, entry) in enumerate(zip(test.cases, entries, strict=True)):
            ctx.where = f"{name}[{position}]"
            indexes = _req(entry, "indexes", ctx)
            if (indexes.get("data"), indexes.get("gas"), indexes.get("value")) != (
                case.data_index, case.gas_index, case.value_index
            ):
                raise ctx.error("derived entry does not match the case's indexes")
            if "unavailable" in entry:
                post, reason = None, str(entry["unavailable"])
            else:
                post, reason = _expected_post(entry, ctx), None
            test.cases[position] = _with_post(case, post, reason)


def _with_post(case: Case, post: ExpectedPost | None, reason: str | None) -> Case:
    return replace(case, post=post, post_unavailable=reason)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise FixtureError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise FixtureError(f"{path}: invalid JSON: {error}") from None
    if not isinstance(data, dict):
        raise FixtureError(f"{path}: expected a JSON object of tests")
    return data


def load_file(path: Path, *, derived: bool = True) -> list[StateTest]:
    """Parse one fixture file; attach its derived post-states when ``derived`` and present.

    Tests without a ``post["Cancun"]`` entry have no cases. Raises :class:`FixtureError`.
    """
    path = Path(path)
    data = _read_json(path)
    tests: dict[str, StateTest] = {}
    for name, raw in data.items():
        ctx = _Context(path)
        ctx.where = name
        if not isinstance(raw, dict):
            raise ctx.error("expected a test object")
        pre_raw = _req(raw, "pre", ctx)
        if not isinstance(pre_raw, dict):
            raise ctx.error("pre: expected an object")
        env = _env(_req(raw, "env", ctx), ctx)
        ctx.where = f"{name}.pre"
        pre = {_hex_int(a, ctx, "address"): _account(acct, ctx, code_required=True)
               for a, acct in pre_raw.items()}
        test = StateTest(file=path, name=name, env=env, pre=pre,
                         transaction=_transaction(_req(raw, "transaction", ctx), ctx))
        post = _req(raw, "post", ctx)
        if not isinstance(post, dict):
            raise ctx.error("post: expected an object")
        entries = _list(post.get(FORK, []), ctx, f"post.{FORK}")
        test.cases = [_case(test, i, entry, ctx) for i, entry in enumerate(entries)]
        tests[name] = test
    if derived:
        derived_file = derived_path(path)
        if derived_file is not None:
            _attach_derived(tests, derived_file)
    return list(tests.values())


# ----------------------------------------------------------------------------- locating


def project_root() -> Path:
    """Return the secant checkout: the directory holding the ``secant`` package."""
    return Path(__file__).resolve().parents[2]


def fixtures_root() -> Path | None:
    """Return ``$SECANT_EVM_FIXTURES``, else ``../shared/evm-fixtures`` (project-relative).

    Returns None when neither is an existing directory.
    """
    env = os.environ.get(FIXTURES_ENV)
    candidates = [Path(env).expanduser()] if env else []
    candidates.append(project_root().parent / "shared" / "evm-fixtures")
    for candidate in candidates:
        if candidate.is_dir():
            return candidate.resolve()
    return None


def fixture_files(root: Path) -> list[Path]:
    """Return the state-test files under a fixture root (``derived`` excluded), sorted."""
    return sorted(
        path
        for top in ("ethereum-tests", "legacytests-cancun")
        for path in (root / top).rglob("*.json")
    )


def find_files(paths: Iterable[Path]) -> list[Path]:
    """Expand files and folders into fixture files, in order, without duplicates.

    A folder contributes every ``*.json`` below it except derived post-states. A path that
    does not exist raises :class:`FixtureError`.
    """
    found: list[Path] = []
    seen: set[Path] = set()
    for path in paths:
        path = Path(path)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*.json")
                           if DERIVED_DIR.as_posix() not in p.resolve().as_posix())
        elif path.is_file():
            files = [path]
        else:
            raise FixtureError(f"no such file or folder: {path}",
                               f"fixtures live in ../shared/evm-fixtures or ${FIXTURES_ENV}")
        for file in files:
            key = file.resolve()
            if key not in seen:
                seen.add(key)
                found.append(file)
    return found
