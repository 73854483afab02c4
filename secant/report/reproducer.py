"""Foundry reproducers: each finding of a contract campaign as a forge test that fails.

:func:`write_reproducers` writes ``OUT/reproducers/<Main>.t.sol``: one forge-std test
contract per campaign whose ``setUp()`` rebuilds the chain the campaign fuzzed, and one
``test_*`` function per finding that replays its (shrunk) case and ends with the check the
finding's oracle made, so that the test FAILS while the bug is there and passes once it
is fixed:

* **chain**: the first block's number, timestamp, PREVRANDAO, coinbase and chain id
  (``vm.roll``, ``vm.warp``, ...); the contracts deployed from the deployer account at the
  very addresses secant used (``vm.setNonce`` and a pranked CREATE of
  ``type(C).creationCode`` with the same constructor arguments and value; a Foundry test
  contract then runs its ``setUp()``), each address checked; the senders' balances
  (``vm.deal``); secant's attacker contracts (``vm.etch``) when a case names them;
* **steps**: per transaction, the block moves (``vm.roll``/``vm.warp`` to the block secant
  ran it in), ``vm.prank(sender, sender)`` (``msg.sender`` and ``tx.origin``), and a call
  with the transaction's value and calldata written as
  ``abi.encodeWithSignature(signature, typed literals...)`` (``secant.report.solidity``;
  the encoded ``hex"..."`` when an argument is a struct). A transaction that succeeded in
  secant's replay must succeed (a revert fails the test there, with its reason); one that
  reverted in secant is sent with its outcome ignored;
* **check**: an assertion or another panic is the last call reverting with that panic (a
  plain call, not ``vm.expectRevert``: forge reports ``panic: assertion failed (0x01)``);
  an ``AssertionFailed`` event is looked for in the recorded logs (a line that both emits
  it and asserts is checked by the signal its case shows, :func:`checks_event`); a
  property is called after the sequence and must hold; a Foundry invariant or
  ``afterInvariant()`` must not revert; a fuzz test's call is the failing last call;
  leaking ether, and reentrancy that paid the attacker more than it brought in, assert that
  the attacker side did not end richer; freezing ether that the contract received nothing;
  an arbitrary storage write that no SSTORE wrote the campaign's target slot
  (``vm.startStateDiffRecording``); a suicidal contract that it still holds its ether.

The data-flow oracles (``unchecked-call``, ``block-dependency``, ``controlled-call``,
``controlled-delegatecall``, ``tx-origin``) judge where values came from, which no forge
assertion can see, and so does any other oracle not named above: their tests replay the
case and pass, and say so in a comment. A
suicidal contract that held no ether leaves nothing to check since Cancun (SELFDESTRUCT
no longer deletes code) and is replayed likewise.

Sources are imported by the unit names secant compiled them under (relative to the
project root, as forge resolves them); contracts a reproducer cannot import (solc older
than 0.6.2, which forge-std does not support, Vyper, bytecode inputs) are deployed from the
creation code secant deployed, as a ``hex"..."`` literal.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import secant
from secant.abi import PANIC_SELECTOR, AbiFunction, AbiParam, encode, integer_leaves
from secant.chain.attackers import ATTACK_SELECTOR, initial_storage
from secant.chain.blockenv import BlockEnvironment
from secant.chain.chain import TestChain
from secant.chain.deploy import DeployedContract
from secant.evm.instructions.system import create_address
from secant.files import write_atomic
from secant.oracles.assertion import EVENT_DETAIL, FORGE_ASSERT, assertion_event_topics
from secant.oracles.property import Property, find_properties
from secant.report.solidity import Builder, Inexpressible, checksum
from secant.targets.contract import ContractTarget
from secant.targets.foundry import is_test_contract
from secant.types import Finding, Tx, TxOutcome, TxSeq

_MIN_IMPORTABLE = (0, 6, 2)
"""forge-std supports solc >= 0.6.2; older sources cannot be imported next to it."""

_MAX_NONCE = 4096
_SEARCH = re.compile(r"(\d+)\.(\d+)\.(\d+)")
_SLOT = re.compile(r"write slot (0x[0-9a-f]{64})")


def reproducer_name(chain: TestChain) -> str:
    """The file stem and contract prefix of a chain's reproducer (its main contract's name)."""
    main = chain.main
    return _identifier(main.name if main is not None else "Campaign", upper=False)


def write_reproducers(chain: TestChain, findings: Sequence[Finding],
                      out: Path, test_contract: bool | None = None
                      ) -> dict[tuple[Any, ...], str]:
    """Write ``out/reproducers/<Main>.t.sol`` for ``findings``; each finding's test.

    Returns the test of each finding by key, as ``reproducers/<Main>.t.sol:Contract.test``
    (relative to ``out``); nothing is written without findings. ``chain`` is the campaign's
    (first worker's) chain; it is reset to its sealed state and left there.
    ``test_contract`` says whether its main contract ran as a Foundry test contract (its
    setUp() is called) or as a contract or harness (None: guessed from its functions).
    """
    if chain.main is None:
        return {}
    relative = f"reproducers/{reproducer_name(chain)}.t.sol"
    path = out / relative
    if not findings:
        # No finding this time: an earlier run's reproducer in the folder is stale.
        path.unlink(missing_ok=True)
        return {}
    writer = _Writer(chain, test_contract)
    source = writer.source(findings)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, source)
    return {key: f"{relative}:{writer.contract}.{test}" for key, test in writer.tests.items()}


def reproducer_source(chain: TestChain, findings: Sequence[Finding],
                      test_contract: bool | None = None) -> str | None:
    """The Solidity of the reproducer of ``findings`` on ``chain`` (None: no finding)."""
    if not findings or chain.main is None:
        return None
    return _Writer(chain, test_contract).source(findings)


# ------------------------------------------------------------------------------- helpers


def _weighs_attackers(finding: Finding) -> bool:
    """Whether the finding's check is the attacker side's ether (before against after).

    Leaking ether, and reentrancy that left the attacker side with more ether than its
    transactions brought in (its key ends in ``ether``; reentrancy that re-reads stale
    state is judged from the trace, which no forge assertion sees).
    """
    oracle = finding.oracle or finding.kind
    return oracle == "leaking-ether" or (oracle == "reentrancy" and finding.key[-1:] == ("ether",))


def _identifier(text: str, upper: bool) -> str:
    """A Solidity identifier from a name (``Token#2`` -> ``Token_2``; UPPER_SNAKE if asked)."""
    if upper:
        text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", text).upper()
    name = re.sub(r"[^A-Za-z0-9_]", "_", text)
    return name if name and not name[0].isdigit() else f"_{name}"


def _importable(contract: DeployedContract) -> bool:
    """Whether a reproducer can import the contract's source next to forge-std."""
    compiled = contract.compiled
    if compiled is None or compiled.language != "Solidity" or not compiled.source:
        return False
    version = _version(compiled.compiler)
    return version is None or version >= _MIN_IMPORTABLE


def _version(compiler: str) -> tuple[int, int, int] | None:
    match = _SEARCH.search(compiler)
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2)), int(match.group(3))


