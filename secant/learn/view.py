"""What a learned policy knows of a campaign's callable surface before any transaction.

:class:`ContractView` gathers, per function in ``InputSpace.functions`` order, the static
facts ILF's networks read besides the per-step features (§5.1, Appendix B):

* ``fallback``: the function is the fallback or receive function;
* ``code_share``: the instructions of its region over those of its contract's code (the
  region as ``secant.learn.features`` computes it; 0 when its entry was not found);
* ``reads`` and ``writes``: the storage slots its region may read and write
  (``secant.learn.slots``; a mapping's or dynamic array's entries count as its base slot).
  ILF's graph links two functions when one writes what the other reads or writes;
* ``constants``: the distinct PUSH constants of its region that could be integer arguments,
  sorted, at most :data:`MAX_CONSTANTS` (the smallest kept): 0 and 1 are left out, and so
  are jump targets (a push of a JUMPDEST's address at solc's tag width), function and error
  selectors (four bytes alone or shifted to the top of the word), masks (one run of at
  least eight 1 bits, such as ``0xff..ff`` and ``0xff..ff00..00``), revert reasons (a word
  of at least four printable ASCII bytes from its top) and memory and calldata offsets (a
  constant the next instruction uses as one: MLOAD, MSTORE, MSTORE8, CALLDATALOAD,
  CALLDATACOPY, or the ``4`` solc subtracts from CALLDATASIZE);

and the campaign's ``senders`` and ordered ``addresses`` an address argument may take:
the senders (same order), then the deployed targets (main contract first), then attacker
contracts not already listed, then the zero address, with ``address_roles`` naming each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from secant.abi import function_selector
from secant.chain.accounts import derived_address
from secant.chain.attackers import AttackerKind
from secant.engine.policy import InputSpace
from secant.evm.forks import Fork
from secant.evm.opcodes import (
    CALLDATACOPY,
    CALLDATALOAD,
    CALLDATASIZE,
    JUMP,
    JUMPI,
    MLOAD,
    MSTORE,
    MSTORE8,
    PUSH0,
    PUSH32,
)
from secant.learn.features import CodeCut, FunctionInfo, code_cut, function_entry
from secant.learn.slots import region_slots

__all__ = ["ADDRESS_ROLES", "MAX_CONSTANTS", "ContractView", "attacker_addresses",
           "contract_view", "function_constants"]

MAX_CONSTANTS = 64
"""Most constants kept per function."""

ADDRESS_ROLES = ("sender", "target", "attacker", "zero")
"""The roles an address candidate can have, in the order candidates are listed."""

_ERROR_SELECTORS = frozenset({0x08C379A0, 0x4E487B71})  # Error(string), Panic(uint256)
_OFFSET_USES = frozenset({MLOAD, MSTORE, MSTORE8, CALLDATALOAD, CALLDATASIZE, CALLDATACOPY})


@dataclass(frozen=True)
class ContractView:
    """What a learned policy and the dataset know of a campaign's functions before it runs."""

    functions: tuple[FunctionInfo, ...]
    """``features.FunctionInfo`` of each function, same order as ``InputSpace.functions``."""
    fallback: tuple[bool, ...]
    """Per function: it is the fallback or receive function."""
    code_share: tuple[float, ...]
    """Per function: instructions of its region / instructions of its code (0..1)."""
    reads: tuple[frozenset[int], ...]
    """Per function: storage slots it may read."""
    writes: tuple[frozenset[int], ...]
    """Per function: storage slots it may write."""
    constants: tuple[tuple[int, ...], ...]
    """Per function: distinct PUSH constants of its region usable as integer arguments."""
    senders: tuple[int, ...]
    """``InputSpace.senders``, in order."""
    addresses: tuple[int, ...]
    """Ordered address candidates (module docstring), no duplicates."""
    address_roles: tuple[str, ...]
    """Per candidate: ``"sender"``, ``"target"``, ``"attacker"`` or ``"zero"``."""


def attacker_addresses() -> tuple[int, ...]:
    """The addresses of the chain's attacker contracts (fixed: ``TestChain`` derives them)."""
    return tuple(derived_address(f"attacker contract {kind.value}") for kind in AttackerKind)


def _is_mask(value: int) -> bool:
    """One run of at least eight 1 bits (``0xff``, ``0xff..ff``, ``0xffff0000``)."""
    if value <= 0:
        return False
    low = (value & -value).bit_length() - 1
    run = value >> low
    return run & (run + 1) == 0 and run.bit_length() >= 8


def _is_text(value: int) -> bool:
    """A left-aligned string of at least four printable ASCII bytes (a revert reason)."""
    data = value.to_bytes(32, "big").rstrip(b"\0")
    return len(data) >= 4 and len(value.to_bytes(32, "big")) == 32 and value >> 248 != 0 \
        and all(0x20 <= byte < 0x7F for byte in data)


