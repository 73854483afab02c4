"""Build ``token.json``, the bundled example state test (official state-test format).

Run from the project root: ``.venv/bin/python examples/statetests/build.py``. It compiles
``bench/contracts/Token.sol`` with solc-js, puts the deployed token in the pre-state with a
funded holder, and fills three transactions (a transfer, a transfer that reverts, an
approve) with secant's EVM: each case's expected state root and logs hash. The test suite
re-runs the file and replays its calls on py-evm
(tests/examples/test_statetest_example.py).
"""

from __future__ import annotations

import json
from pathlib import Path

from secant.compile.loader import load
from secant.evm.env import BlockEnv
from secant.evm.forks import CANCUN
from secant.evm.state import WorldState
from secant.evm.transaction import Transaction, apply_transaction
from secant.evm.trie import logs_hash, state_root

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
HOLDER = 0xA94F5374FCE5EDBC8E2A8697C15331677E6EBF0B  # ethereum/tests' usual sender
TOKEN = 0x00000000000000000000000000000000000C0FFE
RECIPIENT = 0x000000000000000000000000000000000000BEEF
COINBASE = 0x2ADC25665018AA1FE0E6BC666DAC8FC2697FF9BA
SUPPLY = 10**24


def _word(x: int) -> bytes:
    return x.to_bytes(32, "big")


def main() -> None:
    """Fill the example and write it next to this script."""
    token = load([ROOT / "bench/contracts/Token.sol"])[0].contract("Token")
    runtime = token.runtime.to_bytes()
    transfer = bytes(token.abi.function("transfer").selector)
    approve = bytes(token.abi.function("approve").selector)
    # balanceOf is slot 0: keccak(holder . 0); totalSupply is slot 2.
    from secant.evm.crypto import keccak256

    holder_slot = int.from_bytes(keccak256(_word(HOLDER) + _word(0)), "big")
    pre = {
        HOLDER: {"balance": 10**21, "nonce": 0, "code": b"", "storage": {}},
        TOKEN: {"balance": 0, "nonce": 1, "code": runtime,
                "storage": {holder_slot: SUPPLY, 2: SUPPLY}},
    }
    env = BlockEnv(coinbase=COINBASE, number=1, timestamp=1000, gas_limit=30_000_000,
                   base_fee=7, prev_randao=0x20000)
    data = [
        transfer + _word(RECIPIENT) + _word(10**18),
        transfer + _word(RECIPIENT) + _word(SUPPLY + 1),  # more than the balance: reverts
        approve + _word(RECIPIENT) + _word(2**256 - 1),
    ]
    posts = []
    for index, calldata in enumerate(data):
        state = WorldState()
        for address, account in pre.items():
            state.set_account(address, nonce=account["nonce"], balance=account["balance"],
                              code=account["code"], storage=account["storage"])
        tx = Transaction(sender=HOLDER, to=TOKEN, nonce=0, gas_limit=200_000, gas_price=10,
                         data=calldata)
        result = apply_transaction(state, env, tx, CANCUN)
        root = state_root(
            (a, acc.nonce, acc.balance, acc.storage, acc.code_hash)
            for a, acc in state.iter_accounts()
        )
        posts.append({
            "indexes": {"data": index, "gas": 0, "value": 0},
            "hash": "0x" + root.hex(),
            "logs": "0x" + logs_hash(result.logs).hex(),
            "txbytes": "0x",
        })

    def hex_account(account: dict[str, object]) -> dict[str, object]:
        storage = account["storage"]
        assert isinstance(storage, dict)
        return {
            "balance": hex(int(account["balance"])),  # type: ignore[call-overload]
            "nonce": hex(int(account["nonce"])),  # type: ignore[call-overload]
            "code": "0x" + bytes(account["code"]).hex(),  # type: ignore[call-overload]
            "storage": {hex(k): hex(v) for k, v in storage.items()},
        }

    test = {
        "tokenTransfer": {
            "_info": {"comment": "Filled by examples/statetests/build.py with secant; "
                                 "cross-checked against py-evm by the test suite."},
            "env": {
                "currentCoinbase": f"0x{COINBASE:040x}", "currentGasLimit": hex(env.gas_limit),
                "currentNumber": hex(env.number), "currentTimestamp": hex(env.timestamp),
                "currentDifficulty": "0x0", "currentBaseFee": hex(env.base_fee),
                "currentRandom": f"0x{env.prev_randao:064x}", "currentExcessBlobGas": "0x0",
            },
            "pre": {f"0x{a:040x}": hex_account(acc) for a, acc in pre.items()},
            "transaction": {
                "nonce": "0x0", "sender": f"0x{HOLDER:040x}", "to": f"0x{TOKEN:040x}",
                "gasPrice": "0xa", "gasLimit": ["0x30d40"], "value": ["0x0"],
                "data": ["0x" + d.hex() for d in data],
                "secretKey": "0x45a915e4d060149eb4365960e6a7a45f334393093061116b197e3240065ff2d8",
            },
            "post": {"Cancun": posts},
        }
    }
    out = HERE / "token.json"
    out.write_text(json.dumps(test, indent=2) + "\n")
    print(f"wrote {out.relative_to(ROOT)}: {len(posts)} cases")


if __name__ == "__main__":
    main()
