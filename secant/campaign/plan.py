"""Which campaigns an input asks for: a contract, or the harnesses of a Foundry test contract.

A plain contract (or an Echidna/Medusa harness, Chimera's ``CryticTester`` among them) is
one campaign: the contract is deployed with its constructor arguments, and the whole
system (it and the contracts it created) is fuzzed. A Foundry test contract
(``secant.targets.foundry``: test-named functions and ``setUp()`` or ``IS_TEST()``, or
any test-named contract under ``--harness foundry``) gives up to two campaigns on
the state ``setUp()`` leaves: its invariants, over the targets it names, and its fuzz
tests, one stateless call each. ``--match-contract`` and ``--match-test`` filter test
contracts and tests by regular expression, as forge does.

A Foundry test contract runs with its project's testing settings
(``secant.compile.forge_testing``) where the user chose nothing else: ``[invariant]
depth`` is the longest sequence, its time and block delays bound a transaction's, the
block starts at the profile's ``block_timestamp`` and ``block_number``,
``assertions_revert`` says whether a failing ``vm.assert*`` reverts, and with
``fail_on_assert`` (or non-reverting assertions) an assertion failed in a handler is a
finding named by the handler.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from secant.campaign.config import CampaignConfig, OracleFactory
from secant.campaign.function_filter import FunctionFilter
from secant.campaign.worker import function_specs, spec_of
from secant.chain.blockenv import FORGE_NUMBER, FORGE_TIMESTAMP
from secant.chain.chain import ChainConfig, TestChain
from secant.chain.deploy import DeployedContract
from secant.compile.artifacts import Compilation, CompiledContract
from secant.compile.forge_testing import ForgeTesting
from secant.compile.loader import select_contract
from secant.engine.mutators import FunctionSpec
from secant.engine.oracle import Oracle
from secant.errors import SecantError
from secant.evm.crypto import keccak256
from secant.oracles.assertion import AssertionOracle
from secant.oracles.exits import scan
from secant.oracles.fuzz_test import FuzzTestOracle
from secant.oracles.property import PROPERTY_PREFIXES, PropertyOracle, is_property_name
from secant.oracles.registry import available, build
from secant.targets.foundry import (
    forge_named,
    fuzz_tests,
    invariants,
    is_test_contract,
    set_up,
)


class NothingToRun(SecantError):
    """A test contract has no invariant and no fuzz test (that the filters keep)."""


@dataclass
class CampaignPlan:
    """One campaign to run: how to make its chain, what it calls and what it checks."""

    name: str
    slug: str
    make_chain: Callable[[], TestChain]
    config: CampaignConfig
    functions: list[FunctionSpec] | None = None
    senders: list[int] | None = None
    oracles: list[OracleFactory] | None = None
    notes: list[str] = field(default_factory=list)
    block_steps: bool = True  # False: no transaction moves the block (fuzz tests)
    own_budget: bool = False
    """The budget is the project's (forge's runs and timeout), not a part of the run's."""


@dataclass
class Selection:
    """What the user asked for: a contract name, forge's filters, deployment settings."""

    contract: str | None = None
    args: Sequence[Any] | None = None
    value: int = 0
    match_contract: str | None = None
    match_test: str | None = None
    oracles: Sequence[str] | None = None
    property_prefixes: Sequence[str] | None = None
    panic_codes: frozenset[int] | None = None
    """Solidity panic codes the assertion oracle reports (None: its default set)."""
    deploy: Sequence[tuple[str, Sequence[str] | None]] = ()
    """Contracts deployed before the main one, in order, with their constructor arguments
    (None: generated); an argument naming a deployed contract stands for its address."""
    all_contracts: bool | None = None
    """Also call the contracts that constructors created (Echidna's ``allContracts``);
    None: a plain contract's campaign does, a harness's (one with properties) does not
    (``calls_created``)."""
    senders: Sequence[int] | None = None
    """The addresses that send transactions (None: the chain's five, or the test's)."""
    block_number: int | None = None
    block_time: int | None = None
    """The first block (None: Echidna's for contracts and harnesses, forge's for Foundry
    test contracts)."""
    harness: str = "auto"
    """How a contract with test-named functions is run (``HARNESS_STYLES``): guessed from
    its Foundry markers, or as a Foundry test contract, or as an Echidna/Medusa harness."""
    forge: ForgeTesting = field(default_factory=ForgeTesting)
    """The project's Foundry testing settings (defaults outside a Foundry project)."""
    given: frozenset[str] = frozenset()
    """The options the user set (flags or a config file): those the project's Foundry
    settings do not override."""
    functions: FunctionFilter = field(default_factory=FunctionFilter)
    """Which functions may be called (``--only-function``, ``--exclude-function``)."""

    def first_block(self, chain_config: ChainConfig, foundry: bool) -> ChainConfig:
        """``chain_config`` starting at the block this selection asks for."""
        number, time = ((self.forge.block_number or FORGE_NUMBER,
                         self.forge.block_timestamp or FORGE_TIMESTAMP) if foundry else
                        (chain_config.block.number, chain_config.block.timestamp))
        block = replace(chain_config.block,
                        number=number if self.block_number is None else self.block_number,
                        timestamp=time if self.block_time is None else self.block_time)
        return replace(chain_config, block=block)


