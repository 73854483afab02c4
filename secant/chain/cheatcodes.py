"""Foundry/HEVM cheatcodes: what a call to ``vm`` (the HEVM address) does on the test chain.

Invariant and fuzz harnesses written for Foundry, Echidna or Medusa call cheatcodes on
``0x7109709ECfa91a80626fF3989D68f67F5b1DD12D``. :class:`Cheatcodes` is the
:class:`~secant.evm.intercept.Interceptor` that answers them; the test chain
(:class:`~secant.chain.chain.TestChain`) installs one for every transaction, view and static
call. ``docs/cheatcodes.md`` lists every supported cheatcode with its semantics; in short:

* block: ``warp``, ``roll``, ``fee``, ``chainId``, ``coinbase``, ``prevrandao``,
  ``difficulty`` change the block from the cheatcode on, for the rest of the transaction and,
  when the transaction succeeds, for the later transactions of the test case (the chain
  keeps the block; ``TestChain.reset`` restores the sealed one);
* state: ``deal``, ``store``, ``load``, ``etch``, ``getNonce``, ``setNonce``, ``deployCode``
  change accounts through the ``WorldState`` journal, so a revert or a reset undoes them;
* senders: ``prank``/``startPrank``/``stopPrank`` change ``msg.sender`` (and ``tx.origin``)
  of the calls the pranking frame makes, at its depth only;
* expectations: ``expectRevert`` makes the next call at the caller's depth succeed if it
  reverts (with the given data) and fail if it does not; ``assume(false)`` and
  ``assumeNoRevert`` reject the run with :data:`ASSUME_MARKER` (:func:`is_assume_rejection`);
* keys: ``addr``, ``sign`` (secp256k1, RFC 6979 nonces, v of 27/28);
* artifacts: ``getCode``, ``deployCode`` through a resolver the chain provides;
* ``label``/``getLabel`` and the ``assert*`` family (:mod:`secant.chain.assertions`).

A failing ``assert*`` reverts the call, or, with ``assertions_revert`` off (forge's
``assertions_revert = false``), returns and sets forge's global failure flag
(:data:`GLOBAL_FAIL_SLOT` of the cheatcode account, which forge-std's ``failed()`` reads).
Either way it is told to the transaction's inspector as an event of the calling contract at
the calling instruction, topic :data:`FORGE_ASSERTION_TOPIC` and the message as data: the
evidence outlives the revert, and the assertion oracle can name the failing handler.

Any other selector raises :class:`~secant.chain.errors.UnsupportedCheatcode` out of the
transaction: one line naming it (its signature when it is a known Foundry cheatcode).
Short or malformed call data reverts the call instead. Every cheatcode costs
:data:`CHEATCODE_GAS` beyond the call itself. Failures revert with ``Error(string)`` (forge
uses its own ``CheatcodeError(string)``; the text is the same).

Prank, expectation and assumption state lasts one transaction: the chain calls
:meth:`Cheatcodes.begin_transaction` before each.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from coincurve import PrivateKey

from secant.abi import decode, encode, function_selector
from secant.chain.assertions import ASSERTIONS, AssertCheck, checksum_address
from secant.chain.errors import UnsupportedCheatcode
from secant.evm.crypto import keccak256
from secant.evm.instructions.system import create_address
from secant.evm.intercept import HEVM_ADDRESS, Interceptor, set_block_env
from secant.evm.interpreter import STACK_DEPTH_LIMIT
from secant.evm.opcodes import CREATE, CREATE2

if TYPE_CHECKING:
    from secant.evm.env import BlockEnv
    from secant.evm.frame import Frame
    from secant.evm.interpreter import Evm

__all__ = [
    "ASSUME_MARKER",
    "CHEATCODE_GAS",
    "FORGE_ASSERTION_TOPIC",
    "GLOBAL_FAIL_SLOT",
    "forge_assertion_message",
    "CONSOLE_ADDRESS",
    "HEVM_ADDRESS",
    "KNOWN_UNSUPPORTED",
    "SECP256K1_ORDER",
    "Cheatcodes",
    "is_assume_rejection",
    "supported_signatures",
    "unsupported_cheatcode",
]

FORGE_ASSERTION_TOPIC = int.from_bytes(keccak256(b"secant: vm.assert failed"), "big")
"""Topic of the event a failing ``vm.assert*`` is recorded as (module docstring): no
contract can emit it, since no Solidity event has this signature hash."""

GLOBAL_FAIL_SLOT = int.from_bytes(b"failed".ljust(32, b"\0"), "big")
"""forge's failure flag: this slot of the cheatcode account is set when an assertion fails
without reverting; forge-std's ``failed()`` reads it."""

ASSUME_MARKER = b"FOUNDRY::ASSUME"
"""The revert data of a failed ``vm.assume`` (forge's own marker, raw bytes)."""

