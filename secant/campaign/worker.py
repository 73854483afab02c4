"""A worker: one chain, its contract target and prefix cache, a policy and a fuzzer.

A worker fuzzes with its own seed and owns everything whose state is its own: the chain
(the target resets it for every run), the prefix-state cache (its entries are diffs
against that chain), the policy and the fuzzer with its corpus and coverage. It knows
nothing of files: it tells its campaign what happens through the fuzzer's events.

What a worker offers the policy it builds is a :class:`~secant.engine.policy.PolicyContext`:
an :class:`~secant.engine.policy.InputSpace` made from the chain (the main contract's
fuzzable functions, the five senders, a dictionary seeded with the bytecode's constants
and every known address, the most ether a sender holds, and whether the code reads the
timestamp or the block number), symbolic replays on a target of their own, the filter of
branch sides worth solving and the code behind each function. Where a target calls a
contract it is handed, the answering attacker joins in (:func:`answering_attacker`): its
address among the dictionary's and its ``answer(word)`` among the functions.

``import_cases`` re-executes cases found elsewhere (another worker, a saved corpus), so a
worker's corpus only ever holds runs it made itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from secant.abi import AbiFunction
from secant.chain.attackers import (
    ANSWER_SIGNATURE,
    ATTACKER_ABI,
    AttackerContract,
    AttackerKind,
)
from secant.chain.chain import TestChain
from secant.chain.deploy import DeployedContract
from secant.engine.config import DEFAULT_PREFIX_CACHE_MB, FuzzConfig
from secant.engine.corpus import Seed
from secant.engine.dictionary import Dictionary, code_constants
from secant.engine.events import Events, FuzzListener
from secant.engine.failures import InternalError
from secant.engine.fuzzer import Fuzzer
from secant.engine.harvey.policy import harvey
from secant.engine.mutators import FunctionSpec
from secant.engine.oracle import Oracle, claim
from secant.engine.policy import InputSpace, PolicyContext, PolicyFactory, SymbolicTracer
from secant.engine.shrink import ShrinkSpace
from secant.engine.values import VType, vtype
from secant.errors import SecantError
from secant.evm.analysis import analyze
from secant.evm.crypto import keccak256
from secant.evm.opcodes import (
    CALL,
    CALLCODE,
    GAS,
    NUMBER,
    SELFDESTRUCT,
    STATICCALL,
    TIMESTAMP,
)
from secant.oracles.assertion import AssertionOracle
from secant.oracles.flows import call_sites
from secant.oracles.fuzz_test import FuzzTestOracle
from secant.oracles.property import PROPERTY_PREFIXES, PropertyOracle, is_property_name
from secant.oracles.registry import recordings
from secant.targets.contract import ContractTarget, StepObserver
from secant.targets.prefix_cache import PrefixCache
from secant.targets.trace import symbolic_of
from secant.types import Finding, RunResult, TxSeq

if TYPE_CHECKING:
    from secant.campaign.directed import DirectedDistance
    from secant.symbolic.records import SymbolicRun


@dataclass
class WorkerSettings:
    """How a worker runs: its engine configuration and the target's options."""

    fuzz: FuzzConfig
    target_pcs: frozenset[int] = frozenset()
    # Resume from the cached state after an unchanged prefix instead of replaying it.
    prefix_cache: bool = True
    prefix_cache_mb: float = DEFAULT_PREFIX_CACHE_MB


def public_getters(contract: DeployedContract) -> set[str]:
    """Names of the getters solc generates for the contract's public state variables.

    A getter returns what storage holds and cannot fail an assertion: calling it would
    only spend executions. Read from the AST of the contract and its bases.
    """
    compiled, compilation = contract.compiled, contract.compilation
    if compiled is None or compilation is None:
        return set()
    wanted = set(compiled.base_ids) | ({compiled.ast_id} if compiled.ast_id is not None
                                       else set())
    names: set[str] = set()
    for source in compilation.sources.values():
        for node in (source.ast or {}).get("nodes", []) or []:
            if node.get("nodeType") != "ContractDefinition" or node.get("id") not in wanted:
                continue
            for member in node.get("nodes", []) or []:
                if (member.get("nodeType") == "VariableDeclaration"
                        and member.get("stateVariable") and member.get("visibility") == "public"):
                    names.add(str(member.get("name")))
    return names


