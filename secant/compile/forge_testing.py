"""Foundry's testing settings of a project: ``[invariant]``, ``[fuzz]`` and the assertion mode.

What a project's ``foundry.toml`` says about how forge runs its tests, as secant runs a
Foundry test contract (:class:`ForgeTesting`): where the compiler settings of the same file
are read by :mod:`secant.compile.config`, these are read here.

Where forge reads them, in order, the later winning: the top-level ``[invariant]`` and
``[fuzz]`` tables, the active profile's (``[profile.<name>.invariant]``, or an inline
``invariant = {...}`` in the profile, the default profile's first), then the environment
(``FOUNDRY_INVARIANT_DEPTH`` and the like). The profile's own keys: ``assertions_revert``
(default true: a failing ``vm.assert*`` reverts; false: it sets forge's failure flag and
returns), ``legacy_assertions``, ``block_timestamp``, ``block_number``.

Taken from ``[invariant]``: ``depth`` (the longest call sequence), ``fail_on_assert`` (a
failed assertion in a handler breaks the campaign, as Echidna's assertion mode does),
``fail_on_revert``, ``max_time_delay``, ``max_block_delay``, ``runs`` and ``timeout`` (the
invariant campaign's budget: ``runs`` sequences of ``depth`` calls, and seconds); from
``[fuzz]``: ``runs`` and ``timeout`` (each fuzz test's budget: calls and seconds) and
``seed``; from the profile: ``block_timestamp``, ``block_number`` and the assertion mode.
The other keys are forge's own business (gas reports, shrinking and corpus folders, show_*
output) and are left alone.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from secant.compile.config import FOUNDRY_CONFIG
from secant.compile.errors import InputError

__all__ = ["ForgeTesting", "read_forge_testing"]

_INVARIANT_KEYS = {"depth": int, "runs": int, "fail_on_revert": bool,
                   "fail_on_assert": bool, "max_time_delay": int, "max_block_delay": int,
                   "timeout": int}
"""The ``[invariant]`` keys taken, with their types."""

_FUZZ_KEYS: dict[str, type] = {"runs": int, "timeout": int, "seed": int}
"""The ``[fuzz]`` keys taken, with their types (forge writes a seed as a hex string)."""

FORGE_DEPTH = 500
"""forge's ``[invariant] depth`` when the project sets none."""

_PROFILE_KEYS = {"assertions_revert": bool, "legacy_assertions": bool,
                 "block_timestamp": int, "block_number": int}
"""The profile's own keys taken, with their types."""


@dataclass(frozen=True)
class ForgeTesting:
    """How forge would run a project's tests; each field as forge defaults it.

    None for a number means the project leaves it to the runner (secant's own default
    applies). ``where`` names the file read, for messages.
    """

    assertions_revert: bool = True
    legacy_assertions: bool = False
    fail_on_assert: bool = False
    fail_on_revert: bool = False
    depth: int | None = None
    runs: int | None = None
    max_time_delay: int | None = None
    max_block_delay: int | None = None
    timeout: int | None = None
    block_timestamp: int | None = None
    block_number: int | None = None
    fuzz_runs: int | None = None
    fuzz_timeout: int | None = None
    fuzz_seed: int | None = None
    where: str = ""

    @property
    def invariant_calls(self) -> int | None:
        """The calls forge makes for an invariant: ``runs`` sequences of ``depth`` each."""
        return None if self.runs is None else self.runs * (
            FORGE_DEPTH if self.depth is None else self.depth)

    @property
    def reports_handler_assertions(self) -> bool:
        """Whether a failed assertion inside a handler is a finding, as forge has it.

        With ``fail_on_assert``, or when assertions do not revert: forge then marks the
        test failed, and secant names the handler that failed instead.
        """
        return self.fail_on_assert or not self.assertions_revert


def _table(value: Any) -> dict[str, Any]:
    return {str(k).replace("-", "_"): v for k, v in value.items()} if isinstance(
        value, dict) else {}


def _checked(key: str, value: Any, kind: type, where: str) -> Any:
    """``value`` if it has the type ``kind``; a one-line error otherwise."""
    if isinstance(value, str) and kind is int and value.replace("_", "").isdigit():
        return int(value.replace("_", ""))
    if isinstance(value, str) and kind is int and value.lower().startswith("0x"):
        try:
            return int(value, 16)  # forge's fuzz seed: a hex word
        except ValueError:
            pass
    if isinstance(value, bool) != (kind is bool) or not isinstance(value, kind):
        what = "true or false" if kind is bool else "a whole number"
        raise InputError(f"{key} in {where} must be {what}, not {value!r}",
                         f"fix {key} in {where}")
    if isinstance(value, int) and value < 0:
        raise InputError(f"{key} in {where} must not be negative, not {value}",
                         f"fix {key} in {where}")
    return value


def _environment(prefix: str, keys: dict[str, type]) -> dict[str, Any]:
    """``FOUNDRY_<PREFIX><KEY>`` variables that are set, as TOML values."""
    found: dict[str, Any] = {}
    for key, kind in keys.items():
        raw = os.environ.get(f"FOUNDRY_{prefix}{key.upper()}", "").strip()
        if not raw:
            continue
        if kind is bool:
            found[key] = raw.lower() in ("1", "true", "yes")
        else:
            found[key] = raw
    return found


def read_forge_testing(root: Path) -> ForgeTesting:
    """The testing settings of the Foundry project at ``root`` (defaults without one)."""
    path = root / FOUNDRY_CONFIG
    if not path.is_file():
        return ForgeTesting()
    where = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}", "fix the TOML syntax") from None
    profiles = _table(data.get("profile"))
    wanted = os.environ.get("FOUNDRY_PROFILE", "").strip() or "default"
    chosen = [_table(profiles.get("default"))]
    if wanted != "default" and wanted in profiles:
        chosen.append(_table(profiles.get(wanted)))
    invariant = _table(data.get("invariant"))
    fuzz = _table(data.get("fuzz"))
    profile: dict[str, Any] = {}
    for table in chosen:
        profile.update(table)
        invariant.update(_table(table.get("invariant")))
        fuzz.update(_table(table.get("fuzz")))
    invariant.update(_environment("INVARIANT_", _INVARIANT_KEYS))
    fuzz.update(_environment("FUZZ_", _FUZZ_KEYS))
    profile.update(_environment("", {k: v for k, v in _PROFILE_KEYS.items()
                                     if k != "legacy_assertions"}))
    values: dict[str, Any] = {}
    for key, kind in _INVARIANT_KEYS.items():
        if invariant.get(key) is not None:
            values[key] = _checked(f"[invariant] {key}", invariant[key], kind, where)
    for key, kind in _FUZZ_KEYS.items():
        if fuzz.get(key) is not None:
            values[f"fuzz_{key}"] = _checked(f"[fuzz] {key}", fuzz[key], kind, where)
    for key, kind in _PROFILE_KEYS.items():
        if profile.get(key) is not None:
            values[key] = _checked(key, profile[key], kind, where)
    known = {f.name for f in fields(ForgeTesting)}
    return ForgeTesting(**{k: v for k, v in values.items() if k in known}, where=where)
