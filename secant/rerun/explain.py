"""A test case explained transaction by transaction, in the words of the contracts' ABIs.

:func:`explain` runs a case on a chain (from its post-deployment state, through a
:class:`~secant.targets.contract.ContractTarget` as every campaign run goes) and describes
each transaction: the sender by its role (``deployer``, ``attacker1``), the contract by its
name, the function with its decoded arguments, the ether and block moves it carries, how
it ended (the return values decoded by the function's ABI, a revert reason or Solidity
panic decoded, or why the chain refused it) and the events it emitted, decoded by any ABI
the chain knows (raw otherwise). Events are listed as the oracles saw them: an event of a
call that reverted afterwards is listed too. :func:`source_line` quotes the line of code a
finding's ``source`` names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from secant.abi import AbiEvent, AbiParam, decode, decode_revert
from secant.chain.chain import TestChain
from secant.targets.contract import ContractTarget
from secant.targets.trace import LogEvent
from secant.types import TxOutcome, TxSeq

_ARRAY_RE = re.compile(r"\[\d*\]$")

Namer = Callable[[int], str]
"""An address as a reader knows it: a sender's role, a contract's name, else hex."""


@dataclass
class Step:
    """One transaction of a case, explained."""

    index: int
    sender: str
    contract: str
    call: str
    """``name(arg=value, ...)`` with the arguments decoded."""
    value: int
    blocks: int
    time: int
    ok: bool
    outcome: str
    """``ok``, ``returned ...``, ``reverted: ...`` or why it failed or was refused."""
    events: list[str] = field(default_factory=list)


def namer(chain: TestChain) -> Namer:
    """Names for the chain's addresses (senders, contracts, attackers), hex for others."""
    by_address = {address: name for name, address in chain.names().items()}
    return lambda address: by_address.get(address, f"0x{address:040x}")


def show(value: Any, param: AbiParam, who: Namer) -> str:
    """A value of ABI type ``param`` as a reader wants it (addresses named)."""
    match = _ARRAY_RE.search(param.type)
    if match is not None and isinstance(value, list | tuple):
        element = AbiParam(param.name, param.type[:match.start()], param.components)
        return "[" + ", ".join(show(v, element, who) for v in value) + "]"
    if param.type == "tuple" and isinstance(value, list | tuple):
        return "(" + ", ".join(_named(c, v, who) for c, v in zip(param.components, value)) + ")"
    if param.type == "address" and isinstance(value, int | str) and not isinstance(value, bool):
        try:
            return who(value if isinstance(value, int) else int(value, 16))
        except ValueError:
            return str(value)
    if isinstance(value, bytes):
        return "0x" + value.hex()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    return str(value)


def _named(param: AbiParam, value: Any, who: Namer) -> str:
    text = show(value, param, who)
    return f"{param.name}={text}" if param.name else text


def _values(params: Sequence[AbiParam], values: Sequence[Any], who: Namer) -> str:
    return ", ".join(_named(p, v, who) for p, v in zip(params, values))


def explain(chain: TestChain, case: TxSeq) -> list[Step]:
    """Run ``case`` on ``chain`` from its post-deployment state; explain each transaction."""
    target = ContractTarget(chain, frozenset({"logs"}))
    run = target.run(case)
    who = namer(chain)
    main = chain.main
    errors = [e for c in chain.contracts for e in c.abi.errors]
    steps = []
    for index, (tx, outcome) in enumerate(zip(case, run.outcomes)):
        to = tx.to if tx.to is not None else (main.address if main is not None else 0)
        try:
            function = target.function(tx.function, tx.to)
        except KeyError:
            function = None
        name = tx.function.split("(", 1)[0]
        args = (_values(function.inputs, tx.args, who) if function is not None
                else ", ".join(repr(a) for a in tx.args))
        ok = outcome.success
        if ok and function is not None and function.outputs:
            described = _returned(function.outputs, outcome, who)
        elif ok:
            described = "ok"
        elif outcome.invalid:
            described = f"refused by the chain: {outcome.error}"
        elif outcome.reverted:
            described = f"reverted: {decode_revert(outcome.output, errors)}"
        else:
            described = f"failed: {outcome.error or 'halted'}"
        events = [_event(chain, log, who) for log in run.logs if log.tx == index]
        steps.append(Step(index, who(tx.sender), who(to), f"{name}({args})", tx.value,
                          tx.blocks, tx.time, ok, described, events))
    return steps


def _returned(outputs: Sequence[AbiParam], outcome: TxOutcome, who: Namer) -> str:
    try:
        values = decode([p.canonical for p in outputs], outcome.output)
    except Exception:  # eth-abi's errors: the output does not match the ABI
        return f"returned 0x{outcome.output.hex()} (not as the ABI says)"
    return f"returned {_values(outputs, values, who)}"


def _event(chain: TestChain, log: LogEvent, who: Namer) -> str:
    """An event: decoded by the emitting contract's ABI, else any the chain knows."""
    emitter = chain.at(log.address)
    source = who(log.address)
    topics = [t.to_bytes(32, "big") for t in log.topics]
    if topics:
        known = ([emitter] if emitter is not None else []) + list(chain.contracts)
        event: AbiEvent | None = None
        for contract in known:
            event = contract.abi.event_by_topic(topics[0])
            if event is not None:
                break
        if event is not None:
            try:
                fields = event.decode_log(topics, log.data)
            except Exception:  # eth-abi's errors: the log does not match that ABI
                pass
            else:
                values = [fields.get(p.name or f"arg{i}") for i, p in enumerate(event.inputs)]
                return f"{event.name}({_values(event.inputs, values, who)}) from {source}"
    raw = ", ".join(f"0x{t.hex()}" for t in topics)
    return f"log from {source}: topics [{raw}], data 0x{log.data.hex()}"


def source_line(chain: TestChain, source: str | None) -> str | None:
    """The code at a finding's ``source`` (``file:line``), stripped; None when unknown."""
    if not source or ":" not in source:
        return None
    name, _, line_text = source.rpartition(":")
    if not line_text.isdigit():
        return None
    for compilation in chain.compilations:
        found = compilation.source(name)
        text = found.text() if found is not None else None
        if text is None:
            continue
        lines = text.splitlines()
        line = int(line_text)
        if 1 <= line <= len(lines):
            return lines[line - 1].strip()
    return None
