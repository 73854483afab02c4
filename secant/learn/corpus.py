"""The training corpus of ``secant learn dataset``: pinned npm packages of real contracts.

ILF trained on 18,496 contracts from Etherscan (§6). No such set can be fetched here, so
the corpus is built at run time from npm packages that ship Solidity sources, each pinned
to an exact version so that the same command rebuilds the same corpus. :data:`PINS`:

================================  =======  ============================  ================
package                           version  folders taken                 solc (pragma)
================================  =======  ============================  ================
``zeppelin-solidity``             1.12.0   ``contracts``                 ^0.4.24
``openzeppelin-solidity``         2.5.1    ``contracts``                 ^0.5.0
``@openzeppelin/contracts``       3.4.2    the package (mocks, presets)  >=0.6 <0.8
``@openzeppelin/contracts``       4.9.6    the package (presets)         ^0.8.0
``solmate``                       6.2.0    ``src`` but its tests         >=0.8.0
``@uniswap/v2-core``              1.0.1    ``contracts``                 =0.5.16
``@gnosis.pm/safe-contracts``     1.3.0    ``contracts``                 >=0.7.0 <0.9.0
================================  =======  ============================  ================

Why these: together they span solc 0.4 to 0.8 (legacy code generation of every major
release, so the features and slot scans see each dispatcher and storage idiom); they are
the contracts most deployed code on Ethereum derives from (tokens, crowdsales, access
control, escrows, payment splitters, vesting, governance, proxies, a DEX pair, a
multisig wallet); each version ships its sources in its npm tarball (``solmate`` from 6.x
ships ``src``; OpenZeppelin 4.9's tarball has no mocks, 3.4's has them); and they install
with npm alone (``--ignore-scripts``, no build step). solmate's tests (``src/test``: the
``*.t.sol`` files and their ds-test helpers) are left out, its mocks and "weird tokens"
kept; the packages' ``build`` folders (compiled artifacts) are left out.

**What counts.** Every Solidity file of the folders is compiled on its own with the
release its pragma asks for (``secant.compile``: the user's compilers, solc-js installed
on demand). Each contract *defined in that file* that is concrete (not abstract, an
interface or a library) and has code is deployed on a fresh test chain with generated
constructor arguments (``TestChain.deploy``, as ``secant deploy`` and ``secant fuzz`` do;
:data:`CORPUS_CHAIN` lifts the code size limit).
A file that does not compile and a contract that does not deploy are recorded with the
reason, and skipped.

**Duplicates.** Contracts are compared by the hash of their deployed runtime code up to
solc's metadata (``code_end``: the metadata hashes the source file's path and text, so
the same contract compiled from two files would otherwise never match). The first one
met (in :data:`PINS` order, then file and contract order) is kept; the others are
recorded as duplicates of it.

**The split** (:func:`split_of`) is by package *name*, so every copy of a contract in one
package, and both OpenZeppelin lines, land on the same side: ``solmate`` and
``@uniswap/v2-core`` (other authors, solc 0.5 and 0.8) are ``held-out``, the other pinned
packages ``train``. A package outside the pins (``--source DIR``) is held out when the
first byte of the SHA-256 of its name is below 52 (about one in five), else ``train``.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from secant.abi import keccak256
from secant.chain.chain import ChainConfig, TestChain
from secant.compile import CompileOptions, SolcManager
from secant.compile.cache import cache_root
from secant.compile.semver import Version
from secant.compile.solc import npm_executable
from secant.compile.solidity import compile_sources, gather
from secant.errors import SecantError
from secant.evm.analysis import code_end

__all__ = ["CORPUS_CHAIN", "CORPUS_SOLC", "HELD_OUT", "MANIFEST_FILE", "PINS", "CorpusContract",
           "CorpusError", "PackagePin", "campaign_pool", "corpus_solc", "enumerate_package",
           "install_package", "pin_of", "read_manifest", "runtime_hash", "source_files",
           "split_of"]

MANIFEST_FILE = "manifest.json"

CORPUS_CHAIN = ChainConfig(unlimited_code_size=True)
"""The chain corpus contracts are deployed on: without EIP-170's code size limit, since
the packages are compiled here without the optimizer their deployments used (the Safe's
L2 contract is over 24 KiB unoptimized)."""
"""The corpus builder's record of every contract (``OUT/manifest.json``)."""


@dataclass(frozen=True)
class PackagePin:
    """One npm package of the corpus at an exact version, and the folders taken from it."""

    name: str
    version: str
    folders: tuple[str, ...] = ("",)
    """Folders inside the package whose ``.sol`` files are taken ("" : the whole package)."""
    exclude: tuple[str, ...] = ()
    """Path parts (folders) or name suffixes (``.t.sol``) of files left out."""

    @property
    def spec(self) -> str:
        """``name@version``, as npm installs it."""
        return f"{self.name}@{self.version}"

    @property
    def slug(self) -> str:
        """A folder name for the install (``openzeppelin-contracts-4.9.6``)."""
        return f"{self.name.lstrip('@').replace('/', '-')}-{self.version}"