def deploy_system(compilations: Sequence[Compilation], selection: Selection,
                  chain_config: ChainConfig) -> TestChain:
    """A sealed chain with the ``deploy`` contracts, in order, then the main contract."""
    chain = TestChain(chain_config)

    def resolved(args: Sequence[str] | None) -> list[Any] | None:
        if args is None:
            return None
        names = chain.names()
        return [f"0x{names[arg]:040x}" if arg in names else arg for arg in args]

    deployed = [chain.deploy(list(compilations), name, resolved(args), main=False)
                for name, args in selection.deploy]
    deployed.append(chain.deploy(list(compilations), selection.contract,
                                 resolved(selection.args), selection.value))
    for contract in deployed:
        fund_unpayable(chain, contract)
    fund_senders(chain, selection.senders or ())
    chain.seal()
    return chain


UNPAYABLE_FUNDS = 10**18
"""Wei a contract that pays ether out but that no transaction can pay starts with."""


def fund_unpayable(chain: TestChain, contract: DeployedContract) -> None:
    """Give ``contract`` some ether when it has code that pays some out and no way in.

    Why: a contract without a payable function or fallback still holds ether in the world
    (a self-destruct or a block reward can send it some, and so can anyone before it is
    deployed at its predictable address), and its code that pays ether out (a payout to a
    chosen address behind ``require(tx.origin == owner)``, a winnings function left public)
    moves nothing when it holds none: the oracles that judge payments would see none. The
    note names the amount.
    """
    abi = contract.abi
    takes_ether = (any(fn.payable for fn in abi.functions)
                   or any(fn is not None and fn.payable for fn in (abi.fallback, abi.receive)))
    code = chain.code_at(contract.address)
    if takes_ether or not code or chain.state.balance(contract.address):
        return
    if not scan(code, keccak256(code), chain.fork).exits:
        return  # nothing in it can move ether out (secant.oracles.exits)
    chain.state.add_balance(contract.address, UNPAYABLE_FUNDS)
    chain.notes.append(f"{contract.name} can pay ether out but no transaction can pay it: it "
                       f"starts with {UNPAYABLE_FUNDS} wei, as ether forced on it would be")


def fund_senders(chain: TestChain, senders: Sequence[int]) -> None:
    """Give the senders a user named the chain's starting balance, if they have nothing."""
    for sender in senders:
        if chain.state.balance(sender) == 0:
            chain.state.add_balance(sender, chain.config.balance)


def _regex(pattern: str | None, option: str) -> re.Pattern[str] | None:
    if pattern is None:
        return None
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise SecantError(f"{option} {pattern!r} is not a regular expression: {exc}",
                          f"give {option} a Python regular expression") from None


def test_contract_names(compilations: Sequence[Compilation]) -> list[str]:
    """Deployable contracts of the compilations forge would run, in order.

    forge's rule (:func:`secant.targets.foundry.forge_named`): Foundry test contracts and
    the Echidna/Medusa harnesses that use the same names; :func:`plan` runs each in its
    own style.
    """
    names = []
    for compilation in compilations:
        for contract in compilation.contracts:
            if (contract.kind == "contract" and contract.creation.hex
                    and forge_named(contract.abi.functions) and contract.name not in names):
                names.append(contract.name)
    return names