def _comment(text: str, indent: str) -> list[str]:
    """``text`` as ``//`` lines of at most 96 characters."""
    return [f"{indent}// {line}" for line in textwrap.wrap(text, 96 - len(indent) - 3)
            or [""]]


def _describe(entry: dict[str, Any]) -> str:
    """One transaction of a finding's JSON sequence, for a comment."""
    args = ", ".join(_short(a) for a in entry.get("args", []))
    text = f"{entry.get('sender')} calls {entry['function'].split('(')[0]}({args})"
    if entry.get("to"):
        text += f" on {entry['to']}"
    if entry.get("value"):
        text += f" with {entry['value']} wei"
    if entry.get("blocks") or entry.get("time"):
        text += f", {entry.get('blocks', 0)} block(s) and {entry.get('time', 0)} s later"
    return text


def _short(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= 40 else text[:37] + "..."


@dataclass
class _Deployment:
    """One contract ``setUp()`` deploys from the deployer."""

    contract: DeployedContract
    nonce: int
    value: int


@dataclass
class _Writer:
    """Builds one reproducer file (see the module docstring)."""

    chain: TestChain
    test_contract: bool | None = None
    names: dict[int, str] = field(default_factory=dict)
    constants: list[str] = field(default_factory=list)
    imports: dict[str, list[str]] = field(default_factory=dict)
    needs_vm_types: bool = False
    needs_assertion_events: bool = False
    tests: dict[tuple[Any, ...], str] = field(default_factory=dict)
    contract: str = ""

    def __post_init__(self) -> None:
        chain = self.chain
        chain.reset()
        self.main = chain.main
        assert self.main is not None
        self.foundry = (self.test_contract if self.test_contract is not None else
                        is_test_contract(self.main.abi.functions,
                                         constructs=self.main.abi.constructor is not None,
                                         name=self.main.name))
        self.target = ContractTarget(chain, frozenset())
        taken: set[str] = set()
        for sender in chain.senders:
            self._constant(sender.address, _identifier(sender.name, upper=True), taken)
        for contract in chain.contracts:
            self._constant(contract.address, _identifier(contract.name, upper=True), taken)
        self._taken = taken

    def _constant(self, address: int, name: str, taken: set[str]) -> str:
        known = self.names.get(address)
        if known is not None:
            return known
        base, count = name, 1
        while name in taken or name in ("DEPLOYER_BALANCE", "VM"):
            count += 1
            name = f"{base}_{count}"
        taken.add(name)
        self.names[address] = name
        self.constants.append(f"    address internal constant {name} = {checksum(address)};")
        return name

    def _address(self, address: int) -> str:
        """A constant naming ``address`` (declared on first use)."""
        return self._constant(address, f"ACCOUNT_{address:040x}"[:16].upper(), self._taken)

    # ------------------------------------------------------------------ deployment
    def _deployments(self) -> list[_Deployment]:
        """The contracts the deployer's own transactions created, in order."""
        chain = self.chain
        deployer = chain.deployer.address
        nonces = {create_address(deployer, n): n for n in range(_MAX_NONCE)}
        chosen = []
        for contract in chain.contracts:
            if contract.role not in ("main", "deployed", "dependency"):
                continue
            nonce = nonces.get(contract.address)
            if nonce is None:
                continue
            constructor = contract.abi.constructor
            value = (chain.state.balance(contract.address)
                     if constructor is not None and constructor.payable else 0)
            chosen.append(_Deployment(contract, nonce, value))
        return chosen

    def _initcode(self, deployment: _Deployment, lines: list[str]) -> str | None:
        """An expression of the creation code and constructor arguments (None: etch)."""
        contract = deployment.contract
        compiled = contract.compiled
        if compiled is None:
            return None
        constructor = contract.abi.constructor
        params = constructor.inputs if constructor is not None else ()
        if compiled.creation.empty:
            return None
        if _importable(contract):
            alias = self._import(compiled.source, compiled.name)
            code = f"type({alias}).creationCode"
        else:
            libraries = {c.compiled.qualified_name: c.address for c in self.chain.contracts
                         if c.role == "library" and c.compiled is not None}
            libraries.update({c.name: c.address for c in self.chain.contracts
                              if c.role == "library"})
            code = f'hex"{compiled.creation.link(libraries).hex()}"'
        if not params:
            return code
        return f"abi.encodePacked({code}, {self._encoded(params, contract.args, lines)})"

    def _import(self, source: str, name: str) -> str:
        names = self.imports.setdefault(source, [])
        if name not in names:
            names.append(name)
        return name

    def _encoded(self, params: Sequence[AbiParam], values: Sequence[Any],
                 lines: list[str]) -> str:
        """``abi.encode(...)`` of constructor arguments (their encoding as hex if need be)."""
        builder = Builder(self.names, prefix=f"c{len(lines)}_")
        try:
            parts = [builder.expression(p.type, v, p.components)
                     for p, v in zip(params, values, strict=True)]
        except (Inexpressible, ValueError):
            types = [p.canonical for p in params]
            normalized = [p.normalize(v) for p, v in zip(params, values)]
            return f'hex"{encode(types, normalized).hex()}"'
        lines.extend(f"        {statement}" for statement in builder.statements)
        return f"abi.encode({', '.join(parts)})"

    def _set_up(self, findings: Sequence[Finding]) -> list[str]:
        chain = self.chain
        env = chain.blocks.settings.block_env()
        lines = ["    function setUp() public {",
                 "        // The campaign's first block and chain.",
                 f"        vm.chainId({env.chain_id});",
                 f"        vm.coinbase({self._constant(env.coinbase, 'COINBASE', self._taken)});",
                 f"        _block({env.number}, {env.timestamp}, {env.prev_randao:#x});"]
        deployments = self._deployments()
        if any(d.value for d in deployments):
            lines.append(f"        vm.deal(DEPLOYER, {chain.config.balance});")
        if any(not _importable(d.contract) and d.contract.compiled is not None
               and d.contract.compiled.libraries for d in deployments):
            # Creation code secant linked names secant's library addresses: put them there.
            for library in chain.contracts:
                if library.role == "library":
                    lines.append(f"        vm.etch({self._name(library.address)}, "
                                 f'hex"{chain.code_at(library.address).hex()}");')
        for deployment in deployments:
            contract = deployment.contract
            constant = self.names[contract.address]
            lines.append(f"        // {contract.name} ({contract.role}), deployer nonce "
                         f"{deployment.nonce}"
                         + (f", {deployment.value} wei" if deployment.value else ""))
            initcode = self._initcode(deployment, lines)
            if initcode is None:
                code = chain.code_at(contract.address).hex()
                lines += [f'        vm.etch({constant}, hex"{code}");',
                          f"        vm.deal({constant}, "
                          f"{chain.state.balance(contract.address)});"]
                continue
            lines.append(f"        _deployAt({constant}, {deployment.nonce}, {initcode}, "
                         f"{deployment.value});")
        main = self.main
        assert main is not None
        if self.foundry and any(f.name == "setUp" and not f.inputs
                                for f in main.abi.functions):
            lines += ["        // The test contract's own set-up, sent by the deployer.",
                      "        vm.prank(DEPLOYER, DEPLOYER);",
                      f'        _call({self.names[main.address]}, 0, '
                      'abi.encodeWithSignature("setUp()"));']
        lines += self._accounts(findings)
        lines.append("    }")
        return lines

    def _accounts(self, findings: Sequence[Finding]) -> list[str]:
        """Balances of the senders the cases use, attacker contracts the cases name."""
        chain = self.chain
        used: set[int] = set()
        for finding in findings:
            for tx in finding.case or ():
                used.add(tx.sender)
                used.update(integer_leaves(tx.args))
                if tx.to is not None:
                    used.add(tx.to)
        lines = ["        // The senders' balances as the campaign's cases start."]
        senders = [s.address for s in chain.senders]
        senders += sorted({tx.sender for f in findings for tx in f.case or ()} - set(senders))
        for address in senders:
            if chain.book.at(address) is None:
                lines.append(f"        vm.deal({self._address(address)}, "
                             f"{chain.state.balance(address)});")
        attackers = [a for a in chain.attacker_contracts if a.address in used]
        if attackers or any(_weighs_attackers(f) for f in findings):
            attackers = list(chain.attacker_contracts)
        for attacker in attackers:
            constant = self.names[attacker.address]
            lines += [f"        // secant's {attacker.kind.value} attacker contract.",
                      f'        vm.etch({constant}, hex"{attacker.code.hex()}");',
                      f"        vm.deal({constant}, {chain.state.balance(attacker.address)});"]
            depth = chain.config.max_reentrancy_depth
            for slot, value in sorted(initial_storage(attacker.kind, depth).items()):
                lines.append(f"        vm.store({constant}, bytes32(uint256({slot})), "
                             f"bytes32(uint256({value})));")
        for finding in findings:
            for address in sorted({tx.to for tx in finding.case or () if tx.to is not None}):
                contract = chain.at(address)
                if contract is not None and contract.role == "created":
                    lines.append(f'        require({self.names[address]}.code.length > 0, '
                                 f'"{contract.name} is not where secant found it");')
        return list(dict.fromkeys(lines))

    # ------------------------------------------------------------------ tests
    def source(self, findings: Sequence[Finding]) -> str:
        """The whole file."""
        main = self.main
        assert main is not None
        contract = self.contract = f"{_identifier(main.name, upper=False)}Reproducer"
        tests: list[str] = []
        used_names: set[str] = set()
        for finding in findings:
            tests += [""] + self._test(finding, used_names)
        set_up = self._set_up(findings)
        header = [
            "// SPDX-License-Identifier: UNLICENSED",
            "pragma solidity >=0.6.2 <0.9.0;",
            "",
            f"// Written by secant {secant.__version__} from the findings of its campaign on "
            f"{main.name}.",
            "// Every test rebuilds the chain the campaign fuzzed and replays one finding's "
            "shrunk case:",
            "// it FAILS while the bug is there. Copy this file into the project's test "
            "folder, then run",
            f"//     forge test --match-contract {contract}",
            "",
            'import {Test} from "forge-std/Test.sol";',
        ]
        if self.needs_vm_types:
            header.append('import {Vm} from "forge-std/Vm.sol";')
        for source, names in self.imports.items():
            header.append(f'import {{{", ".join(names)}}} from "{source}";')
        body = [f"contract {contract} is Test {{", *self.constants]
        if self.needs_assertion_events:
            topics = sorted(assertion_event_topics(self.chain))
            body.append(f"    bytes32[{len(topics)}] internal ASSERTION_FAILED = [")
            body += [f"        bytes32({topic:#066x}){',' if i < len(topics) - 1 else ''}"
                     for i, topic in enumerate(topics)]
            body.append("    ];")
        body += ["", *set_up, *tests, "", *_HELPERS]
        if any(_weighs_attackers(f) for f in findings):
            body += self._attacker_side()
        if self.needs_assertion_events:
            body += _ASSERTION_HELPER
        body.append("}")
        return "\n".join([*header, "", *body]) + "\n"

    def _attacker_side(self) -> list[str]:
        """``_attackerSide()``: the ether of the attacker accounts and attacker contracts."""
        chain = self.chain
        accounts = [self.names[a.address] for a in chain.attackers]
        accounts += [self.names[c.address] for c in chain.attacker_contracts]
        total = " + ".join(f"{name}.balance" for name in accounts) or "0"
        return ["",
                "    /// The ether of the attacker accounts and secant's attacker contracts.",
                "    function _attackerSide() internal view returns (uint256) {",
                f"        return {total};",
                "    }"]

    def _test(self, finding: Finding, used_names: set[str]) -> list[str]:
        case: TxSeq = finding.case or ()
        outcomes = self._outcomes(case)
        base = _identifier(f"test_{finding.oracle or finding.kind}_{finding.function}",
                           upper=False).replace("-", "_")
        name, count = base, 1
        while name in used_names:
            count += 1
            name = f"{base}_{count}"
        used_names.add(name)
        self.tests[finding.key] = name
        lines = [f"    function {name}() public {{"]
        where = f" at {finding.source}" if finding.source else ""
        swc = f" ({finding.swc})" if finding.swc else ""
        lines += _comment(f"{finding.oracle or finding.kind}{swc} in "
                          f"{finding.contract}.{finding.function}{where}: {finding.detail}",
                          "        ")
        check = _Check(self, finding, case, outcomes)
        lines += check.before()
        for index in range(check.replayed):
            lines += self._step(finding, case, outcomes, index,
                                final=check.final_call and index == check.replayed - 1)
        lines += check.after()
        lines.append("    }")
        return lines

    def _outcomes(self, case: TxSeq) -> list[TxOutcome]:
        """How each transaction of ``case`` ended in secant (one replay)."""
        if not case:
            return []
        try:
            return list(self.target.run(case).outcomes)
        finally:
            self.chain.reset()

    def _step(self, finding: Finding, case: TxSeq, outcomes: Sequence[TxOutcome],
              index: int, final: bool) -> list[str]:
        tx = case[index]
        lines = []
        if index < len(finding.sequence):
            lines += _comment(f"{index + 1}. {_describe(finding.sequence[index])}", "        ")
        if tx.blocks or tx.time:
            env = self._env_before(case, index)
            lines.append(f"        _block({env[0]}, {env[1]}, {env[2]:#x});")
        builder = Builder(self.names, prefix=f"a{index}_")
        to = self.main.address if tx.to is None and self.main is not None else tx.to
        assert to is not None
        data = self._calldata(builder, tx, to)
        sender, called, value = tx.sender, to, tx.value
        if tx.sender in self.target.relays:
            # An attacker contract "sends" it: an attacker account makes it call.
            data = (f'abi.encodeWithSelector(bytes4(0x{ATTACK_SELECTOR.hex()}), '
                    f"{self.names.get(to) or self._address(to)}, {data}, uint256({tx.value}))")
            sender, called, value = self.target.relays[tx.sender], tx.sender, 0
        if builder.statements:
            lines.append("        {")
            lines += [f"            {s}" for s in builder.statements]
        indent = "            " if builder.statements else "        "
        outcome = outcomes[index] if index < len(outcomes) else None
        call = "_call" if final or outcome is None or outcome.success else "_try"
        if call == "_try":
            lines.append(f"{indent}// It reverted in secant's run too; its outcome is ignored.")
        lines += [f"{indent}vm.prank({self._name(sender)}, {self._name(sender)});",
                  f"{indent}{call}({self._name(called)}, {value}, {data});"]
        if builder.statements:
            lines.append("        }")
        return lines

    def _name(self, address: int) -> str:
        return self.names.get(address) or self._address(address)

    def _calldata(self, builder: Builder, tx: Tx, to: int) -> str:
        """``abi.encodeWithSignature(...)`` of a transaction (its hex when need be)."""
        if tx.function in ("fallback", "receive"):
            return '""'
        function = self._function(tx, to)
        if function is None or function.kind != "function":
            return f'hex"{self.target.calldata(tx.function, tx.args, to).hex()}"'
        try:
            args = [builder.expression(p.type, a, p.components)
                    for p, a in zip(function.inputs, tx.args, strict=True)]
        except (Inexpressible, ValueError):
            builder.statements.clear()
            encoded = self.target.calldata(tx.function, tx.args, to).hex()
            return f'hex"{encoded}" /* {tx.function} */'
        return f'abi.encodeWithSignature({", ".join([_quoted(tx.function), *args])})'

    def _function(self, tx: Tx, to: int) -> AbiFunction | None:
        try:
            return self.target.function(tx.function, to)
        except KeyError:
            return None

    def _env_before(self, case: TxSeq, index: int) -> tuple[int, int, int]:
        """Number, timestamp and PREVRANDAO of the block transaction ``index`` runs in."""
        self.chain.reset()
        blocks = BlockEnvironment(self.chain.blocks.settings)
        blocks.current = self.chain.env
        for tx in case[:index + 1]:
            if tx.blocks or tx.time:
                blocks.advance(tx.blocks, tx.time)
        env = blocks.current
        return env.number, env.timestamp, env.prev_randao


_PANIC_DETAIL = re.compile(r"Panic\(0x([0-9a-fA-F]+)\)")
"""A panic's words in a finding's detail (``secant.oracles.assertion.PanicSite.detail``)."""

_INVALID_DETAIL = "INVALID opcode reached"
"""The start of the words of an ``assert`` of solc < 0.8 (the INVALID opcode)."""


def checks_event(finding: Finding) -> bool:
    """Whether the test of an assertion finding looks for ``AssertionFailed`` in the logs.

    A key ending in ``event`` is an emitted event's, or that of a line that both emits the
    event and asserts (``secant.oracles.assertion.shared_site_key``). Such a line's finding
    may show either signal or both, and its detail names those its case shows (joined by
    ``"; "``): a shrunk case may keep only the failing assert (``if (c) emit
    AssertionFailed(); assert(d);`` with ``c`` false), and a test looking for the event
    would then pass with the bug still there. So the check follows the detail: the event
    when it is named (when the assert fails too, the event check holds as well: the logs
    keep an event whose call the assert reverted), else the panic. Words that name neither
    (a detail written by hand) keep the key's check, the event.
    """
    if finding.key[-1] != "event":
        return False
    signals = finding.detail.split("; ")
    return EVENT_DETAIL in signals or not any(
        _PANIC_DETAIL.match(signal) or signal.startswith(_INVALID_DETAIL)
        for signal in signals)


def _panic_code(finding: Finding) -> int | None:
    """The Panic code a finding's test expects (None: any panic, or INVALID).

    A panic's key ends in its code; a shared line's key ends in ``event``, and its code is
    in the detail (INVALID, solc < 0.8's assert, has none).
    """
    key = finding.key
    if len(key) < 4:
        return None
    if key[-1] != "event":
        code = key[-1]
        return code if isinstance(code, int) else None
    for signal in finding.detail.split("; "):
        match = _PANIC_DETAIL.match(signal)
        if match is not None:
            return int(match.group(1), 16)
    return None


@dataclass
class _Check:
    """The end of one finding's test: what is asserted, and how far the case is replayed."""

    writer: _Writer
    finding: Finding
    case: TxSeq
    outcomes: Sequence[TxOutcome]
    final_call: bool = False
    replayed: int = 0

    def __post_init__(self) -> None:
        self.replayed = len(self.case)
        oracle = self.finding.oracle or self.finding.kind
        if oracle == "assertion" and self.finding.key[-1] == FORGE_ASSERT:
            self.final_call = bool(self.case)  # the case ends with the failing call
        elif oracle in ("assertion", "panic") and not checks_event(self.finding):
            self._panic()
        elif oracle == "fuzz-test":
            self.final_call = bool(self.case)

    def _panic(self) -> None:
        """Replay up to the transaction that panicked in secant, and let it fail."""
        code = _panic_code(self.finding)
        for index, outcome in enumerate(self.outcomes):
            output = outcome.output
            panicked = (output[:4] == PANIC_SELECTOR
                        and (code is None or int.from_bytes(output[4:36], "big") == code)
                        if outcome.reverted else not outcome.success and not outcome.invalid)
            if panicked:
                self.replayed = index + 1
                self.final_call = True
                return
        # The panic was caught inside the transaction (try/catch): nothing reverts.

    def before(self) -> list[str]:
        """Statements before the first transaction."""
        oracle = self.finding.oracle
        writer = self.writer
        if oracle in ("assertion", "panic") and checks_event(self.finding):
            writer.needs_assertion_events = writer.needs_vm_types = True
            return ["        vm.recordLogs();"]
        if _weighs_attackers(self.finding):
            return ["        uint256 attackerSideBefore = _attackerSide();"]
        if oracle in ("freezing-ether", "suicidal"):
            contract = self._contract()
            if contract is not None:
                return [f"        uint256 balanceBefore = {contract}.balance;"]
        if oracle == "arbitrary-storage-write":
            writer.needs_vm_types = True
            return ["        vm.startStateDiffRecording();"]
        return []

    def _contract(self) -> str | None:
        address = self.finding.key[1] if len(self.finding.key) > 1 else None
        if not isinstance(address, int):
            named = self.writer.chain.book.get(self.finding.contract)
            address = named.address if named is not None else None
        return self.writer.names.get(address) if isinstance(address, int) else None

    def after(self) -> list[str]:
        """The assertion after the last transaction."""
        finding = self.finding
        oracle = finding.oracle or finding.kind
        if oracle == "assertion" and finding.key[-1] == FORGE_ASSERT:
            return ["        // The last call failed a vm.assert*: forge fails the test, "
                    "whether the assertion",
                    "        // reverts the call or sets forge's failure flag "
                    "(assertions_revert = false)."]
        if oracle in ("assertion", "panic"):
            if checks_event(finding):
                return ["        _assertNoAssertionFailed(vm.getRecordedLogs());"]
            if self.final_call:
                return ["        // The last call reverted with the panic in secant: a plain "
                        "call fails the test."]
            return ["        // The panic was caught inside a transaction (try/catch); "
                    "nothing reverts, so",
                    "        // this test replays the case without a failing check."]
        if oracle == "property":
            return self._property()
        if oracle == "fuzz-test":
            return ["        // The fuzz test's call reverted in secant: a plain call fails "
                    "the test."]
        if _weighs_attackers(finding):
            return ['        assertLe(_attackerSide(), attackerSideBefore, "the attacker '
                    f'side ended richer without paying ({oracle})");']
        contract = self._contract()
        if oracle == "freezing-ether" and contract is not None:
            return [f'        assertLe({contract}.balance, balanceBefore, '
                    f'"{finding.contract} received ether it can never send out '
                    '(freezing-ether)");']
        if oracle == "suicidal" and contract is not None:
            return ["        // Since Cancun SELFDESTRUCT leaves the code: what shows is the "
                    "ether it sent away.",
                    f'        assertFalse(balanceBefore > 0 && {contract}.balance == 0, '
                    f'"an attacker made {finding.contract} SELFDESTRUCT (suicidal)");']
        if oracle == "arbitrary-storage-write":
            match = _SLOT.search(finding.detail)
            slot = match.group(1) if match else "0x0"
            return ["        Vm.AccountAccess[] memory accesses = vm.stopAndReturnStateDiff();",
                    "        for (uint256 i = 0; i < accesses.length; i++) {",
                    "            for (uint256 j = 0; j < accesses[i].storageAccesses.length; "
                    "j++) {",
                    "                Vm.StorageAccess memory access = "
                    "accesses[i].storageAccesses[j];",
                    f"                assertFalse(access.isWrite && !access.reverted && "
                    f"access.slot == bytes32(uint256({slot})),",
                    '                    "an SSTORE wrote the slot the inputs chose '
                    '(arbitrary-storage-write)");',
                    "            }",
                    "        }"]
        return [f"        // secant's {oracle} oracle judged this run from what its trace "
                "recorded (where values",
                "        // came from, how calls nested); no forge assertion sees that, so "
                "this test only replays it."]

    def _property(self) -> list[str]:
        finding = self.finding
        chain = self.writer.chain
        address = finding.key[1] if len(finding.key) > 2 else None
        contract = chain.at(address) if isinstance(address, int) else None
        found: list[Property] = [
            p for p in (find_properties([contract], (finding.function,))
                        if contract is not None else [])
            if p.name == finding.function]
        if contract is None or not found:
            return [f"        // The property {finding.function}() could not be found on the "
                    "chain; nothing to check."]
        prop = found[0]
        target = self.writer.names[contract.address]
        call = f'abi.encodeWithSignature("{prop.function.signature}")'
        if prop.kind in ("invariant", "after"):
            lines = ["        // Properties are read by the deployer, after the last "
                     "transaction.",
                     "        vm.prank(DEPLOYER);",
                     f"        _call({target}, 0, {call});"]
            if prop.flags_failure:
                lines += [f'        (, bytes memory flag) = {target}.staticcall('
                          'abi.encodeWithSignature("failed()"));',
                          f'        assertFalse(abi.decode(flag, (bool)), '
                          f'"{prop.name}() set the failed() flag");']
            return lines
        if prop.kind == "must-revert":
            return ["        vm.prank(DEPLOYER);",
                    f"        (bool ok, ) = {target}.call({call});",
                    f'        assertFalse(ok, "{prop.name}() did not revert");']
        return ["        // Properties are read by the deployer, after the last transaction.",
                "        vm.prank(DEPLOYER);",
                f"        (bool ok, bytes memory out) = {target}.call({call});",
                f'        assertTrue(ok && abi.decode(out, (bool)), "{prop.name}() failed");']


def _quoted(text: str) -> str:
    return f'"{text}"'


_HELPERS = [
    "    /// Moves to block ``number`` at ``timestamp`` with secant's PREVRANDAO for it.",
    "    function _block(uint256 number, uint256 timestamp, uint256 randao) internal {",
    "        vm.roll(number);",
    "        vm.warp(timestamp);",
    "        vm.prevrandao(bytes32(randao));",
    "    }",
    "",
    "    /// Deploys ``initcode`` from DEPLOYER at nonce ``nonce``: where secant deployed it.",
    "    function _deployAt(address expected, uint64 nonce, bytes memory initcode, "
    "uint256 value) internal {",
    "        if (vm.getNonce(DEPLOYER) < nonce) vm.setNonce(DEPLOYER, nonce);",
    "        address created;",
    "        vm.prank(DEPLOYER, DEPLOYER);",
    "        assembly {",
    "            created := create(value, add(initcode, 0x20), mload(initcode))",
    "        }",
    '        require(created != address(0), "a constructor reverted");',
    '        require(created == expected, "a contract is not where secant deployed it");',
    "    }",
    "",
    "    /// A call that must succeed: its revert (a panic, a failed assertion) fails the test.",
    "    function _call(address to, uint256 value, bytes memory data) internal {",
    "        (bool ok, bytes memory out) = to.call{value: value}(data);",
    "        if (!ok) {",
    "            assembly {",
    "                revert(add(out, 0x20), mload(out))",
    "            }",
    "        }",
    "    }",
    "",
    "    /// A call that reverted in secant's run as well: its outcome does not matter.",
    "    function _try(address to, uint256 value, bytes memory data) internal {",
    "        (bool ok, ) = to.call{value: value}(data);",
    "        ok;",
    "    }",
]

_ASSERTION_HELPER = [
    "",
    "    /// Fails when a recorded log is an AssertionFailed event (Echidna's assertion mode).",
    "    function _assertNoAssertionFailed(Vm.Log[] memory logs) internal view {",
    "        for (uint256 i = 0; i < logs.length; i++) {",
    "            for (uint256 j = 0; j < ASSERTION_FAILED.length; j++) {",
    "                assertFalse(logs[i].topics.length > 0 && logs[i].topics[0] == "
    "ASSERTION_FAILED[j],",
    '                    "AssertionFailed was emitted");',
    "            }",
    "        }",
    "    }",
]
