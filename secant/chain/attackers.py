"""Attacker contracts, as sFuzz uses them: hand-assembled EVM code, no compiler needed.

All four attackers expose ``attack(address target, bytes data, uint256 value)`` (payable): it
calls ``target`` with ``data`` and ``value`` (paid from the attacker's own balance, which
includes any ether sent along), returns the target's return data when the call succeeds and
reverts with the target's revert data when it fails. A transaction to ``attack`` makes
the attacker the ``msg.sender`` of a target function (``TestChain.attack``).

- The **normal attacker** reverts in its fallback: any call or ether transfer it receives
  fails (this exposes contracts that assume a send to succeed, e.g. an unchecked send or a
  refund that blocks everyone else).
- The **reentrancy attacker** records the target and the calldata of its last ``attack``;
  its fallback calls the target again with that same calldata (value 0), so a target that
  sends it ether before updating its state is re-entered in the very function that paid.
  A storage counter bounds the depth (``max_depth`` nested re-entries per ``attack``); with
  less than :data:`REENTRY_MIN_GAS` gas left (the 2300 stipend of ``transfer``/``send``) the
  fallback just accepts the ether, as a real contract would. ``reentries()`` returns how
  many re-entries the last ``attack`` made.
- The **costly attacker** (sFuzz's recipient "with a costly fallback function") accepts any
  call or ether, but its fallback writes storage (it counts the calls it accepted in slot
  0), which needs more than the 2300 gas that ``send`` and ``transfer`` give: paid that
  way it runs out of gas, and the payment fails ("gasless send"). Paid with enough gas
  (``call{value: ...}("")``) it takes the ether like any contract that keeps books.
- The **answering attacker** answers every call it does not implement with one 32-byte
  word of its choosing, its *answer*, and accepts any ether. ``answer(uint256 word)``
  sets the answer (anyone may call it: a transaction of the test case); it starts as
  :data:`DEFAULT_ANSWER`. A word decodes as any static ABI type, so a caller that trusts
  what a contract it was handed returns (``assert(IFeed(feed).price() == PEG)``,
  ``require(token.transfer(to, amount))``) gets a value the search chose. See
  :func:`answering_attacker_code` for why the answer is a stored word set by a transaction.

Storage of the reentrancy attacker: slot 0 target, slot 2 re-entries made, slot 3 maximum
depth, slot 4 calldata length, slots ``0x100 + i`` the calldata's 32-byte words. Storage of
the costly attacker: slot 0 the calls its fallback accepted. Storage of the answering
attacker: slot :data:`ANSWER_SLOT` the answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from secant.abi import Abi, encode, function_selector
from secant.chain.asm import Item, Label, Ref, assemble
from secant.evm.crypto import keccak256

__all__ = [
    "ANSWER_SELECTOR",
    "ANSWER_SIGNATURE",
    "ANSWER_SLOT",
    "ATTACKER_ABI",
    "ATTACK_SELECTOR",
    "DEFAULT_ANSWER",
    "DEFAULT_MAX_DEPTH",
    "MAX_DEPTH_SLOT",
    "REENTRIES_SELECTOR",
    "REENTRY_MIN_GAS",
    "AttackerContract",
    "AttackerKind",
    "answer_calldata",
    "answering_attacker_code",
    "attack_calldata",
    "costly_attacker_code",
    "normal_attacker_code",
    "reentrancy_attacker_code",
]

ATTACK_SELECTOR = function_selector("attack(address,bytes,uint256)")
"""Selector of ``attack(address target, bytes data, uint256 value)``."""

REENTRIES_SELECTOR = function_selector("reentries()")
"""Selector of ``reentries()`` (reentrancy attacker only)."""

DEFAULT_MAX_DEPTH = 3
"""Nested re-entries the reentrancy attacker makes per ``attack`` unless configured."""

MAX_DEPTH_SLOT = 3
"""Storage slot holding the reentrancy attacker's maximum depth."""

REENTRY_MIN_GAS = 10_000
"""Below this much gas the reentrancy attacker's fallback accepts ether without re-entering."""

ANSWER_SIGNATURE = "answer(uint256)"
"""The function that sets the answering attacker's answer."""

ANSWER_SELECTOR = function_selector(ANSWER_SIGNATURE)
"""Selector of ``answer(uint256 word)`` (answering attacker only)."""

