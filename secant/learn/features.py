"""Per-function features for imitation learning: ILF's Table 2 (§5.1).

ILF (He et al., CCS 2019) describes every public function ``f`` of the contract under test,
for the history ``t`` of transactions so far, by a feature vector ``α_s(f, t)``; the rows of
all functions form the matrix ``α_s(F, t)`` its policy network reads (§4.2). Table 2 asks for:

* **Revert, Assert, Return**: whether the last call to ``f`` in ``t`` ended that way, and the
  fraction of ``f``'s calls in ``t`` that did;
* **Transaction**: the fraction of the transactions in ``t`` that call ``f``;
* **Coverage**: instruction and basic-block coverage of the contract, and of ``f``;
* **Arguments**: how many arguments ``f`` takes, and how many of them are addresses;
* **Opcodes**: counts of 50 "distinctive" opcodes in ``f`` (arithmetic and stack
  operations left out);
* **Name**: a word embedding of ``f``'s name (word2vec vectors of its camelCase and
  snake_case sub-tokens, averaged).

What is computed here. :func:`function_infos` gathers the static facts of each function
(:class:`FunctionInfo`): its arguments, its name split into sub-tokens, and its *region*, the
code it can run, from which the opcode counts and the coverage denominators come.
:func:`feature_matrix` adds the history and the campaign's coverage and returns one row per
function in :data:`FEATURE_NAMES` order; :func:`ended_as` says how a transaction ended, as
the history records it (:class:`Step`).

Where this departs from the paper, and why:

* **No word2vec.** The name is recorded as lower-cased sub-tokens
  (:attr:`FunctionInfo.name_tokens`), not as a vector in the matrix: a learner embeds them
  with whatever vocabulary it has, and the dataset does not depend on a 300-dimensional
  pretrained model secant does not ship.
* **Function regions are static reachability from the dispatcher.** A function's entry is
  where the selector dispatcher goes for its selector (``_entry``: solc's patterns, legacy
  and via-IR, which Vyper 0.4's selector buckets also match); its region is every basic
  block reachable from there (``_region`` explains the rule for jumps whose target is on
  the stack). Helpers shared by several functions (ABI decoding, checked arithmetic,
  internal functions) count in the region of every function that can reach them. A
  function whose entry is not found (another dispatcher, the fallback and receive
  functions, a contract whose code is unknown) gets an empty region: zero opcode counts and
  zero function coverage.
* **The opcode list is ours.** The paper lists its 50 opcodes in an appendix that the text
  we have lacks; :data:`FEATURE_OPCODES` is 50 opcodes chosen by the paper's rule: every
  opcode that reads the environment, the block, storage or other accounts, hashes, logs,
  calls, creates or halts, and no arithmetic, comparison, bitwise, stack (PUSH, DUP, SWAP,
  POP), jump or plain memory (MLOAD, MSTORE, MSTORE8) opcode, nor STOP.
* **Assert.** ILF counts a transaction ending in the INVALID opcode (how Solidity compiled
  ``assert`` before 0.8) as an assert; Solidity 0.8 reverts with ``Panic(0x01)`` instead, and
  both count here. Other panics (overflow, division by zero, ...) are reverts, as are the
  other exceptional halts (out of gas, invalid jump, stack errors) and rejected transactions.
* **Payable** is recorded in :class:`FunctionInfo` but is not a column: Table 2 has no such
  feature (ILF uses it to decide whether to sample an amount at all).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from secant.abi import PANIC_SELECTOR, function_selector
from secant.engine.mutators import FunctionSpec
from secant.engine.values import VType
from secant.evm.analysis import analyze, code_end
from secant.evm.blockgen import Instruction
from secant.evm.errors import InvalidOpcode
from secant.evm.forks import Fork
from secant.evm.opcodes import (
    ADDRESS,
    BALANCE,
    BASEFEE,
    BLOBBASEFEE,
    BLOBHASH,
    BLOCKHASH,
    CALL,
    CALLCODE,
    CALLDATACOPY,
    CALLDATALOAD,
    CALLDATASIZE,
    CALLER,
    CALLVALUE,
    CHAINID,
    CODECOPY,
    CODESIZE,
    COINBASE,
    CREATE,
    CREATE2,
    DELEGATECALL,
    DUP1,
    EQ,
    EXTCODECOPY,
    EXTCODEHASH,
    EXTCODESIZE,
    GAS,
    GASLIMIT,
    GASPRICE,
    HALTS,
    INVALID,
    ISZERO,
    JUMP,
    JUMPDEST,
    JUMPI,
    KECCAK256,
    LOG0,
    LOG1,
    LOG2,
    LOG3,
    LOG4,
    MCOPY,
    MSIZE,
    NUMBER,
    OPS,
    ORIGIN,
    PREVRANDAO,
    PUSH0,
    PUSH1,
    PUSH4,
    PUSH32,
    RETURN,
    RETURNDATACOPY,
    RETURNDATASIZE,
    REVERT,
    SELFBALANCE,
    SELFDESTRUCT,
    SLOAD,
    SSTORE,
    STATICCALL,
    SUB,
    SWAP16,
    TIMESTAMP,
    TLOAD,
    TSTORE,
    XOR,
)
from secant.types import TxOutcome

__all__ = [
    "ENDINGS",
    "CodeCut",
    "FEATURE_NAMES",
    "FEATURE_OPCODES",
    "OPCODE_NAMES",
    "FunctionInfo",
    "Step",
    "code_sizes",
    "code_cut",
    "function_entry",
    "ended_as",
    "feature_matrix",
    "function_infos",
    "split_name",
]

FEATURE_OPCODES: tuple[int, ...] = (
    ADDRESS, BALANCE, ORIGIN, CALLER, CALLVALUE, CALLDATALOAD, CALLDATASIZE, CALLDATACOPY,
    CODESIZE, CODECOPY, GASPRICE, EXTCODESIZE, EXTCODECOPY, RETURNDATASIZE, RETURNDATACOPY,
    EXTCODEHASH, BLOCKHASH, COINBASE, TIMESTAMP, NUMBER, PREVRANDAO, GASLIMIT, CHAINID,
    SELFBALANCE, BASEFEE, BLOBHASH, BLOBBASEFEE, SLOAD, SSTORE, TLOAD, TSTORE, MCOPY, MSIZE,
    GAS, KECCAK256, LOG0, LOG1, LOG2, LOG3, LOG4, CREATE, CALL, CALLCODE, RETURN,
    DELEGATECALL, CREATE2, STATICCALL, REVERT, INVALID, SELFDESTRUCT,
)
"""The 50 opcodes whose counts describe a function (module docstring: the list is ours)."""

OPCODE_NAMES: tuple[str, ...] = tuple(OPS[op].name for op in FEATURE_OPCODES)
"""The mnemonics of :data:`FEATURE_OPCODES`, in the same order."""

ENDINGS: tuple[str, ...] = ("return", "revert", "assert")
"""How a transaction can end, as :class:`Step` records it (:func:`ended_as`)."""
_RETURN, _REVERT, _ASSERT = ENDINGS

FEATURE_NAMES: tuple[str, ...] = (
    "revert_last", "revert_fraction", "assert_last", "assert_fraction",
    "return_last", "return_fraction", "transaction_fraction",
    "contract_instruction_coverage", "contract_block_coverage",
    "function_instruction_coverage", "function_block_coverage",
    "arguments", "address_arguments",
    *("op_" + name for name in OPCODE_NAMES),
)
"""The columns of a :func:`feature_matrix` row, in order."""

_OPCODE_INDEX = {op: index for index, op in enumerate(FEATURE_OPCODES)}

_PANIC_ASSERT = PANIC_SELECTOR + (1).to_bytes(32, "big")
"""Revert data of Solidity's ``Panic(0x01)``: a failed ``assert``."""

