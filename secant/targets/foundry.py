"""Foundry test contracts: set-up, targets and fuzz tests, read as forge reads them.

A *test contract* has functions named ``test*`` or ``invariant*`` (forge's rule) and
``setUp()`` or forge-std's ``IS_TEST()`` (without either it is an Echidna/Medusa harness:
:func:`is_test_contract`).
:func:`set_up` deploys it as the chain's main contract, runs ``setUp()`` once from the
deployer (never fuzzed), registers the contracts that set-up created, and seals the chain:
every test case starts from that state.

The invariant campaign's targets are chosen as forge chooses them, by asking the test
contract through forge-std's ``StdInvariant`` getters when it has them:

* ``targetContracts()``: when not empty, exactly these contracts; else every contract the
  constructor and ``setUp()`` created, except the test contract itself and
  ``excludeContracts()``; ``targetArtifacts()``/``excludeArtifacts()`` add or drop
  contracts by artifact name (``Token``, ``src/Token.sol:Token``);
* ``targetSelectors()``/``targetArtifactSelectors()`` narrow a contract to some of its
  functions; ``excludeSelectors()`` drops some; without selectors, every function that can
  change state (view and pure functions are not called, as in forge);
* ``targetSenders()``: when not empty, the senders; ``excludeSenders()`` drops some.

The test contract's ``invariant_*`` functions are properties (``secant.oracles.property``);
its ``testFuzz_*`` and other ``test*`` functions with parameters are stateless property
tests: one call from the set-up state, failing when it reverts (``fuzz_tests``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from secant.abi import AbiFunction, function_selector
from secant.chain.chain import ChainConfig, TestChain
from secant.chain.deploy import DeployedContract, matches_runtime
from secant.compile.artifacts import Compilation
from secant.errors import SecantError
from secant.targets.trace import TraceRecorder

HEVM_ADDRESS = 0x7109709ECFA91A80626FF3989D68F67F5B1DD12D
"""Where cheatcodes live (never a target)."""

CONSOLE_ADDRESS = 0x000000000000000000636F6E736F6C652E6C6F67
"""forge-std's console.log address (never a target)."""

_NOT_TARGETS = frozenset({"IS_TEST", "setUp", "beforeTestSetup", "afterInvariant", "failed",
                          "excludeArtifacts", "excludeContracts", "excludeSelectors",
                          "excludeSenders", "targetArtifacts", "targetArtifactSelectors",
                          "targetContracts", "targetInterfaces", "targetSelectors",
                          "targetSenders"})
_NOT_TARGET_PREFIXES = ("test", "invariant", "statefulFuzz", "fixture", "table")
"""A test contract that targets itself is not called on its tests, invariants, fixtures and
table tests (forge's reserved functions): a unit test kept beside the handlers is run by
forge as a test, not as a handler."""


def _reserved(name: str) -> bool:
    """Whether a test contract's function ``name`` is one of forge's reserved functions."""
    return name in _NOT_TARGETS or name.startswith(_NOT_TARGET_PREFIXES)


class SetUpFailed(SecantError):
    """``setUp()`` of a test contract reverted."""


HARNESS_STYLES = ("auto", "foundry", "echidna")
"""How a contract with test-named functions is run: ``auto`` tells from its markers,
``foundry`` as a Foundry test contract, ``echidna`` as an Echidna/Medusa harness."""


def forge_named(functions: Sequence[AbiFunction]) -> bool:
    """Whether an ABI has a function forge runs by its name (``test*``, ``invariant*``).

    forge's own rule for which compiled contracts are test contracts; Echidna and Medusa
    harnesses (Chimera's ``CryticTester``, Medusa's ``TestContract``) match it too.
    """
    return any(f.name.startswith(("test", "invariant")) for f in functions)


CHIMERA_HARNESS = "CryticTester"
"""The name of the Echidna/Medusa entry point in Recon's Chimera layout: a harness, even
when a base it shares with ``CryticToFoundry`` declares ``setUp()``."""


