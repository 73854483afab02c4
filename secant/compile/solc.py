"""Solidity compilers: a native ``solc`` on PATH, or solc-js from npm in the user cache.

solc-js versions are installed per version into ``<cache>/solc/<version>/`` with
``npm install --prefix``. Within a run, :class:`SolcManager` keeps one node process per
version alive (``solc_driver.js``), so compiling many files costs one node start per version.
Releases before 0.4.11, which answer no standard JSON, run inside a newer 0.4 package's
wrapper (:meth:`SolcManager._wrapper`); secant sends them the legacy request and translates
their answer (:mod:`secant.compile.legacy`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

from secant.compile.cache import cache_root
from secant.compile.errors import (
    CompilationFailed,
    CompilerUnavailable,
    PragmaUnsatisfiable,
    ToolMissing,
)
from secant.compile.legacy import legacy_input, standard_output
from secant.compile.semver import Version, VersionRange, format_version, parse_version
from secant.files import write_atomic

DRIVER = Path(__file__).with_name("solc_driver.js")
"""The node script that serves standard-JSON requests for one solc-js version."""

_MARK = b"\x01secant "
_KNOWN = (
    "0.4.0 0.4.1 0.4.2 0.4.3 0.4.4 0.4.5 0.4.6 0.4.7 0.4.8 0.4.9 0.4.10 0.4.11 0.4.13 0.4.14 "
    "0.4.15 0.4.16 0.4.17 0.4.18 0.4.19 0.4.20 0.4.21 0.4.22 0.4.23 0.4.24 0.4.25 0.4.26 0.5.0 "
    "0.5.1 0.5.2 0.5.3 0.5.4 0.5.5 0.5.6 0.5.7 0.5.8 0.5.9 0.5.10 0.5.11 0.5.12 0.5.13 0.5.14 "
    "0.5.15 0.5.16 0.5.17 0.6.0 0.6.1 0.6.2 0.6.3 0.6.4 0.6.5 0.6.6 0.6.7 0.6.8 0.6.9 0.6.10 "
    "0.6.11 0.6.12 0.7.0 0.7.1 0.7.2 0.7.3 0.7.4 0.7.5 0.7.6 0.8.0 0.8.1 0.8.2 0.8.3 0.8.4 0.8.5 "
    "0.8.6 0.8.7 0.8.8 0.8.9 0.8.10 0.8.11 0.8.12 0.8.13 0.8.14 0.8.15 0.8.16 0.8.17 0.8.18 "
    "0.8.19 0.8.20 0.8.21 0.8.22 0.8.23 0.8.24 0.8.25 0.8.26 0.8.27 0.8.28 0.8.29 0.8.30 0.8.31 "
    "0.8.32 0.8.33 0.8.34 0.8.35 0.8.36 0.8.37"
)
# npm holds the releases before 0.4 under these names (some with a build number).
_LEGACY_NAMES = ("0.2.0-1 0.2.1-1 0.2.2-2 0.3.1-1 0.3.2-1 0.3.3 0.3.4 0.3.5 0.3.6")
_NPM_NAMES = {parse_version(name): name for name in _LEGACY_NAMES.split()}
KNOWN_VERSIONS: tuple[Version, ...] = tuple(sorted(_NPM_NAMES)) + tuple(
    parse_version(v) for v in _KNOWN.split())
"""solc-js releases known without asking npm (refreshed by ``secant solc list --remote``)."""

OLDEST: Version = (0, 2, 0)
"""The oldest solc-js release secant offers (the 0.1 releases of 2015 are left out)."""

# npm republished these releases with a working build under "<version>-fixed".
_FIXED = {(0, 8, 7), (0, 8, 14), (0, 8, 23)}
STANDARD_JSON: Version = (0, 4, 11)
"""The first solc release that answers standard JSON itself."""

_OFFLINE_MARKERS = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ECONNRESET",
                    "ENETUNREACH", "EHOSTUNREACH", "network", "fetch failed")
_INSTALL_TIMEOUT = 600.0


def node_executable() -> str:
    """Return the node program: ``$SECANT_NODE`` or ``node``."""
    return os.environ.get("SECANT_NODE", "node")


def npm_executable() -> str:
    """Return the npm program: ``$SECANT_NPM`` or ``npm``."""
    return os.environ.get("SECANT_NPM", "npm")


def _require_tool(name: str, purpose: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise ToolMissing(
            f"{Path(name).name} is not installed or not on PATH ({purpose})",
            "install Node.js and npm (e.g. 'apt-get install nodejs npm'), "
            "or put a native solc of the needed version on PATH",
        )
    return path


def solc_root() -> Path:
    """Return the directory holding one subdirectory per installed solc-js version."""
    return cache_root() / "solc"


def package_dir(version: Version) -> Path:
    """Where solc-js ``version``'s npm package lives once installed."""
    return solc_root() / format_version(version) / "node_modules" / "solc"