ANSWER_SLOT = int.from_bytes(keccak256(b"secant answering attacker: answer"), "big")
"""Storage slot of the answering attacker's answer.

Far from every slot a compiler lays variables out at: the sequences' data flow names a
slot by its number whatever contract holds it, so slot 0 would make ``answer`` look like a
writer of every target's first variable.
"""

DEFAULT_ANSWER = 1
"""The answer before any ``answer(word)``: 1 decodes as ``true``, 1, a non-zero address
and a non-zero ``bytes32``, the "yes" that a caller trusting its callee usually waits for
(``require(token.transfer(...))``), and it passes the ABI decoder's checks of every static
type (a ``bool`` must be 0 or 1, an ``address`` 20 bytes)."""

_ACCEPTED_SLOT = 0  # the costly attacker's count of accepted calls

_TARGET_SLOT, _DEPTH_SLOT, _LENGTH_SLOT, _DATA_SLOT = 0, 2, 4, 0x100
_DATA = 0x80  # memory offset of the forwarded calldata
_SCRATCH_TARGET, _SCRATCH_VALUE, _SCRATCH_LENGTH = 0x00, 0x20, 0x40

ATTACKER_ABI = Abi.from_json([
    {"type": "function", "name": "attack", "stateMutability": "payable",
     "inputs": [{"name": "target", "type": "address"}, {"name": "data", "type": "bytes"},
                {"name": "value", "type": "uint256"}],
     "outputs": []},
    {"type": "function", "name": "reentries", "stateMutability": "view", "inputs": [],
     "outputs": [{"name": "", "type": "uint256"}]},
    {"type": "function", "name": "answer", "stateMutability": "nonpayable",
     "inputs": [{"name": "word", "type": "uint256"}], "outputs": []},
    {"type": "fallback", "stateMutability": "payable"},
])
"""The ABI every attacker answers (``reentries`` returns 0 but on the reentrancy attacker;
only the answering attacker implements ``answer``, the others take it to their fallback)."""


class AttackerKind(StrEnum):
    """The attacker contracts."""

    NORMAL = "normal"
    REENTRANCY = "reentrancy"
    COSTLY = "costly"
    ANSWERING = "answering"


def _dispatch(answers: bool = False) -> list[Item]:
    """Jump to ``attack``/``reentries``/``answer`` (``answers``) by selector, else fallback."""
    setter: list[Item] = (
        ["DUP1", int.from_bytes(ANSWER_SELECTOR, "big"), "EQ", Ref("answer"), "JUMPI"]
        if answers else [])
    return [
        4, "CALLDATASIZE", "LT", Ref("fallback"), "JUMPI",
        0, "CALLDATALOAD", 0xE0, "SHR",
        "DUP1", int.from_bytes(ATTACK_SELECTOR, "big"), "EQ", Ref("attack"), "JUMPI",
        "DUP1", int.from_bytes(REENTRIES_SELECTOR, "big"), "EQ", Ref("reentries"), "JUMPI",
        *setter,
        Ref("fallback"), "JUMP",
    ]


def _read_attack_arguments() -> list[Item]:
    """Decode ``attack``'s arguments: target, value and length to scratch, data to 0x80."""
    return [
        4, "CALLDATALOAD", (1 << 160) - 1, "AND", _SCRATCH_TARGET, "MSTORE",
        68, "CALLDATALOAD", _SCRATCH_VALUE, "MSTORE",
        36, "CALLDATALOAD", 4, "ADD",                    # p: where the data's length is
        "DUP1", "CALLDATALOAD",                          # p len
        "DUP1", _SCRATCH_LENGTH, "MSTORE",               # p len
        "SWAP1", 32, "ADD", _DATA, "CALLDATACOPY",       # copy len bytes from p+32 to 0x80
    ]


def _forward_call() -> list[Item]:
    """CALL target with the data and value; return or revert with the target's data."""
    return [
        0, 0, _SCRATCH_LENGTH, "MLOAD", _DATA, _SCRATCH_VALUE, "MLOAD",
        _SCRATCH_TARGET, "MLOAD", "GAS", "CALL",
        "RETURNDATASIZE", 0, 0, "RETURNDATACOPY",
        Ref("forwarded"), "JUMPI",
        "RETURNDATASIZE", 0, "REVERT",
        Label("forwarded"),
        "RETURNDATASIZE", 0, "RETURN",
    ]