def is_test_contract(functions: Sequence[AbiFunction], style: str = "auto",
                     constructs: bool = False, name: str = "") -> bool:
    """Whether an ABI is a Foundry test contract's rather than a harness's.

    A test contract is run with ``setUp()``, its invariants over the targets it names and
    its fuzz tests; a harness is fuzzed itself.

    ``auto``: forge-named functions (:func:`forge_named`) and a Foundry marker: a
    ``setUp()``, or forge-std's ``IS_TEST()`` in a contract that declares no constructor
    (``constructs``). forge itself asks for the names only, but Echidna and Medusa
    harnesses use the same names for their properties and handlers, and build their system
    in their constructor, not in ``setUp()``, even when they inherit forge-std's ``Test``
    for its helpers (Chimera's ``CryticTester``: ``constructor() { setup(); }``): those are
    run as harnesses (a handler that inherits forge-std's Test and has no test-named
    function is not a test contract either), and so is a contract called ``CryticTester``
    (``name``; :data:`CHIMERA_HARNESS`), whatever its bases declare. ``foundry`` and
    ``echidna`` (``--harness``) override the guess for a contract with forge-named
    functions.
    """
    if style not in HARNESS_STYLES:
        raise SecantError(f"unknown harness style {style!r}",
                          f"use one of {', '.join(HARNESS_STYLES)}")
    if not forge_named(functions) or style == "echidna":
        return False
    if style == "foundry":
        return True
    if name == CHIMERA_HARNESS:
        return False
    names = {f.name for f in functions if not f.inputs}
    return "setUp" in names or ("IS_TEST" in names and not constructs)


def fuzz_tests(contract: DeployedContract) -> list[AbiFunction]:
    """The contract's ``test*`` functions with parameters (stateless property tests)."""
    return [f for f in contract.abi.functions
            if f.name.startswith("test") and f.inputs and not f.read_only]


def invariants(contract: DeployedContract) -> list[AbiFunction]:
    """The contract's ``invariant_*`` functions."""
    return [f for f in contract.abi.functions
            if f.name.startswith("invariant_") and not f.inputs]


@dataclass
class FoundrySetUp:
    """A sealed chain after ``setUp()`` and the invariant campaign's targets."""

    chain: TestChain
    test: DeployedContract
    targets: list[tuple[DeployedContract, list[AbiFunction]]] = field(default_factory=list)
    senders: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def set_up(compilations: Sequence[Compilation], contract: str | None,
           config: ChainConfig | None = None,
           senders: Sequence[int] | None = None) -> FoundrySetUp:
    """Deploy the test contract, run ``setUp()``, seal; choose targets (module docstring).

    ``senders`` replaces the chain's own as the senders of a test that names none.
    """
    chain = TestChain(config)
    # As forge does: the test contract itself may exceed the contract size limits (a
    # campaign's plan lifts them for everything it creates too: ``secant.campaign.plan``).
    with chain.without_size_limits():
        test = chain.deploy(list(compilations), contract)
    setup = next((f for f in test.abi.functions if f.name == "setUp" and not f.inputs), None)
    if setup is not None:
        recorder = TraceRecorder({"accounts"})
        recorder.begin_tx(0)
        done = chain.transact_setup(chain.deployer.address, test.address,
                                    function_selector("setUp()"), inspector=recorder)
        if not done.success:
            raise SetUpFailed(f"{test.name}.setUp() reverted"
                              f"{': ' + _reason(done.output) if done.output else ''}",
                              "make setUp() succeed on a fresh chain (the same as forge)")
        _register(chain, compilations, recorder.created)
    result = FoundrySetUp(chain, test)
    result.targets = _targets(chain, test, result.notes)
    result.senders = _senders(chain, test, senders)
    # A sender the test names pays for gas like the chain's own senders.
    for sender in result.senders:
        if chain.state.balance(sender) == 0:
            chain.state.add_balance(sender, chain.config.balance)
    chain.seal()
    return result


def _reason(output: bytes) -> str:
    from secant.abi import decode_revert

    return str(decode_revert(output))


def _register(chain: TestChain, compilations: Sequence[Compilation],
              created: Sequence[int]) -> None:
    """Enter the contracts set-up created into the chain's address book."""
    for address in created:
        if chain.at(address) is not None:
            continue
        code = chain.code_at(address)
        if not code:
            continue
        for compilation in compilations:
            match = next((c for c in compilation.contracts if matches_runtime(code, c.runtime)),
                         None)
            if match is not None:
                chain.book.add(DeployedContract(match.name, address, match.abi, "created",
                                                match, compilation))
                break


