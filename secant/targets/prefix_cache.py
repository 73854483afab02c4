"""A bounded LRU cache of the state after a test case's prefix (Harvey-style sequence fuzzing).

Most mutations change only the last transaction of a test case, yet every run replays the
whole sequence from the post-deployment snapshot. :class:`PrefixCache` keeps, per prefix
``case[:-1]``, what running it left behind:

* the world-state changes relative to the chain's base snapshot, as a redo diff
  (:meth:`secant.evm.state.WorldState.changes_since`), replayed through the journal so the
  next ``TestChain.reset`` still undoes them;
* the block environment after the prefix (blocks advance per transaction);
* the trace recorder's containers for the prefix's transactions (coverage, branch and
  SSTORE lists with their per-transaction marks, panics);
* the prefix's transaction outcomes.

With that, :class:`~secant.targets.contract.ContractTarget` runs only the last transaction
on a hit and returns the same ``ContractRun`` a full replay would. An entry is only valid
for the chain (and base snapshot) and recorder type it was taken with: use one cache per
target and ``clear`` it if the chain is sealed again.

Sizes are approximate: per-element constants from ``sys.getsizeof`` of typical values (a
256-bit int is 60 bytes, a 6-tuple 88, a set slot about 33), plus the length of any byte
string held. Shared objects (code hashes, the code of replaced accounts) are counted as if
owned, so the estimate errs on the high side.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from secant.evm.env import BlockEnv
from secant.evm.state import StateDiff
from secant.targets.trace import RecorderCheckpoint
from secant.types import TxOutcome, TxSeq

__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_MAX_ENTRIES", "PrefixCache", "PrefixEntry",
           "approx_entry_bytes"]

DEFAULT_MAX_ENTRIES = 256
"""Enough for the seeds a campaign mutates in turn; a fuzzer keeps returning to a few."""

DEFAULT_MAX_BYTES = 64 << 20
"""64 MiB: an entry of a short prefix is a few kB, one with long loops a few MB."""

# Approximate bytes per element (see the module docstring).
_ENTRY = 600  # the entry, its dataclasses, the dict/OrderedDict slot and the key tuple
_TX = 200  # one Tx of the key with a few small arguments
_ACCOUNT = 150  # one AccountChange with its ints
_SLOT = 190  # one (slot, value) pair: a 2-tuple and two 256-bit ints
_SET_ITEM = 33 + 64 + 60  # set slot, a 2/3-tuple, an int (a code hash is shared)
_LIST_ITEM = 8 + 72 + 60  # list slot, a 3/4-tuple, a 256-bit int
_ITEM = {
    "branches": 8 + 88 + 28 + 60 + 60,  # list slot, 6-tuple, pc, two 256-bit operands
    "branch_marks": 8 + 28,
    "sstore_marks": 8 + 28,
    "panics": 8 + 300,  # the event; its trail and output are added below
}
_TRAIL_PC = 8 + 28
_BLOCK_START = 33 + 28  # a set slot and a pc (the code hash is shared)
_OUTCOME = 8 + 56 + 100


def approx_entry_bytes(prefix: TxSeq, diff: StateDiff, recorder: RecorderCheckpoint,
                       outcomes: tuple[TxOutcome, ...]) -> int:
    """Approximate memory held by one cache entry (see the module docstring)."""
    size = _ENTRY + _TX * len(prefix)
    for tx in prefix:
        size += sum(len(a) for a in tx.args if isinstance(a, bytes | str))
    for change in diff.accounts:
        size += _ACCOUNT + _SLOT * len(change.storage)
        if change.replaced and change.code:
            size += len(change.code)
    for name, values in recorder.lists:
        size += _ITEM.get(name, _LIST_ITEM) * len(values)
        if name == "panics":
            size += sum(_TRAIL_PC * len(p.trail) + len(p.output) for p in values)
    for _, frozen in recorder.sets:
        size += _SET_ITEM * len(frozen)
    for _, starts in recorder.blocks:
        size += _BLOCK_START * len(starts)
    for outcome in outcomes:
        size += _OUTCOME + len(outcome.output) + len(outcome.error or "")
    return size


@dataclass(frozen=True, slots=True)
class PrefixEntry:
    """What running one prefix left behind (see the module docstring)."""

    diff: StateDiff
    env: BlockEnv
    recorder: RecorderCheckpoint
    outcomes: tuple[TxOutcome, ...]
    nbytes: int


class PrefixCache:
    """LRU cache from a prefix ``TxSeq`` to its :class:`PrefixEntry`.

    Bounded both in entries and in approximate bytes (``nbytes``). ``get`` counts hits and
    misses and makes a hit the most recently used; ``put`` evicts least recently used
    entries until both bounds hold. An entry larger than ``max_bytes`` on its own is not
    stored (counted in ``oversized``).

    ``admit_after`` is how many misses of a prefix it takes before the target stores it
    (``admit``): 1 stores every prefix at its first miss; 2 stores a prefix only when it
    comes back, so prefixes that are run once (a mutated prefix transaction whose case
    never becomes a seed) cost neither the recording (a few tens of microseconds) nor an
    entry that evicts a useful one. The last ``4 * max_entries`` missed prefixes are
    remembered for that.
    """

    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES,
                 max_bytes: int = DEFAULT_MAX_BYTES, admit_after: int = 1) -> None:
        if max_entries < 1 or max_bytes < 1:
            raise ValueError("a prefix cache needs room for at least one entry")
        if admit_after < 1:
            raise ValueError("admit_after counts misses: it must be at least 1")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.admit_after = admit_after
        self._entries: OrderedDict[TxSeq, PrefixEntry] = OrderedDict()
        self._missed: OrderedDict[TxSeq, int] = OrderedDict()
        # How many entries have each prefix length (``lengths_below``).
        self._lengths: dict[int, int] = {}
        # Those lengths, longest first: rebuilt when one comes or goes (rare), read per miss.
        self._by_length: tuple[int, ...] = ()
        # Prefixes to store at their first miss, even mid-run (``expect``).
        self._expected: OrderedDict[TxSeq, None] = OrderedDict()
        self.hits = 0
        self.misses = 0
        self.partial_hits = 0  # misses resumed from a shorter cached prefix
        self.expected_stores = 0  # heads stored mid-run because ``expect`` named them
        self.evictions = 0
        self.oversized = 0
        self.nbytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, prefix: object) -> bool:
        """Whether ``prefix`` is cached (no counting, no reordering)."""
        return prefix in self._entries

    @property
    def hit_rate(self) -> float:
        """Hits over lookups (0.0 before the first lookup)."""
        lookups = self.hits + self.misses
        return self.hits / lookups if lookups else 0.0

    def get(self, prefix: TxSeq) -> PrefixEntry | None:
        """The entry of ``prefix`` (now the most recently used), or None; counted."""
        entry = self._entries.get(prefix)
        if entry is None:
            self.misses += 1
            return None
        self.hits += 1
        self._entries.move_to_end(prefix)
        return entry

    def lengths_below(self, length: int) -> list[int]:
        """The prefix lengths shorter than ``length`` that some entry has, longest first."""
        return [n for n in self._by_length if n < length]

    def longest_head(self, prefix: TxSeq, longer_than: int = 0
                     ) -> tuple[int, PrefixEntry | None]:
        """The longest cached head of ``prefix`` longer than ``longer_than``: (length, entry).

        (0, None) when there is none. Structural mutations keep the head of a sequence (an
        insertion at position k keeps ``case[:k]``), so a shorter prefix often is in the
        cache when the full one is not. Only lengths that some entry has are looked up; the
        entry found becomes the most recently used (not counted as a hit).
        """
        for length in self.lengths_below(len(prefix)):
            if length <= longer_than:
                break
            entry = self.peek(prefix[:length])
            if entry is not None:
                return length, entry
        return 0, None

    def peek(self, prefix: TxSeq) -> PrefixEntry | None:
        """The entry of ``prefix`` (now the most recently used), or None; not counted.

        ``partial_hits`` counts the entries the target resumes from this way.
        """
        entry = self._entries.get(prefix)
        if entry is not None:
            self._entries.move_to_end(prefix)
        return entry

    def expect(self, prefix: TxSeq) -> None:
        """Store ``prefix`` and every shorter prefix of it when a run passes them.

        The fuzzer calls this for the seed it is about to mutate. Its mutations of the last
        transaction all share the seed's prefix; its structural mutations (an insertion at
        position k, a changed transaction k) share ``prefix[:k]``. The target stores each
        expected prefix at its first miss, and snapshots the shorter ones on the way
        (``expected``), so later runs of the round resume from the longest one they share.
        """
        expected = self._expected
        for length in range(1, len(prefix) + 1):
            head = prefix[:length]
            if head in self._entries:
                continue
            expected[head] = None
            expected.move_to_end(head)
        while len(expected) > 4 * self.max_entries:
            expected.popitem(last=False)

    def expected(self, prefix: TxSeq) -> bool:
        """Whether a run passing ``prefix`` should store it (``expect``); not counted."""
        return prefix in self._expected

    def admit(self, prefix: TxSeq) -> bool:
        """Whether to store ``prefix`` now that it missed (see ``admit_after``)."""
        if self.admit_after == 1:
            return True
        if prefix in self._expected:
            del self._expected[prefix]
            return True
        missed = self._missed
        count = missed.pop(prefix, 0) + 1
        if count >= self.admit_after:
            return True
        missed[prefix] = count
        if len(missed) > 4 * self.max_entries:
            missed.popitem(last=False)
        return False

    def put(self, prefix: TxSeq, diff: StateDiff, env: BlockEnv, recorder: RecorderCheckpoint,
            outcomes: tuple[TxOutcome, ...]) -> PrefixEntry | None:
        """Store what ``prefix`` left behind; return the entry (None if too large to keep)."""
        nbytes = approx_entry_bytes(prefix, diff, recorder, outcomes)
        if nbytes > self.max_bytes:
            self.oversized += 1
            return None
        entries = self._entries
        old = entries.pop(prefix, None)
        if old is not None:
            self.nbytes -= old.nbytes
            self._forget_length(len(prefix))
        entry = PrefixEntry(diff, env, recorder, outcomes, nbytes)
        entries[prefix] = entry
        count = self._lengths.get(len(prefix), 0)
        self._lengths[len(prefix)] = count + 1
        if not count:
            self._by_length = tuple(sorted(self._lengths, reverse=True))
        if prefix in self._expected:
            del self._expected[prefix]
            self.expected_stores += 1
        self.nbytes += nbytes
        while len(entries) > self.max_entries or self.nbytes > self.max_bytes:
            dropped, evicted = entries.popitem(last=False)
            self.nbytes -= evicted.nbytes
            self._forget_length(len(dropped))
            self.evictions += 1
        return entry

    def _forget_length(self, length: int) -> None:
        count = self._lengths[length] - 1
        if count:
            self._lengths[length] = count
        else:
            del self._lengths[length]
            self._by_length = tuple(sorted(self._lengths, reverse=True))

    def clear(self) -> None:
        """Drop every entry (the counters stay)."""
        self._entries.clear()
        self._lengths.clear()
        self._by_length = ()
        self._missed.clear()
        self._expected.clear()
        self.nbytes = 0

    def stats(self) -> dict[str, float]:
        """The counters as a dict (for progress output and benchmarks)."""
        return {"entries": len(self._entries), "bytes": self.nbytes, "hits": self.hits,
                "misses": self.misses, "evictions": self.evictions,
                "oversized": self.oversized, "hit_rate": self.hit_rate}