PINS: tuple[PackagePin, ...] = (
    PackagePin("zeppelin-solidity", "1.12.0", ("contracts",)),
    PackagePin("openzeppelin-solidity", "2.5.1", ("contracts",)),
    PackagePin("@openzeppelin/contracts", "3.4.2", ("",), ("build",)),
    PackagePin("@openzeppelin/contracts", "4.9.6", ("",), ("build",)),
    PackagePin("solmate", "6.2.0", ("src/auth", "src/mixins", "src/tokens", "src/utils",
                                    "src/test/utils/mocks", "src/test/utils/weird-tokens")),
    PackagePin("@uniswap/v2-core", "1.0.1", ("contracts",)),
    PackagePin("@gnosis.pm/safe-contracts", "1.3.0", ("contracts",)),
)
"""The corpus (module docstring: the versions and why)."""

CORPUS_SOLC: Version = (0, 8, 37)
"""The newest solc release the corpus compiles with (its files take the newest release their
pragma allows up to this one, never a native compiler): the pins fix the sources, this the
compilers, so the corpus builds the same code after solc releases more."""


def corpus_solc(allow_install: bool = True) -> SolcManager:
    """A compiler manager that chooses as the corpus does (:data:`CORPUS_SOLC`)."""
    return SolcManager(allow_install=allow_install, newest=CORPUS_SOLC)


def campaign_pool(jobs: int, preload: Sequence[str] = ()) -> ProcessPoolExecutor:
    """Worker processes for the corpus's campaigns, a fresh one for each campaign.

    Why: z3 numbers its terms in the order a process creates them, and its simplifier orders
    the arguments of a sum or a conjunction by those numbers, so an expert campaign that runs
    after others in the same process may choose otherwise (another sender, another value)
    than the same campaign alone: the dataset would depend on the packages built before and
    on ``--jobs``. Each campaign runs in its own process, forked from a server that has
    imported ``preload`` (the modules of the task function: secant, z3) and built no term.
    """
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(preload))
    return ProcessPoolExecutor(max_workers=jobs, mp_context=context, max_tasks_per_child=1)


HELD_OUT = frozenset({"solmate", "@uniswap/v2-core"})
"""Pinned packages whose contracts are held out of training (module docstring)."""


class CorpusError(SecantError):
    """A package could not be installed or read."""


def split_of(package: str) -> str:
    """``train`` or ``held-out`` for every contract of ``package`` (module docstring)."""
    if package in HELD_OUT:
        return "held-out"
    if any(pin.name == package for pin in PINS):
        return "train"
    return "held-out" if hashlib.sha256(package.encode()).digest()[0] < 52 else "train"


def pin_of(name: str) -> list[PackagePin]:
    """The pins of a package ``name`` or ``name@version`` (empty when none matches)."""
    at = name.rfind("@")
    base, version = (name[:at], name[at + 1:]) if at > 0 else (name, "")
    return [pin for pin in PINS if pin.name == base and version in ("", pin.version)]


@dataclass
class CorpusContract:
    """One contract of the corpus and what became of it (a line of the manifest)."""

    package: str
    version: str
    source: str
    """The file, relative to the package."""
    contract: str
    code_hash: str = ""
    """Keccak of the deployed runtime code up to solc's metadata, hex."""
    split: str = ""
    status: str = "found"
    """``compile-failed``, ``deploy-failed``, ``duplicate``, ``kept``; then, once the expert
    ran, ``done``, ``no-steps`` (it chose nothing), ``skipped`` (no campaign: nothing to
    call) or ``failed`` (secant failed; the reason names the error)."""
    reason: str = ""
    duplicate_of: str = ""
    """The key of the contract this one duplicates."""
    steps: int = 0
    seconds: float = 0.0
    solc: str = ""
    """The compiler release the file was compiled with (``0.8.37``; "" in manifests
    written before it was kept): ``bench/ilf.py`` compiles with it, and the expert's
    campaign chooses the same (:func:`corpus_solc`)."""
    path: str = field(default="", repr=False)
    """The file on this machine (not written to the manifest)."""

    @property
    def key(self) -> str:
        """``package/Contract-hash8``: the data file's name, without ``.jsonl``."""
        return f"{self.package}/{self.contract}-{self.code_hash[:8]}"

    def to_json(self) -> dict[str, Any]:
        """The manifest's entry."""
        out = asdict(self)
        out.pop("path")
        out["seconds"] = round(self.seconds, 3)
        return out

    @staticmethod
    def from_json(data: dict[str, Any]) -> CorpusContract:
        """An entry read back from the manifest."""
        known = {name: data[name] for name in CorpusContract.__dataclass_fields__
                 if name in data and name != "path"}
        return CorpusContract(**known)


