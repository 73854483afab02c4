"""Medusa's configuration file (``medusa.json``) read as secant's options.

``--config medusa.json`` (any ``.json``) takes the settings that have a secant equivalent
(:func:`medusa_table`) and gives them as ``secant.toml`` keys would be; the command line
still wins. Settings that change what is tested but that secant does not apply yet are
named in a note; those about how Medusa itself runs (logging, compilation, coverage
reports) are left alone without one. ``workers`` is secant's ``--workers``.
"""

from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from secant.cli.echidna_config import corpus_folder
from secant.errors import SecantError

PANIC_FLAGS = {
    "failOnCompilerInsertedPanic": 0x00, "failOnAssertion": 0x01,
    "failOnArithmeticUnderflow": 0x11, "failOnDivideByZero": 0x12,
    "failOnEnumTypeConversionOutOfBounds": 0x21, "failOnIncorrectStorageAccess": 0x22,
    "failOnPopEmptyArray": 0x31, "failOnOutOfBoundsArrayAccess": 0x32,
    "failOnAllocateTooMuchMemory": 0x41, "failOnCallUninitializedVariable": 0x51,
}
"""Medusa's ``panicCodeConfig`` switches and the Solidity panic code each reports."""

_NOT_APPLIED: tuple[str, ...] = ()
"""``fuzzing`` settings that change the campaign but have no secant equivalent yet."""

_DEPLOYED = "DeployedContract:"
"""Medusa's way to give a constructor the address of a contract deployed before it."""


class MedusaConfigError(SecantError):
    """A Medusa configuration file secant cannot read."""


def medusa_table(path: Path) -> tuple[dict[str, Any], list[str]]:
    """The options a Medusa file gives, as a ``secant.toml`` table, and a note on the rest."""
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise MedusaConfigError(f"cannot read {path}: {exc}", "check the file") from None
    except json.JSONDecodeError as exc:
        raise MedusaConfigError(f"{path} is not valid JSON: {exc}", "fix the line it names"
                                ) from None
    fuzzing = _section(data, "fuzzing", path)
    testing = _section(fuzzing, "testing", path)
    table: dict[str, Any] = {}
    try:
        if fuzzing.get("timeout"):  # 0: no limit
            table["time"] = f"{_integer(fuzzing['timeout'])}s"
        if fuzzing.get("workers"):
            table["workers"] = _integer(fuzzing["workers"])
        if fuzzing.get("testLimit"):  # 0: no limit; it counts calls, as --calls does
            table["calls"] = _integer(fuzzing["testLimit"])
        for key, option in (("callSequenceLength", "max-sequence-length"),
                            ("shrinkLimit", "shrink-limit"),
                            ("blockNumberDelayMax", "max-block-delay"),
                            ("blockTimestampDelayMax", "max-time-delay")):
            if key in fuzzing:
                table[option] = _integer(fuzzing[key])
        for key, option in (("targetFunctionSignatures", "only-function"),
                            ("excludeFunctionSignatures", "exclude-function")):
            if fuzzing.get(key):
                table[option] = [str(signature) for signature in fuzzing[key]]
        if fuzzing.get("corpusDirectory"):
            table["corpus"] = str(corpus_folder(path, str(fuzzing["corpusDirectory"])))
        if fuzzing.get("deployerAddress"):
            table["deployer"] = str(fuzzing["deployerAddress"])
        if fuzzing.get("senderAddresses"):
            table["sender"] = [str(a) for a in fuzzing["senderAddresses"]]
        targets = [str(name) for name in fuzzing.get("targetContracts") or []]
        if targets:
            # Medusa deploys them in order and calls them all: so do --deploy and the
            # main contract.
            table["contract"] = targets[-1]
            if targets[:-1]:
                table["deploy"] = targets[:-1]
        table.update(_constructor_args(_section(fuzzing, "constructorArgs", path), targets,
                                       path))
        balances = [_wei(text) for text in fuzzing.get("targetContractsBalances") or []]
        # One per target contract, sent with its deployment; secant sends ether to the
        # main contract's constructor only.
        main = len(targets) - 1
        if 0 <= main < len(balances) and balances[main]:
            table["value"] = balances[main]
        unsent = [name for name, wei in zip(targets[:-1], balances, strict=False) if wei]
        notes_early = [f"{path.name}: targetContractsBalances for {', '.join(unsent)} not "
                       "sent (secant sends ether to the main contract's constructor only, "
                       "--value)"] if unsent else []
    except (TypeError, ValueError) as exc:
        raise MedusaConfigError(f"{path}: {exc}", "give the setting as Medusa documents it"
                                ) from None
    chain = _section(fuzzing, "testChainConfig", path)
    if chain.get("codeSizeCheckDisabled", True):  # Medusa's default: no size limit
        table["unlimited-code-size"] = True
    assertion = _section(testing, "assertionTesting", path)
    prop = _section(testing, "propertyTesting", path)
    if prop.get("testPrefixes"):
        table["property-prefix"] = [str(p) for p in prop["testPrefixes"]]
    if "enabled" in assertion or "enabled" in prop:
        # Medusa's defaults: both kinds of test on.
        kinds = [name for name, section in (("assertion", assertion), ("property", prop))
                 if section.get("enabled", True)]
        if not kinds:
            raise MedusaConfigError(f"{path}: neither assertion nor property testing is "
                                    "enabled", "enable one, or give secant's --oracles")
        table["oracles"] = ",".join(kinds)
    panics = _section(assertion, "panicCodeConfig", path)
    if panics:
        codes = sorted({0x01} | {code for flag, code in PANIC_FLAGS.items() if panics.get(flag)})
        table["panic-codes"] = ",".join(f"0x{code:02x}" for code in codes)
    unread = [f"fuzzing.{key}" for key in _NOT_APPLIED if fuzzing.get(key)]
    if testing.get("testAllContracts"):
        unread.append("fuzzing.testing.testAllContracts")
    notes = [f"{path.name}: not read (no secant equivalent yet): {', '.join(unread)}"
             ] if unread else []
    return table, notes_early + notes