CONSOLE_ADDRESS = 0x000000000000000000636F6E736F6C652E6C6F67
"""forge-std's and Hardhat's ``console.log`` address: calls to it neither use a prank nor
settle an expectation."""

CHEATCODE_GAS = 100
"""Gas every cheatcode call costs on top of the CALL that made it."""

SECP256K1_ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
"""Private keys are 1 .. SECP256K1_ORDER - 1 (``addr`` and ``sign`` revert otherwise)."""

DUMMY_CALL_OUTPUT = bytes(8192)
"""What a call whose revert was expected returns: zeros that any return type decodes from
(forge's choice), so ``vm.expectRevert(); x = c.f();`` continues past the call."""

_ERROR_SELECTOR = bytes.fromhex("08c379a0")
_MAX_UINT64 = (1 << 64) - 1


def forge_assertion_message(data: bytes) -> str:
    """The message of a failed ``vm.assert*`` from its recorded event's data."""
    try:
        return str(decode(["string"], data)[0])
    except Exception:  # eth-abi raises several unrelated types for bad encodings
        return "assertion failed"


def is_assume_rejection(output: bytes) -> bool:
    """Whether a transaction's revert data says ``vm.assume`` rejected the inputs.

    A fuzzer discards such runs instead of treating them as reverts.
    """
    return bytes(output) == ASSUME_MARKER


def _error(message: str) -> bytes:
    """``Error(string)`` revert data."""
    return _ERROR_SELECTOR + encode(["string"], [message])


class _Revert(Exception):
    """A cheatcode refused its arguments: the call reverts with ``output``."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.output = _error(message)


def _word(value: int) -> bytes:
    return (value % (1 << 256)).to_bytes(32, "big")


# ---------------------------------------------------------------------------- decoding
_UINT_BITS = {"uint256": 256, "uint64": 64, "uint32": 32, "uint8": 8}
_STATIC = {*_UINT_BITS, "int256", "address", "bool", "bytes32", "bytes4"}


def _static_value(type_name: str, word: int) -> Any:
    """One head word as the value of a static type; ValueError if out of range."""
    bits = _UINT_BITS.get(type_name)
    if bits is not None:
        if word >> bits:
            raise ValueError(f"{type_name} out of range")
        return word
    if type_name == "address":
        if word >> 160:
            raise ValueError("address out of range")
        return word
    if type_name == "int256":
        return word - (1 << 256) if word >> 255 else word
    if type_name == "bool":
        if word > 1:
            raise ValueError("bool out of range")
        return word == 1
    if type_name == "bytes32":
        return word.to_bytes(32, "big")
    if word & ((1 << 224) - 1):  # bytes4: left-aligned, the rest zero
        raise ValueError("bytes4 out of range")
    return (word >> 224).to_bytes(4, "big")


def _static_and_strings(types: Sequence[str], data: bytes) -> list[Any] | None:
    """Arguments of static types and ``string``/``bytes`` read straight from the words.

    Why: forge-std's assertions with a message (``assertEq(a, b, "why")``) run in every
    invariant check, and eth-abi's general decoder costs tens of microseconds a call. None
    when a type is another one or anything is not as a well-formed call has it (the
    general decoder then gives its own answer or error).
    """
    body = data[4:]
    size = len(body)
    if size < 32 * len(types):
        return None
    values: list[Any] = []
    for i, type_name in enumerate(types):
        word = int.from_bytes(body[32 * i:32 * i + 32], "big")
        if type_name in _STATIC:
            try:
                values.append(_static_value(type_name, word))
            except ValueError:
                return None
            continue
        if type_name not in ("string", "bytes") or word + 32 > size:
            return None
        length = int.from_bytes(body[word:word + 32], "big")
        if word + 32 + length > size:
            return None
        raw = body[word + 32:word + 32 + length]
        if type_name == "bytes":
            values.append(bytes(raw))
            continue
        try:
            values.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            return None
    return values


def _from_eth_abi(type_name: str, value: Any) -> Any:
    """eth-abi's decoded value in the shapes cheatcodes use (addresses as ints)."""
    if type_name.endswith("[]"):
        return [_from_eth_abi(type_name[:-2], v) for v in value]
    if type_name == "address":
        return int(value, 16)
    return value


@dataclass(frozen=True)
class _Cheat:
    """One supported signature: how to decode its arguments and what runs it."""

    signature: str
    types: tuple[str, ...]
    run: Callable[[Cheatcodes, _Call, Sequence[Any]], bytes]
    static: bool

    def decode(self, data: bytes) -> Sequence[Any]:
        """The call's arguments; ValueError (or eth-abi's error) when malformed."""
        if self.static:
            words = len(self.types)
            if len(data) < 4 + 32 * words:
                raise ValueError("call data too short")
            return [_static_value(t, int.from_bytes(data[4 + 32 * i:36 + 32 * i], "big"))
                    for i, t in enumerate(self.types)]
        quick = _static_and_strings(self.types, data)
        if quick is not None:
            return quick
        values = decode(list(self.types), data[4:])
        return [_from_eth_abi(t, v) for t, v in zip(self.types, values)]