def _return_word(slot: int | None) -> list[Item]:
    """Return the storage word at ``slot`` (0 when ``slot`` is None) as a uint256."""
    load: list[Item] = [0] if slot is None else [slot, "SLOAD"]
    return [*load, 0, "MSTORE", 32, 0, "RETURN"]


def normal_attacker_code() -> bytes:
    """Runtime code of the normal attacker: ``attack`` forwards, everything else reverts."""
    return assemble([
        *_dispatch(),
        Label("attack"), *_read_attack_arguments(), *_forward_call(),
        Label("reentries"), *_return_word(None),
        Label("fallback"), 0, 0, "REVERT",
    ])


def costly_attacker_code() -> bytes:
    """Runtime code of the costly attacker: ``attack`` forwards; the fallback writes storage.

    Its fallback adds one to slot 0: a cold SLOAD (2100 gas) and an SSTORE, which fails
    with 2300 gas or less left (EIP-2200) and costs 20,000 for the first count. With the
    2300-gas stipend of ``send``/``transfer`` it runs out of gas, and the payment fails;
    it needs about 22,200 gas to accept.
    """
    return assemble([
        *_dispatch(),
        Label("attack"), *_read_attack_arguments(), *_forward_call(),
        Label("reentries"), *_return_word(None),
        Label("fallback"), _ACCEPTED_SLOT, "SLOAD", 1, "ADD", _ACCEPTED_SLOT, "SSTORE", "STOP",
    ])


def answering_attacker_code() -> bytes:
    """Runtime code of the answering attacker: any other call is answered with a stored word.

    ``attack`` forwards and ``reentries`` returns 0, as on the other attackers;
    ``answer(word)`` stores ``word`` at :data:`ANSWER_SLOT`; every other call with calldata
    returns that word (32 bytes), and a call without calldata (a payment) is accepted with
    no output. The fallback only reads storage: a ``STATICCALL`` (a ``view`` interface
    function) gets its answer too, and a payment costs a few gas, well within the 2300 of
    ``transfer``, so this attacker is no refusing or costly recipient.

    Why a stored answer set by a transaction, and not what the other designs give:

    - The costly attacker's counter (1, 2, 3... if its fallback returned it) is a word the
      search cannot choose: a check that wants 1000 is never met.
    - A word taken from the call's own calldata (its first argument) is chosen by the
      calling contract, not the search, and a call without arguments (``foo()``) has none.
    - Nothing else the search varies within the caller's transaction is visible to the
      callee but the sender and the block, which are no values of its choosing.

    ``answer(word)`` is an ordinary transaction of the test case: the campaign fuzzes it
    like a target's function (``secant.campaign.worker.answering_attacker``), so its word
    is mutated, drawn from the dictionary (the constants the caller compares with),
    written by input-to-state and predicted from the caller's comparison costs; the
    campaign watches the reads of :data:`ANSWER_SLOT`, so the aggressive probes fake the
    answer and the sequences' data flow puts ``answer`` before the call that reads it.
    Every answer is a function of the case, so a campaign stays a function of its seed.
    """
    return assemble([
        *_dispatch(answers=True),
        Label("attack"), *_read_attack_arguments(), *_forward_call(),
        Label("reentries"), *_return_word(None),
        Label("answer"), 4, "CALLDATALOAD", ANSWER_SLOT, "SSTORE", "STOP",
        Label("fallback"), "CALLDATASIZE", "ISZERO", Ref("accept"), "JUMPI",
        *_return_word(ANSWER_SLOT),
        Label("accept"), "STOP",
    ])


