"""Options that ``secant fuzz`` and ``secant expert`` share, declared once.

Both commands run a campaign on the same inputs (a contract deployed with constructor
arguments, senders, a budget, oracles, an output folder); only the policy that proposes
transactions differs. Each alias is the parameter's type with its typer option.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

ContractFlag = Annotated[str | None, typer.Option(
    "--contract", "-c", help="The contract to test (Name or source:Name).")]
ArgFlag = Annotated[list[str] | None, typer.Option(
    "--arg", "-a", help="A constructor argument of the contract, parsed by its ABI type "
                        "(repeat once per parameter).")]
ValueFlag = Annotated[int, typer.Option("--value", help="Wei sent to the constructor.")]
DeployFlag = Annotated[list[str] | None, typer.Option(
    "--deploy", help="Deploy this contract before the main one (repeat, in order); its "
                     "functions are called too.")]
DeployArgFlag = Annotated[list[str] | None, typer.Option(
    "--deploy-arg", metavar="NAME=VALUE", help="A constructor argument of a --deploy "
                                               "contract (repeat, in order); a contract "
                                               "name stands for its address.")]
BalanceFlag = Annotated[int, typer.Option(
    "--balance", help="Wei each sender (the deployer included) starts with.")]
SenderFlag = Annotated[list[str] | None, typer.Option(
    "--sender", metavar="ADDRESS", help="An address that sends transactions (repeat; "
                                        "default: three users and two attackers).")]
DeployerFlag = Annotated[str | None, typer.Option(
    "--deployer", metavar="ADDRESS", help="The address that deploys the contracts (Echidna's "
                                          "deployer, Medusa's deployerAddress; default: "
                                          "secant's own deployer account).")]
TimeFlag = Annotated[str | None, typer.Option(
    "--time", help="Wall-time budget of the whole run from the start of fuzzing, "
                   "shrinking and reports included, shared by its campaigns, e.g. 30s, 5m, "
                   "1h (default 5m without --execs or --calls).")]
SeedFlag = Annotated[int, typer.Option("--seed", help="Campaign seed.")]
ShrinkLimitFlag = Annotated[int, typer.Option(
    "--shrink-limit", help="Executions spent at most on shrinking each finding's case "
                           "(0: report findings unshrunk).")]
ForkFlag = Annotated[str, typer.Option("--fork", help="EVM fork of the chain.")]
OraclesFlag = Annotated[str | None, typer.Option(
    "--oracles", help="Comma-separated oracles to run (default: all; see "
                      "secant fuzz --list-oracles).")]
QuietFlag = Annotated[bool, typer.Option("--quiet", "-q", help="No live display.")]
ForceFlag = Annotated[bool, typer.Option(
    "--force", help="Replace the output of an earlier campaign in --out.")]
ConfigFlag = Annotated[Path | None, typer.Option(
    "--config", help="Read options from this secant.toml (default: the nearest one from "
                     "the input's folder up; each command reads its own table), or from "
                     "Echidna's echidna.yaml or Medusa's medusa.json (the settings secant "
                     "has an equivalent for).")]
AllContractsFlag = Annotated[bool, typer.Option(
    "--all-contracts/--no-all-contracts",
    help="Also call the contracts the constructors created (Echidna's allContracts), or "
         "not (default: yes for a plain contract, no for a harness with properties, "
         "which calls its system through its handlers).")]
BlockNumberFlag = Annotated[int | None, typer.Option(
    "--block-number", help="Number of the first block (default 4370000, Echidna's; 1 for "
                           "Foundry test contracts, as forge).")]
BlockTimeFlag = Annotated[int | None, typer.Option(
    "--block-time", help="Timestamp of the first block (default 1524785992, Echidna's; 1 "
                         "for Foundry test contracts, as forge).")]
MatchContractFlag = Annotated[str | None, typer.Option(
    "--match-contract", help="Only test contracts (and harnesses with test* or invariant* "
                             "functions) whose name matches this regex.")]
MatchTestFlag = Annotated[str | None, typer.Option(
    "--match-test", help="Only invariants, properties and fuzz tests whose name matches "
                         "this regex.")]
UnlimitedCodeSizeFlag = Annotated[bool, typer.Option(
    "--unlimited-code-size", help="Lift the EIP-170/3860 contract size limits.")]
OnlyFunctionFlag = Annotated[list[str] | None, typer.Option(
    "--only-function", help="Call only this function (NAME, NAME(TYPES) or "
                            "CONTRACT.NAME(TYPES); repeatable). Echidna's filterFunctions "
                            "with filterBlacklist false, Medusa's "
                            "targetFunctionSignatures.")]
ExcludeFunctionFlag = Annotated[list[str] | None, typer.Option(
    "--exclude-function", help="Never call this function (NAME, NAME(TYPES) or "
                               "CONTRACT.NAME(TYPES); repeatable). Echidna's "
                               "filterFunctions, Medusa's excludeFunctionSignatures.")]
HarnessFlag = Annotated[str, typer.Option(
    "--harness", help="How a contract with test* or invariant* functions is run: auto "
                      "(a Foundry test contract when it has setUp() or IS_TEST(), else an "
                      "Echidna/Medusa harness), foundry, or echidna (its own functions "
                      "are fuzzed, its properties and assertions checked).")]