def plan(compilations: Sequence[Compilation], selection: Selection,
         chain_config: ChainConfig, config: CampaignConfig, project: bool) -> list[CampaignPlan]:
    """The campaigns for an input (see the module docstring).

    ``project`` says the input was a folder: then every test contract or harness in it
    matching ``--match-contract`` is run (a folder without any is fuzzed as a contract file
    is); otherwise the chosen contract is, as a test contract when it is one. Which of the
    two a contract is, ``selection.harness`` says (``is_test_contract``).
    """
    contracts = _regex(selection.match_contract, "--match-contract")
    tests = _regex(selection.match_test, "--match-test")
    if project and selection.contract is None and test_contract_names(compilations):
        names = [n for n in test_contract_names(compilations)
                 if contracts is None or contracts.search(n)]
        if not names:
            raise SecantError(f"no test contract matches --match-contract "
                              f"{selection.match_contract!r}",
                              "loosen --match-contract (a Python regular expression)")
        plans: list[CampaignPlan] = []
        skipped: list[str] = []
        for name in names:
            abi = _contract(compilations, name).abi
            if not is_test_contract(abi.functions, selection.harness,
                                    abi.constructor is not None, name):
                plans.extend(_system_plans(compilations, replace(selection, contract=name),
                                           chain_config, config, tests))
                continue
            try:
                plans.extend(_foundry_plans(compilations, name, selection, chain_config,
                                            config, tests))
            except NothingToRun as exc:
                skipped.append(f"{name}: {exc.message}")
        if not plans:
            raise SecantError("no invariant or fuzz test to run in the folder ("
                              + "; ".join(skipped) + ")",
                              "add invariant_* functions or tests with parameters, or loosen "
                              "--match-test")
        if skipped:
            plans[0].notes.extend(f"skipped {note}" for note in skipped)
        return plans
    _, chosen = select_contract(list(compilations), selection.contract)
    if is_test_contract(chosen.abi.functions, selection.harness,
                        chosen.abi.constructor is not None,
                        chosen.name) and selection.args is None:
        return _foundry_plans(compilations, chosen.name, selection, chain_config, config,
                              tests)
    return _system_plans(compilations, selection, chain_config, config, tests)


def _contract(compilations: Sequence[Compilation], name: str) -> CompiledContract:
    """The first compiled contract called ``name``."""
    return next(c for comp in compilations for c in comp.contracts if c.name == name)


def _system_plans(compilations: Sequence[Compilation], selection: Selection,
                  chain_config: ChainConfig, config: CampaignConfig,
                  tests: re.Pattern[str] | None) -> list[CampaignPlan]:
    """The one campaign of a contract or harness.

    It is deployed after its --deploy contracts; they are fuzzed, checked by every oracle
    (or those chosen).
    """
    chain_config = selection.first_block(chain_config, foundry=False)
    chain = deploy_system(compilations, selection, chain_config)
    main = chain.main
    assert main is not None
    made = [chain]

    def make_chain() -> TestChain:
        # The first chain is the one already deployed; more workers deploy their own.
        return made.pop() if made else deploy_system(compilations, selection, chain_config)

    prefixes = selection.property_prefixes or PROPERTY_PREFIXES
    functions, notes = function_specs(chain, property_prefixes=prefixes,
                                      all_contracts=calls_created(selection, main, prefixes))
    functions, filtered = selection.functions.apply(functions, _contract_names(chain))
    notes += filtered
    config = replace(config, test_contract=False)
    return [CampaignPlan(main.name, main.name, make_chain, config, functions,
                         list(selection.senders) if selection.senders else None,
                         oracles=_oracles(selection, tests), notes=notes)]


def calls_created(selection: Selection, main: DeployedContract,
                  prefixes: Sequence[str]) -> bool:
    """Whether the campaign of ``main`` also calls the contracts constructors created.

    As the user said (``--all-contracts`` / ``--no-all-contracts``, a config's
    ``allContracts``); otherwise yes for a plain contract, as Medusa calls every contract
    the deployment made: they are on chain, anyone can call them, and a bug may need it
    (a helper contract the constructor created whose setter breaks the main contract's
    assertion). A harness with properties says what to call through its own handlers
    (Echidna's default): calling its system directly would bypass the handlers'
    bookkeeping and break properties that hold.
    """
    if selection.all_contracts is not None:
        return selection.all_contracts
    return not any(fn.kind == "function" and is_property_name(fn.name, prefixes)
                   for fn in main.abi.functions)


def _contract_names(chain: TestChain) -> Callable[[int | None], str]:
    """The name of the contract at an address (None: the main contract)."""
    names = {contract.address: contract.name for contract in chain.contracts}
    main = chain.main.name if chain.main is not None else ""
    return lambda address: main if address is None else names.get(address, "")


