"""The test chain a fuzzer runs on: accounts, attackers, deployed contracts, a base snapshot.

:class:`TestChain` owns a ``WorldState``, the sender accounts (deployer, trusted users,
attackers; see :mod:`secant.chain.accounts`), the attacker contracts
(:mod:`secant.chain.attackers`), the block environment (:mod:`secant.chain.blockenv`) and an
:class:`~secant.chain.deploy.AddressBook` of every contract on it. Typical use::

    chain = TestChain.setup(compilation, contract=None, args=None)   # deploy, then seal
    for function in chain.fuzzable_functions():
        ...
    result = chain.call("user1", chain.main, "set", [42])
    chain.advance(1, 12)
    chain.reset()          # back to the post-deployment state in O(changes)

``setup`` deploys the main contract (the named one, else ``Compilation.main_contract()``),
its libraries and whatever its constructor creates, then :meth:`TestChain.seal` takes the
base snapshot that :meth:`TestChain.reset` restores.

The chain keeps a log of how it was set up (its set-up transactions, the deployments and a
test contract's ``setUp()``, and the state changes made between them), so that
:meth:`TestChain.replay_setup` can run the set-up again on a state of its own under an
inspector, without touching the chain: the ``dataflow`` recording learns that way which
storage the constructors filled from block values (``secant.targets.contract``). Keeping
the log costs a redo diff of the few changes made between set-up transactions; running it
again is paid only by who asks.

Every transaction, view and static call (deployments included) runs with the Foundry/HEVM
cheatcodes of :mod:`secant.chain.cheatcodes` installed unless ``ChainConfig.cheatcodes`` is
off: their state changes are journaled like any other, and a block they change
(``vm.warp``) becomes the chain's block after a successful transaction, so ``reset`` undoes
both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from secant.abi import AbiFunction, RevertReason, decode_revert
from secant.chain.accounts import (
    DEFAULT_BALANCE,
    Role,
    Sender,
    default_senders,
    derived_address,
    find_sender,
)
from secant.chain.artifacts import ArtifactResolver
from secant.chain.attackers import (
    ATTACKER_ABI,
    DEFAULT_MAX_DEPTH,
    AttackerContract,
    AttackerKind,
    code_of,
    initial_storage,
)
from secant.chain.blockenv import BlockEnvironment, BlockSettings
from secant.chain.cheatcodes import HEVM_ADDRESS, Cheatcodes
from secant.chain.deploy import AddressBook, DeployedContract, Deployer
from secant.chain.errors import DeploymentFailed, UnknownFunction, UnsupportedCheatcode
from secant.compile.artifacts import Compilation, CompiledContract
from secant.compile.errors import UnknownContract
from secant.compile.loader import select_contract
from secant.evm.env import BlockEnv, WatchedEnv
from secant.evm.forks import CANCUN, Fork
from secant.evm.inspector import Inspector
from secant.evm.instructions.system import create_address
from secant.evm.interpreter import Evm
from secant.evm.state import Log, StateDiff, WorldState
from secant.evm.transaction import InvalidTransaction, Transaction, TxResult, apply_transaction

__all__ = ["CallReads", "CallResult", "ChainConfig", "SetupTransaction", "TestChain"]

_UNLIMITED = 1 << 32
_BROKEN = StateDiff()  # a set-up log that cannot rebuild the state (``_log_changes``)


@dataclass(frozen=True)
class ChainConfig:
    """How the chain is set up.

    ``users``/``attackers`` count the trusted and attacker senders besides the deployer
    (ILF's five accounts by default). ``include_read_only`` puts view/pure functions among
    the fuzzable ones (sFuzz leaves them out). ``gas_limit`` is per transaction (default:
    the block gas limit, capped by the fork). ``unlimited_code_size`` lifts the EIP-170 and
    EIP-3860 size limits, as Ganache's ``allowUnlimitedContractSize`` does. ``seed`` drives
    every generated constructor argument. ``cheatcodes`` installs the Foundry/HEVM
    cheatcodes (:mod:`secant.chain.cheatcodes`) for every call; ``assertions_revert`` is
    forge's setting of that name (False: a failing ``vm.assert*`` sets forge's failure flag
    instead of reverting). ``deployer`` is the deployer's address (None: secant's own).
    """

    fork: Fork = CANCUN
    users: int = 2
    attackers: int = 2
    balance: int = DEFAULT_BALANCE
    attacker_contracts: bool = True
    max_reentrancy_depth: int = DEFAULT_MAX_DEPTH
    include_read_only: bool = False
    seed: int = 0
    block: BlockSettings = field(default_factory=BlockSettings)
    gas_limit: int | None = None
    unlimited_code_size: bool = False
    cheatcodes: bool = True
    assertions_revert: bool = True
    deployer: int | None = None


SETUP_GAS = 1 << 30
"""The gas of a set-up transaction (a deployment, a test contract's ``setUp()``): forge's
default gas limit. A harness's constructor may deploy a whole system, more than a block's 30
million gas holds (Superform v2 periphery's CryticTester needs more); the fuzzed
transactions keep the block's limit."""


@dataclass(frozen=True, slots=True)
class SetupTransaction:
    """One set-up transaction as it ran (``TestChain.replay_setup`` runs it again).

    ``env`` and ``fork`` are the block and the rules it ran under (a set-up transaction
    has its own gas limit, a test contract's deployment no size limits); ``success`` and
    ``gas_used`` how it ended, which a replay must match.
    """

    sender: int
    to: int | None
    data: bytes
    value: int
    gas_limit: int
    env: BlockEnv
    fork: Fork
    success: bool
    gas_used: int


@dataclass
class CallResult:
    """A transaction (or a view call) to a contract function, decoded.

    ``values`` are the decoded return values (None when the output does not decode);
    ``revert`` is the decoded revert reason when the call reverted.
    """

    success: bool
    reverted: bool
    output: bytes
    values: tuple[Any, ...] | None = None
    revert: RevertReason | None = None
    gas_used: int = 0
    logs: list[Log] = field(default_factory=list)
    error: str | None = None

    @property
    def value(self) -> Any:
        """The single return value (None when there is none or it did not decode)."""
        if not self.values:
            return None
        return self.values[0] if len(self.values) == 1 else self.values


@dataclass(slots=True)
class CallReads:
    """What read-only calls read of the chain (``TestChain.static_calls`` fills it in).

    ``accounts`` are the addresses whose code ran or whose balance, code or nonce was
    looked at, ``slots`` the (address, slot) pairs loaded or stored: EIP-2929's access
    sets of the calls, ``vm.load`` and ``vm.getNonce`` included. ``block`` says whether they
    read a block value, ``opaque`` whether they read state the chain does not journal (a
    cheatcode's label table). With the same values at those places, the same calls give
    the same results.
    """

    accounts: frozenset[int] = frozenset()
    slots: frozenset[tuple[int, int]] = frozenset()
    block: bool = False
    opaque: bool = False


Target = DeployedContract | str | int
"""A contract given as itself, its name (or ``source:Name``) or its address."""

SenderKey = Sender | str | int
"""A sender given as itself, its name (``user1``), its role (``attacker``) or its address."""


class TestChain:
    """A local chain shaped for fuzzing (see the module docstring)."""

    __test__ = False  # not a pytest test class despite the name

    def __init__(self, config: ChainConfig | None = None) -> None:
        self.config = config or ChainConfig()
        fork = self.config.fork
        if self.config.unlimited_code_size:
            fork = fork.derive(fork.name, max_code_size=_UNLIMITED,
                               max_initcode_size=_UNLIMITED)
        self.fork = fork
        self.seed = self.config.seed
        self.state = WorldState()
        self.blocks = BlockEnvironment(self.config.block)
        self.senders: tuple[Sender, ...] = default_senders(
            self.config.users, self.config.attackers, self.config.deployer)
        for sender in self.senders:
            self.state.set_account(sender.address, balance=self.config.balance)
        self.book = AddressBook()
        self.attacker_contracts: tuple[AttackerContract, ...] = ()
        if self.config.attacker_contracts:
            self.attacker_contracts = tuple(self._install_attacker(kind)
                                            for kind in AttackerKind)
        self.main: DeployedContract | None = None
        self.notes: list[str] = []
        self._deployer = Deployer(self)
        # Every compilation deployed from (``vm.getCode``/``vm.deployCode`` resolve in them)
        # and the ``vm.label`` names, by address.
        self.compilations: list[Compilation] = []
        self.labels: dict[int, str] = {}
        self.cheatcodes: Cheatcodes | None = None
        if self.config.cheatcodes:
            self.cheatcodes = Cheatcodes(
                ArtifactResolver(self.compilations, self._deployer.libraries), self.labels,
                assertions_revert=self.config.assertions_revert)
            # One byte of code, as forge puts there: Solidity checks that a contract it calls
            # without expecting return data has code (vm.warp(...) would revert otherwise).
            self.state.set_account(HEVM_ADDRESS, code=b"\x00")
        self._base: int | None = None
        self._base_env: BlockEnv = self.blocks.current
        # Counts resets and seals: a target that left the chain in some state can tell
        # whether anyone reset it since (its journal positions then mean nothing).
        self.epoch = 0
        # Counts seals: what was learnt of the states that runs from the base reach (their
        # transactions decide them) holds until the base changes.
        self.seals = 0
        # How the chain was set up, in order (``replay_setup``): the state changes made
        # outside set-up transactions (accounts, funds, installed code), as redo diffs, and
        # the set-up transactions. ``_logged`` is the journal position the log reaches.
        self._setup_log: list[StateDiff | SetupTransaction] = []
        self._logged = 0

    # ------------------------------------------------------------------ setup
    @classmethod
    def setup(cls, compilations: Compilation | Sequence[Compilation],
              contract: str | None = None, args: Sequence[Any] | None = None,
              value: int = 0, config: ChainConfig | None = None,
              also: Sequence[str] = ()) -> TestChain:
        """Create a chain, deploy the main contract (and ``also`` these others), seal it."""
        chain = cls(config)
        chain.deploy(compilations, contract, args, value)
        for name in also:
            chain.deploy(compilations, name, main=False)
        chain.seal()
        return chain

    def deploy(self, compilations: Compilation | Sequence[Compilation],
               contract: str | CompiledContract | None = None,
               args: Sequence[Any] | None = None, value: int = 0,
               main: bool = True) -> DeployedContract:
        """Deploy a contract of the input; ``main`` makes it the fuzzing target.

        ``contract`` names it (``Name`` or ``source:Name``); None picks the main contract.
        ``args`` are constructor arguments as Python values or strings parsed per ABI type;
        None generates them from the seed (a note in :attr:`notes` says so).
        """
        group = [compilations] if isinstance(compilations, Compilation) else compilations
        for each in group:
            if not any(each is known for known in self.compilations):
                self.compilations.append(each)
        compilation, chosen = self._select(compilations, contract)
        deployed = self._deployer.deploy(compilation, chosen, args, value,
                                         role="main" if main else "deployed")
        self.notes.extend(deployed.notes)
        self.notes.extend(self._deployer.deploy_parameter_contracts(compilation, chosen))
        if main:
            self.main = deployed
        return deployed

    @staticmethod
    def _select(compilations: Compilation | Sequence[Compilation],
                contract: str | CompiledContract | None
                ) -> tuple[Compilation, CompiledContract]:
        group = [compilations] if isinstance(compilations, Compilation) else list(compilations)
        if isinstance(contract, CompiledContract):
            owner = next((c for c in group if contract in c.contracts), None)
            if owner is None:
                raise UnknownContract(f"{contract.name} is not part of the given input",
                                      "pass the compilation that holds it")
            return owner, contract
        return select_contract(group, contract)

    def _install_attacker(self, kind: AttackerKind) -> AttackerContract:
        name = f"{kind.value.capitalize()}Attacker"
        address = derived_address(f"attacker contract {kind.value}")
        self.state.set_account(address, nonce=1, balance=self.config.balance,
                               code=code_of(kind),
                               storage=initial_storage(kind, self.config.max_reentrancy_depth))
        self.book.add(DeployedContract(name, address, ATTACKER_ABI, "attacker"))
        return AttackerContract(kind, address, name)

    def seal(self) -> None:
        """Make the current state the base that :meth:`reset` restores (drops the journal)."""
        # The set-up log must not lose what the journal alone still knows.
        self._log_changes()
        self._logged = 0
        self.state.forget_history()
        self._base = self.state.snapshot()
        self._base_env = self.blocks.current
        self.epoch += 1
        self.seals += 1

    def reset(self) -> None:
        """Restore the sealed post-deployment state and block (cost: the changes since)."""
        if self._base is None:
            self.seal()
        assert self._base is not None
        self.state.revert(self._base)
        self.blocks.reset(self._base_env)
        self.epoch += 1

    @property
    def base_snapshot(self) -> int:
        """The journal position of the sealed post-deployment state (``reset`` goes back there)."""
        if self._base is None:
            self.seal()
        assert self._base is not None
        return self._base

    # ------------------------------------------------------------------ ChainContext
    @property
    def deployer(self) -> Sender:
        """The account that deploys the contracts (the first sender)."""
        return self.senders[0]

    @property
    def users(self) -> tuple[Sender, ...]:
        """The trusted users other than the deployer."""
        return tuple(s for s in self.senders if s.role is Role.USER)

    @property
    def attackers(self) -> tuple[Sender, ...]:
        """The attacker accounts (externally owned)."""
        return tuple(s for s in self.senders if s.role is Role.ATTACKER)

    def names(self) -> dict[str, int]:
        """Every sender, contract and attacker name mapped to its address."""
        names = {s.name: s.address for s in self.senders}
        names.update(self.book.names())
        return names

    def install(self, address: int, code: bytes, balance: int = 0) -> None:
        """Put runtime ``code`` at ``address`` (nonce 1, as after a creation)."""
        self.state.set_account(address, nonce=1, balance=balance, code=code)
        if balance:
            self.state.add_balance(self.deployer.address, -balance)

    def next_create_address(self, sender: int) -> int:
        """Return the address ``sender``'s next CREATE would use, and consume that nonce."""
        address = create_address(sender, self.state.nonce(sender))
        self.state.increment_nonce(sender)
        return address

    @contextmanager
    def without_size_limits(self) -> Iterator[None]:
        """Lift the EIP-170/3860 size limits for what runs inside.

        forge deploys its test contracts this way: a test contract may be larger than any
        deployable contract.
        """
        fork = self.fork
        self.fork = fork.derive(fork.name, max_code_size=_UNLIMITED,
                                max_initcode_size=_UNLIMITED)
        try:
            yield
        finally:
            self.fork = fork

    def code_at(self, address: int) -> bytes:
        """The code at ``address``."""
        return self.state.code(address)

    def transact_setup(self, sender: int, to: int | None, data: bytes, value: int = 0,
                       inspector: Inspector | None = None) -> TxResult:
        """A set-up transaction (a deployment, ``setUp()``) with :data:`SETUP_GAS`.

        The block's gas limit is raised to it for that transaction only (the fork's cap on a
        transaction's gas, where there is one, still holds).
        """
        cap = self.fork.tx_gas_limit_cap
        gas = min(SETUP_GAS, cap) if cap else SETUP_GAS
        limit = self.blocks.current.gas_limit
        self.blocks.current = replace(self.blocks.current, gas_limit=max(limit, gas))
        try:
            self._log_changes()
            env, fork = self.env, self.fork
            result = self.transact(sender, to, data, value, gas_limit=gas, inspector=inspector)
            self._setup_log.append(SetupTransaction(sender, to, data, value, gas, env, fork,
                                                    result.success, result.gas_used))
            self._logged = self.state.snapshot()
            return result
        finally:
            self.blocks.current = replace(self.blocks.current, gas_limit=limit)

    def transact_raw(self, sender: int, to: int | None, data: bytes, value: int,
                     inspector: Inspector | None = None) -> TxResult:
        """Run a deployment transaction; an invalid one raises ``DeploymentFailed``."""
        try:
            return self.transact_setup(sender, to, data, value, inspector=inspector)
        except InvalidTransaction as exc:
            hint = ("pass --unlimited-code-size (ChainConfig.unlimited_code_size)"
                    if "large" in str(exc)
                    else "check the deployment value and the chain's gas limit")
            raise DeploymentFailed(f"the deployment transaction is invalid: {exc}",
                                   hint) from None

    def _log_changes(self) -> None:
        """Add the state changes made since the log's last entry to the set-up log.

        A journal shorter than the log's position (reverted below it: no set-up does that)
        leaves the log without a way to rebuild the state: it is dropped, and
        ``replay_setup`` says so.
        """
        logged, now = self._logged, self.state.snapshot()
        if logged > now:
            self._setup_log = [_BROKEN]
        elif now > logged:
            diff = self.state.changes_since(logged)
            if diff:
                self._setup_log.append(diff)
        self._logged = now

    @property
    def setup_transactions(self) -> int:
        """How many set-up transactions the chain ran (deployments, ``setUp()``)."""
        return sum(isinstance(step, SetupTransaction) for step in self._setup_log)

    def replay_setup(self, inspector: Inspector, begin: Callable[[int], object]) -> bool:
        """Run the chain's set-up again on a state of its own, watched by ``inspector``.

        The state starts empty and takes the logged changes and transactions in order, so
        each transaction runs on the state it ran on first (under fresh cheatcodes, as on a
        fresh chain); ``begin(i)`` is called before the i-th transaction. The chain, its
        state, block and cheatcodes are not touched. True when every transaction ended as
        it did (same success, same gas); False, and the rest not run, at the first that did
        not, or when the log cannot rebuild the state.
        """
        state = WorldState()
        cheats = None
        if self.config.cheatcodes:
            cheats = Cheatcodes(ArtifactResolver(self.compilations, self._deployer.libraries),
                                {}, assertions_revert=self.config.assertions_revert)
        index = 0
        for step in self._setup_log:
            if step is _BROKEN:
                return False
            if isinstance(step, StateDiff):
                state.apply(step)
                continue
            begin(index)
            index += 1
            tx = Transaction(sender=step.sender, to=step.to, nonce=state.nonce(step.sender),
                             gas_limit=step.gas_limit, value=step.value, data=step.data,
                             gas_price=step.env.base_fee)
            if cheats is not None:
                cheats.begin_transaction()
            try:
                done = apply_transaction(state, step.env, tx, step.fork, inspector, cheats)
            except (InvalidTransaction, UnsupportedCheatcode):
                return False
            if done.success != step.success or done.gas_used != step.gas_used:
                return False
        return True

    # ------------------------------------------------------------------ lookups
    @property
    def env(self) -> BlockEnv:
        """The current block."""
        return self.blocks.current

    def advance(self, number_delta: int = 1, time_delta: int = 12) -> BlockEnv:
        """Move the block on by fuzzable deltas (see ``BlockEnvironment.advance``)."""
        return self.blocks.advance(number_delta, time_delta)

    def sender(self, key: SenderKey) -> Sender:
        """Return a sender by itself, name, role or address (``KeyError`` if unknown)."""
        return find_sender(self.senders, key)

    def contract(self, key: Target) -> DeployedContract:
        """Return a deployed contract by name, ``source:Name`` or address."""
        if isinstance(key, DeployedContract):
            return key
        found = self.book.get(key)
        if found is None:
            known = ", ".join(c.name for c in self.book) or "none"
            shown = f"0x{key:040x}" if isinstance(key, int) else repr(key)
            raise UnknownContract(f"no deployed contract {shown} (deployed: {known})",
                                  "use one of the deployed names")
        return found

    def at(self, address: int) -> DeployedContract | None:
        """Return the contract at ``address``, or None."""
        return self.book.at(address)

    @property
    def contracts(self) -> list[DeployedContract]:
        """Every contract on the chain (attackers and libraries included)."""
        return list(self.book)

    def attacker(self, key: AttackerContract | AttackerKind | str) -> AttackerContract:
        """Return an attacker contract by itself, kind (``reentrancy``) or name."""
        if isinstance(key, AttackerContract):
            return key
        for attacker in self.attacker_contracts:
            if key in (attacker.kind, attacker.kind.value, attacker.name):
                return attacker
        raise KeyError(f"no attacker contract {key!r}")

    def balance(self, who: SenderKey | DeployedContract | AttackerContract) -> int:
        """The balance of a sender, contract or address."""
        if isinstance(who, DeployedContract | AttackerContract):
            return self.state.balance(who.address)
        if isinstance(who, int) and self.book.at(who) is not None:
            return self.state.balance(who)
        try:
            return self.state.balance(self.sender(who).address)
        except KeyError:
            if isinstance(who, Sender):
                raise
            if isinstance(who, int):
                return self.state.balance(who)
            return self.state.balance(self.contract(who).address)

    def fuzzable_functions(self, contract: Target | None = None,
                           include_read_only: bool | None = None) -> list[AbiFunction]:
        """Functions of ``contract`` (default: the main one) a fuzzer should call.

        View and pure functions are left out unless ``include_read_only`` (or the config)
        says otherwise; fallback/receive come last when the ABI has them.
        """
        target = self.contract(contract) if contract is not None else self.main
        if target is None:
            raise UnknownContract("no main contract is deployed",
                                  "deploy a contract before asking for its functions")
        include = (self.config.include_read_only if include_read_only is None
                   else include_read_only)
        return target.functions(include)

    # ------------------------------------------------------------------ transactions
    def _gas_limit(self) -> int:
        if self.config.gas_limit is not None:
            return self.config.gas_limit
        cap = self.fork.tx_gas_limit_cap
        return min(self.env.gas_limit, cap) if cap else self.env.gas_limit

    def transact(self, sender: SenderKey, to: int | None, data: bytes, value: int = 0,
                 gas_limit: int | None = None, inspector: Inspector | None = None) -> TxResult:
        """Run one transaction in the current block; raise ``InvalidTransaction`` if invalid.

        ``sender`` may also be any funded address; the gas price is the block's base fee.
        """
        address = sender if isinstance(sender, int) else self.sender(sender).address
        tx = Transaction(sender=address, to=to, nonce=self.state.nonce(address),
                         gas_limit=gas_limit or self._gas_limit(), value=value, data=data,
                         gas_price=self.env.base_fee)
        cheats = self.cheatcodes
        if cheats is None:
            return apply_transaction(self.state, self.env, tx, self.fork, inspector)
        cheats.begin_transaction()
        snapshot = self.state.snapshot()
        try:
            result = apply_transaction(self.state, self.env, tx, self.fork, inspector, cheats)
        except UnsupportedCheatcode:
            self.state.revert(snapshot)  # the transaction stopped halfway: leave no trace
            raise
        if cheats.env is not None and result.success:
            # A block changed by vm.warp & co. carries on, as a reverted one does not.
            self.blocks.current = cheats.env
        return result

    def _function(self, target: DeployedContract, function: str | AbiFunction) -> AbiFunction:
        if isinstance(function, AbiFunction):
            return function
        if function in ("fallback", "receive"):
            special = target.abi.fallback if function == "fallback" else target.abi.receive
            if special is not None:
                return special
        try:
            return target.abi.function(function)
        except KeyError as exc:
            raise UnknownFunction(f"{target.name}: {exc.args[0]}",
                                  "use a function name or signature from its ABI") from None

    @staticmethod
    def _calldata(function: AbiFunction, args: Sequence[Any]) -> bytes:
        if function.kind != "function":
            return b""
        return function.encode_call(list(args))

    def _decode(self, target: DeployedContract, function: AbiFunction, success: bool,
                reverted: bool, output: bytes, gas_used: int, logs: list[Log],
                error: str | None) -> CallResult:
        result = CallResult(success, reverted, output, gas_used=gas_used, logs=logs,
                            error=error)
        if success:
            try:
                result.values = function.decode_output(output) if function.outputs else ()
            except Exception:  # eth-abi decoding errors: output does not match the ABI
                result.values = None
        elif reverted:
            errors = [*target.abi.errors, *(e for c in self.book for e in c.abi.errors)]
            result.revert = decode_revert(output, errors)
        return result

    def call(self, sender: SenderKey, contract: Target, function: str | AbiFunction,
             args: Sequence[Any] = (), value: int = 0) -> CallResult:
        """Send a transaction calling ``function(*args)`` on ``contract``; decode the outcome.

        ``function`` is a name, a signature, ``fallback``/``receive`` or an ``AbiFunction``.
        State changes persist until :meth:`reset`.
        """
        target = self.contract(contract)
        fn = self._function(target, function)
        tx = self.transact(sender, target.address, self._calldata(fn, args), value)
        return self._decode(target, fn, tx.success, tx.reverted, tx.output, tx.gas_used,
                            tx.logs, tx.error)

    def view(self, contract: Target, function: str | AbiFunction, args: Sequence[Any] = (),
             sender: SenderKey | None = None) -> CallResult:
        """Call ``function`` without a transaction and without changing any state."""
        target = self.contract(contract)
        fn = self._function(target, function)
        caller = self.deployer.address if sender is None else (
            sender if isinstance(sender, int) else self.sender(sender).address)
        done = self.static_call(caller, target.address, self._calldata(fn, args))
        return self._decode(target, fn, done.success, done.reverted, done.output,
                            done.gas_used, [], done.error)

    def static_call(self, caller: int, to: int, data: bytes,
                    inspector: Inspector | None = None) -> CallResult:
        """Run a message call from ``caller`` on the current state, then undo everything.

        No transaction: no nonce, no fee, no block change (not even by ``vm.warp``). The
        result is not decoded. ``inspector`` watches the call as it would a transaction.
        """
        return self.static_calls(caller, [(to, data)], inspector)[0]

    def static_calls(self, caller: int, calls: Sequence[tuple[int, bytes]],
                     inspector: Inspector | None = None,
                     reads: CallReads | None = None) -> list[CallResult]:
        """Several message calls in a row, then undo everything.

        Each call sees what the ones before it did; :meth:`static_call` is the one-call case.
        ``reads``, when given, is filled in with what the calls read (``CallReads``).
        """
        snapshot = self.state.snapshot()
        tx = self.state.begin_transaction()
        cheats = self.cheatcodes
        opaque = 0
        if cheats is not None:
            cheats.begin_transaction()
            opaque = cheats.opaque_reads
        results = []
        try:
            watched = None if reads is None else WatchedEnv.of(self.env)
            evm = Evm(self.state, self.env if watched is None else watched, self.fork,
                      inspector, cheats)
            if watched is not None:
                watched.read = False  # the EVM's own set-up (the blob base fee) is no read
            evm.origin = caller
            for to, data in calls:
                gas = self._gas_limit()
                message = evm.call(caller, to, data, gas)
                results.append(CallResult(message.success, message.reverted, message.output,
                                          gas_used=gas - message.gas_left,
                                          error=message.error))
            if reads is not None:
                # Before the revert: it also undoes the access sets (they are journaled).
                reads.accounts = frozenset(tx.warm_addresses)
                reads.slots = frozenset(tx.warm_slots)
                reads.block = watched is not None and watched.read
                reads.opaque = cheats is not None and cheats.opaque_reads != opaque
        finally:
            self.state.revert(snapshot)
        return results

    def attack(self, attacker: AttackerContract | AttackerKind | str, contract: Target,
               function: str | AbiFunction, args: Sequence[Any] = (), value: int = 0,
               sender: SenderKey | None = None) -> CallResult:
        """Make an attacker contract call ``function(*args)`` on ``contract`` with ``value``.

        The transaction goes from ``sender`` (default: the first attacker account, else the
        deployer) to the attacker's ``attack``; the attacker pays ``value`` from its own
        balance. The result is decoded as the target function's.
        """
        chosen = self.attacker(attacker)
        target = self.contract(contract)
        fn = self._function(target, function)
        origin = sender if sender is not None else (
            self.attackers[0] if self.attackers else self.deployer)
        data = chosen.calldata(target.address, self._calldata(fn, args), value)
        tx = self.transact(origin, chosen.address, data)
        return self._decode(target, fn, tx.success, tx.reverted, tx.output, tx.gas_used,
                            tx.logs, tx.error)
