"""Tx: value semantics, the cached hash, and pickling across processes."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from secant.types import Tx


def test_equal_transactions_hash_alike_and_replace_gets_a_fresh_hash() -> None:
    tx = Tx("f(uint256)", (1,), 0x1000, storage=((3, 4),))
    assert hash(tx) == hash(Tx("f(uint256)", (1,), 0x1000, storage=((3, 4),)))
    other = replace(tx, value=5)
    assert other != tx and {tx: 1}.get(other) is None
    assert {tx: 1}[replace(other, value=0)] == 1


def test_a_transaction_pickled_in_another_process_is_found_by_its_hash() -> None:
    # Another process hashes strings with another seed: a hash cached there must not
    # travel with the pickle (workers exchange test cases).
    code = ("import pickle, sys; from secant.types import Tx; "
            "t = Tx('transfer(address,uint256)', (7, 9), 0x1000); hash(t); "
            "sys.stdout.buffer.write(pickle.dumps(t))")
    env = dict(os.environ, PYTHONHASHSEED="12345")
    data = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True,
                          env=env, cwd=Path(__file__).resolve().parents[1]).stdout
    tx = pickle.loads(data)
    assert tx == Tx("transfer(address,uint256)", (7, 9), 0x1000)
    assert {Tx("transfer(address,uint256)", (7, 9), 0x1000): "found"}[tx] == "found"