def _is_selector(value: int, selectors: frozenset[int]) -> bool:
    if value in selectors:
        return True
    # Shifted to the top of the word (how solc compares and reverts with selectors).
    return value >> 224 in selectors and value & ((1 << 224) - 1) == 0


def function_constants(instructions: Sequence[tuple[int, int, int]], jumpdests: frozenset[int],
                       tag_widths: frozenset[int], selectors: frozenset[int],
                       limit: int = MAX_CONSTANTS) -> tuple[int, ...]:
    """The constants of a region's instructions (in code order) worth an integer argument.

    ``jumpdests`` and ``tag_widths`` tell jump targets (a push of a JUMPDEST's address at
    solc's tag width); ``selectors`` the function selectors to leave out (error selectors
    are left out too). Sorted, at most ``limit`` (the smallest). See the module docstring.
    """
    every = selectors | _ERROR_SELECTORS
    found: set[int] = set()
    for k, (_, op, value) in enumerate(instructions):
        if not PUSH0 < op <= PUSH32 or value in (0, 1):
            continue
        following = instructions[k + 1][1] if k + 1 < len(instructions) else None
        if value in jumpdests and (op - PUSH0 in tag_widths or following in (JUMP, JUMPI)):
            continue
        if following in _OFFSET_USES:
            continue
        if _is_selector(value, every) or _is_mask(value) or _is_text(value):
            continue
        found.add(value)
    return tuple(sorted(found)[:limit])


def contract_view(space: InputSpace, infos: Sequence[FunctionInfo],
                  function_codes: Mapping[int | None, tuple[bytes, bytes]],
                  codes: Sequence[tuple[bytes, bytes]], fork: Fork,
                  targets: Sequence[int] = ()) -> ContractView:
    """The view of a campaign: ``infos`` are ``features.function_infos`` of ``space``.

    ``function_codes`` maps a ``FunctionSpec.to`` (None: the main contract) to its (code
    hash, runtime code), as ``PolicyContext.function_codes``; ``codes`` every deployed
    target code; ``targets`` the deployed targets' addresses, main contract first (without
    them, the known addresses of ``space.dictionary`` that are neither senders nor attacker
    contracts stand in, in their order, after the other functions' targets).
    """
    specs = list(space.functions)
    if len(specs) != len(infos):
        raise ValueError(f"{len(infos)} function infos for {len(specs)} functions")
    selectors = frozenset(int.from_bytes(function_selector(spec.signature), "big")
                          for spec in specs if "(" in spec.signature)
    cuts: dict[bytes, CodeCut] = {}
    for code_hash, code in function_codes.values():
        if code_hash not in cuts:
            cuts[code_hash] = code_cut(code_hash, code, fork)
    for code_hash, code in codes:
        if code_hash not in cuts:
            cuts[code_hash] = code_cut(code_hash, code, fork)
    fallback: list[bool] = []
    share: list[float] = []
    reads: list[frozenset[int]] = []
    writes: list[frozenset[int]] = []
    constants: list[tuple[int, ...]] = []
    for info in infos:
        fallback.append("(" not in info.signature)
        cut = cuts.get(info.code_hash)
        if cut is None or not info.blocks:
            share.append(0.0)
            reads.append(frozenset())
            writes.append(frozenset())
            constants.append(())
            continue
        total = sum(cut.sizes.values())
        share.append(info.instructions / total if total else 0.0)
        entry = function_entry(cut, info.signature)
        access = region_slots(cut.blocks, cut.following, info.blocks, entry, cut.enabled)
        reads.append(access.reads)
        writes.append(access.writes)
        instructions = [ins for start in sorted(info.blocks) for ins in cut.blocks[start]]
        constants.append(function_constants(instructions, cut.jumpdests, cut.tag_widths,
                                            selectors))
    senders = tuple(space.senders)
    addresses: list[int] = []
    roles: list[str] = []

    def add(address: int, role: str) -> None:
        if address not in addresses:
            addresses.append(address)
            roles.append(role)

    for sender in senders:
        add(sender, "sender")
    attackers = attacker_addresses()
    if targets:
        for target in targets:
            add(target, "target")
    else:
        for spec in specs:
            if spec.to is not None:
                add(spec.to, "target")
        for known in space.dictionary.addresses:
            if known not in attackers:
                add(known, "target")
    for known in space.dictionary.addresses:
        if known in attackers:
            add(known, "attacker")
    add(0, "zero")
    return ContractView(tuple(infos), tuple(fallback), tuple(share), tuple(reads),
                        tuple(writes), tuple(constants), senders, tuple(addresses),
                        tuple(roles))