class _Call:
    """The cheatcode call being answered: where it comes from and the gas it has left."""

    __slots__ = ("caller", "depth", "evm", "gas", "parent")

    def __init__(self, evm: Evm, parent: Frame | None, caller: int, depth: int,
                 gas: int) -> None:
        self.evm = evm
        self.parent = parent
        self.caller = caller
        self.depth = depth  # of the cheatcode message; the caller runs one level up
        self.gas = gas


@dataclass
class _Prank:
    """An active ``prank``/``startPrank`` of the frame at ``depth`` (address ``caller``)."""

    caller: int
    sender: int
    origin: int | None
    single: bool
    used: bool = False
    saved_origin: int | None = None  # tx.origin to restore when the pranked call ends


@dataclass(frozen=True)
class _Expectation:
    """A pending ``expectRevert`` (``data`` None: any revert) of the frame at ``depth``."""

    depth: int
    data: bytes | None
    partial: bool = False


# ---------------------------------------------------------------------------- the handler
class Cheatcodes(Interceptor["Evm"]):
    """Answers cheatcode calls on the test chain (see the module docstring).

    ``resolver`` maps an artifact name to creation code (``getCode``/``deployCode``);
    ``labels`` receives ``vm.label`` names (the chain passes its own ``labels`` dict).
    After a transaction, :attr:`env` is the block it left when a cheatcode changed it,
    else None.
    """

    address = HEVM_ADDRESS

    def __init__(self, resolver: Callable[[str], bytes] | None = None,
                 labels: dict[int, str] | None = None, assertions_revert: bool = True) -> None:
        self.resolver = resolver
        # forge's assertions_revert: False makes a failing assert* set the failure flag and
        # return (module docstring).
        self.assertions_revert = assertions_revert
        # Set when an assert* failed without reverting in the current transaction.
        self.flagged = False
        self.labels: dict[int, str] = {} if labels is None else labels
        self.env: BlockEnv | None = None
        self._pranks: dict[int, _Prank] = {}
        self._expected: _Expectation | None = None
        self._no_revert_depth: int | None = None  # of the frame that called assumeNoRevert
        self.watching = False
        # Reads of the cheatcodes' own tables, which no journal sees (``CallReads.opaque``).
        self.opaque_reads = 0

    def begin_transaction(self) -> None:
        """Forget the previous transaction's pranks, expectations and block change."""
        self.env = None
        self.flagged = False
        if self.watching:
            self._pranks.clear()
            self._expected = None
            self._no_revert_depth = None
            self.watching = False

    def _watch(self) -> None:
        """Ask the EVM for sends and ends exactly while a prank or an expectation is on."""
        self.watching = bool(self._pranks) or self._expected is not None or (
            self._no_revert_depth is not None)

    # ------------------------------------------------------------------ Interceptor
    def answer(self, evm: Evm, parent: Frame | None, caller: int, data: bytes, gas: int,
               depth: int, is_static: bool) -> tuple[bool, int, bytes]:
        """Run the cheatcode ``data`` selects (see the module docstring)."""
        if gas < CHEATCODE_GAS:
            return False, 0, b""
        gas -= CHEATCODE_GAS
        if len(data) < 4:
            return False, gas, _error("vm: the call data is shorter than a selector")
        cheat = _CHEATS.get(bytes(data[:4]))
        if cheat is None:
            raise unsupported_cheatcode(bytes(data[:4]))
        try:
            args = cheat.decode(data)
        except Exception:  # eth-abi raises several unrelated types for bad encodings
            return False, gas, _error(f"vm.{cheat.signature}: malformed arguments")
        call = _Call(evm, parent, caller, depth, gas)
        try:
            output = cheat.run(self, call, args)
        except _Revert as refused:
            return False, call.gas, refused.output
        return True, call.gas, output

    def sender_for(self, evm: Evm, parent: Frame, kind: int, caller: int, address: int) -> int:
        """``msg.sender`` of a call ``parent`` makes: the prank's sender if one applies."""
        pranks = self._pranks
        if not pranks or address == CONSOLE_ADDRESS:
            return caller
        prank = pranks.get(parent.depth)
        if prank is None or caller != prank.caller:
            return caller
        prank.used = True
        if prank.origin is not None and prank.saved_origin is None:
            prank.saved_origin = evm.origin
            evm.origin = prank.origin
        return prank.sender

    def message_end(self, evm: Evm, kind: int, address: int, depth: int, success: bool,
                    output: bytes) -> tuple[bool, bytes] | None:
        """End pranks of single calls, restore ``tx.origin``, settle expectations.

        Calls to the console address (``console.log``) count as no call, as in forge.
        """
        if address == CONSOLE_ADDRESS:
            return None
        pranks = self._pranks
        if pranks:
            prank = pranks.get(depth - 1)
            if prank is not None:
                if prank.saved_origin is not None:
                    evm.origin = prank.saved_origin
                    prank.saved_origin = None
                if prank.single:
                    del pranks[depth - 1]
                    self._watch()
        result: tuple[bool, bytes] | None = None
        assume_depth = self._no_revert_depth
        if assume_depth is not None and depth <= assume_depth + 1:
            self._no_revert_depth = None
            self._watch()
            if not success:
                result = (False, ASSUME_MARKER)
        expected = self._expected
        if expected is not None and depth <= expected.depth + 1:
            self._expected = None
            self._watch()
            result = _settle(expected, kind, depth, success, output)
        return result

    # ------------------------------------------------------------------ block
    def _set_block(self, call: _Call, **changes: Any) -> bytes:
        env = replace(call.evm.env, **changes)
        set_block_env(call.evm, call.parent, env)
        self.env = env
        return b""

    def _warp(self, call: _Call, args: Sequence[Any]) -> bytes:
        return self._set_block(call, timestamp=args[0])

    def _roll(self, call: _Call, args: Sequence[Any]) -> bytes:
        return self._set_block(call, number=args[0])

    def _fee(self, call: _Call, args: Sequence[Any]) -> bytes:
        return self._set_block(call, base_fee=args[0])

    def _chain_id(self, call: _Call, args: Sequence[Any]) -> bytes:
        if args[0] > _MAX_UINT64:
            raise _Revert("vm.chainId: the chain ID must fit in 64 bits")
        return self._set_block(call, chain_id=args[0])

    def _coinbase(self, call: _Call, args: Sequence[Any]) -> bytes:
        return self._set_block(call, coinbase=args[0])

    def _prevrandao(self, call: _Call, args: Sequence[Any]) -> bytes:
        value = args[0]
        return self._set_block(call, prev_randao=int.from_bytes(value, "big")
                               if isinstance(value, bytes) else value)

    def _get_block_number(self, call: _Call, args: Sequence[Any]) -> bytes:
        return _word(call.evm.env.number)

    def _get_block_timestamp(self, call: _Call, args: Sequence[Any]) -> bytes:
        return _word(call.evm.env.timestamp)

    def _get_chain_id(self, call: _Call, args: Sequence[Any]) -> bytes:
        return _word(call.evm.env.chain_id)

    def _tx_gas_price(self, call: _Call, args: Sequence[Any]) -> bytes:
        call.evm.gas_price = args[0]
        return b""

    # ------------------------------------------------------------------ state
    @staticmethod
    def _not_precompile(call: _Call, address: int, what: str) -> None:
        if address in call.evm.precompiles:
            raise _Revert(f"vm.{what}: cannot use precompile {checksum_address(address)}")

    def _deal(self, call: _Call, args: Sequence[Any]) -> bytes:
        call.evm.state.set_balance(args[0], args[1])
        return b""

    def _store(self, call: _Call, args: Sequence[Any]) -> bytes:
        self._not_precompile(call, args[0], "store")
        call.evm.state.set_storage(args[0], int.from_bytes(args[1], "big"),
                                   int.from_bytes(args[2], "big"))
        return b""

    def _load(self, call: _Call, args: Sequence[Any]) -> bytes:
        # The slot and its account become warm, as forge's journaled load makes them (a
        # read the access sets must show: ``CallReads``).
        state = call.evm.state
        slot = int.from_bytes(args[1], "big")
        state.mark(state.tx.warm_addresses, args[0])
        state.mark(state.tx.warm_slots, (args[0], slot))
        return _word(state.storage_at(args[0], slot))

    def _etch(self, call: _Call, args: Sequence[Any]) -> bytes:
        self._not_precompile(call, args[0], "etch")
        call.evm.state.set_code(args[0], bytes(args[1]))
        return b""

    def _get_nonce(self, call: _Call, args: Sequence[Any]) -> bytes:
        state = call.evm.state
        state.mark(state.tx.warm_addresses, args[0])  # as forge loads the account
        return _word(state.nonce(args[0]))

    def _set_nonce(self, call: _Call, args: Sequence[Any]) -> bytes:
        current = call.evm.state.nonce(args[0])
        if args[1] < current:
            raise _Revert(f"vm.setNonce: new nonce ({args[1]}) must be strictly equal to or "
                          f"higher than the account's current nonce ({current})")
        call.evm.state.set_nonce(args[0], args[1])
        return b""

    def _set_nonce_unsafe(self, call: _Call, args: Sequence[Any]) -> bytes:
        call.evm.state.set_nonce(args[0], args[1])
        return b""

    # ------------------------------------------------------------------ pranks
    def _prank(self, call: _Call, sender: int, origin: int | None, single: bool) -> bytes:
        depth = call.depth - 1
        current = self._pranks.get(depth)
        if current is not None:
            if not current.used:
                raise _Revert("vm.prank: cannot overwrite a prank until it is applied at "
                              "least once")
            if current.single != single:
                raise _Revert("vm.prank: cannot override an ongoing prank with a single "
                              "vm.prank; use vm.startPrank to override the current prank")
        self._pranks[depth] = _Prank(call.caller, sender, origin, single)
        self.watching = True
        return b""

    def _prank1(self, call: _Call, args: Sequence[Any]) -> bytes:
        return self._prank(call, args[0], None, True)

    def _prank2(self, call: _Call, args: Sequence[Any]) -> bytes:
        return self._prank(call, args[0], args[1], True)

    def _start_prank1(self, call: _Call, args: Sequence[Any]) -> bytes:
        return self._prank(call, args[0], None, False)

    def _start_prank2(self, call: _Call, args: Sequence[Any]) -> bytes:
        return self._prank(call, args[0], args[1], False)

    def _stop_prank(self, call: _Call, args: Sequence[Any]) -> bytes:
        self._pranks.pop(call.depth - 1, None)
        self._watch()
        return b""

    # ------------------------------------------------------------------ expectations
    def _expect(self, call: _Call, data: bytes | None, partial: bool = False) -> bytes:
        if self._expected is not None:
            raise _Revert("vm.expectRevert: you must call another function prior to "
                          "expecting a second revert")
        self._expected = _Expectation(call.depth - 1, data, partial)
        self.watching = True
        return b""

    def _expect_revert(self, call: _Call, args: Sequence[Any]) -> bytes:
        return self._expect(call, bytes(args[0]) if args else None)

    def _expect_partial_revert(self, call: _Call, args: Sequence[Any]) -> bytes:
        return self._expect(call, bytes(args[0]), partial=True)

    def _assume(self, call: _Call, args: Sequence[Any]) -> bytes:
        if not args[0]:
            raise _AssumeRejected
        return b""

    def _assume_no_revert(self, call: _Call, args: Sequence[Any]) -> bytes:
        self._no_revert_depth = call.depth - 1
        self.watching = True
        return b""

    # ------------------------------------------------------------------ keys
    @staticmethod
    def _key(private_key: int, what: str) -> PrivateKey:
        if private_key == 0:
            raise _Revert(f"vm.{what}: private key cannot be 0")
        if private_key >= SECP256K1_ORDER:
            raise _Revert(f"vm.{what}: private key must be less than the secp256k1 curve "
                          "order")
        return PrivateKey(private_key.to_bytes(32, "big"))

    def _addr(self, call: _Call, args: Sequence[Any]) -> bytes:
        public = self._key(args[0], "addr").public_key.format(compressed=False)
        return bytes(12) + keccak256(public[1:])[12:]

    def _sign(self, call: _Call, args: Sequence[Any]) -> bytes:
        # libsecp256k1 draws the nonce per RFC 6979 and normalises s to the low half.
        signature = self._key(args[0], "sign").sign_recoverable(bytes(args[1]), hasher=None)
        return _word(27 + signature[64]) + signature[:64]

    # ------------------------------------------------------------------ labels
    def _label(self, call: _Call, args: Sequence[Any]) -> bytes:
        self.labels[args[0]] = args[1]
        return b""

    def _get_label(self, call: _Call, args: Sequence[Any]) -> bytes:
        self.opaque_reads += 1
        label = self.labels.get(args[0], f"unlabeled:{checksum_address(args[0])}")
        return encode(["string"], [label])

    # ------------------------------------------------------------------ artifacts
    def _creation_code(self, name: str, what: str) -> bytes:
        if self.resolver is None:
            raise _Revert(f"vm.{what}: no compiled artifacts are available")
        try:
            return self.resolver(name)
        except LookupError as exc:
            raise _Revert(f"vm.{what}: {exc.args[0] if exc.args else exc}") from None

    def _get_code(self, call: _Call, args: Sequence[Any]) -> bytes:
        return encode(["bytes"], [self._creation_code(args[0], "getCode")])

    def _deploy(self, call: _Call, name: str, arguments: bytes, value: int) -> bytes:
        initcode = self._creation_code(name, "deployCode") + arguments
        evm = call.evm
        state = evm.state
        creator = call.caller
        if state.balance(creator) < value:
            raise _Revert(f"vm.deployCode: the deployer's balance is below {value} wei")
        if call.depth + 1 > STACK_DEPTH_LIMIT:
            raise _Revert("vm.deployCode: call depth limit reached")
        address = create_address(creator, state.nonce(creator))
        state.increment_nonce(creator)
        state.mark(state.tx.warm_addresses, address)
        target = state.accounts.get(address)
        if target is not None and (target.code or target.nonce or target.storage):
            raise _Revert(f"vm.deployCode: an account exists at {checksum_address(address)}")
        result = evm.create(creator, address, initcode, call.gas, value, depth=call.depth + 1)
        call.gas = result.gas_left
        if not result.success:
            reason = ("reverted" if result.reverted else f"failed ({result.error})")
            raise _Revert(f"vm.deployCode: the creation of {name} {reason}")
        return _word(address)

    def _deploy_code(self, call: _Call, args: Sequence[Any]) -> bytes:
        return self._deploy(call, args[0], b"", 0)

    def _deploy_code_args(self, call: _Call, args: Sequence[Any]) -> bytes:
        return self._deploy(call, args[0], bytes(args[1]), 0)

    def _deploy_code_value(self, call: _Call, args: Sequence[Any]) -> bytes:
        return self._deploy(call, args[0], b"", args[1])

    def _deploy_code_args_value(self, call: _Call, args: Sequence[Any]) -> bytes:
        return self._deploy(call, args[0], bytes(args[1]), args[2])