# A name's sub-tokens: an upper-case run before a capitalised word ("HTTP" in
# "getHTTPResponse"), a capitalised or lower-case word, an upper-case run, or digits.
_TOKEN = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


@dataclass(frozen=True)
class FunctionInfo:
    """Static facts of one callable function."""

    signature: str
    """The signature, e.g. ``transfer(address,uint256)`` (``FunctionSpec.signature``)."""
    to: int | None
    """The contract it is called on (``FunctionSpec.to``; None: the main contract)."""
    arguments: int
    """Number of top-level parameters."""
    address_arguments: int
    """Parameters that are addresses or contain addresses (each parameter counts once)."""
    payable: bool
    """Whether the function accepts ether."""
    name_tokens: tuple[str, ...]
    """The function's name split into lower-cased sub-tokens (:func:`split_name`)."""
    opcodes: tuple[int, ...]
    """Counts of :data:`FEATURE_OPCODES` (same order) over the function's region."""
    blocks: frozenset[int]
    """Block start pcs of the function's region (empty when its entry was not found)."""
    instructions: int
    """Instructions in the region."""
    code_hash: bytes
    """Keccak of the runtime code the region is in (empty when the code is unknown)."""
    code_blocks: Mapping[int, int] = field(default_factory=dict, repr=False, compare=False)
    """Instructions per block of the whole code (block start -> count), shared by the
    functions of one code: :func:`feature_matrix` weighs covered blocks with it."""
    param_tokens: tuple[tuple[str, ...], ...] = ()
    """Per parameter, its name split into sub-tokens (empty when the ABI names none)."""


