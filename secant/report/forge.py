"""forge from npm and a solc command line for it: what running reproducers under forge takes.

secant writes Foundry tests (``secant.report.reproducer``); checking them, and the harness
bench (``bench/harnesses.py``), run forge itself. Both take forge from the npm registry
(``@foundry-rs/forge``, whose platform package ships the binary), installed once into a
cache folder, and hand it a solc through ``forge test --offline --use <wrapper>``: a small
node script answering ``--version`` and ``--standard-json`` as solc's command line does,
backed by the solc-js release secant's own compiler cache holds, so forge needs no
download of its own and compiles with exactly the compiler secant used.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from secant.errors import SecantError

FORGE_VERSION = "1.7.1"
"""The forge release secant's tests and benches run."""

SOLC_WRAPPER = r"""#!{node}
// solc's command line as forge calls it (--version, --standard-json on stdin), answered by
// solc-js {version}. Written by secant (secant/report/forge.py).
const solc = require({package});
// The same emscripten module the wrapper uses: a large input goes on its heap, not on the
// 5 MiB stack solc-js's own call copies it onto (secant/compile/solc_driver.js says why).
const soljson = require(require('path').join({package}, 'soljson.js'));
function compile(input) {{
  if (input.length <= 512 * 1024 || !soljson._solidity_alloc || !soljson._solidity_compile) {{
    return solc.compile(input);
  }}
  const size = soljson.lengthBytesUTF8(input) + 1;
  const pointer = soljson._solidity_alloc(size);
  soljson.stringToUTF8(input, pointer, size);
  return soljson.UTF8ToString(soljson._solidity_compile(pointer, 0, 0));
}}
const args = process.argv.slice(2);
if (args.includes('--version')) {{
  const match = solc.version().match(/^(\d+\.\d+\.\d+)(?:.*?commit\.([0-9a-f]+))?/);
  process.stdout.write('solc, the solidity compiler commandline interface\n' +
    'Version: ' + match[1] + '+commit.' + (match[2] || '00000000') + '.Linux.g++\n');
}} else if (args.includes('--standard-json')) {{
  const chunks = [];
  process.stdin.on('data', (chunk) => chunks.push(chunk));
  process.stdin.on('end', () => {{
    process.stdout.write(compile(Buffer.concat(chunks).toString('utf8')));
  }});
}} else {{
  process.stderr.write('this solc answers --version and --standard-json only\n');
  process.exit(1);
}}
"""


class ForgeUnavailable(SecantError):
    """forge could not be installed from npm (no npm, no registry, no binary)."""


def find_forge(prefix: Path) -> Path | None:
    """The forge binary an npm install under ``prefix`` left, or None."""
    for found in sorted(prefix.glob("node_modules/@foundry-rs/forge-*/bin/forge")):
        if os.access(found, os.X_OK):
            return found
    return None


def install_forge(cache: Path, version: str = FORGE_VERSION, timeout: float = 600) -> Path:
    """Install forge ``version`` from npm under ``cache/forge-<version>`` (once); its binary.

    Raises :class:`ForgeUnavailable` when npm is missing or fails, or installs no binary
    for this platform.
    """
    prefix = cache / f"forge-{version}"
    binary = find_forge(prefix)
    if binary is not None:
        return binary
    npm = shutil.which("npm")
    if npm is None:
        raise ForgeUnavailable("npm is not installed, so forge cannot be installed",
                               "install Node.js and npm")
    command = [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
               "--loglevel=error", f"@foundry-rs/forge@{version}"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              check=False)
    except subprocess.TimeoutExpired:
        raise ForgeUnavailable(f"npm install @foundry-rs/forge@{version} timed out",
                               "check the connection to the npm registry") from None
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if "npm warn" not in line]
        raise ForgeUnavailable(f"npm install @foundry-rs/forge@{version} failed: "
                               f"{(lines or ['no output'])[0].strip()}",
                               "check the connection to the npm registry")
    binary = find_forge(prefix)
    if binary is None:
        raise ForgeUnavailable(f"npm installed @foundry-rs/forge@{version} without a forge "
                               f"binary for this platform under {prefix}",
                               "install forge another way (foundryup) and pass its path")
    return binary


def solc_wrapper(cache: Path, version: str) -> Path:
    """A solc command line over solc-js ``version`` (from secant's cache) for forge's --use."""
    from secant.compile.semver import parse_version
    from secant.compile.solc import install

    package = install(parse_version(version))
    node = shutil.which("node") or "/usr/bin/env node"
    path = cache / "solc" / f"solc-{version}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SOLC_WRAPPER.format(node=node, version=version,
                                        package=json.dumps(str(package))), encoding="utf-8")
    path.chmod(0o755)
    return path
