"""The bundled state-test example, and an independent check of what it runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from secant.cli.main import app
from secant.evm.env import BlockEnv
from secant.evm.forks import CANCUN
from secant.evm.interpreter import Evm
from secant.evm.state import WorldState

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "statetests"


def test_bundled_statetest_example_passes() -> None:
    result = CliRunner().invoke(app, ["evm", "statetest", str(EXAMPLES)])
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines()[-1] == "3 passed, 0 failed, 0 skipped"


def test_example_calls_agree_with_pyevm() -> None:
    """Each transaction's call, replayed on secant and on py-evm from the same pre-state."""
    pytest.importorskip("eth", reason="py-evm is a development dependency")
    from secant.bench.pyevm_baseline import PyEvmRunner, pyevm_account, pyevm_message

    test = json.loads((EXAMPLES / "token.json").read_text())["tokenTransfer"]
    pre = {
        int(a, 16): (int(acc["nonce"], 16), int(acc["balance"], 16),
                     bytes.fromhex(acc["code"][2:]),
                     {int(k, 16): int(v, 16) for k, v in acc["storage"].items()})
        for a, acc in test["pre"].items()
    }
    tx = test["transaction"]
    sender, token = int(tx["sender"], 16), int(tx["to"], 16)
    outcomes = []
    for data_hex in tx["data"]:
        data = bytes.fromhex(data_hex[2:])
        state = WorldState()
        for address, (nonce, balance, code, storage) in pre.items():
            state.set_account(address, nonce=nonce, balance=balance, code=code, storage=storage)
        state.begin_transaction().warm_addresses.update({sender, token})
        evm = Evm(state, BlockEnv(number=1, timestamp=1000), CANCUN)
        evm.origin = sender
        ours = evm.call(sender, token, data, 150_000)
        slots = set(state.get(token).storage) | set(pre[token][3])  # type: ignore[union-attr]
        runner = PyEvmRunner([(a, *v) for a, v in pre.items()], timestamp=1000, number=1)
        theirs = pyevm_message(runner, sender, token, data, 150_000, 0, warm=(sender, token))
        assert (ours.success, ours.output, ours.gas_left) == (
            theirs.success, theirs.output, theirs.gas_left)
        assert state.get(token).storage == pyevm_account(  # type: ignore[union-attr]
            runner, token, slots)[3]
        outcomes.append(ours.success)
    assert outcomes == [True, False, True]  # transfer, over-balance transfer, approve
