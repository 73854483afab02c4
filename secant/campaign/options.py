"""One description of a campaign: every option, validated once, serialisable.

``secant fuzz`` and ``secant expert`` build a :class:`CampaignOptions` from their flags over
``secant.toml`` (``secant.cli.settings``), ``--resume`` from the manifest of an earlier run
(:meth:`CampaignOptions.from_record`); the manifest records it (:meth:`to_record`), and the
benchmarks that run the command turn one back into its command line
(:meth:`command_line`). Everything a campaign is built from derives from it: the engine's
:class:`FuzzConfig`, the compiler's flags, the :class:`Selection` of contracts, the chain's
and the campaign's configurations. An instance is valid by construction: a bad value is a
one-line :class:`SecantError` naming the option and the fix.

How the command runs (``--quiet``, ``--force``, ``--resume``, ``--fail-on-findings``) is not
part of a campaign and stays with the command.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Self

from secant.campaign.config import CampaignConfig
from secant.campaign.function_filter import FunctionFilter
from secant.campaign.plan import BUDGET_OPTIONS, Selection
from secant.chain.accounts import DEFAULT_BALANCE
from secant.chain.chain import ChainConfig
from secant.compile.forge_testing import ForgeTesting, read_forge_testing
from secant.compile.project import project_of
from secant.compile.solidity import CompileOptions
from secant.engine.config import (
    DEFAULT_MEMORY_BUDGET_MB,
    DEFAULT_SYMBOLIC_SHARE,
    MIN_MEMORY_BUDGET_MB,
    FuzzConfig,
    memory_split,
)
from secant.engine.harvey.sequences import SEQUENCE_MODES
from secant.engine.schedulers import SCHEDULES
from secant.engine.shrink import DEFAULT_SHRINK_LIMIT
from secant.errors import SecantError
from secant.evm.forks import get_fork
from secant.targets.foundry import HARNESS_STYLES

DEFAULT_TIME_S = 300.0
"""The time budget when none of --time, --execs and --calls is given."""

POLICIES = ("harvey", "expert", "uniform", "learned", "mix")
"""Who proposes the transactions: Harvey's policy (``secant fuzz``), ILF's symbolic expert
(``secant expert``), or ILF's episodes under its uniform, learned or mixed policy
(``secant fuzz --policy``; secant.learn.ilf)."""

SINGLE_WORKER_POLICIES = ("expert", "mix")
"""The policies that run one worker: the symbolic expert's search is one process's."""

_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")

_WORD = 1 << 64

_SWITCHES = {"optimize": ("--optimize", "--no-optimize"), "via_ir": ("--via-ir", "--no-via-ir")}
"""The options with a flag each way (None: neither given)."""


def parse_duration(text: str) -> float:
    """Seconds in ``90``, ``30s``, ``5m``, ``1.5h`` or ``500ms``."""
    match = _DURATION_RE.match(text)
    if match is None:
        raise SecantError(f"cannot read the duration {text!r}",
                          "write it like 90, 30s, 5m or 1h")
    number = float(match.group(1))
    scale = {"ms": 0.001, "s": 1.0, None: 1.0, "m": 60.0, "h": 3600.0}[match.group(2)]
    return number * scale


def parse_address(text: str, option: str) -> int:
    """An address given to ``option``, in hex like ``0x10000`` or as a positive number."""
    try:
        address = int(text, 0)
    except ValueError:
        address = -1
    if not 0 < address < 1 << 160:
        raise SecantError(f"{option} {text!r} is not an address",
                          "write it in hex like 0x10000 (or a positive number)")
    return address


def parse_panic_codes(text: str | None) -> frozenset[int] | None:
    """``--panic-codes``: a set of codes, every code for ``all``, None when not given."""
    if text is None:
        return None
    from secant.abi import PANIC_CODES

    if text.strip() == "all":
        return frozenset(PANIC_CODES)
    try:
        return frozenset(int(part, 0) for part in text.split(",") if part.strip())
    except ValueError:
        raise SecantError(f"--panic-codes {text!r} is not a list of codes",
                          "write codes like 0x01,0x11,0x12, or all") from None


@dataclass(frozen=True)
class CampaignOptions:
    """Everything a fuzzing campaign (or the expert's) is run with, as the user gave it.

    Field names are the commands' option names (``no_predict`` is ``--no-predict``);
    repeated options are tuples (empty: not given). ``given`` names the options the user
    set, on the command line or in a config file: a Foundry project's own settings give
    way to those only.
    """

    path: Path
    out: Path = Path("secant-out")
    # --- what to fuzz, and how it is deployed
    contract: str | None = None
    arg: tuple[str, ...] = ()
    value: int = 0
    deploy: tuple[str, ...] = ()
    deploy_arg: tuple[str, ...] = ()
    balance: int = DEFAULT_BALANCE
    all_contracts: bool = False
    sender: tuple[str, ...] = ()
    deployer: str | None = None
    block_number: int | None = None
    block_time: int | None = None
    match_contract: str | None = None
    match_test: str | None = None
    harness: str = "auto"
    only_function: tuple[str, ...] = ()
    exclude_function: tuple[str, ...] = ()
    unlimited_code_size: bool = False
    fork: str = "cancun"
    # --- the budget and the seed
    time_budget: str | None = None
    execs: int | None = None
    calls: int | None = None
    seed: int = 0
    workers: int | None = None
    """None: the machine's cores, or ``SECANT_WORKERS`` (``launch.worker_count``)."""
    ray: str | None = None
    # --- the search
    policy: str = "harvey"
    schedule: str | None = None
    target: str | None = None
    no_predict: bool = False
    predict_iterations: int = 8
    sequences: str = "demand"
    aggressive_probability: float = 0.125
    no_adaptive: bool = False
    adaptive_share: float | None = None
    symbolic_share: float = DEFAULT_SYMBOLIC_SHARE
    max_sequence_length: int = 16
    max_time_delay: int | None = None
    max_block_delay: int | None = None
    no_prefix_cache: bool = False
    memory_budget: int = DEFAULT_MEMORY_BUDGET_MB
    corpus: Path | None = None
    shrink_limit: int = DEFAULT_SHRINK_LIMIT
    expert_rlimit: int | None = None
    expert_queries: int | None = None
    dataset: bool = True
    learned_share: float = 0.0
    """Share of a Harvey campaign's executions given to learned episodes (0: no stage)."""
    model: Path | None = None
    """The learned policy's weights (None: the model shipped with secant)."""
    # --- the compiler
    solc_version: str | None = None
    optimize: bool | None = None
    optimizer_runs: int | None = None
    via_ir: bool | None = None
    evm_version: str | None = None
    remap: tuple[str, ...] = ()
    # --- what counts as a finding
    panic_codes: str | None = None
    property_prefix: tuple[str, ...] = ()
    oracles: str | None = None
    given: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        self._validate()
        # A budget given is the user's choice (``secant expert`` passes its own, a benchmark
        # may build the options directly): a Foundry project's budget gives way to it.
        budget = {name for name in BUDGET_OPTIONS if getattr(self, name) is not None}
        if not budget <= self.given:
            object.__setattr__(self, "given", self.given | budget)

    # ------------------------------------------------------------------ building one
    @classmethod
    def from_values(cls, values: Mapping[str, Any], given: frozenset[str] = frozenset()
                    ) -> Self:
        """The options of a command's settled parameters (flags over ``secant.toml``).

        A parameter this class does not hold (how the command runs, such as ``quiet``) is
        left to the command; lists become tuples, None a tuple's "not given".
        """
        known = {f.name: f for f in fields(cls)}
        chosen: dict[str, Any] = {}
        for name, raw in values.items():
            if name not in known or name == "given":
                continue
            chosen[name] = _field_value(known[name].type, raw)
        return cls(**chosen, given=given)

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Self:
        """The options a manifest recorded (:meth:`to_record`); unknown keys are ignored.

        A manifest of an older secant may record command options as well
        (``fail_on_findings``, ``quiet``): they are not the campaign's and are left out.
        """
        given = frozenset(str(name) for name in record.get("given") or ())
        return cls.from_values({k: v for k, v in record.items() if k != "given"}, given)

    def to_record(self) -> dict[str, Any]:
        """The options as JSON: paths as text, tuples as lists, ``given`` sorted."""
        record: dict[str, Any] = {}
        for item in fields(self):
            value = getattr(self, item.name)
            if isinstance(value, Path):
                value = str(value)
            elif isinstance(value, frozenset):
                value = sorted(value)
            elif isinstance(value, tuple):
                value = list(value)
            record[item.name] = value
        return record

    def with_changes(self, **changes: Any) -> CampaignOptions:
        """A copy with ``changes`` (validated again)."""
        return replace(self, **changes)

    def command_line(self) -> list[str]:
        """The ``secant fuzz`` arguments that give these options (those not at default).

        What a benchmark runs to measure exactly what a user of the command gets.
        """
        if self.policy in SINGLE_WORKER_POLICIES:
            raise ValueError("only Harvey's and ILF's episode campaigns have a secant fuzz "
                             "command line")
        defaults = CampaignOptions(self.path)
        argv = [str(self.path)]
        for item in fields(self):
            name = item.name
            value = getattr(self, name)
            if name in ("path", "given", "expert_rlimit", "expert_queries",
                        "dataset") or value == getattr(defaults, name):
                continue
            flag = "--time" if name == "time_budget" else "--" + name.replace("_", "-")
            if isinstance(value, bool):
                if name in _SWITCHES:
                    argv.append(_SWITCHES[name][0 if value else 1])
                elif value:
                    argv.append(flag)
            elif isinstance(value, tuple):
                for each in value:
                    argv += [flag, each]
            else:
                argv += [flag, str(value)]
        return argv

    # ------------------------------------------------------------------ what derives
    @property
    def max_time(self) -> float | None:
        """The run's time budget in seconds (None: the budget is in executions or calls)."""
        if self.time_budget:
            return parse_duration(self.time_budget)
        return None if self.execs or self.calls else DEFAULT_TIME_S

    @property
    def schedule_name(self) -> str:
        """The power schedule: the one given, else AFLGo with a target, else AFLFast."""
        return self.schedule or ("aflgo" if self.target else "aflfast")

    @property
    def oracle_names(self) -> list[str] | None:
        """The oracles asked for by name (None: every registered one)."""
        if self.oracles is None:
            return None
        return [name.strip() for name in self.oracles.split(",") if name.strip()]

    def fuzz_config(self) -> FuzzConfig:
        """The engine's configuration."""
        return FuzzConfig(seed=self.seed, max_execs=self.execs, max_time=self.max_time,
                          max_transactions=self.calls, schedule=self.schedule_name,
                          predict=not self.no_predict,
                          predict_iterations=self.predict_iterations,
                          sequences=self.sequences,
                          aggressive_probability=self.aggressive_probability,
                          adaptive=not self.no_adaptive, adaptive_share=self.adaptive_share,
                          max_sequence_length=self.max_sequence_length,
                          max_time_delay=self.max_time_delay,
                          max_block_delay=self.max_block_delay,
                          symbolic_share=self.symbolic_share,
                          cost_vectors_mb=memory_split(self.memory_budget)[1])

    def compile_flags(self) -> CompileOptions:
        """The compiler settings the options give (a project's own fill in the rest)."""
        return CompileOptions(solc_version=self.solc_version, optimize=self.optimize,
                              optimize_runs=self.optimizer_runs, via_ir=self.via_ir,
                              evm_version=self.evm_version, remappings=self.remap)

    def selection(self) -> Selection:
        """What to deploy and call, with the Foundry project's testing settings read."""
        return Selection(self.contract, list(self.arg) or None, self.value,
                         self.match_contract, self.match_test, self.oracle_names,
                         list(self.property_prefix) or None,
                         parse_panic_codes(self.panic_codes), self.deployments(),
                         self.all_contracts if "all_contracts" in self.given else None,
                         [parse_address(text, "--sender") for text in self.sender] or None,
                         self.block_number, self.block_time, self.harness,
                         _forge_testing(self.path), self.given,
                         FunctionFilter(self.only_function, self.exclude_function))

    def deployments(self) -> list[tuple[str, list[str] | None]]:
        """``--deploy`` contracts with the ``--deploy-arg`` values given for each, in order."""
        given: dict[str, list[str]] = {}
        for item in self.deploy_arg:
            name, sep, text = item.partition("=")
            if not sep or name not in self.deploy:
                raise SecantError(f"--deploy-arg {item!r} names no --deploy contract",
                                  "write --deploy-arg NAME=VALUE for a contract given to "
                                  "--deploy")
            given.setdefault(name, []).append(text)
        return [(name, given.get(name)) for name in self.deploy]

    def chain_config(self) -> ChainConfig:
        """The test chain's configuration."""
        return ChainConfig(fork=get_fork(self.fork), seed=self.seed, balance=self.balance,
                           unlimited_code_size=self.unlimited_code_size,
                           deployer=(None if self.deployer is None
                                     else parse_address(self.deployer, "--deployer")))

    def campaign_config(self, out: Path | None = None) -> CampaignConfig:
        """The campaign's configuration, writing to ``out`` (default: the options' own)."""
        return CampaignConfig(fuzz=self.fuzz_config(), out=self.out if out is None else out,
                              prefix_cache=not self.no_prefix_cache,
                              prefix_cache_mb=memory_split(self.memory_budget)[0],
                              oracles=self.oracle_names, shrink_limit=self.shrink_limit)

    # ------------------------------------------------------------------ validation
    def _validate(self) -> None:
        """Every check that needs no file: one line naming the option and the fix."""
        if self.policy not in POLICIES:
            raise SecantError(f"unknown policy {self.policy!r}",
                              f"use one of {', '.join(POLICIES)}")
        if self.harness not in HARNESS_STYLES:
            raise SecantError(f"unknown --harness {self.harness!r}",
                              f"use one of {', '.join(HARNESS_STYLES)}")
        schedule = self.schedule_name
        if schedule not in SCHEDULES:
            raise SecantError(f"unknown schedule {schedule!r}",
                              f"use one of {', '.join(SCHEDULES)}")
        if schedule == "aflgo" and self.target is None:
            raise SecantError("the aflgo schedule needs a target",
                              "pass --target File.sol:LINE (or pc:N)")
        if self.predict_iterations < 0:
            raise SecantError("--predict-iterations must be 0 or more",
                              "use 0 for one-shot prediction")
        if self.sequences not in SEQUENCE_MODES:
            raise SecantError(f"unknown sequence mode {self.sequences!r}",
                              f"use one of {', '.join(SEQUENCE_MODES)}")
        if not 0.0 <= self.aggressive_probability <= 1.0:
            raise SecantError("--aggressive-probability must be between 0 and 1",
                              "Harvey uses 0.125")
        if self.adaptive_share is not None and not 0.0 <= self.adaptive_share <= 1.0:
            raise SecantError("--adaptive-share must be between 0 and 1",
                              "leave it out for sFuzz's share")
        if not 0.0 <= self.symbolic_share <= 1.0:
            raise SecantError("--symbolic-share must be between 0 and 1",
                              "use 0 to turn the concolic stage off")
        if self.corpus is not None and self.corpus.exists() and not self.corpus.is_dir():
            raise SecantError(f"--corpus {self.corpus} is a file",
                              "give a folder (it is created when missing)")
        if self.memory_budget < MIN_MEMORY_BUDGET_MB:
            raise SecantError(f"--memory-budget {self.memory_budget} is too small",
                              f"give at least {MIN_MEMORY_BUDGET_MB} (MB per worker)")
        if self.max_sequence_length < 1:
            raise SecantError("--max-sequence-length must be at least 1",
                              "use 1 for single transactions, or --sequences off")
        for option, most, unit in (("--max-time-delay", self.max_time_delay, "seconds"),
                                   ("--max-block-delay", self.max_block_delay, "blocks")):
            if most is not None and not 0 <= most < _WORD:
                raise SecantError(f"{option} must be between 0 and 2**64 - 1",
                                  f"pass 0 to keep the block still, or a number of {unit}")
        if self.workers is not None and self.workers < 1:
            raise SecantError("--workers must be at least 1",
                              "pass the number of cores to use (1: this process only)")
        if ((self.workers or 1) > 1 or self.ray) and self.policy in SINGLE_WORKER_POLICIES:
            raise SecantError(f"the {self.policy} policy runs one worker (the symbolic "
                              "expert's search is one process's)",
                              f"leave --workers and --ray out with --policy {self.policy}")
        if not 0.0 <= self.learned_share <= 1.0:
            raise SecantError("--learned-share must be between 0 and 1",
                              "pass the share of executions learned episodes may take, "
                              "e.g. 0.1 (0: none)")
        if self.learned_share and self.policy != "harvey":
            raise SecantError("--learned-share is a stage of Harvey's loop",
                              "leave --policy out (or pass --policy harvey) with it")
        if self.execs is not None and self.execs <= 0:
            raise SecantError("--execs must be positive", "pass a number of executions")
        if self.calls is not None and self.calls <= 0:
            raise SecantError("--calls must be positive", "pass a number of transactions")
        if self.shrink_limit < 0:
            raise SecantError("--shrink-limit must be 0 or more",
                              "use 0 to turn shrinking off")
        for option, number in (("--block-number", self.block_number),
                               ("--block-time", self.block_time)):
            if number is not None and not 0 <= number < _WORD:
                raise SecantError(f"{option} must be between 0 and 2**64 - 1",
                                  f"pass a non-negative {option}")
        for option, limit in (("--rlimit", self.expert_rlimit),
                              ("--queries", self.expert_queries)):
            if limit is not None and limit < 1:
                raise SecantError(f"{option} must be at least 1",
                                  f"leave {option} out for the default")
        if self.time_budget:
            parse_duration(self.time_budget)
        try:
            get_fork(self.fork)
        except ValueError as exc:
            raise SecantError(str(exc), "pass --fork with one of those names") from None
        parse_panic_codes(self.panic_codes)
        self.deployments()
        for text in self.sender:
            parse_address(text, "--sender")
        if self.deployer is not None:
            parse_address(self.deployer, "--deployer")


def _field_value(kind: Any, raw: Any) -> Any:
    """``raw`` as a field of type ``kind`` holds it (the annotation, a string here)."""
    text = str(kind)
    if text.startswith("tuple"):
        if raw is None:
            return ()
        if isinstance(raw, str):
            return (raw,)
        return tuple(str(item) for item in raw)
    if text in ("Path", "Path | None") and raw is not None:
        return Path(raw)
    return raw


def _forge_testing(path: Path) -> ForgeTesting:
    """The testing settings of the Foundry project ``path`` is or lies in, or forge's."""
    project = project_of(path)
    if project is None or project.kind != "foundry":
        return ForgeTesting()
    return read_forge_testing(project.root)