def install_package(pin: PackagePin, root: Path | None = None,
                    timeout: float = 600.0) -> Path:
    """The package's folder, installed once with npm into the user cache.

    ``root`` defaults to ``<cache>/learn-corpus``; the install lands in ``root/<slug>``
    through a staging folder renamed at the end, so an interrupted install leaves nothing
    half done. Raises :class:`CorpusError` when npm fails or is missing.
    """
    home = (root or cache_root() / "learn-corpus") / pin.slug
    package = home / "node_modules" / pin.name
    if (package / "package.json").is_file():
        return package
    npm = shutil.which(npm_executable())
    if npm is None:
        raise CorpusError("npm is needed to install the corpus packages",
                          "install Node.js with npm, or use --source DIR")
    home.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=home.parent, prefix=".install-"))
    command = [npm, "install", "--prefix", str(staging), "--no-audit", "--no-fund",
               "--no-package-lock", "--ignore-scripts", "--loglevel=error", pin.spec]
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              check=False)
    except subprocess.TimeoutExpired:
        shutil.rmtree(staging, ignore_errors=True)
        raise CorpusError(f"npm install {pin.spec} timed out", "check the network") from None
    if proc.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        last = (proc.stderr.strip().splitlines() or ["npm failed"])[-1]
        raise CorpusError(f"npm install {pin.spec} failed: {last}", "check the network")
    try:
        os.replace(staging, home)
    except OSError:  # another run installed it meanwhile
        shutil.rmtree(staging, ignore_errors=True)
    if not (package / "package.json").is_file():
        raise CorpusError(f"npm install {pin.spec} left no {pin.name} package", "")
    return package


def source_files(root: Path, folders: Sequence[str] = ("",),
                 exclude: Sequence[str] = ()) -> list[Path]:
    """The ``.sol`` files under ``root``'s ``folders``, sorted, without ``exclude``'s.

    An entry of ``exclude`` ending in ``.sol`` is a name suffix; any other is a folder
    name anywhere in the path. ``node_modules`` is always left out.
    """
    files: set[Path] = set()
    for folder in folders:
        base = root / folder if folder else root
        if base.is_dir():
            files.update(base.rglob("*.sol"))
    kept = []
    for file in sorted(files):
        parts = file.relative_to(root).parts
        if "node_modules" in parts:
            continue
        if any(file.name.endswith(item) if item.endswith(".sol") else item in parts[:-1]
               for item in exclude):
            continue
        kept.append(file)
    return kept


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return (text[0] if text else type(error).__name__)[:300]


def runtime_hash(code: bytes) -> str:
    """The corpus's code identity: keccak of runtime code up to solc's metadata, hex."""
    return keccak256(code[:code_end(code)]).hex()


def enumerate_package(package: str, version: str, root: Path, files: Iterable[Path], *,
                      seen: dict[str, str], manager: SolcManager | None = None,
                      limit: int | None = None,
                      progress: Callable[[str], None] | None = None
                      ) -> list[CorpusContract]:
    """Compile ``files`` of a package, deploy every concrete contract, find duplicates.

    ``seen`` maps a runtime hash to the key of the contract kept for it, across packages
    (updated here). With ``limit``, stop once that many contracts are kept. Returns one
    entry per contract met (and per file that did not compile), in order.
    """
    options = CompileOptions()
    own = manager is None
    active = manager or corpus_solc()
    entries: list[CorpusContract] = []
    split = split_of(package)
    kept = 0
    try:
        for file in files:
            if limit is not None and kept >= limit:
                break
            source = file.relative_to(root).as_posix()
            if progress is not None:
                progress(f"{package}: {source}")
            try:
                compilation = compile_sources(gather([file], options), active, options)
            except (SecantError, OSError, ValueError) as error:
                if "defines no contract" in str(error):
                    continue  # free functions, errors or constants only: nothing to deploy
                entries.append(CorpusContract(package, version, source, "", split=split,
                                              status="compile-failed",
                                              reason=_one_line(error), path=str(file)))
                continue
            for contract in compilation.contracts:
                if limit is not None and kept >= limit:
                    break
                if compilation.roots and contract.source not in compilation.roots:
                    continue  # defined in an imported file: counted where it is defined
                if not contract.deployable:
                    continue  # abstract, interface or library
                entry = CorpusContract(package, version, source, contract.name, split=split,
                                       solc=contract.compiler.removeprefix("solc "),
                                       path=str(file))
                entries.append(entry)
                try:
                    chain = TestChain(CORPUS_CHAIN)
                    deployed = chain.deploy([compilation], contract, None)
                    code = chain.code_at(deployed.address)
                except Exception as error:  # noqa: BLE001 - any failure skips the contract
                    entry.status, entry.reason = "deploy-failed", _one_line(error)
                    continue
                if not code:
                    entry.status, entry.reason = "deploy-failed", "no runtime code"
                    continue
                entry.code_hash = runtime_hash(code)
                first = seen.get(entry.code_hash)
                if first is not None:
                    entry.status, entry.duplicate_of = "duplicate", first
                    continue
                seen[entry.code_hash] = entry.key
                entry.status = "kept"
                kept += 1
    finally:
        if own:
            active.close()
    return entries


def read_manifest(path: Path) -> dict[str, Any]:
    """A manifest written before (empty when there is none)."""
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise CorpusError(f"{path} is not a corpus manifest: {error}",
                          "remove it or choose another output folder") from None
    if not isinstance(data, dict) or not isinstance(data.get("contracts", []), list):
        raise CorpusError(f"{path} is not a corpus manifest",
                          "remove it or choose another output folder")
    return data