class _AssumeRejected(_Revert):
    """``vm.assume(false)``: revert with the raw marker, not an ``Error(string)``."""

    def __init__(self) -> None:
        super().__init__("vm.assume rejected the inputs")
        self.output = ASSUME_MARKER


# ---------------------------------------------------------------------------- expectRevert
def _decoded_reason(data: bytes) -> bytes:
    """``Error(string)`` revert data as its string's bytes; anything else unchanged."""
    if data[:4] == _ERROR_SELECTOR:
        try:
            (text,) = decode(["bytes"], data[4:], strict=False)
            return bytes(text)
        except Exception:  # not a well-formed Error(string): compare it raw
            return data
    return data


def _mismatch(expected: _Expectation, output: bytes) -> str | None:
    """Why the revert data ``output`` does not match ``expected`` (None if it does)."""
    wanted = expected.data
    if wanted is None:
        return None
    if not output and wanted:
        return "call reverted as expected, but without data"
    if expected.partial and output[:4] == wanted[:4]:
        return None
    actual = _decoded_reason(output)
    if actual == wanted or actual == _decoded_reason(wanted):
        return None
    return f"Error != expected error: {_show_reason(actual)} != {_show_reason(wanted)}"


def _show_reason(data: bytes) -> str:
    text = _decoded_reason(data)
    if text.isascii() and text.decode("ascii").isprintable():
        return text.decode("ascii")
    return "0x" + text.hex()