def soljson_path(package: Path) -> Path | None:
    """The compiler in an npm ``solc`` package: ``soljson.js``, or where 0.2.x kept it."""
    for relative in ("soljson.js", "bin/soljson-latest.js"):
        if (package / relative).is_file():
            return package / relative
    return None


def is_installed(version: Version) -> bool:
    """Whether solc-js ``version`` is in the cache."""
    pkg = package_dir(version)
    return (pkg / "package.json").is_file() and soljson_path(pkg) is not None


def installed_versions() -> list[Version]:
    """Return the solc-js versions in the cache, oldest first."""
    root = solc_root()
    if not root.is_dir():
        return []
    found = []
    for entry in root.iterdir():
        if re.fullmatch(r"\d+\.\d+\.\d+", entry.name) and is_installed(parse_version(entry.name)):
            found.append(parse_version(entry.name))
    return sorted(found)


def _npm_spec(version: Version) -> str:
    text = format_version(version)
    return f"{text}-fixed" if version in _FIXED else _NPM_NAMES.get(version, text)


def install(version: Version, force: bool = False) -> Path:
    """Install solc-js ``version`` into the cache (no-op when present); returns its directory.

    Concurrent installs of one version are safe: each goes to a temporary directory that is
    renamed into place.
    """
    if is_installed(version) and not force:
        return package_dir(version)
    text = format_version(version)
    npm = _require_tool(npm_executable(), f"needed to install solc-js {text}")
    root = solc_root()
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=root, prefix=f".install-{text}-"))
    command = [npm, "install", "--prefix", str(tmp), "--no-audit", "--no-fund",
               "--no-package-lock", "--loglevel=error", f"solc@{_npm_spec(version)}"]
    try:
        proc = subprocess.run(command, capture_output=True, text=True,
                              timeout=_INSTALL_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        shutil.rmtree(tmp, ignore_errors=True)
        raise CompilerUnavailable(
            f"installing solc-js {text} with npm timed out",
            "check the network connection and retry 'secant solc install " + text + "'",
        ) from None
    if proc.returncode != 0 or soljson_path(tmp / "node_modules" / "solc") is None:
        shutil.rmtree(tmp, ignore_errors=True)
        detail = (proc.stderr or proc.stdout).strip()
        if any(marker in detail for marker in _OFFLINE_MARKERS):
            raise CompilerUnavailable(
                f"solc {text} is not installed and npm cannot reach the package registry "
                "(offline?)",
                f"connect to the network and run 'secant solc install {text}', "
                f"or put a native solc {text} on PATH",
            )
        if "E404" in detail or "ETARGET" in detail or "No matching version" in detail:
            raise CompilerUnavailable(
                f"solc {text} is not published as an npm solc-js package",
                "choose another version with --solc-version (see 'secant solc list --remote')",
            )
        last = detail.splitlines()[-1] if detail else f"exit code {proc.returncode}"
        raise CompilerUnavailable(
            f"npm failed to install solc-js {text}: {last}",
            f"retry 'secant solc install {text}' (full log: run the npm command by hand)",
        )
    final = root / text
    if final.exists():
        shutil.rmtree(final if force else tmp, ignore_errors=True)
    if not final.exists():
        try:
            os.replace(tmp, final)
        except OSError:  # another process installed it meanwhile
            shutil.rmtree(tmp, ignore_errors=True)
    return package_dir(version)


def _versions_file() -> Path:
    return solc_root() / "versions.json"


def remote_versions(refresh: bool = False) -> list[Version]:
    """solc-js releases on npm (:data:`OLDEST` and later): cached list, refreshed on request."""
    path = _versions_file()
    if refresh:
        npm = _require_tool(npm_executable(), "needed to list solc-js releases")
        proc = subprocess.run([npm, "view", "solc", "versions", "--json"], capture_output=True,
                              text=True, timeout=120, check=False)
        if proc.returncode != 0:
            raise CompilerUnavailable(
                "npm cannot list solc-js releases (offline?)",
                "connect to the network and retry, or use 'secant solc list' for installed ones",
            )
        # "-fixed" and build numbers ("0.3.1-1") name releases too; other tags are nightlies.
        names = [v for v in json.loads(proc.stdout)
                 if re.fullmatch(r"\d+\.\d+\.\d+(-fixed|-\d+)?", v)]
        write_atomic(path, json.dumps(names))
    try:
        names = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        names = []
    found = {parse_version(v) for v in names if isinstance(v, str)}
    return sorted(v for v in found | set(KNOWN_VERSIONS) if v >= OLDEST)


class Compiler(Protocol):
    """A Solidity compiler that answers standard-JSON requests."""

    version: Version
    kind: str

    def compile(self, std_input: dict[str, Any], roots: list[str]) -> dict[str, Any]:
        """Compile a standard-JSON input; ``roots`` are directories to read missing imports."""
        ...

    def close(self) -> None:
        """Release the compiler's resources (processes)."""
        ...


@dataclass
class NativeSolc:
    """A ``solc`` executable found on PATH; one process per compile (it starts fast)."""

    path: str
    version: Version
    long_version: str
    kind: str = "native"

    def compile(self, std_input: dict[str, Any], roots: list[str]) -> dict[str, Any]:
        """Run ``solc --standard-json`` on ``std_input``."""
        command = [self.path, "--standard-json"]
        if roots:
            command += ["--allow-paths", ",".join(roots)]
        proc = subprocess.run(command, input=json.dumps(std_input), capture_output=True,
                              text=True, cwd=roots[0] if roots else None, check=False)
        try:
            result = json.loads(proc.stdout)
        except ValueError:
            raise CompilationFailed(
                f"native solc {self.long_version} failed: {proc.stderr.strip()[:300]}",
                "retry with a solc-js version via --solc-version",
            ) from None
        if not isinstance(result, dict):
            raise CompilationFailed(f"native solc {self.long_version} returned no JSON object")
        return result

    def close(self) -> None:
        """Nothing to release."""


_native_cache: dict[str, NativeSolc | None] = {}


def find_native() -> NativeSolc | None:
    """Return the native solc named by ``$SECANT_SOLC`` (default ``solc``; ``none`` disables it)."""
    name = os.environ.get("SECANT_SOLC", "solc")
    if name in _native_cache:
        return _native_cache[name]
    found: NativeSolc | None = None
    path = shutil.which(name) if name.lower() != "none" else None
    if path is not None:
        try:
            proc = subprocess.run([path, "--version"], capture_output=True, text=True,
                                  timeout=30, check=False)
            match = re.search(r"Version:\s*(\S+)", proc.stdout)
            if match is not None:
                found = NativeSolc(path, parse_version(match.group(1)), match.group(1))
        except (OSError, ValueError, subprocess.TimeoutExpired):
            found = None
    _native_cache[name] = found
    return found


class SolcJs:
    """A long-lived node process running one solc-js version through ``solc_driver.js``."""

    kind = "solc-js"

    def __init__(self, version: Version, wrapper: Path | None = None) -> None:
        self.version = version
        self.wrapper = wrapper
        # Releases before standard JSON get the legacy request and answer, which
        # secant translates itself (secant.compile.legacy).
        self.legacy = version < STANDARD_JSON
        self.long_version = format_version(version)
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._next_id = 0
        self.starts = 0

    def _start(self) -> subprocess.Popen[bytes]:
        text = format_version(self.version)
        node = _require_tool(node_executable(), f"needed to run solc-js {text}")
        self._stderr = tempfile.TemporaryFile()
        self._proc = subprocess.Popen(
            [node, str(DRIVER), str(package_dir(self.version)),
             *([str(self.wrapper)] if self.wrapper is not None else [])],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
        )
        self.starts += 1
        message = self._read()
        if not message.get("ready"):
            self.close()
            raise CompilerUnavailable(
                f"solc-js {text} could not be loaded: {message.get('error', 'unknown error')}",
                f"reinstall it with 'secant solc install {text} --force'",
            )
        self.long_version = str(message.get("version", text))
        return self._proc

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        lines = self._stderr.read().decode("utf-8", "replace").strip().splitlines()
        return lines[-1] if lines else ""

    def _read(self) -> dict[str, Any]:
        assert self._proc is not None and self._proc.stdout is not None
        while True:
            line = self._proc.stdout.readline()
            if not line:
                tail = self._stderr_tail()
                self._proc.wait()
                code = self._proc.returncode
                self._proc = None
                raise CompilerUnavailable(
                    f"solc-js {format_version(self.version)} stopped (exit code {code})"
                    + (f": {tail}" if tail else ""),
                    f"retry; if it persists reinstall with "
                    f"'secant solc install {format_version(self.version)} --force'",
                )
            if line.startswith(_MARK):
                result = json.loads(line[len(_MARK):])
                if not isinstance(result, dict):
                    raise CompilerUnavailable("solc-js driver sent a malformed message")
                return result

    def compile(self, std_input: dict[str, Any], roots: list[str]) -> dict[str, Any]:
        """Send one standard-JSON request to the live process and return its output."""
        proc = self._proc if self._proc is not None else self._start()
        assert proc.stdin is not None
        self._next_id += 1
        request: dict[str, Any] = {"id": self._next_id, "roots": roots}
        if self.legacy:
            request["legacy"] = legacy_input(std_input, self.version)
        else:
            request["input"] = std_input
        try:
            proc.stdin.write(json.dumps(request).encode("utf-8") + b"\n")
            proc.stdin.flush()
        except BrokenPipeError:
            pass  # _read reports the dead process
        message = self._read()
        if "error" in message:
            raise CompilationFailed(
                f"solc-js {format_version(self.version)} failed internally: {message['error']}",
                "try another compiler version with --solc-version",
            )
        output = message.get("output")
        if not isinstance(output, dict):
            raise CompilationFailed("solc-js returned no output object")
        if self.legacy:
            contents = {str(name): str((unit or {}).get("content") or "")
                        for name, unit in (std_input.get("sources") or {}).items()}
            return standard_output(output, contents)
        return output

    def close(self) -> None:
        """Stop the node process."""
        proc, self._proc = self._proc, None
        if proc is not None:
            try:
                if proc.stdin is not None:
                    proc.stdin.close()
                proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None


class SolcManager:
    """Chooses compiler versions and keeps one compiler per version alive for a run.

    Use as a context manager (or call :meth:`close`) so node processes end with the run.
    """

    def __init__(self, allow_install: bool = True, use_native: bool = True,
                 newest: Version | None = None) -> None:
        """A manager; ``newest`` caps the releases it chooses among.

        With ``newest``, no native compiler is chosen either (whichever the machine has):
        the choice then depends on the pragma alone, so a pinned corpus compiles the same
        when solc releases more.
        """
        self.allow_install = allow_install
        self.use_native = use_native and newest is None
        self.newest = newest
        self._compilers: dict[tuple[str, Version], Compiler] = {}
        self.notes: list[str] = []

    def __enter__(self) -> SolcManager:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop every compiler process started by this manager."""
        for compiler in self._compilers.values():
            compiler.close()
        self._compilers.clear()

    def candidates(self) -> set[Version]:
        """The versions :meth:`select` chooses among: releases known, installed, native."""
        found = set(remote_versions()) | set(installed_versions())
        native = find_native() if self.use_native else None
        if native is not None:
            found.add(native.version)
        return self._capped(found)

    def _capped(self, versions: Iterable[Version]) -> set[Version]:
        """``versions`` up to :attr:`newest` (all of them without a cap)."""
        newest = self.newest
        return set(versions) if newest is None else {v for v in versions if v <= newest}

    def select(self, pragma: VersionRange, requested: str | None = None,
               where: str = "the sources") -> tuple[str, Version]:
        """Pick ``(kind, version)``: native if it satisfies, else the newest solc-js release.

        ``requested`` (``--solc-version``) overrides the choice but must satisfy the pragma.
        """
        native = find_native() if self.use_native else None
        if requested is not None:
            try:
                version = parse_version(requested)
            except ValueError:
                raise PragmaUnsatisfiable(
                    f"--solc-version {requested!r} is not a version",
                    "give a version such as 0.8.26",
                ) from None
            if not pragma.contains(version):
                raise PragmaUnsatisfiable(
                    f"solc {format_version(version)} does not satisfy "
                    f"'pragma solidity {pragma.text}' in {where}",
                    "pass a --solc-version that the pragma allows, or drop --solc-version",
                )
            if native is not None and native.version == version:
                return "native", version
            return "solc-js", version
        if native is not None and pragma.contains(native.version):
            return "native", native.version
        candidates = self._capped(set(remote_versions()) | set(installed_versions()))
        newest = pragma.newest(candidates)
        if newest is None and self.newest is not None:
            raise PragmaUnsatisfiable(
                f"no solc release up to {format_version(self.newest)} satisfies 'pragma "
                f"solidity {pragma.text}' in {where}",
                "these sources need a newer compiler than the pinned set allows: leave "
                "them out, or raise the cap",
            )
        if newest is None:
            raise PragmaUnsatisfiable(
                f"no solc release satisfies 'pragma solidity {pragma.text}' in {where}",
                f"fix the version pragma (solc-js covers {format_version(min(candidates))} to "
                f"{format_version(max(candidates))}), or pass --solc-version",
            )
        if not is_installed(newest):
            fallback = pragma.newest(self._capped(installed_versions()))
            try:
                self._install(newest)
            except CompilerUnavailable:
                if fallback is None:
                    raise
                self.notes.append(
                    f"could not install solc {format_version(newest)}; "
                    f"using installed {format_version(fallback)}"
                )
                return "solc-js", fallback
        return "solc-js", newest

    def _install(self, version: Version) -> None:
        if not self.allow_install:
            text = format_version(version)
            raise CompilerUnavailable(
                f"solc {text} is not installed",
                f"run 'secant solc install {text}'",
            )
        started = time.monotonic()
        install(version)
        self.notes.append(
            f"installed solc-js {format_version(version)} in {time.monotonic() - started:.1f}s"
        )

    def _wrapper(self, version: Version) -> Path | None:
        """The package whose wrapper runs ``version`` (None: its own).

        Releases before :data:`STANDARD_JSON` answer no standard JSON, and their packages'
        wrappers differ from release to release (those before 0.3 lack the import callback);
        a 0.4 package's wrapper (the newest installed, else 0.4.26's) runs every old
        compiler alike, on the legacy request.
        """
        if version >= STANDARD_JSON:
            return None
        chosen = max((v for v in installed_versions() if STANDARD_JSON <= v < (0, 5, 0)),
                     default=None)
        if chosen is None:
            chosen = (0, 4, 26)
            self._install(chosen)
        return package_dir(chosen)

    def get(self, kind: str, version: Version) -> Compiler:
        """Return the live compiler for ``(kind, version)``, installing solc-js when needed."""
        key = (kind, version)
        if key in self._compilers:
            return self._compilers[key]
        compiler: Compiler
        if kind == "native":
            native = find_native()
            if native is None or native.version != version:
                raise CompilerUnavailable(f"native solc {format_version(version)} not found")
            compiler = native
        else:
            if not is_installed(version):
                self._install(version)
            compiler = SolcJs(version, self._wrapper(version))
        self._compilers[key] = compiler
        return compiler