TARGET_ROLES = ("main", "deployed")
"""The roles of the contracts a campaign fuzzes: the main one and the others deployed for it
(``--deploy``); with ``all_contracts`` also those their constructors created (the whole
system, Echidna's ``allContracts``). Never libraries or attackers."""


def target_contracts(chain: TestChain, all_contracts: bool = False) -> list[DeployedContract]:
    """The contracts a campaign calls, the main one first."""
    roles = (*TARGET_ROLES, "created") if all_contracts else TARGET_ROLES
    contracts = [c for c in chain.contracts if c.role in roles and c.abi.functions]
    return sorted(contracts, key=lambda c: c.role != "main")


def function_specs(chain: TestChain, contracts: list[DeployedContract] | None = None,
                   read_only: bool = True,
                   property_prefixes: Sequence[str] = PROPERTY_PREFIXES,
                   all_contracts: bool = False,
                   ) -> tuple[list[FunctionSpec], list[str]]:
    """Mutator specs of the fuzzable functions of ``contracts``, and notes on skipped ones.

    ``contracts`` defaults to ``target_contracts(chain, all_contracts)``.

    View and pure functions are called too when ``read_only`` (an assertion in one is a bug
    like any other), except the getters of public state variables; properties are
    evaluated by their oracle, not called as transactions. A function of the main contract
    is addressed as ``to=None``, any other by its contract's address.
    """
    specs: list[FunctionSpec] = []
    notes: list[str] = []
    main = chain.main
    for contract in (target_contracts(chain, all_contracts) if contracts is None
                     else contracts):
        getters = public_getters(contract)
        to = None if main is not None and contract.address == main.address else contract.address
        prefix = "" if to is None else f"{contract.name}."
        for fn in contract.functions(include_read_only=read_only):
            if fn.kind == "function" and (is_property_name(fn.name, property_prefixes)
                                          or (fn.read_only and fn.name in getters)):
                continue
            spec = spec_of(fn, to, notes, prefix)
            if spec is not None:
                specs.append(spec)
    return specs, notes


def spec_of(fn: AbiFunction, to: int | None, notes: list[str],
            prefix: str = "") -> FunctionSpec | None:
    """The mutator spec of an ABI function called at ``to`` (None: the main contract).

    A parameter type the mutators cannot generate skips the function with a note.
    """
    signature = fn.signature if fn.kind == "function" else fn.kind
    try:
        types = tuple(vtype(p) for p in fn.inputs)
    except ValueError as exc:
        notes.append(f"skipping {prefix}{signature}: {exc}")
        return None
    return FunctionSpec(signature, to, types, fn.payable, tuple(p.name for p in fn.inputs))


def target_codes(chain: TestChain) -> dict[bytes, tuple[DeployedContract, bytes]]:
    """The runtime code of every non-attacker contract by code hash."""
    codes: dict[bytes, tuple[DeployedContract, bytes]] = {}
    for contract in chain.contracts:
        if contract.role == "attacker":
            continue
        code = chain.code_at(contract.address)
        if code:
            codes.setdefault(keccak256(code), (contract, code))
    return codes