@dataclass(frozen=True)
class Step:
    """One transaction of the history: which function (signature, to) and how it ended."""

    signature: str
    to: int | None
    ended: str
    """``"return"``, ``"revert"`` or ``"assert"`` (:func:`ended_as`)."""


def split_name(name: str) -> tuple[str, ...]:
    """The lower-cased sub-tokens of an identifier: camelCase, PascalCase, snake_case, digits.

    ``getOwnerBalance2`` gives ``("get", "owner", "balance", "2")``, ``ERC20Transfer`` gives
    ``("erc", "20", "transfer")`` and ``_mint`` gives ``("mint",)``.
    """
    return tuple(token.lower() for token in _TOKEN.findall(name))


def ended_as(outcome: TxOutcome) -> str:
    """How a transaction ended: ``"return"``, ``"revert"`` or ``"assert"``.

    ``"assert"`` is a failed assertion: a revert with Solidity's ``Panic(0x01)`` or a halt on
    the INVALID opcode (solc before 0.8). Every other failure is ``"revert"``: a REVERT
    (other panics included), any other exceptional halt, a rejected transaction.
    """
    if outcome.success:
        return _RETURN
    if outcome.reverted:
        return _ASSERT if outcome.output == _PANIC_ASSERT else _REVERT
    if not outcome.invalid and outcome.error == InvalidOpcode.reason:
        return _ASSERT
    return _REVERT


@dataclass(frozen=True)
class _Code:
    """One runtime code cut into basic blocks, up to solc's metadata."""

    instructions: list[Instruction]
    blocks: dict[int, list[Instruction]]
    following: dict[int, int]
    sizes: Mapping[int, int]
    jumpdests: frozenset[int]
    tag_widths: frozenset[int]
    enabled: frozenset[int]


def _push_width(op: int) -> int:
    """The immediate width of a PUSH (0 for PUSH0), -1 for any other opcode."""
    return op - PUSH0 if PUSH0 <= op <= PUSH32 else -1