def _oracles(selection: Selection, tests: re.Pattern[str] | None
             ) -> list[OracleFactory]:
    """Oracle factories of a contract's or harness's campaign.

    They honour --oracles and --match-test; by default every registered oracle runs but
    the fuzz-test one.

    A harness's ``test*`` functions are handlers (Medusa's assertion mode names them so):
    a revert in one is the system refusing an input, not a failed Foundry fuzz test, so
    that oracle runs only when --oracles names it.
    """
    names = (list(selection.oracles) if selection.oracles is not None
             else [name for name in available() if name != "fuzz-test"])
    return [_filtered(name, tests, prefixes=selection.property_prefixes,
                      panic_codes=selection.panic_codes) for name in names]


def _filtered(name: str, tests: re.Pattern[str] | None, main_only: bool = False,
              prefixes: Sequence[str] | None = None,
              panic_codes: frozenset[int] | None = None,
              forge_assertions: bool = False, fail_on_revert: bool = False) -> OracleFactory:
    """A factory of oracle ``name`` keeping the properties and tests ``tests`` matches.

    ``main_only`` keeps only the main contract's properties (a Foundry test contract's
    invariants, not properties its targets happen to have); ``forge_assertions`` makes
    failed ``vm.assert*`` calls assertion failures; ``fail_on_revert`` makes every reverted
    call a finding of the fuzz-test oracle (forge's ``fail_on_revert``).
    """
    def make(chain: TestChain) -> Oracle:
        oracle = build(chain, [name])[0]
        if isinstance(oracle, AssertionOracle) and panic_codes is not None:
            oracle.panic_codes = panic_codes
        if isinstance(oracle, AssertionOracle) and forge_assertions:
            oracle.report_forge_assertions()
        if isinstance(oracle, PropertyOracle) and prefixes is not None:
            oracle.use_prefixes(prefixes)
        if isinstance(oracle, PropertyOracle):
            main = chain.main.address if chain.main is not None else None
            oracle.properties = [p for p in oracle.properties
                                 if (not main_only or p.contract.address == main)
                                 and (tests is None or tests.search(p.name))]
        if fail_on_revert and isinstance(oracle, FuzzTestOracle):
            oracle.fail_on_revert()
        if tests is not None and isinstance(oracle, FuzzTestOracle):
            oracle.tests = {s: f for s, f in oracle.tests.items() if tests.search(f.name)}
        return oracle
    return make


def _foundry_plans(compilations: Sequence[Compilation], name: str, selection: Selection,
                   chain_config: ChainConfig, config: CampaignConfig,
                   tests: re.Pattern[str] | None) -> list[CampaignPlan]:
    """The invariant and fuzz-test campaigns of one test contract."""
    # forge lifts the EIP-170/3860 size limits in tests, for what setUp() and the handlers
    # create as much as for the test contract: a Chimera CryticToFoundry whose setUp() makes
    # a CryticTester that builds a whole system runs under forge as it is.
    chain_config = replace(selection.first_block(chain_config, foundry=True),
                           assertions_revert=selection.forge.assertions_revert,
                           unlimited_code_size=True)
    config, applied = _forge_config(selection, replace(config, test_contract=True))
    first = set_up(compilations, name, chain_config, selection.senders)
    spare = [first]

    def make_chain() -> TestChain:
        return (spare.pop().chain if spare
                else set_up(compilations, name, chain_config, selection.senders).chain)

    test = first.test
    chosen_invariants = [f for f in invariants(test) if tests is None or tests.search(f.name)]
    chosen_tests = [f for f in fuzz_tests(test) if tests is None or tests.search(f.name)]
    plans: list[CampaignPlan] = []
    if chosen_invariants and first.targets:
        specs, filtered = selection.functions.apply(_specs(first.targets, first.notes),
                                                    _contract_names(first.chain))
        budget = _forge_budget(selection, selection.forge.invariant_calls,
                               selection.forge.timeout, "[invariant]")
        plans.append(CampaignPlan(
            f"{name} invariants", f"{name}-invariants", make_chain,
            config if budget is None else replace(config, fuzz=replace(config.fuzz,
                                                                       **budget[0])),
            specs, first.senders, _harness_oracles(selection, tests, invariant_mode=True),
            [*applied, *([budget[1]] if budget else []), *first.notes, *filtered],
            own_budget=budget is not None))
    elif chosen_invariants:
        raise SecantError(f"{name} has invariants but no contract to call",
                          "create the system in setUp() or name it with targetContract()")
    if chosen_tests:
        fuzz = replace(config, fuzz=replace(config.fuzz, sequences="off"))
        notes: list[str] = []
        specs = [spec for f in chosen_tests if (spec := spec_of(f, None, notes)) is not None]
        forge = selection.forge
        # Each test gets forge's runs and timeout: one call per execution here.
        budget = _forge_budget(
            selection, None if forge.fuzz_runs is None else forge.fuzz_runs * len(specs),
            None if not forge.fuzz_timeout else forge.fuzz_timeout * len(specs), "[fuzz]")
        if budget is not None:
            fuzz = replace(fuzz, fuzz=replace(fuzz.fuzz, **budget[0]))
            notes.append(budget[1])
        # As forge runs them: from one sender, in the block setUp() left.
        plans.append(CampaignPlan(
            f"{name} fuzz tests", f"{name}-fuzz-tests",
            lambda: set_up(compilations, name, chain_config).chain, fuzz, specs,
            [first.chain.deployer.address],
            _harness_oracles(selection, tests, invariant_mode=False), notes,
            block_steps=False, own_budget=budget is not None))
    if not plans:
        raise NothingToRun(f"{name} has no invariant_* function and no test with parameters"
                           + (" matching --match-test" if tests is not None else ""),
                           "add one, or loosen --match-test")
    return plans