def _settle(expected: _Expectation, kind: int, depth: int, success: bool,
            output: bytes) -> tuple[bool, bytes]:
    """The outcome the caller sees of the message that ended an ``expectRevert``."""
    if depth <= expected.depth:  # the frame that expected a revert made no call
        return False, _error("call didn't revert at a lower depth than cheatcode call depth"
                             if not success else "next call did not revert as expected")
    if success:
        return False, _error("next call did not revert as expected")
    problem = _mismatch(expected, output)
    if problem is not None:
        return False, _error(problem)
    return True, b"" if kind == CREATE or kind == CREATE2 else DUMMY_CALL_OUTPUT


# ---------------------------------------------------------------------------- the table
def _assertion(check: AssertCheck) -> Callable[[Cheatcodes, _Call, Sequence[Any]], bytes]:
    def run(self: Cheatcodes, call: _Call, args: Sequence[Any]) -> bytes:
        failure = check(args)
        if failure is None:
            return b""
        parent = call.parent
        inspector = call.evm.inspector
        if inspector is not None and parent is not None:
            # The caller's pc is past its CALL (a CALL has no immediate bytes).
            inspector.on_log(parent, parent.pc - 1, (FORGE_ASSERTION_TOPIC,),
                             encode(["string"], [failure]))
        if self.assertions_revert:
            raise _Revert(failure)
        call.evm.state.set_storage(HEVM_ADDRESS, GLOBAL_FAIL_SLOT, 1)
        self.flagged = True
        return b""
    return run


