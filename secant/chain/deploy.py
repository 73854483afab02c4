"""Deployment: libraries first, then the contract with its constructor arguments.

:class:`Deployer` puts one compiled contract on a chain (anything that satisfies
:class:`ChainContext`, in practice :class:`~secant.chain.chain.TestChain`):

1. every library the code links against is deployed first (recursively, once per chain)
   and its address filled into the placeholders (``Bytecode.link``);
2. constructor arguments are parsed from strings per ABI type, taken as Python values, or,
   when none are given, generated deterministically from the seed (and a note says so);
   a ``contract X`` parameter gets a deployed ``X`` (deployed on demand when the input
   defines it), any other address a trusted sender;
3. the creation transaction runs from the deployer; a revert becomes
   :class:`~secant.chain.errors.ConstructorReverted` with the decoded reason, a failed
   assertion (a panic of :data:`CONSTRUCTOR_PANICS`, INVALID) :class:`ConstructorPanicked`
   with the check's place in the creation code, code over the size limit
   :class:`CodeSizeExceeded`; generated arguments a constructor refuses are replaced by
   other generated sets (``Deployer._other_arguments``), and a payable constructor that
   refuses to run without ether is given some (``Deployer._with_ether``);
4. contracts the constructor itself created are recognised by their runtime code and
   entered in the :class:`AddressBook` too, so every deployed contract stays callable.

Runtime-only inputs (bytecode + ABI of deployed code) are installed with
``WorldState.set_account`` at the deployer's next CREATE address.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from secant.abi import PANIC_CODES, Abi, AbiFunction, AbiParam, decode_revert
from secant.chain.accounts import Sender
from secant.chain.arguments import (
    ALTERNATIVE_SETS,
    AddressChooser,
    alternative_values,
    encode_arguments,
    format_value,
    generate_values,
    parse_values,
)
from secant.chain.errors import ConstructorReverted, DeploymentFailed
from secant.compile.artifacts import Bytecode, Compilation, CompiledContract
from secant.compile.srcmap import SourceLocation
from secant.evm.analysis import CodeAnalysis
from secant.evm.env import BlockEnv
from secant.evm.forks import CANCUN
from secant.evm.inspector import Inspector
from secant.evm.opcodes import CREATE, CREATE2, JUMP, JUMPI
from secant.evm.state import WorldState
from secant.evm.transaction import TxResult

__all__ = [
    "AddressBook",
    "ChainContext",
    "CONSTRUCTOR_PANICS",
    "CodeSizeExceeded",
    "ConstructorPanicked",
    "DeployedContract",
    "Deployer",
    "matches_runtime",
]

_CREATE_KINDS = (CREATE, CREATE2)

CONSTRUCTOR_ETHER = (10**18, 10**17, 10**16, 10 * 10**18, 100 * 10**18, 1)
"""Wei a payable constructor that reverts without ether is tried with, in order: one ether
first (the usual deposit), then smaller and larger round amounts, then one wei."""


class CodeSizeExceeded(DeploymentFailed):
    """A deployment failed only because the created code exceeds the size limit (EIP-170)."""


CONSTRUCTOR_PANICS = frozenset({0x00, 0x01, 0x22, 0x51})
"""Panic codes of a constructor that are a bug rather than a refusal of its arguments: a
failed ``assert`` (0x01), the generic compiler panic, a corrupt storage byte array, a call
of a zero function pointer. The checks solc inserts for inputs (overflow, division by zero,
an index out of bounds) are how a constructor says no, as a ``require`` is."""


class ConstructorPanicked(DeploymentFailed):
    """The constructor failed an assertion: a Solidity panic, or INVALID (solc < 0.8).

    ``panic_code`` is None for INVALID. ``pc`` is the failing check in the creation code
    (the last jump from user code before the panic, as the assertion oracle finds it in
    runtime code) and ``location`` its source; ``args_note`` names generated arguments.
    """

    def __init__(self, contract: CompiledContract, panic_code: int | None, pc: int,
                 location: SourceLocation | None, args_note: str = "") -> None:
        where = f" at {location.source}:{location.line}" if location is not None else ""
        super().__init__(
            f"the constructor of {contract.name} failed an assertion{where}: "
            f"{panic_description(panic_code)}{args_note}",
            "fix the constructor's assertion, or pass constructor arguments that satisfy it "
            "with --arg")
        self.contract = contract
        self.panic_code = panic_code
        self.pc = pc
        self.location = location
        self.args_note = args_note

    @property
    def detail(self) -> str:
        """What failed, in the words the assertion oracle uses for a transaction's panic."""
        return panic_description(self.panic_code)