def _constructor_args(given: dict[str, Any], targets: list[str], path: Path
                      ) -> dict[str, Any]:
    """``constructorArgs`` as named ``arg`` and ``deploy-arg`` options.

    The main contract's (the last target) become ``--arg NAME=VALUE``; those of the
    contracts deployed before it ``--deploy-arg CONTRACT=NAME=VALUE``. A contract that is
    not a target cannot take arguments in either tool.
    """
    table: dict[str, Any] = {}
    for contract, arguments in given.items():
        if contract not in targets:
            raise MedusaConfigError(
                f"{path}: constructorArgs names {contract}, which is not in targetContracts",
                "add it to targetContracts or remove its arguments")
        if not isinstance(arguments, dict):
            raise MedusaConfigError(f"{path}: constructorArgs.{contract} must be an object "
                                    "of argument names and values",
                                    "write it as Medusa's own file does")
        named = [f"{name}={_argument_text(value)}" for name, value in arguments.items()]
        if contract == targets[-1]:
            table["arg"] = named
        else:
            table.setdefault("deploy-arg", []).extend(f"{contract}={item}" for item in named)
    return table


def _argument_text(value: Any) -> str:
    """A Medusa argument value as secant's ``--arg`` text (structs by field order)."""
    if isinstance(value, dict):
        return "(" + ", ".join(_argument_text(item) for item in value.values()) + ")"
    if isinstance(value, list):
        return "[" + ", ".join(_argument_text(item) for item in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    if text.startswith(_DEPLOYED):
        return text[len(_DEPLOYED):]  # secant takes a deployed contract's name as its address
    if any(mark in text for mark in ",()[]\"\\"):
        return json.dumps(text)  # a string item with a separator in it, quoted
    return text


def _wei(text: Any) -> int:
    """A balance as Medusa writes it: decimal, 0x hex or scientific notation (1.2e18)."""
    if isinstance(text, bool):
        raise ValueError(f"{text!r} is not an amount of wei")
    if isinstance(text, int):
        return text
    raw = str(text).strip()
    if not raw:
        return 0
    try:
        amount = Decimal(int(raw, 16)) if raw.lower().startswith("0x") else Decimal(raw)
    except (ValueError, InvalidOperation):
        raise ValueError(f"{text!r} is not an amount of wei (decimal, 0x hex or 1.2e18)"
                         ) from None
    if not amount.is_finite() or amount != amount.to_integral_value() or amount < 0:
        raise ValueError(f"{text!r} is not a whole amount of wei")
    return int(amount)


def _section(parent: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    value = parent.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise MedusaConfigError(f"{path}: {key} must be an object",
                                "write it as Medusa's own file does")
    return value


def _integer(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{value!r} is not an integer")
    return value