def _code(code_hash: bytes, code: bytes, fork: Fork) -> _Code:
    """The blocks of ``code`` that start before its metadata, with what ``_region`` needs."""
    analysis = analyze(code, code_hash, fork)
    end = code_end(code)
    blocks: dict[int, list[Instruction]] = {}
    for start, instructions in analysis.blocks:
        if start < end:
            blocks[start] = [ins for ins in instructions if ins[0] < end]
    starts = list(blocks)
    following = dict(zip(starts, starts[1:]))
    flat = [ins for start in starts for ins in blocks[start]]
    jumpdests = frozenset(pc for pc in analysis.jumpdests if pc in blocks)
    # The widths solc pushes jump targets with: those of the pushes right before a JUMP or
    # JUMPI that name a JUMPDEST (solc's assembler gives every tag the same width).
    widths = frozenset(
        _push_width(flat[k - 1][1]) for k in range(1, len(flat))
        if flat[k][1] in (JUMP, JUMPI) and _push_width(flat[k - 1][1]) > 0
        and flat[k - 1][2] in jumpdests
    )
    sizes = MappingProxyType({start: len(instrs) for start, instrs in blocks.items()})
    return _Code(flat, blocks, following, sizes, jumpdests,
                 widths or frozenset(range(1, 33)), fork.opcodes)


def code_cut(code_hash: bytes, code: bytes, fork: Fork) -> _Code:
    """``code`` cut into basic blocks up to solc's metadata, as function regions see it.

    The result's ``blocks`` map a block start to its instructions (``(pc, opcode, push
    value)``), ``following`` a block to the next one, ``jumpdests`` the JUMPDESTs among the
    block starts and ``tag_widths`` the widths solc pushes jump targets with. The static
    scans of ``secant.learn.slots`` and ``secant.learn.view`` walk these same blocks.
    """
    return _code(code_hash, code, fork)


def function_entry(cut: _Code, signature: str) -> int | None:
    """Where the dispatcher of ``cut`` (:func:`code_cut`) goes for ``signature``.

    None for the fallback and receive functions and when no dispatcher pattern is found.
    """
    if "(" not in signature:
        return None
    return _entry(cut, int.from_bytes(function_selector(signature), "big"))


CodeCut = _Code
"""A code cut into blocks (:func:`code_cut`)."""

_ENDS = frozenset({JUMP, JUMPI, JUMPDEST, *HALTS})
"""Instructions a selector comparison never spans."""

_COMPARES = frozenset({EQ, SUB, XOR})
"""How a dispatcher compares the selector (``GT``/``LT`` only split the search)."""


def _entry(code: _Code, selector: int) -> int | None:
    """Where solc's dispatcher goes for ``selector``, or None when no dispatcher does.

    The pattern is ``PUSHn selector``, then a comparison within the next four instructions
    (a ``DUP`` of the selector may come first, on either side), then ``PUSHn x; JUMPI``:

    * ``EQ; PUSHn dest; JUMPI``: the entry is ``dest``;
    * ``EQ; ISZERO; PUSHn next; JUMPI``, or ``SUB``/``XOR`` instead of ``EQ; ISZERO`` (jump
      away when the selector differs; via-IR does this for a switch's last case): the entry
      is the instruction after the JUMPI.

    ``PUSHn selector ... GT`` (solc's binary search over selectors) is not a match. ``n`` is
    at most 4: solc drops a selector's leading zero bytes. Vyper 0.4 jumps to a bucket of
    selectors through a table, then compares with ``PUSH4 selector; DUP2; XOR; PUSH2 next;
    JUMPI``: its functions are found too.
    """
    flat = code.instructions
    count = len(flat)
    for i, (_, op, value) in enumerate(flat):
        if not PUSH1 <= op <= PUSH4 or value != selector:
            continue
        compare = next((j for j in range(i + 1, min(i + 5, count))
                        if flat[j][1] in _COMPARES or flat[j][1] in _ENDS), None)
        if compare is None or flat[compare][1] not in _COMPARES:
            continue
        k = compare + 1
        differs = flat[compare][1] != EQ
        if not differs and k < count and flat[k][1] == ISZERO:
            differs = True
            k += 1
        if k + 1 >= count or _push_width(flat[k][1]) <= 0 or flat[k + 1][1] != JUMPI:
            continue
        if differs and k + 2 < count and flat[k + 2][0] in code.blocks:
            return flat[k + 2][0]
        if not differs and flat[k][2] in code.jumpdests:
            return flat[k][2]
    return None