def panic_description(code: int | None) -> str:
    """``Panic(0x01): assertion failed``, or INVALID's description for None."""
    if code is None:
        return "INVALID opcode reached (assert in solc < 0.8)"
    return f"Panic(0x{code:02x}): {PANIC_CODES.get(code, 'unknown panic code')}"


@dataclass(eq=False)
class DeployedContract:
    """A contract on the chain: where it lives and what it is.

    ``role`` is ``main`` (the fuzzing target), ``deployed`` (another contract deployed on
    request), ``dependency`` (deployed to fill a constructor's contract parameter),
    ``library``, ``created`` (made by a constructor) or ``attacker``. ``compiled`` and
    ``compilation`` are None for attackers and for created contracts whose code matches no
    compiled contract.
    """

    name: str
    address: int
    abi: Abi
    role: str
    compiled: CompiledContract | None = None
    compilation: Compilation | None = None
    args: tuple[Any, ...] = ()
    generated_args: bool = False
    notes: tuple[str, ...] = ()

    @property
    def hex(self) -> str:
        """The address as ``0x`` and 40 hex digits."""
        return f"0x{self.address:040x}"

    def locate(self, pc: int) -> SourceLocation | None:
        """Return the source location of ``pc`` in this contract's runtime code, if known."""
        if self.compiled is None or self.compilation is None:
            return None
        return self.compilation.locate(self.compiled, pc)

    def functions(self, include_read_only: bool = False) -> list[AbiFunction]:
        """Functions a fuzzer calls: view/pure ones only when asked; fallback/receive last."""
        chosen = [f for f in self.abi.functions if include_read_only or not f.read_only]
        chosen += [f for f in (self.abi.fallback, self.abi.receive) if f is not None]
        return chosen

    def __repr__(self) -> str:
        return f"DeployedContract({self.name!r}, {self.hex}, role={self.role!r})"


class AddressBook:
    """Every contract on the chain, by name (unique) and by address."""

    def __init__(self) -> None:
        self._by_name: dict[str, DeployedContract] = {}
        self._by_address: dict[int, DeployedContract] = {}

    def add(self, contract: DeployedContract) -> DeployedContract:
        """Enter ``contract``; a taken name gets a suffix (``Token#2``)."""
        base, count = contract.name, 1
        while contract.name in self._by_name:
            count += 1
            contract.name = f"{base}#{count}"
        self._by_name[contract.name] = contract
        self._by_address[contract.address] = contract
        return contract

    def get(self, key: str | int) -> DeployedContract | None:
        """Look up by name, qualified name ``source:Name``, address or hex address."""
        if isinstance(key, int):
            return self._by_address.get(key)
        if key in self._by_name:
            return self._by_name[key]
        for contract in self._by_name.values():
            if contract.compiled is not None and contract.compiled.qualified_name == key:
                return contract
        if key.lower().startswith("0x"):
            try:
                return self._by_address.get(int(key, 16))
            except ValueError:
                return None
        return None

    def at(self, address: int) -> DeployedContract | None:
        """Return the contract at ``address`` (None for accounts without a known contract)."""
        return self._by_address.get(address)

    def names(self) -> dict[str, int]:
        """Every name mapped to its address."""
        return {name: c.address for name, c in self._by_name.items()}

    def __iter__(self) -> Iterator[DeployedContract]:
        return iter(list(self._by_name.values()))

    def __len__(self) -> int:
        return len(self._by_name)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str | int) and self.get(key) is not None