_HANDLERS: dict[str, Callable[[Cheatcodes, _Call, Sequence[Any]], bytes]] = {
    "warp(uint256)": Cheatcodes._warp,
    "roll(uint256)": Cheatcodes._roll,
    "fee(uint256)": Cheatcodes._fee,
    "chainId(uint256)": Cheatcodes._chain_id,
    "coinbase(address)": Cheatcodes._coinbase,
    "prevrandao(bytes32)": Cheatcodes._prevrandao,
    "prevrandao(uint256)": Cheatcodes._prevrandao,
    "difficulty(uint256)": Cheatcodes._prevrandao,
    "getBlockNumber()": Cheatcodes._get_block_number,
    "getBlockTimestamp()": Cheatcodes._get_block_timestamp,
    "getChainId()": Cheatcodes._get_chain_id,
    "txGasPrice(uint256)": Cheatcodes._tx_gas_price,
    "deal(address,uint256)": Cheatcodes._deal,
    "store(address,bytes32,bytes32)": Cheatcodes._store,
    "load(address,bytes32)": Cheatcodes._load,
    "etch(address,bytes)": Cheatcodes._etch,
    "getNonce(address)": Cheatcodes._get_nonce,
    "setNonce(address,uint64)": Cheatcodes._set_nonce,
    "setNonceUnsafe(address,uint64)": Cheatcodes._set_nonce_unsafe,
    "prank(address)": Cheatcodes._prank1,
    "prank(address,address)": Cheatcodes._prank2,
    "startPrank(address)": Cheatcodes._start_prank1,
    "startPrank(address,address)": Cheatcodes._start_prank2,
    "stopPrank()": Cheatcodes._stop_prank,
    "expectRevert()": Cheatcodes._expect_revert,
    "expectRevert(bytes4)": Cheatcodes._expect_revert,
    "expectRevert(bytes)": Cheatcodes._expect_revert,
    "expectPartialRevert(bytes4)": Cheatcodes._expect_partial_revert,
    "assume(bool)": Cheatcodes._assume,
    "assumeNoRevert()": Cheatcodes._assume_no_revert,
    "addr(uint256)": Cheatcodes._addr,
    "sign(uint256,bytes32)": Cheatcodes._sign,
    "label(address,string)": Cheatcodes._label,
    "getLabel(address)": Cheatcodes._get_label,
    "getCode(string)": Cheatcodes._get_code,
    "deployCode(string)": Cheatcodes._deploy_code,
    "deployCode(string,bytes)": Cheatcodes._deploy_code_args,
    "deployCode(string,uint256)": Cheatcodes._deploy_code_value,
    "deployCode(string,bytes,uint256)": Cheatcodes._deploy_code_args_value,
}