def default_senders(chain: TestChain,
                    codes: dict[bytes, tuple[DeployedContract, bytes]]) -> list[int]:
    """The chain's five senders, and its attacker contracts where they can matter.

    A transaction "sent" by an attacker contract reaches the target through the
    contract's ``attack`` (``ContractTarget`` relays it), so the target sees a contract
    as ``msg.sender`` whose fallback calls it back (the reentrancy attacker, sFuzz's) or
    needs more gas than ``send`` gives (the costly attacker, sFuzz's gasless-send
    recipient). The reentrancy attacker is worth a sender only when some target calls a
    computed address with all its remaining gas (a ``msg.sender.call``, a call of a stored
    contract): code that never calls out, or pays only with ``transfer``/``send``'s 2300
    gas, cannot be re-entered. The costly attacker is worth one only when some target pays
    with the 2300-gas stipend in a way whose failure does not revert (a ``send``, not a
    ``transfer``: ``secant.oracles.gasless_send.stipend_payments``). The normal attacker,
    which refuses every call and payment, is worth one only when some target keeps
    ``msg.sender`` in storage and pays a stored address in a way whose failure reverts (a
    refund to the outbid leader, a loop that requires every payment:
    ``secant.oracles.failed_call.refusable_payments``); as a sender it becomes that leader
    or member. Any other sender would only thin out the others (measured: a leaking-ether
    fixture found with 3 of 4 seeds by the five senders, 1 of 4 with a sixth).
    """
    from secant.oracles.failed_call import refusable_payments
    from secant.oracles.gasless_send import stipend_payments

    senders = [s.address for s in chain.senders]
    attacker = next((c for c in chain.attacker_contracts
                     if c.kind == AttackerKind.REENTRANCY), None)
    if attacker is not None and any(_calls_out(chain, code_hash, code)
                                    for code_hash, (_, code) in codes.items()):
        senders.append(attacker.address)
    costly = next((c for c in chain.attacker_contracts if c.kind == AttackerKind.COSTLY),
                  None)
    if costly is not None and any(stipend_payments(chain, code, code_hash)
                                  for code_hash, (_, code) in codes.items()):
        senders.append(costly.address)
    normal = next((c for c in chain.attacker_contracts if c.kind == AttackerKind.NORMAL),
                  None)
    if normal is not None and any(refusable_payments(chain, code, code_hash)
                                  for code_hash, (_, code) in codes.items()):
        senders.append(normal.address)
    return senders


def _calls_out(chain: TestChain, code_hash: bytes, code: bytes,
               opcodes: frozenset[int] = frozenset({CALL})) -> bool:
    """Whether ``code`` has a call of ``opcodes`` to a computed address with all gas left.

    solc pushes the gas operand last, so such a call is a GAS right before the CALL
    (``transfer`` and ``send`` compute a 2300 stipend instead).
    """
    computed = {site.pc for site in call_sites(chain, code, code_hash)
                if site.opcode in opcodes and site.target is None}
    if not computed:
        return False
    instructions = analyze(code, code_hash, chain.fork).instructions
    return any(pc in computed and instructions[i - 1][1] == GAS
               for i, (pc, _, _) in enumerate(instructions) if i)


def _has_address(vt: VType) -> bool:
    """Whether a value of type ``vt`` holds an address (in an array or a tuple too)."""
    if vt.kind == "address":
        return True
    if vt.elem is not None and _has_address(vt.elem):
        return True
    return any(_has_address(field) for field in vt.fields)


def answering_attacker(chain: TestChain, specs: Sequence[FunctionSpec],
                       codes: dict[bytes, tuple[DeployedContract, bytes]]
                       ) -> AttackerContract | None:
    """The answering attacker when it can matter to the campaign, else None.

    It answers a call with a word the search chose (``secant.chain.attackers``), which
    matters only to a target that calls a contract it was handed and reads the answer: some
    function to fuzz takes an address (the attacker reaches a target only as an address
    argument, or one stored from it), and some target calls a computed address with all
    its remaining gas, by CALL or STATICCALL (solc's calls of an interface's function; a
    ``transfer`` or ``send`` stipend reads no answer). Any other campaign goes without it:
    an address more among the dictionary's and a function more to call would only thin
    out the others, and such a campaign searches exactly as before the attacker existed.
    The static test cannot tell whether the answer is read (solc reads it through
    routines shared with other calls): a campaign on code that only calls out gets it too.
    """
    answering = next((c for c in chain.attacker_contracts
                      if c.kind == AttackerKind.ANSWERING), None)
    if answering is None or not any(_has_address(vt) for spec in specs for vt in spec.types):
        return None
    reads = frozenset({CALL, STATICCALL})
    if not any(_calls_out(chain, code_hash, code, reads)
               for code_hash, (_, code) in codes.items()):
        return None
    return answering


def answer_spec(answering: AttackerContract) -> FunctionSpec:
    """``answer(uint256 word)`` of the answering attacker, as a function to fuzz.

    Its word is an input like any argument of a target's function: mutation, the
    dictionary, input-to-state and prediction choose what the attacker answers next, and
    the sequences put it before the call that reads it.
    """
    spec = spec_of(ATTACKER_ABI.function("answer"), answering.address, [])
    assert spec is not None and spec.signature == ANSWER_SIGNATURE
    return spec


