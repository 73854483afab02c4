"""Benchmark: compiling 20 Solidity files in one command vs a single file.

Usage: ``.venv/bin/python bench/compile.py [--solc-version 0.8.37]``

Writes 20 small contracts (each a bit different) into a temporary directory and times
``secant compile`` as a user runs it (a fresh process, output cache off) on one file and on
all 20. One command keeps one node process alive per compiler version, so the 20-file run
should cost one node start plus ~20 warm compiles, not 20 node starts.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TEMPLATE = """// SPDX-License-Identifier: MIT
pragma solidity ^0.8.0;

contract Example{n} {{
    mapping(address => uint256) public balances;
    uint256 public total;
    address public owner;
    event Moved(address indexed from, address indexed to, uint256 amount);

    constructor() {{ owner = msg.sender; }}

    function deposit() external payable {{
        balances[msg.sender] += msg.value;
        total += msg.value * {n} + 1;
    }}

    function move(address to, uint256 amount) external {{
        require(balances[msg.sender] >= amount, "balance");
        balances[msg.sender] -= amount;
        balances[to] += amount;
        emit Moved(msg.sender, to, amount);
    }}

    function step{n}(uint256 x) external pure returns (uint256) {{
        uint256 acc = x;
        for (uint256 i = 0; i < {n} + 3; i++) {{ acc = acc * 31 + i; }}
        return acc;
    }}
}}
"""


def secant(*args: str) -> float:
    command = [sys.executable, "-c", "from secant.cli.main import app; app(prog_name='secant')"]
    start = time.perf_counter()
    proc = subprocess.run([*command, *args], capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"secant {' '.join(args)} failed:\n{proc.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--solc-version", default=None)
    parser.add_argument("--files", type=int, default=20)
    args = parser.parse_args()
    extra = ["--solc-version", args.solc_version] if args.solc_version else []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / ".git").mkdir()  # a project root marker: unit names relative to tmp
        for n in range(args.files):
            (root / f"Example{n:02d}.sol").write_text(TEMPLATE.format(n=n))
        secant("compile", str(root / "Example00.sol"), *extra)  # installs the compiler if needed
        single = min(secant("compile", str(root / "Example00.sol"), "--no-cache", *extra)
                     for _ in range(3))
        many = min(secant("compile", str(root), "--no-cache", *extra) for _ in range(3))
        cached = min(secant("compile", str(root), *extra) for _ in range(3))
    per_file = (many - single) / (args.files - 1)
    print(f"single file, one command:      {single:6.2f} s")
    print(f"{args.files} files, one command:      {many:6.2f} s"
          f"  ({many / args.files:.3f} s per file)")
    print(f"warm cost per extra file:      {per_file:6.3f} s")
    print(f"{args.files} files, output cache hit: {cached:6.2f} s")
    print(f"{args.files} separate commands would take ~{single * args.files:.1f} s")


if __name__ == "__main__":
    main()
