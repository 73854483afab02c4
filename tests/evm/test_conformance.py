"""Official Cancun state tests on secant's EVM, one pytest item per fixture FILE.

The fixtures are read from ``$SECANT_EVM_FIXTURES`` or ``../shared/evm-fixtures`` (never
copied into the repository). Cases listed in ``SLOW_CASES`` run in a separate item per file,
marked ``slow`` and skipped unless ``SECANT_SLOW=1``. The first tests below check the fixture
parser on small synthetic files and need neither the fixtures nor the EVM.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from secant.statetest.fixtures import (
    FixtureError,
    derived_path,
    find_files,
    fixture_files,
    fixtures_root,
    load_file,
)

# ----------------------------------------------------------------------------- parser

SENDER = "0xa94f5374fce5edbc8e2a8697c15331677e6ebf0b"
TARGET = "0xcccccccccccccccccccccccccccccccccccccccc"


def _fixture(**tx_changes: Any) -> dict[str, Any]:
    tx: dict[str, Any] = {
        "data": ["0x", "0x6001"], "gasLimit": ["0x5208", "0x0186a0"], "value": ["0x00", "0x01"],
        "gasPrice": "0x0a", "nonce": "0x00", "sender": SENDER, "to": TARGET,
        "secretKey": "0x45a915e4d060149eb4365960e6a7a45f334393093061116b197e3240065ff2d8",
    }
    tx.update(tx_changes)
    tx = {k: v for k, v in tx.items() if v is not None}
    return {"demo": {
        "_info": {},
        "env": {"currentBaseFee": "0x0a", "currentCoinbase": "0x2adc25665018aa1fe0e6bc666dac8fc"
                "2697ff9ba", "currentDifficulty": "0x020000", "currentExcessBlobGas": "0x00",
                "currentGasLimit": "0xff112233445566", "currentNumber": "0x01",
                "currentRandom": "0x" + "00" * 31 + "07", "currentTimestamp": "0x03e8"},
        "pre": {
            SENDER: {"balance": "0x0de0b6b3a7640000", "code": "0x", "nonce": "0x00",
                     "storage": {}},
            TARGET: {"balance": "0x00", "code": "0x600160005500", "nonce": "0x01",
                     "storage": {"0x00": "0x00", "0x01": "0x02"}},
        },
        "transaction": tx,
        "post": {
            "Shanghai": [],
            "Cancun": [
                {"indexes": {"data": 0, "gas": 0, "value": 0}, "hash": "0x" + "11" * 32,
                 "logs": "0x" + "22" * 32, "txbytes": "0xf860"},
                {"indexes": {"data": 1, "gas": 1, "value": 1}, "hash": "0x" + "33" * 32,
                 "logs": "0x" + "44" * 32, "txbytes": "0x01f8",
                 "expectException": "TransactionException.INTRINSIC_GAS_TOO_LOW"},
            ],
        },
    }}


def _write(root: Path, relative: str, data: Any) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


REL = "ethereum-tests/GeneralStateTests/stDemo/demo.json"


def test_parse_cases(tmp_path: Path) -> None:
    path = _write(tmp_path, REL, _fixture(accessLists=[None, [
        {"address": TARGET, "storageKeys": ["0x00", "0x01"]}]]))
    [test] = load_file(path)
    assert test.name == "demo"
    assert test.env.base_fee == 10 and test.env.prev_randao == 7
    assert test.pre[int(TARGET, 16)].storage == {1: 2}  # zero slots dropped
    assert test.pre[int(TARGET, 16)].code == bytes.fromhex("600160005500")
    first, second = test.cases
    assert (first.data, first.gas_limit, first.value) == (b"", 21000, 0)
    assert first.access_list is None and first.tx_type == 0 and first.expect_exception is None
    assert first.state_root == b"\x11" * 32 and first.logs_hash == b"\x22" * 32
    assert (second.data, second.gas_limit, second.value) == (b"\x60\x01", 100000, 1)
    assert second.access_list == ((int(TARGET, 16), (0, 1)),)
    assert second.tx_type == 1
    assert second.expect_exception == "TransactionException.INTRINSIC_GAS_TOO_LOW"
    assert second.id == f"{path}::demo[1,1,1]"
    assert first.post is None


def test_parse_type_inference_without_txbytes(tmp_path: Path) -> None:
    data = _fixture(gasPrice=None, maxFeePerGas="0x20", maxPriorityFeePerGas="0x01",
                    maxFeePerBlobGas="0x01", blobVersionedHashes=["0x01" + "00" * 31],
                    value=[f"0x:bigint {2**256 + 1:#x}", "0x00"])
    for case in data["demo"]["post"]["Cancun"]:
        del case["txbytes"]
    [test] = load_file(_write(tmp_path, REL, data))
    assert [c.tx_type for c in test.cases] == [3, 3]
    assert test.cases[0].value == 2**256 + 1
    assert test.transaction.blob_versioned_hashes == (b"\x01" + b"\x00" * 31,)


def test_parse_derived_post_state(tmp_path: Path) -> None:
    path = _write(tmp_path, REL, _fixture())
    _write(tmp_path, "derived/poststate/" + REL, {
        "_source": {},
        "demo": [
            {"indexes": {"data": 0, "gas": 0, "value": 0}, "hash": "0x" + "11" * 32,
             "gasUsed": "0x5208", "deleted": ["0x00000000000000000000000000000000000000ff"],
             "changed": {TARGET: {"balance": "0x01", "nonce": "0x01",
                                  "storage": {"0x00": "0x01"}}}},
            {"indexes": {"data": 1, "gas": 1, "value": 1}, "hash": "0x" + "33" * 32,
             "unavailable": "invalid tx (post == pre)"},
        ],
    })
    assert derived_path(path) == (tmp_path / "derived/poststate" / REL).resolve()
    [test] = load_file(path)
    post = test.cases[0].post
    assert post is not None and post.gas_used == 21000
    assert post.deleted == {0xFF}
    change = post.changed[int(TARGET, 16)]
    assert change.code is None and change.storage == {0: 1} and change.balance == 1
    assert test.cases[1].post is None
    assert test.cases[1].post_unavailable == "invalid tx (post == pre)"
    assert load_file(path, derived=False)[0].cases[0].post is None


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["demo"]["transaction"].update(nonce="12"), "nonce"),
        (lambda d: d["demo"]["transaction"].update(data=["0xzz"]), "data"),
        (lambda d: d["demo"].pop("env"), "missing 'env'"),
        (lambda d: d["demo"]["post"]["Cancun"][0]["indexes"].update(data=7), "out of range"),
    ],
)
def test_parse_errors_name_the_file(tmp_path: Path, mutate: Any, message: str) -> None:
    data = _fixture()
    mutate(data)
    path = _write(tmp_path, REL, data)
    with pytest.raises(FixtureError) as info:
        load_file(path)
    assert str(path) in str(info.value) and message in str(info.value)


def test_parse_invalid_json(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("{")
    with pytest.raises(FixtureError, match="invalid JSON"):
        load_file(path)


def test_find_files(tmp_path: Path) -> None:
    path = _write(tmp_path, REL, _fixture())
    _write(tmp_path, "derived/poststate/" + REL, {})
    assert find_files([tmp_path]) == [path]
    assert find_files([path, tmp_path]) == [path]
    with pytest.raises(FixtureError, match="no such file or folder"):
        find_files([tmp_path / "missing"])


# ----------------------------------------------------------------------------- runner

ROOT = fixtures_root()
NO_FIXTURES = ("no EVM fixtures: neither ../shared/evm-fixtures nor $SECANT_EVM_FIXTURES "
               "exists")


def _real_case(relative: str, position: int = 0) -> Any:
    if ROOT is None:
        pytest.skip(NO_FIXTURES)
    return load_file(ROOT / relative)[0].cases[position]


ADD11 = "ethereum-tests/GeneralStateTests/stExample/add11.json"
INVALID = "ethereum-tests/GeneralStateTests/stEIP1559/lowFeeCap.json"


def test_runner_reports_differences() -> None:
    from secant.statetest.runner import run_case

    case = _real_case(ADD11)
    assert case.post is not None
    assert run_case(case) is None
    assert "state root" in (run_case(replace(case, post=None, state_root=b"\0" * 32)) or "")
    assert "logs hash" in (run_case(replace(case, logs_hash=b"\0" * 32)) or "")
    assert "gas used" in (run_case(replace(case, post=replace(case.post, gas_used=1))) or "")
    target, account = next((a, acct) for a, acct in case.post.changed.items() if acct.storage)
    changed = dict(case.post.changed)
    changed[target] = replace(account, storage={**account.storage, 0x77: 1})
    reason = run_case(replace(case, post=replace(case.post, changed=changed))) or ""
    assert reason.startswith(f"0x{target:040x}: storage[0x77] = 0x0, expected 0x1"), reason
    reason = run_case(replace(case, expect_exception="TransactionException.X")) or ""
    assert reason.startswith("expected TransactionException.X"), reason


def test_runner_invalid_transaction() -> None:
    from secant.statetest.runner import run_case

    case = _real_case(INVALID)
    assert case.expect_exception is not None
    assert run_case(case) is None
    assert "unexpected invalid transaction" in (run_case(replace(case, expect_exception=None))
                                                or "")


def test_run_paths_output(tmp_path: Path) -> None:
    from secant.statetest.runner import run_paths

    if ROOT is None:
        pytest.skip(NO_FIXTURES)
    lines: list[str] = []
    summary = run_paths([ROOT / ADD11], emit=lines.append)
    assert summary.ok and lines == [summary.totals()] and summary.passed >= 1
    broken = tmp_path / "broken.json"
    broken.write_text("[]")
    lines.clear()
    summary = run_paths([broken, ROOT / ADD11], emit=lines.append)
    assert not summary.ok and lines[0].startswith(f"FAIL {broken}: ")
    assert lines[-1] == f"{summary.passed} passed, 1 failed, 0 skipped"


# ----------------------------------------------------------------------------- conformance


RUN_SLOW = os.environ.get("SECANT_SLOW") == "1"
_CASE_SUFFIX = re.compile(r"\[\d+,\d+,\d+\]$")


def _slow_names() -> set[str]:
    from secant.statetest.runner import SLOW_CASES

    return {_CASE_SUFFIX.sub("", name) for name in SLOW_CASES}


def _params() -> Iterator[Any]:
    if ROOT is None:
        yield pytest.param(None, False, id="no-fixtures")
        return
    slow_names = _slow_names()
    for file in fixture_files(ROOT):
        relative = file.relative_to(ROOT).as_posix()
        yield pytest.param(file, False, id=relative)
        if slow_names:
            text = file.read_text(encoding="utf-8")
            if any(f'"{name}"' in text for name in slow_names):
                yield pytest.param(
                    file, True, id=relative + "::slow",
                    marks=[pytest.mark.slow,
                           pytest.mark.skipif(not RUN_SLOW, reason="slow: set SECANT_SLOW=1")],
                )


@pytest.mark.parametrize(("file", "only_slow"), list(_params()))
def test_fixture_file(file: Path | None, only_slow: bool) -> None:
    if file is None:
        pytest.skip(NO_FIXTURES)
    from secant.statetest.runner import FAIL, PASS, run_file

    report = run_file(file, skip_slow=not only_slow, only_slow=only_slow)
    assert report.error is None, report.error
    failures = [f"{o.id}: {o.reason}" for o in report.outcomes if o.status == FAIL]
    assert not failures, f"{len(failures)} failing case(s):\n" + "\n".join(failures[:20])
    if only_slow:
        assert any(o.status == PASS for o in report.outcomes)


def test_cli_refuses_a_folder_without_state_tests(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from secant.cli.main import app

    result = CliRunner().invoke(app, ["evm", "statetest", str(tmp_path)])
    assert result.exit_code == 2
    assert "no state-test JSON files under" in result.output
    assert "Traceback" not in result.output