def _types(signature: str) -> tuple[str, ...]:
    inner = signature[signature.index("(") + 1:-1]
    return tuple(inner.split(",")) if inner else ()


def _build() -> dict[bytes, _Cheat]:
    table: dict[bytes, _Cheat] = {}
    entries: list[tuple[str, tuple[str, ...], Callable[..., bytes]]] = [
        (signature, _types(signature), run) for signature, run in _HANDLERS.items()]
    entries += [(signature, types, _assertion(check))
                for signature, (types, check) in ASSERTIONS.items()]
    for signature, types, run in entries:
        static = all(t in _STATIC for t in types)
        table[function_selector(signature)] = _Cheat(signature, types, run, static)
    return table


_CHEATS: dict[bytes, _Cheat] = _build()


def supported_signatures() -> list[str]:
    """Every supported cheatcode signature, sorted."""
    return sorted(cheat.signature for cheat in _CHEATS.values())


# ---------------------------------------------------------------------------- unsupported
KNOWN_UNSUPPORTED: tuple[str, ...] = (
    # expectations on events, calls and memory
    "expectEmit()", "expectEmit(address)", "expectEmit(bool,bool,bool,bool)",
    "expectEmit(bool,bool,bool,bool,address)", "expectEmitAnonymous()",
    "expectCall(address,bytes)", "expectCall(address,uint256,bytes)",
    "expectCall(address,bytes,uint64)", "expectCall(address,uint256,bytes,uint64)",
    "expectCallMinGas(address,uint256,uint64,bytes)", "expectCreate(bytes,address)",
    "expectCreate2(bytes,address)", "expectSafeMemory(uint64,uint64)",
    "expectRevert(address)", "expectRevert(bytes4,address)", "expectRevert(bytes,address)",
    "expectRevert(uint64)", "expectRevert(bytes4,uint64)", "expectRevert(bytes,uint64)",
    "expectPartialRevert(bytes4,address)", "assumeNoRevert((address,bool,bytes))",
    "_expectCheatcodeRevert()", "_expectCheatcodeRevert(bytes)",
    # mocks and recording
    "mockCall(address,bytes,bytes)", "mockCall(address,uint256,bytes,bytes)",
    "mockCall(address,bytes4,bytes)", "mockCallRevert(address,bytes,bytes)",
    "mockCalls(address,bytes,bytes[])", "mockFunction(address,address,bytes)",
    "clearMockedCalls()", "record()", "stopRecord()", "accesses(address)", "recordLogs()",
    "getRecordedLogs()", "startStateDiffRecording()", "stopAndReturnStateDiff()",
    "startMappingRecording()", "stopMappingRecording()",
    # snapshots, forks, persistence
    "snapshot()", "snapshotState()", "revertTo(uint256)", "revertToState(uint256)",
    "revertToAndDelete(uint256)", "revertToStateAndDelete(uint256)",
    "deleteSnapshot(uint256)", "deleteStateSnapshot(uint256)", "createFork(string)",
    "createFork(string,uint256)", "createSelectFork(string)",
    "createSelectFork(string,uint256)", "selectFork(uint256)", "activeFork()",
    "rollFork(uint256)", "makePersistent(address)", "revokePersistent(address)",
    "isPersistent(address)", "allowCheatcodes(address)", "transact(bytes32)",
    # prank and broadcast variants
    "prank(address,bool)", "prank(address,address,bool)", "startPrank(address,bool)",
    "startPrank(address,address,bool)", "readCallers()", "broadcast()", "broadcast(address)",
    "broadcast(uint256)", "startBroadcast()", "startBroadcast(address)",
    "startBroadcast(uint256)", "stopBroadcast()",
    # state and block extras
    "resetNonce(address)", "setBlockhash(uint256,bytes32)", "blobhashes(bytes32[])",
    "blobBaseFee(uint256)", "getBlobBaseFee()", "copyStorage(address,address)",
    "setArbitraryStorage(address)", "cool(address)", "warmSlot(address,bytes32)",
    "cloneAccount(address,address)", "dumpState(string)", "loadAllocs(string)",
    "getDeployedCode(string)", "deployCode(string,bytes32)",
    "deployCode(string,bytes,bytes32)", "computeCreateAddress(address,uint256)",
    "computeCreate2Address(bytes32,bytes32,address)", "computeCreate2Address(bytes32,bytes32)",
    # keys and wallets
    "sign(bytes32)", "sign(address,bytes32)", "signCompact(uint256,bytes32)",
    "signP256(uint256,bytes32)", "createWallet(string)", "createWallet(uint256)",
    "deriveKey(string,uint32)", "rememberKey(uint256)", "publicKeyP256(uint256)",
    # gas
    "pauseGasMetering()", "resumeGasMetering()", "resetGasMetering()", "lastCallGas()",
    "snapshotGasLastCall(string)", "startSnapshotGas(string)", "stopSnapshotGas()",
    # skipping, randomness, utilities
    "skip(bool)", "skip(bool,string)", "assumeImplicitApproval(address)",
    "bound(uint256,uint256,uint256)", "bound(int256,int256,int256)", "randomUint()",
    "randomUint(uint256,uint256)", "randomAddress()", "randomBytes(uint256)", "setSeed(uint256)",
    "sleep(uint256)", "unixTime()", "breakpoint(string)", "pauseTracing()", "resumeTracing()",
    "getFoundryVersion()", "getEvmVersion()", "setEvmVersion(string)",
    # environment, files, processes, strings, JSON
    "ffi(string[])", "tryFfi(string[])", "envOr(string,uint256)", "envUint(string)",
    "envAddress(string)", "envBool(string)", "envString(string)", "envBytes32(string)",
    "envInt(string)", "envOr(string,address)", "envOr(string,bool)", "envOr(string,string)",
    "setEnv(string,string)", "envExists(string)", "projectRoot()", "readFile(string)",
    "readFileBinary(string)", "writeFile(string,string)", "readLine(string)", "exists(string)",
    "isFile(string)", "isDir(string)", "getArtifactPathByCode(bytes)",
    "rpcUrl(string)", "rpc(string,string)",
    "toString(address)", "toString(uint256)", "toString(int256)", "toString(bytes32)",
    "toString(bool)", "toString(bytes)", "parseUint(string)", "parseInt(string)",
    "parseAddress(string)", "parseBytes32(string)", "parseBool(string)", "parseBytes(string)",
    "toLowercase(string)", "toUppercase(string)", "trim(string)", "replace(string,string,string)",
    "split(string,string)", "indexOf(string,string)", "contains(string,string)",
    "parseJson(string)", "parseJson(string,string)", "parseJsonUint(string,string)",
    "parseJsonAddress(string,string)", "keyExistsJson(string,string)",
    "serializeUint(string,string,uint256)", "serializeAddress(string,string,address)",
    "serializeString(string,string,string)", "writeJson(string,string)",
    "parseToml(string)", "parseToml(string,string)",
)
"""Foundry cheatcodes secant recognises but does not implement (named in the error)."""


_KNOWN: dict[bytes, str] | None = None


def _known_unsupported() -> Mapping[bytes, str]:
    """Selector -> signature of :data:`KNOWN_UNSUPPORTED` (hashed at the first miss)."""
    global _KNOWN
    if _KNOWN is None:
        _KNOWN = {function_selector(s): s for s in KNOWN_UNSUPPORTED}
    return _KNOWN


def unsupported_cheatcode(selector: bytes) -> UnsupportedCheatcode:
    """The error for a call to ``vm`` with ``selector``, naming the cheatcode when known."""
    signature = _known_unsupported().get(selector)
    shown = f"vm.{signature}" if signature else "not a cheatcode secant knows"
    return UnsupportedCheatcode(
        f"unsupported cheatcode 0x{selector.hex()} ({shown})",
        "remove the call from the harness or replace it with a supported cheatcode "
        "(docs/cheatcodes.md lists them)", selector, signature)