def reentrancy_attacker_code() -> bytes:
    """Runtime code of the reentrancy attacker (see the module docstring)."""
    record_call: list[Item] = [
        _SCRATCH_TARGET, "MLOAD", _TARGET_SLOT, "SSTORE",
        0, _DEPTH_SLOT, "SSTORE",
        _SCRATCH_LENGTH, "MLOAD", _LENGTH_SLOT, "SSTORE",
        0,                                                   # i
        Label("store_loop"),
        _SCRATCH_LENGTH, "MLOAD", "DUP2", 32, "MUL", "LT", "ISZERO",
        Ref("stored"), "JUMPI",                              # i*32 >= len: done
        "DUP1", 32, "MUL", _DATA, "ADD", "MLOAD",            # i word
        "DUP2", _DATA_SLOT, "ADD", "SSTORE",                 # storage[0x100+i] = word
        1, "ADD", Ref("store_loop"), "JUMP",
        Label("stored"), "POP",
    ]
    reenter: list[Item] = [
        REENTRY_MIN_GAS, "GAS", "LT", Ref("accept"), "JUMPI",
        MAX_DEPTH_SLOT, "SLOAD", _DEPTH_SLOT, "SLOAD", "LT", "ISZERO",
        Ref("accept"), "JUMPI",                              # depth >= max: stop
        _DEPTH_SLOT, "SLOAD", 1, "ADD", _DEPTH_SLOT, "SSTORE",
        _LENGTH_SLOT, "SLOAD", 0,                            # len i
        Label("load_loop"),
        "DUP2", "DUP2", 32, "MUL", "LT", "ISZERO", Ref("loaded"), "JUMPI",
        "DUP1", _DATA_SLOT, "ADD", "SLOAD",                  # len i word
        "DUP2", 32, "MUL", _DATA, "ADD", "MSTORE",           # memory[0x80+32i] = word
        1, "ADD", Ref("load_loop"), "JUMP",
        Label("loaded"), "POP",                              # len
        0, 0, "DUP3", _DATA, 0, _TARGET_SLOT, "SLOAD", "GAS", "CALL",
        "POP", "POP",
        Label("accept"), "STOP",
    ]
    return assemble([
        *_dispatch(),
        Label("attack"), *_read_attack_arguments(), *record_call, *_forward_call(),
        Label("reentries"), *_return_word(_DEPTH_SLOT),
        Label("fallback"), *reenter,
    ])


_ATTACK_DATA_OFFSET = (3 * 32).to_bytes(32, "big")
"""Where the ``bytes`` argument of ``attack`` starts: after the three head words."""


def attack_calldata(target: int, data: bytes, value: int = 0) -> bytes:
    """Calldata for ``attack(target, data, value)``: make an attacker call ``target``."""
    # Written out (the ABI's head and tail of (address, bytes, uint256)): a relayed
    # transaction builds this every time it runs, and the general encoder costs ten times.
    if not 0 <= value < 1 << 256:
        raise ValueError(f"attack value {value} is not a uint256")
    return b"".join((ATTACK_SELECTOR, target.to_bytes(32, "big"), _ATTACK_DATA_OFFSET,
                     value.to_bytes(32, "big"), len(data).to_bytes(32, "big"), data,
                     bytes(-len(data) % 32)))


def answer_calldata(word: int) -> bytes:
    """Calldata for ``answer(word)``: make the answering attacker answer ``word``."""
    return ANSWER_SELECTOR + encode(["uint256"], [word])


@dataclass(frozen=True)
class AttackerContract:
    """An attacker contract installed on the chain."""

    kind: AttackerKind
    address: int
    name: str

    @property
    def code(self) -> bytes:
        """The attacker's runtime code."""
        return code_of(self.kind)

    @property
    def hex(self) -> str:
        """The address as ``0x`` and 40 hex digits."""
        return f"0x{self.address:040x}"

    def calldata(self, target: int, data: bytes, value: int = 0) -> bytes:
        """Calldata that makes this attacker call ``target`` (see :func:`attack_calldata`)."""
        return attack_calldata(target, data, value)


_CODE: dict[AttackerKind, bytes] = {}


def code_of(kind: AttackerKind) -> bytes:
    """Return (and cache) the runtime code of an attacker kind."""
    if kind not in _CODE:
        builders = {AttackerKind.NORMAL: normal_attacker_code,
                    AttackerKind.REENTRANCY: reentrancy_attacker_code,
                    AttackerKind.COSTLY: costly_attacker_code,
                    AttackerKind.ANSWERING: answering_attacker_code}
        _CODE[kind] = builders[kind]()
    return _CODE[kind]


def initial_storage(kind: AttackerKind, max_depth: int = DEFAULT_MAX_DEPTH) -> dict[int, int]:
    """Return the storage an attacker starts with (the reentrancy depth bound, the answer)."""
    if max_depth < 0:
        raise ValueError("the reentrancy depth cannot be negative")
    if kind is AttackerKind.REENTRANCY:
        return {MAX_DEPTH_SLOT: max_depth}
    if kind is AttackerKind.ANSWERING:
        return {ANSWER_SLOT: DEFAULT_ANSWER}
    return {}