def _forge_config(selection: Selection, config: CampaignConfig
                  ) -> tuple[CampaignConfig, list[str]]:
    """``config`` with the project's ``[invariant]`` settings the user left alone; notes.

    A note names each setting taken, and the settings not applied.
    """
    forge = selection.forge
    fuzz = config.fuzz
    changes: dict[str, Any] = {}
    for option, value in (("max_sequence_length", forge.depth),
                          ("max_time_delay", forge.max_time_delay),
                          ("max_block_delay", forge.max_block_delay)):
        if value is not None and option not in selection.given:
            changes[option] = max(value, 1) if option == "max_sequence_length" else value
    notes = [f"{forge.where}: --{option.replace('_', '-')} {value} (from [invariant])"
             for option, value in changes.items()]
    if forge.fuzz_seed is not None and "seed" not in selection.given:
        changes["seed"] = forge.fuzz_seed
        notes.append(f"{forge.where}: --seed {forge.fuzz_seed} (from [fuzz] seed)")
    if forge.reports_handler_assertions:
        why = ("fail_on_assert = true" if forge.fail_on_assert
               else "assertions_revert = false")
        notes.append(f"{forge.where}: {why}: a failed assertion in a handler is a finding")
    if forge.fail_on_revert:
        notes.append(f"{forge.where}: fail_on_revert = true: a reverted handler call is a "
                     "finding")
    return replace(config, fuzz=replace(fuzz, **changes)) if changes else config, notes


BUDGET_OPTIONS = frozenset({"time_budget", "execs", "calls"})
"""The options that set a campaign's budget: one given leaves forge's budget alone."""


def _forge_budget(selection: Selection, calls: int | None, seconds: int | None, table: str
                  ) -> tuple[dict[str, Any], str] | None:
    """The ``FuzzConfig`` budget a project's forge settings give, and its note.

    None when the user gave a budget or the project none: ``calls`` transactions (forge's
    runs) and ``seconds`` (its timeout; 0 is none), whichever ends first.
    """
    if BUDGET_OPTIONS & selection.given or (calls is None and not seconds):
        return None
    said = [f"--calls {calls}"] if calls is not None else []
    said += [f"--time {seconds}s"] if seconds else []
    return ({"max_execs": None, "max_transactions": calls, "max_time": seconds or None},
            f"{selection.forge.where}: {' and '.join(said)} (from {table} runs and timeout)")


def _specs(targets: Sequence[tuple[DeployedContract, Sequence[Any]]],
           notes: list[str]) -> list[FunctionSpec]:
    return [spec for contract, functions in targets for function in functions
            if (spec := spec_of(function, contract.address, notes, f"{contract.name}."))
            is not None]


def _harness_oracles(selection: Selection, tests: re.Pattern[str] | None,
                     invariant_mode: bool) -> list[OracleFactory]:
    """Invariant campaigns check invariants and assertions; fuzz-test campaigns, the tests."""
    default = ["property", "assertion"] if invariant_mode else ["fuzz-test"]
    if invariant_mode and selection.forge.fail_on_revert:
        default.append("fuzz-test")
    names = list(selection.oracles) if selection.oracles is not None else default
    return [_filtered(name, tests, main_only=True, panic_codes=selection.panic_codes,
                      forge_assertions=selection.forge.reports_handler_assertions,
                      fail_on_revert=invariant_mode and selection.forge.fail_on_revert)
            for name in names]