def _ask(chain: TestChain, test: DeployedContract, name: str) -> Any:
    """The value of one of the test contract's StdInvariant getters (None: it has none)."""
    if not any(f.name == name and not f.inputs for f in test.abi.functions):
        return None
    result = chain.view(test, name)
    if not result.success:
        raise SecantError(f"{test.name}.{name}() reverted", "fix the test contract's set-up")
    return result.value


def _address(value: Any) -> int:
    return value if isinstance(value, int) else int(str(value), 16)


def _artifact_matches(contract: DeployedContract, names: Sequence[str]) -> bool:
    compiled = contract.compiled
    qualified = compiled.qualified_name if compiled is not None else contract.name
    source = qualified.split(":", 1)[0]
    return any(name in (contract.name, qualified, source) for name in names)


def _targets(chain: TestChain, test: DeployedContract, notes: list[str]
             ) -> list[tuple[DeployedContract, list[AbiFunction]]]:
    explicit = [_address(a) for a in _ask(chain, test, "targetContracts") or []]
    excluded = {_address(a) for a in _ask(chain, test, "excludeContracts") or []}
    artifacts = [str(a) for a in _ask(chain, test, "targetArtifacts") or []]
    excluded_artifacts = [str(a) for a in _ask(chain, test, "excludeArtifacts") or []]
    candidates = [c for c in chain.contracts
                  if c.role in ("created", "deployed") and c.address != test.address]
    if explicit:
        contracts = [chain.at(a) for a in explicit]
        missing = [f"0x{a:040x}" for a, c in zip(explicit, contracts) if c is None]
        if missing:
            notes.append(f"targetContracts() names unknown contracts: {', '.join(missing)}")
        chosen = [c for c in contracts if c is not None]
    else:
        chosen = list(candidates)
    if artifacts:
        chosen += [c for c in candidates if _artifact_matches(c, artifacts) and c not in chosen]
    chosen = [c for c in chosen if c.address not in excluded
              and c.address not in (HEVM_ADDRESS, CONSOLE_ADDRESS)
              and not _artifact_matches(c, excluded_artifacts)]

    selectors: dict[int, set[bytes]] = {}
    for address, chosen_selectors in _ask(chain, test, "targetSelectors") or []:
        selectors.setdefault(_address(address), set()).update(bytes(s) for s in chosen_selectors)
    for artifact, chosen_selectors in _ask(chain, test, "targetArtifactSelectors") or []:
        for contract in candidates:
            if _artifact_matches(contract, [str(artifact)]):
                selectors.setdefault(contract.address, set()).update(
                    bytes(s) for s in chosen_selectors)
                if contract not in chosen:
                    chosen.append(contract)
    dropped: dict[int, set[bytes]] = {}
    for address, chosen_selectors in _ask(chain, test, "excludeSelectors") or []:
        dropped.setdefault(_address(address), set()).update(bytes(s) for s in chosen_selectors)
    for address in selectors:  # a contract named only through its selectors
        named = chain.at(address)
        if named is not None and named not in chosen:
            chosen.append(named)

    targets = []
    for contract in chosen:
        wanted = selectors.get(contract.address)
        unwanted = dropped.get(contract.address, set())
        functions = [f for f in contract.abi.functions
                     if (f.selector in wanted if wanted is not None else not f.read_only)
                     and f.selector not in unwanted
                     and (contract.address != test.address or not _reserved(f.name))]
        if contract.abi.receive is not None and wanted is None:
            functions.append(contract.abi.receive)
        if functions:
            targets.append((contract, functions))
        else:
            notes.append(f"{contract.name} has no function to call")
    return targets


def _senders(chain: TestChain, test: DeployedContract,
             default: Sequence[int] | None) -> list[int]:
    chosen = [_address(a) for a in _ask(chain, test, "targetSenders") or []]
    excluded = {_address(a) for a in _ask(chain, test, "excludeSenders") or []}
    senders = chosen or list(default or [s.address for s in chain.senders])
    return [s for s in senders if s not in excluded]