class ChainContext(Protocol):
    """What deployment needs from a chain."""

    book: AddressBook
    seed: int
    state: WorldState

    @property
    def deployer(self) -> Sender:
        """The sender that deploys contracts."""

    @property
    def senders(self) -> tuple[Sender, ...]:
        """All sender accounts."""

    @property
    def env(self) -> BlockEnv:
        """The current block (its timestamp dates generated moments)."""

    def names(self) -> dict[str, int]:
        """Names usable as address arguments (senders, contracts, attackers)."""

    def install(self, address: int, code: bytes, balance: int = 0) -> None:
        """Put runtime code at ``address`` directly."""

    def next_create_address(self, sender: int) -> int:
        """The address of the next CREATE by ``sender`` (and consume its nonce)."""

    def transact_raw(self, sender: int, to: int | None, data: bytes, value: int,
                     inspector: Inspector | None = None) -> TxResult:
        """Run one transaction; raise DeploymentFailed if it is invalid."""

    def code_at(self, address: int) -> bytes:
        """The code at ``address``."""


class _CreationRecorder(Inspector):
    """Remembers every contract creation that succeeded during a transaction.

    And the blocks the creation itself ran, in order (``trail``): where a failing
    constructor's check is. Recorded without hooks (``branch_log``), as cheap as can be.
    """

    def __init__(self) -> None:
        self.created: list[int] = []
        self.trail: list[int] = []
        self.branch_log = []

    def on_message_end(self, kind: int, target: int, depth: int, success: bool,
                       reverted: bool, output: bytes, gas_left: int, error: str | None,
                       frame: Any) -> None:
        if kind in _CREATE_KINDS and success:
            self.created.append(target)
        if depth == 0 and frame is not None:
            self.trail = list(frame.trail)


def _masks(code: Bytecode) -> list[tuple[int, int]]:
    ranges = [r for ref in code.immutable_references for r in ref.ranges]
    ranges += [(offset, ref.length) for ref in code.link_references for offset in ref.offsets]
    return ranges


def matches_runtime(code: bytes, runtime: Bytecode) -> bool:
    """Whether deployed ``code`` is ``runtime`` (immutables and library addresses ignored)."""
    if runtime.empty or len(code) != runtime.size:
        return False
    expected = bytearray(runtime.analysis_bytes())
    actual = bytearray(code)
    for start, length in _masks(runtime):
        expected[start:start + length] = bytes(length)
        actual[start:start + length] = bytes(length)
    return expected == actual


def _describe_args(params: Sequence[AbiParam], values: Sequence[Any]) -> str:
    parts = [f"{p.name + '=' if p.name else ''}{format_value(v, p)}"
             for p, v in zip(params, values)]
    return "(" + ", ".join(parts) + ")"


def _leaf_params(params: Sequence[AbiParam]) -> Iterator[AbiParam]:
    """``params`` and the components of their tuples (structs), depth first."""
    for param in params:
        if param.type.startswith("tuple"):
            yield from _leaf_params(param.components)
        else:
            yield param