ECHIDNA_TIME_DELAY = 604_800
ECHIDNA_BLOCK_DELAY = 60_480
"""Echidna's (and Medusa's) defaults: one transaction moves the chain a week, 60480 blocks."""


def block_delays(config: FuzzConfig, harness: bool) -> FuzzConfig:
    """``config`` with the most one transaction may move the block settled.

    A harness (properties to watch) gets Echidna's and Medusa's bounds unless the user
    chose others: its properties were written for that time model (Echidna's own
    ``echidna_valid_timestamp`` fails after one jump of 100 weeks). A plain contract gets
    any jump: time passes between transactions without bound on a real chain, and a
    deadline months away is one transaction for the search (ILF's crowdsale refund).
    """
    if not harness:
        return config
    return replace(config,
                   max_time_delay=(ECHIDNA_TIME_DELAY if config.max_time_delay is None
                                   else config.max_time_delay),
                   max_block_delay=(ECHIDNA_BLOCK_DELAY if config.max_block_delay is None
                                    else config.max_block_delay))


def input_space(chain: TestChain, specs: Sequence[FunctionSpec],
                codes: dict[bytes, tuple[DeployedContract, bytes]],
                senders: Sequence[int] | None = None,
                block_steps: bool = True, stateful: bool = False) -> InputSpace:
    """What a policy may put in a test case on ``chain`` (see the module docstring).

    ``senders`` defaults to the chain's five; without ``block_steps`` transactions never
    move the block (forge's fuzz tests all run in the set-up block); ``stateful`` says
    properties are checked after every transaction (an invariant suite).
    """
    constants: list[int] = []
    for _, code in codes.values():
        constants.extend(code_constants(code))
    senders = list(senders) if senders else default_senders(chain, codes)
    # The answering attacker is an address to draw only when the case may set its answer
    # (``Worker`` gives it ``answer`` where it can matter: ``answering_attacker``).
    answered = {spec.to for spec in specs if spec.signature == ANSWER_SIGNATURE}
    absent = {c.address for c in chain.attacker_contracts
              if c.kind == AttackerKind.ANSWERING and c.address not in answered}
    addresses = senders + [c.address for c in chain.contracts if c.address not in absent]
    opcodes = {op for code_hash, (_, code) in codes.items()
               for _, op, _ in analyze(code, code_hash, chain.fork).instructions}
    # msg.value can go up to what a sender holds (a crowdsale's goal may be large); an
    # attacker contract's value is paid by the account that relays its transaction.
    relays = {c.address for c in chain.attacker_contracts}
    payers = [s for s in senders if s not in relays] or [chain.deployer.address]
    untrusted = frozenset(s.address for s in chain.attackers) | relays
    return InputSpace(list(specs), senders, Dictionary(constants, addresses),
                      max_value=min(chain.balance(s) for s in payers),
                      reads_time=block_steps and TIMESTAMP in opcodes,
                      reads_number=block_steps and NUMBER in opcodes, stateful=stateful,
                      untrusted=untrusted & frozenset(senders),
                      pays_out=bool(opcodes & {CALL, CALLCODE, SELFDESTRUCT}))


class _PrefixHints(FuzzListener):
    """Tells the prefix cache which prefix a round will reuse.

    A round mutates the seed's last transaction under one prefix again and again, and its
    structural mutations keep the head of that prefix: the prefix and its heads are
    stored at their first miss.
    """

    def __init__(self, cache: PrefixCache) -> None:
        self.cache = cache

    def on_round(self, case: TxSeq) -> None:
        if len(case) > 1:
            self.cache.expect(case[:-1])


class _OraclesOff(FuzzListener):
    """Keeps a worker's target watching with the oracles still on, once one is off."""

    def __init__(self, worker: Worker) -> None:
        self.worker = worker

    def on_internal_error(self, error: InternalError) -> None:
        self.worker.sync_observers()