def _keeps_address(op: int) -> bool:
    """Whether ``op`` right after a push leaves the pushed value alone as a code address.

    Stack shuffles, jumps and instructions that pop nothing do; anything that consumes the
    value as data (``PUSH1 0x40 MLOAD``, ``... ADD``) does not.
    """
    if DUP1 <= op <= SWAP16 or op in (JUMP, JUMPI):
        return True
    info = OPS.get(op)
    return info is not None and info.pops == 0


def _region(code: _Code, entry: int) -> frozenset[int]:
    """The blocks reachable from ``entry``.

    A block leads to the next one unless it ends in a JUMP or a halt, and to the target of
    a ``PUSHn x; JUMP`` or ``PUSHn x; JUMPI`` at its end. solc also jumps to addresses it
    carried on the stack: an internal call pushes its return address and the callee's
    entry, and the callee returns with a bare JUMP. So every JUMPDEST whose address is
    pushed inside the region (with the width solc gives jump targets, and not consumed as
    data by the next instruction) is reachable too. This over-approximates: a helper's
    return address is reachable from every caller of the helper, and a constant that
    happens to equal a JUMPDEST's address pulls that block in.
    """
    seen = {entry}
    todo = [entry]
    blocks, jumpdests, widths = code.blocks, code.jumpdests, code.tag_widths
    while todo:
        start = todo.pop()
        instrs = blocks[start]
        targets: list[int] = []
        last = instrs[-1][1]
        if last in (JUMP, JUMPI) and len(instrs) >= 2 and _push_width(instrs[-2][1]) >= 0:
            targets.append(instrs[-2][2])
        if last == JUMPI or (last != JUMP and last not in HALTS and last in code.enabled):
            following = code.following.get(start)
            if following is not None:
                targets.append(following)
        for k, (_, op, value) in enumerate(instrs):
            if (_push_width(op) in widths and value in jumpdests
                    and (k + 1 == len(instrs) or _keeps_address(instrs[k + 1][1]))):
                targets.append(value)
        for target in targets:
            if target in blocks and target not in seen:
                seen.add(target)
                todo.append(target)
    return frozenset(seen)


def _has_address(vt: VType) -> bool:
    """Whether an ABI type is an address or contains one."""
    if vt.kind == "address":
        return True
    if vt.kind == "array":
        return vt.elem is not None and _has_address(vt.elem)
    if vt.kind == "tuple":
        return any(_has_address(f) for f in vt.fields)
    return False


def function_infos(specs: Sequence[FunctionSpec], codes: Mapping[int | None, tuple[bytes, bytes]],
                   fork: Fork) -> list[FunctionInfo]:
    """The static facts of each function of ``specs``, in order.

    ``codes`` maps a ``FunctionSpec.to`` (contract address; None means the main contract)
    to (code_hash, runtime code). A function whose contract is not in ``codes``, or whose
    entry no dispatcher pattern reveals, gets an empty region.
    """
    tables: dict[int | None, tuple[bytes, _Code] | None] = {}
    infos: list[FunctionInfo] = []
    for spec in specs:
        if spec.to not in tables:
            found = codes.get(spec.to)
            tables[spec.to] = None if found is None else (found[0], _code(*found, fork))
        table = tables[spec.to]
        name = spec.signature.partition("(")[0]
        counts = [0] * len(FEATURE_OPCODES)
        region: frozenset[int] = frozenset()
        instructions = 0
        code_hash = b""
        sizes: Mapping[int, int] = {}
        if table is not None:
            code_hash, code = table
            sizes = code.sizes
            entry = function_entry(code, spec.signature)
            if entry is not None:
                region = _region(code, entry)
                for start in region:
                    instrs = code.blocks[start]
                    instructions += len(instrs)
                    for _, op, _ in instrs:
                        index = _OPCODE_INDEX.get(op)
                        if index is not None:
                            counts[index] += 1
        infos.append(FunctionInfo(
            signature=spec.signature, to=spec.to, arguments=len(spec.types),
            address_arguments=sum(1 for vt in spec.types if _has_address(vt)),
            payable=spec.payable, name_tokens=split_name(name.rpartition(".")[2]),
            opcodes=tuple(counts), blocks=region, instructions=instructions,
            code_hash=code_hash, code_blocks=sizes,
            param_tokens=tuple(split_name(param) for param in spec.names),
        ))
    return infos