@dataclass
class Deployer:
    """Deploys compiled contracts onto a chain (see the module docstring)."""

    chain: ChainContext
    libraries: dict[str, int] = field(default_factory=dict)
    _pending: set[str] = field(default_factory=set)

    # ------------------------------------------------------------------ libraries
    def _library(self, compilation: Compilation, qualified: str, user: str) -> int:
        if qualified in self.libraries:
            return self.libraries[qualified]
        library_name = qualified.rsplit(":", 1)[-1]
        candidates = [c for c in compilation.contracts
                      if qualified in (c.qualified_name, c.name)]
        candidates = candidates or [c for c in compilation.contracts if c.name == library_name]
        library = next((c for c in candidates if not c.creation.empty or not c.runtime.empty),
                       None)
        if library is None:
            raise DeploymentFailed(
                f"{user} links against library {qualified}, which is not in the input",
                "compile the file that defines the library together with the contract")
        if qualified in self._pending:
            raise DeploymentFailed(f"libraries link against each other in a cycle ({qualified})",
                                   "break the cycle between the libraries")
        self._pending.add(qualified)
        try:
            address = self._create(compilation, library, [], 0, "library").address
        finally:
            self._pending.discard(qualified)
        self.libraries[qualified] = address
        self.libraries.setdefault(library.qualified_name, address)
        return address

    def _linked(self, compilation: Compilation, contract: CompiledContract,
                code: Bytecode) -> bytes:
        if not code.link_references:
            try:
                return code.to_bytes()
            except ValueError as exc:
                raise DeploymentFailed(f"the code of {contract.name} has unlinked library "
                                       f"placeholders ({exc})",
                                       "give code that is fully linked") from None
        addresses = {ref.qualified_name: self._library(compilation, ref.qualified_name,
                                                       contract.name)
                     for ref in code.link_references}
        return code.link(addresses)

    # ------------------------------------------------------------------ arguments
    def _choose_address(self, compilation: Compilation) -> AddressChooser:
        trusted = [s.address for s in self.chain.senders if s.trusted]

        def choose(param: AbiParam, rng: random.Random) -> int:
            internal = param.internal_type or ""
            if internal.startswith("contract "):
                wanted = internal.removeprefix("contract ").split("[")[0].strip()
                existing = self.chain.book.get(wanted)
                if existing is not None:
                    return existing.address
                candidate = next((c for c in compilation.deployable() if c.name == wanted), None)
                if candidate is not None and candidate.qualified_name not in self._pending:
                    return self.deploy(compilation, candidate, role="dependency").address
            return rng.choice(trusted)

        return choose

    def _arguments(self, compilation: Compilation, contract: CompiledContract,
                   args: Sequence[Any] | None) -> tuple[list[Any], bytes, str | None]:
        constructor = contract.abi.constructor
        params = constructor.inputs if constructor is not None else ()
        what = f"the constructor of {contract.name}"
        if args is None:
            if not params:
                return [], b"", None
            rng = random.Random(f"{self.chain.seed}:{contract.name}")
            values = generate_values(params, rng, self._choose_address(compilation),
                                     self.chain.env.timestamp)
            note = (f"no constructor arguments given for {contract.name}; generated "
                    f"{_describe_args(params, values)} from seed {self.chain.seed} "
                    "(pass --arg to choose them)")
            return values, encode_arguments(params, values, what), note
        values = parse_values(params, list(args), what, self.chain.names())
        return values, encode_arguments(params, values, what), None

    # ------------------------------------------------------------------ deployment
    def deploy_parameter_contracts(self, compilation: Compilation,
                                   contract: CompiledContract) -> list[str]:
        """An instance of each contract ``contract``'s functions declare a parameter as.

        ``relay(Target target, ...)`` names the contract it expects: a random address,
        a sender or ``contract`` itself would make every such call fail at its first use
        of the parameter. A contract of the same compilation with that name (concrete, not
        an interface: one whose code the input has) is deployed once, as a dependency,
        unless the chain has it already; its address is then among those the campaign's
        dictionary draws. Returns notes on what was deployed or could not be.
        """
        notes: list[str] = []
        wanted: dict[str, str] = {}
        for function in contract.abi.functions:
            for param in _leaf_params(function.inputs):
                internal = param.internal_type or ""
                if internal.startswith("contract "):
                    name = internal.removeprefix("contract ").split("[")[0].strip()
                    wanted.setdefault(name, f"{function.name}({param.name or param.type})")
        for name, used_by in wanted.items():
            if self.chain.book.get(name) is not None or name == contract.name:
                continue
            candidate = next((c for c in compilation.deployable() if c.name == name), None)
            if candidate is None or candidate.qualified_name in self._pending:
                continue
            try:
                self.deploy(compilation, candidate, role="dependency")
            except DeploymentFailed as exc:
                notes.append(f"no {name} deployed for {contract.name}.{used_by}: {exc}")
                continue
            notes.append(f"deployed a {name} for {contract.name}.{used_by}, whose parameter "
                         "is declared as one")
        return notes

    def deploy(self, compilation: Compilation, contract: CompiledContract,
               args: Sequence[Any] | None = None, value: int = 0,
               role: str = "main") -> DeployedContract:
        """Deploy ``contract`` (libraries first) and enter it and its creations in the book."""
        self._pending.add(contract.qualified_name)
        try:
            if contract.creation.empty:
                return self._install_runtime(compilation, contract, args, value, role)
            values, encoded, note = self._arguments(compilation, contract, args)
            constructor = contract.abi.constructor
            if value and constructor is not None and not constructor.payable:
                raise DeploymentFailed(
                    f"the constructor of {contract.name} is not payable but {value} wei "
                    "were to be sent", "deploy without a value")
            try:
                return self._attempt(compilation, contract, values, value, role, encoded, note)
            except (ConstructorReverted, ConstructorPanicked) as refused:
                if args is not None or constructor is None or not constructor.inputs:
                    raise
                return self._other_arguments(compilation, contract, values, value, role,
                                             refused)
        finally:
            self._pending.discard(contract.qualified_name)

    def _attempt(self, compilation: Compilation, contract: CompiledContract,
                 values: list[Any], value: int, role: str, encoded: bytes,
                 note: str | None) -> DeployedContract:
        """One argument set: the creation, then with ether when a payable one refuses."""
        constructor = contract.abi.constructor
        try:
            return self._create(compilation, contract, values, value, role, encoded, note)
        except ConstructorReverted as refused:
            if value or constructor is None or not constructor.payable:
                raise
            return self._with_ether(compilation, contract, values, role, encoded, note,
                                    refused)

    def _other_arguments(self, compilation: Compilation, contract: CompiledContract,
                         refused_values: list[Any], value: int, role: str,
                         refused: ConstructorReverted | ConstructorPanicked
                         ) -> DeployedContract:
        """A constructor that refused its generated arguments, given other generated sets.

        Why: a constructor that checks its arguments (``owners.length == shares.length``,
        ``secret <= 10``, distinct owners) refuses most random draws, and the contract is
        then never fuzzed. The sets (:func:`~secant.chain.arguments.alternative_values`) are
        drawn from the seed, each tried as the first was (with ether when payable); the
        first accepted is kept and named in the note. None accepted: the first refusal (a
        failed assertion stays one: every set was tried).
        """
        constructor = contract.abi.constructor
        assert constructor is not None
        params = constructor.inputs
        what = f"the constructor of {contract.name}"
        trusted = [s.address for s in self.chain.senders if s.trusted]
        for index in range(ALTERNATIVE_SETS):
            rng = random.Random(f"{self.chain.seed}:{contract.name}:other arguments {index}")
            values = alternative_values(params, rng, self._choose_address(compilation),
                                        trusted, index, self.chain.env.timestamp)
            note = (f"no constructor arguments given for {contract.name}; its constructor "
                    f"refused {_describe_args(params, refused_values)} (generated from seed "
                    f"{self.chain.seed}), deployed with {_describe_args(params, values)} "
                    "instead (pass --arg to choose them)")
            try:
                encoded = encode_arguments(params, values, what)
                return self._attempt(compilation, contract, values, value, role, encoded,
                                     note)
            except (ConstructorReverted, ConstructorPanicked):
                continue
        others = f" (and with {ALTERNATIVE_SETS} other generated argument sets)"
        if isinstance(refused, ConstructorPanicked):
            raise ConstructorPanicked(contract, refused.panic_code, refused.pc,
                                      refused.location, refused.args_note + others)
        raise ConstructorReverted(contract.name, refused.reason, refused.args_note + others)

    def _with_ether(self, compilation: Compilation, contract: CompiledContract,
                    values: list[Any], role: str, encoded: bytes, note: str | None,
                    refused: ConstructorReverted) -> DeployedContract:
        """A payable constructor that reverted without ether, run again with some.

        Why: a constructor that demands a deposit (``require(msg.value > 0)``) is common in
        the contracts people deploy, and the user gave no ``--value`` because nothing said
        it was needed. The amounts are tried in order; the first the constructor accepts is
        kept and named in a note. None accepted: the first refusal, saying so.
        """
        balance = self.chain.state.balance(self.chain.deployer.address)
        for amount in CONSTRUCTOR_ETHER:
            if amount > balance:
                continue
            try:
                deployed = self._create(compilation, contract, values, amount, role, encoded,
                                        note)
            except ConstructorReverted:
                continue
            deployed.notes += (f"the constructor of {contract.name} reverted without ether; "
                               f"deployed with {amount} wei (pass --value to choose the "
                               "amount)",)
            return deployed
        raise ConstructorReverted(contract.name, refused.reason,
                                  refused.args_note + " (also with ether: pass --value WEI "
                                  "with the amount it expects)")

    def _install_runtime(self, compilation: Compilation, contract: CompiledContract,
                         args: Sequence[Any] | None, value: int,
                         role: str) -> DeployedContract:
        code = self._linked(compilation, contract, contract.runtime)
        address = self.chain.next_create_address(self.chain.deployer.address)
        self.chain.install(address, code, value)
        notes: tuple[str, ...] = (
            f"{contract.name} is runtime code: installed at 0x{address:040x} without "
            "running a constructor",)
        if args:
            notes += (f"constructor arguments for {contract.name} were ignored "
                      "(runtime code has no constructor to run)",)
        deployed = DeployedContract(contract.name, address, contract.abi, role, contract,
                                    compilation, notes=notes)
        return self.chain.book.add(deployed)

    def _create(self, compilation: Compilation, contract: CompiledContract,
                values: list[Any], value: int, role: str, encoded: bytes = b"",
                note: str | None = None) -> DeployedContract:
        initcode = self._linked(compilation, contract, contract.creation) + encoded
        recorder = _CreationRecorder()
        sender = self.chain.deployer.address
        result = self.chain.transact_raw(sender, None, initcode, value, recorder)
        generated = note is not None
        constructor = contract.abi.constructor
        params = constructor.inputs if constructor is not None else ()
        shown = (f" (with generated arguments {_describe_args(params, values)})"
                 if generated else "")
        if result.reverted:
            errors = [*contract.abi.errors, *(e for c in self.chain.book for e in c.abi.errors)]
            reason = decode_revert(result.output, errors)
            if reason.kind == "panic" and reason.panic_code in CONSTRUCTOR_PANICS:
                raise self._panicked(compilation, contract, initcode, recorder.trail,
                                     reason.panic_code, shown)
            raise ConstructorReverted(contract.name, reason, shown)
        if result.error == "invalid opcode" and recorder.trail:
            raise self._panicked(compilation, contract, initcode, recorder.trail, None, shown)
        # ``error`` is checked too: a top-level creation that fails its code-size or deposit
        # check may come back with success set (interpreter quirk), but always with an error.
        if not result.success or result.error is not None or result.created_address is None:
            error = result.error or "unknown error"
            if "size limit" in error:
                raise CodeSizeExceeded(
                    f"deploying {contract.name} failed: {error}",
                    "pass --unlimited-code-size (ChainConfig.unlimited_code_size) or enable "
                    "the optimizer")
            raise DeploymentFailed(f"deploying {contract.name} failed: {error}",
                                   "check the constructor; it must finish within the block "
                                   "gas limit")
        deployed = DeployedContract(contract.name, result.created_address, contract.abi, role,
                                    contract, compilation, tuple(values), generated,
                                    (note,) if note else ())
        self.chain.book.add(deployed)
        self._register_created(compilation, recorder.created, result.created_address)
        return deployed

    @staticmethod
    def _panicked(compilation: Compilation, contract: CompiledContract, initcode: bytes,
                  trail: list[int], code: int | None, shown: str) -> ConstructorPanicked:
        """The panic of a constructor, at its check in user code.

        The check is the last block of the creation's trail that ends in a JUMP or JUMPI
        located in a user source (solc >= 0.8 panics in a shared generated routine; the
        jump into it is the check); else the last JUMPI, else the last block.
        """
        ends = {start: instructions[-1] for start, instructions
                in CodeAnalysis(initcode, b"", CANCUN).blocks if instructions}
        fallback: int | None = None
        for start in reversed(trail):
            end = ends.get(start)
            if end is None or end[1] not in (JUMP, JUMPI):
                continue
            location = compilation.locate(contract, end[0], runtime=False)
            if location is not None:
                return ConstructorPanicked(contract, code, end[0], location, shown)
            if end[1] == JUMPI and fallback is None:
                fallback = end[0]
        if fallback is None:
            fallback = trail[-1] if trail else 0
        return ConstructorPanicked(contract, code, fallback,
                                   compilation.locate(contract, fallback, runtime=False), shown)

    def _register_created(self, compilation: Compilation, created: list[int],
                          top: int) -> None:
        for address in created:
            if address == top or self.chain.book.at(address) is not None:
                continue
            code = self.chain.code_at(address)
            if not code:
                continue
            match = next((c for c in compilation.contracts
                          if matches_runtime(code, c.runtime)), None)
            if match is None:
                self.chain.book.add(DeployedContract(
                    f"created_{address:040x}"[:16], address, Abi.from_json([]), "created"))
            else:
                self.chain.book.add(DeployedContract(match.name, address, match.abi, "created",
                                                     match, compilation))