class Worker:
    """One chain, target, prefix cache, policy and fuzzer with its own seed.

    An oracle that raises, in a run's check, while it watches the steps of a run, or
    judging a replay, is switched off for the rest of the run (``Fuzzer.drop_oracle``):
    the worker's target stops calling it and replays leave it out.
    """

    def __init__(self, chain: TestChain, settings: WorkerSettings, oracles: Sequence[Oracle],
                 events: Events, policy: PolicyFactory | None = None,
                 functions: Sequence[FunctionSpec] | None = None,
                 senders: Sequence[int] | None = None, block_steps: bool = True) -> None:
        self.chain = chain
        self.settings = settings
        config = settings.fuzz
        directed = bool(settings.target_pcs)
        # Eager sequences (Harvey's configuration D) identify paths over all transactions.
        # A prefix is stored at its second miss: most structural mutants have a new prefix
        # that never comes back, and storing one costs about a transaction
        # (bench/prefix_cache.py).
        cache = (PrefixCache(max_bytes=int(settings.prefix_cache_mb * 1e6), admit_after=2)
                 if settings.prefix_cache and config.sequences != "off" else None)
        needed = recordings(oracles) | ({"transitions"} if directed else set())
        # Oracles that look at the state after every transaction (properties).
        watchers = [o for o in oracles if isinstance(o, StepObserver) and o.watches_steps()]
        self.target = ContractTarget(chain, needed,
                                     path_scope="all" if config.sequences == "eager"
                                     else "last", prefix_cache=cache,
                                     step_observers=watchers, resume=settings.prefix_cache)
        if functions is None:
            specs, self.notes = function_specs(chain)
        else:
            specs, self.notes = list(functions), []
        if not specs and not watchers:
            main = chain.main.name if chain.main else "the contract"
            raise SecantError(f"{main} has no function to fuzz (only getters, properties or "
                              "unsupported parameter types)",
                              "pick another contract with --contract")
        if not specs:
            self.notes.append("nothing to call: the properties were evaluated on the deployed "
                              "state only")
        self.codes = target_codes(chain)
        # A harness (properties to watch) or a Foundry test contract calls its own
        # functions only, as Echidna, Medusa and forge do: no answering attacker there.
        harness = bool(watchers) or any(isinstance(o, FuzzTestOracle) and o.tests
                                        for o in oracles)
        answering = None if harness else answering_attacker(chain, specs, self.codes)
        if answering is not None:
            setter = answer_spec(answering)
            if setter not in specs:  # a caller may have given it already
                specs = [*specs, setter]
        # An invariant suite: a property must hold after every transaction. Optimization
        # targets alone are searched by the rounds' prediction, which long random
        # sequences would dilute.
        stateful = any(o.holds_invariants() for o in watchers)
        self.space = input_space(chain, specs, self.codes, senders, block_steps,
                                 stateful=stateful)
        self.directed: DirectedDistance | None = None
        if directed:
            from secant.campaign.directed import DirectedDistance
            assert chain.main is not None
            self.directed = DirectedDistance(chain.code_at(chain.main.address), chain.fork,
                                             settings.target_pcs)
        if cache is not None:
            events.add(_PrefixHints(cache))
        self.events = events
        config = block_delays(config, bool(watchers))
        chosen = (policy or harvey)(self._policy_context(oracles))
        self.fuzzer = Fuzzer(self.target.run, chosen, config,
                             oracles=oracles, post=self.target, events=events,
                             distance=self.directed)
        self._oracles = list(oracles)  # all of them, those switched off too
        self.target.observer_failed = self._observer_failed
        events.add(_OraclesOff(self))
        # The arbitrary-storage-write oracle watches the slot Harvey's write cost aims at.
        for oracle in oracles:
            oracle.use_target_slot(self.fuzzer.sstore_target)
        # Copies of the oracles before any run: replays (shrinking) judge each case with
        # fresh copies of these, as if it were the campaign's first run, and leave the
        # oracles of the campaign (what they reported, what they count) alone.
        self._pristine = [oracle.fresh() for oracle in oracles]
        self._replay_target: ContractTarget | None = None

    # ------------------------------------------------------------------ switched off
    def _is_on(self, oracle: Oracle) -> bool:
        """Whether ``oracle`` (one of this worker's) is not switched off."""
        return any(oracle is on for on in self.fuzzer.oracles)

    def _original(self, observer: object) -> Oracle:
        """The oracle that is ``observer`` (a step observer of the worker's target)."""
        return next(oracle for oracle in self._oracles if oracle is observer)

    def _observer_failed(self, observer: object, error: Exception) -> None:
        """An oracle raised while it watched a run's steps: off (the run counts)."""
        self.fuzzer.drop_oracle(self._original(observer), error,
                                execs=self.fuzzer.stats.execs + 1)

    def sync_observers(self) -> None:
        """The target's step observers: only the oracles still on."""
        target = self.target
        target.step_observers = [o for o in target.step_observers if self._is_on(
            self._original(o))]

    def _policy_context(self, oracles: Sequence[Oracle]) -> PolicyContext:
        """What this worker offers the policy it builds (``secant.engine.policy``)."""
        main = self.chain.main
        by_address = {contract.address: (code_hash, runtime)
                      for code_hash, (contract, runtime) in self.codes.items()}
        function_codes: dict[int | None, tuple[bytes, bytes]] = {}
        for spec in self.space.functions:
            address = spec.to if spec.to is not None else (main.address if main else None)
            if address is not None and address in by_address:
                function_codes[spec.to] = by_address[address]
        targets = [main.address] if main else []
        targets += [contract.address for contract in self.chain.contracts
                    if contract.role != "attacker" and contract.address not in targets]
        return PolicyContext(self.space, self._symbolic_tracer, self._worth_solving(),
                             function_codes, list(by_address.values()), self.chain.fork,
                             main.name if main else "", targets, self._refusals(oracles))

    def _symbolic_tracer(self, cached: bool) -> SymbolicTracer:
        """Symbolic replays of cases, on a target of their own.

        ``cached``: for a policy that extends one state at a time (ILF's expert), the
        replays share a prefix cache that admits at the first miss, so a state's prefix
        runs once, symbolically, however many next transactions are tried from it.
        """
        tracer = ContractTarget(
            self.chain, frozenset({"symbolic"}),
            path_scope="last" if cached else self.target.path_scope,
            prefix_cache=PrefixCache(max_entries=64, admit_after=1) if cached else None)

        def trace(case: TxSeq) -> tuple[RunResult, SymbolicRun | None]:
            result = tracer.run(case)
            return result, symbolic_of(result, tracer)

        return trace

    def _worth_solving(self) -> Callable[[tuple[bytes, int, bool]], bool]:
        """Whether a branch side is a condition of the source (``why_unflippable``)."""
        from secant.report.coverage import CodeCoverage
        from secant.report.frontier import why_unflippable

        known: dict[tuple[bytes, int], bool] = {}
        codes: dict[bytes, CodeCoverage] = {}

        def worth(side: tuple[bytes, int, bool]) -> bool:
            code_hash, pc, _ = side
            answer = known.get((code_hash, pc))
            if answer is None:
                code = codes.get(code_hash)
                if code is None and code_hash in self.codes:
                    contract, runtime = self.codes[code_hash]
                    mapper = (contract.compilation.mapper(contract.compiled)
                              if contract.compiled is not None
                              and contract.compilation is not None else None)
                    code = codes[code_hash] = CodeCoverage(
                        contract.name, code_hash, analyze(runtime, code_hash, self.chain.fork),
                        mapper, frozenset(), frozenset())
                answer = known[(code_hash, pc)] = (code is None
                                                   or why_unflippable(code, pc) is None)
            return answer

        return worth

    def _refusals(self, oracles: Sequence[Oracle]) -> Callable[[tuple[bytes, int, bool]], bool]:
        """Whether a branch side only refuses the transaction (``secant.evm.refusals``).

        A revert is a finding, not a refusal, where the campaign reports it: a Panic with a
        code the assertion oracle reports, any revert of a fuzz test's call (or of a
        handler's, under ``fail_on_revert``), and any revert on a branch a property's call
        ran (the property then fails).
        """
        from secant.evm.cfg import ControlFlowGraph
        from secant.evm.refusals import refuses

        if any(isinstance(o, FuzzTestOracle) and (o.tests or o.handlers) for o in oracles):
            return lambda side: False
        reported: set[int] = set()
        for oracle in oracles:
            if isinstance(oracle, AssertionOracle):
                reported |= oracle.panic_codes
        objectives = [o.objective_sites for o in oracles if isinstance(o, PropertyOracle)]
        graphs: dict[bytes, ControlFlowGraph] = {}
        known: dict[tuple[bytes, int, bool], bool] = {}

        def refusal(side: tuple[bytes, int, bool]) -> bool:
            code_hash, pc, taken = side
            if any((code_hash, pc) in sites for sites in objectives):
                return False
            answer = known.get(side)
            if answer is None:
                graph = graphs.get(code_hash)
                if graph is None and code_hash in self.codes:
                    analysis = analyze(self.codes[code_hash][1], code_hash, self.chain.fork)
                    graph = graphs[code_hash] = ControlFlowGraph(analysis.blocks,
                                                                 analysis.jumpdests)
                answer = known[side] = (graph is not None
                                        and refuses(graph, pc, taken, reported))
            return answer

        return refusal

    def fuzz(self, execs: int | None = None) -> None:
        """Fuzz until the budget is spent, or for ``execs`` more executions at most."""
        self.fuzzer.fuzz(execs)

    def import_cases(self, cases: Iterable[TxSeq]) -> list[Seed]:
        """Re-execute cases found elsewhere; return those that joined this corpus."""
        return self.fuzzer.import_cases(cases)

    # ------------------------------------------------------------------ replays
    def replay(self, case: TxSeq) -> dict[tuple[Any, ...], Finding]:
        """The findings ``case`` shows when run alone, by key (each with its case).

        The case runs on a target of its own (the campaign's prefix cache and counters are
        not touched) and is judged by fresh copies of the oracles, so the campaign's
        corpus, coverage, findings and counters stay as they are, and a finding the
        campaign already reported shows again. Oracles switched off are left out; one that
        raises here is switched off too (recorded as during a replay).
        """
        # (the campaign's oracle, the copy that judges this replay)
        judges = [(original, pristine.fresh())
                  for original, pristine in zip(self._oracles, self._pristine, strict=True)
                  if self._is_on(original)]
        oracles = [copy for _, copy in judges]
        target = self._replay_target
        if target is None:
            # A prefix restored from a cache is not observed again, and every replay's
            # observers are new: with properties to watch, every case runs in full.
            cache = None if any(o.watches_steps() for o in oracles) else PrefixCache()
            target = self._replay_target = ContractTarget(
                self.chain, self.target.recordings, path_scope=self.target.path_scope,
                prefix_cache=cache, resume=cache is not None)
        target.step_observers = [o for o in oracles
                                 if isinstance(o, StepObserver) and o.watches_steps()]

        def failed(observer: object, error: Exception) -> None:
            original = next(orig for orig, copy in judges if copy is observer)
            self.fuzzer.drop_oracle(original, error, during="replay")

        target.observer_failed = failed
        result = target.run(case)
        shown: dict[tuple[Any, ...], Finding] = {}
        for original, oracle in judges:
            if not self._is_on(original):
                continue  # it raised while watching this replay's steps
            try:
                found = oracle.check(result, target)
            except Exception as exc:  # the oracle's bug: the replay goes on without it
                self.fuzzer.drop_oracle(original, exc, during="replay")
                continue
            for finding in found:
                shown.setdefault(finding.key, claim(finding, oracle, result))
        return shown

    def finding_keys(self, case: TxSeq) -> dict[tuple[Any, ...], TxSeq | None]:
        """The keys of the findings ``case`` shows (``replay``), with the case each names.

        The shrinker's runner: a property's finding names the prefix after which it
        failed, which is where its case can end.
        """
        return {key: finding.case for key, finding in self.replay(case).items()}

    def shrink_space(self) -> ShrinkSpace:
        """What the shrinker may put in a case (``secant.engine.shrink.ShrinkSpace``).

        This worker's functions and senders, and the accounts and contracts the chain names.
        """
        return ShrinkSpace.of(self.space.functions, self.space.senders,
                              self.chain.names().values())