def code_sizes(codes: Iterable[tuple[bytes, bytes]], fork: Fork) -> dict[bytes, tuple[int, int]]:
    """code_hash -> (blocks, instructions) of each (code_hash, runtime code).

    Only what starts before solc's CBOR metadata counts: those bytes never run.
    """
    out: dict[bytes, tuple[int, int]] = {}
    for code_hash, code in codes:
        if code_hash not in out:
            sizes = _code(code_hash, code, fork).sizes
            out[code_hash] = (len(sizes), sum(sizes.values()))
    return out


def _ratio(part: float, whole: float) -> float:
    return part / whole if whole else 0.0


def feature_matrix(infos: Sequence[FunctionInfo], history: Sequence[Step],
                   covered_blocks: Collection[tuple[bytes, int]],
                   code_sizes: Mapping[bytes, tuple[int, int]]) -> list[list[float]]:
    """One row per function (:data:`FEATURE_NAMES` order) for the history ``history``.

    This is ILF's ``α_s(F, t)``. ``*_last`` is 1.0 when the last call of the function in
    the history ended so (0.0 when it was never called); ``*_fraction`` the fraction of its
    calls that did; ``transaction_fraction`` its calls over the whole history.
    ``covered_blocks`` are (code_hash, block start) pairs, as ``Coverage.blocks`` holds them:
    the contract's coverage is over ``code_sizes[code_hash]`` (0.0 when unknown), the
    function's over its region (0.0 when empty); instruction coverage counts the
    instructions of the covered blocks. Then the argument counts and the opcode counts.
    """
    calls: dict[tuple[str, int | None], Counter[str]] = {}
    last: dict[tuple[str, int | None], str] = {}
    for step in history:
        key = (step.signature, step.to)
        calls.setdefault(key, Counter())[step.ended] += 1
        last[key] = step.ended
    wanted = {info.code_hash for info in infos}
    covered: dict[bytes, set[int]] = {code_hash: set() for code_hash in wanted}
    for code_hash, pc in covered_blocks:
        if code_hash in wanted:
            covered[code_hash].add(pc)
    contract: dict[bytes, tuple[float, float]] = {}
    rows: list[list[float]] = []
    for info in infos:
        key = (info.signature, info.to)
        ends = calls.get(key, Counter())
        total = ends.total()
        ended = last.get(key)
        mine = covered[info.code_hash]
        if info.code_hash not in contract:
            blocks, instructions = code_sizes.get(info.code_hash, (0, 0))
            sizes = info.code_blocks
            contract[info.code_hash] = (
                _ratio(sum(sizes.get(pc, 0) for pc in mine), instructions),
                _ratio(len(mine), blocks),
            )
        region_covered = [pc for pc in info.blocks if pc in mine]
        row = [
            float(ended == _REVERT), _ratio(ends[_REVERT], total),
            float(ended == _ASSERT), _ratio(ends[_ASSERT], total),
            float(ended == _RETURN), _ratio(ends[_RETURN], total),
            _ratio(total, len(history)),
            *contract[info.code_hash],
            _ratio(sum(info.code_blocks.get(pc, 0) for pc in region_covered), info.instructions),
            _ratio(len(region_covered), len(info.blocks)),
            float(info.arguments), float(info.address_arguments),
            *(float(count) for count in info.opcodes),
        ]
        rows.append(row)
    return rows
