"""The OceanBase store's searchable texts held in the process, per (family, scope): each
searchable record's evidence row and its terms as full-text postings
(``stores._postings``), under the rule the vectors follow (``_vector_cache``): never
served unless the scope's write version, read in the retrieve's snapshot, confirms them.

A held set carries the version and next key it was read at. At the same version it is
served as it is; at a newer one it is patched in the same snapshot with the rows of the
searchable records of the keys handed out since (keys only grow), and when that version
also took a record out of search (``removed_at`` above the held version) with the keys
still searchable read first; with nothing held, the scope's rows are read whole. A set
newer than the snapshot's version (another retrieve of this process read one) is not
served: the engine searches.

With a scope's texts held, a prepare sends the engine the snapshot's start (its state
and the query terms' frequencies) and its commit, nothing else: the full-text channel
is BM25 over the postings (the scope's own statistics, as ``_search.lexical`` takes them
from the engine, over every record holding a selected term), and the evidence of the
keys it ranks is made from the rows held, rated with the postings' counts, while the
version its retrieve read is the scope's last read one (as the evidence the store keeps
rated is served: ``TermCounts.keep``). The engine's per-key reads were the larger part
of a prepare on a held scope: 1-2 ms for the 60 evidence rows a prepare of 10,000 notes
reads, 4 ms for 250.

Rows are kept as the engine gives them (tuples of strings and ints, which the garbage
collector untracks) and made into ``Evidence`` only when asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import attrs
import numpy as np

from ...vocabulary._evidence import ThreadNeighbours
from ...vocabulary._keys import among
from ...vocabulary._speakers import passed_over
from ...vocabulary._turns import let_loop_in
from .._postings import BUILD_CHUNK, Builder, ScopePostings
from . import _schema as sql
from ._search import evidence_of

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ...vocabulary._evidence import Evidence
    from ...vocabulary._families import Family
    from ._search import ScopeState

    Row = tuple[Any, ...]

#: Bytes of texts held in the process across every scope.
CACHE_BYTES: Final = 128 * 1024 * 1024
#: Scopes of more searchable records of a family are searched by the engine (about
#: 10 MB of postings and as much of text held, and a second of Python to read at this
#: size, as the embedded store's postings).
MOST_ROWS: Final = 32768
#: What a held row costs beyond its strings' characters: the tuple, the strings' headers.
ROW_BYTES: Final = 400

#: A searchable record's evidence row (``EVIDENCE_COLUMNS``), its time as a number (the
#: order of its thread), and then its terms (held as postings, not in the row).
ROW_COLUMNS: Final = f"{sql.EVIDENCE_COLUMNS}, created_ts, terms"
#: The rows of the scope's searchable records of one family with keys in ``[%s, %s)``.
ROWS_BETWEEN: Final = (
    f"SELECT {ROW_COLUMNS} FROM satchel_records WHERE scope = %s AND family = %s"
    " AND live = 1 AND k >= %s AND k < %s ORDER BY k"
)
#: The keys below ``%s`` of the scope's searchable records of one family.
LIVE_KEYS: Final = (
    "SELECT k FROM satchel_records WHERE scope = %s AND family = %s AND live = 1 AND k < %s"
)


@attrs.frozen
class ScopeTexts:
    """A scope's searchable records of one family as of write ``version`` (``rows`` of
    them), with the keys below ``next_key``: their evidence rows by key, and their terms
    as postings."""

    version: int
    next_key: int
    rows: int
    postings: ScopePostings
    records: dict[int, Row] = attrs.field(eq=False, repr=False)
    record_bytes: int = 0
    #: Each threaded key's thread in order and its place there, made by the first
    #: neighbours asked of the set (a set never changes, so once is enough).
    places: dict[int, tuple[list[int], int]] = attrs.field(factory=dict, eq=False, repr=False)

    @property
    def nbytes(self) -> int:
        return self.postings.nbytes + self.record_bytes

    def evidence(self, family: Family, scope_id: str, keys: Sequence[int]) -> dict[int, Evidence]:
        """The evidence of ``keys`` searchable at the version (the others left out, as
        a read leaves them)."""
        held = self.records
        return {key: evidence_of(family, scope_id, held[key]) for key in keys if key in held}

    def neighbours(self, keys: Sequence[int], reach: int) -> dict[int, ThreadNeighbours] | None:
        """The searchable records up to ``reach`` places before and after each of
        ``keys`` in its thread (by time, then key), nearest first, passing over those
        whose text says nothing, as ``_search.thread_neighbours`` reads them; None when
        a key has no thread (a conversation's turns without one are the engine's to
        order)."""
        held = self.records
        if any(key in held and held[key][5] is None for key in keys):
            return None
        places = self._places()
        return {
            key: ThreadNeighbours.in_line(*places[key], reach, self._passed)
            for key in keys
            if key in places
        }

    def _passed(self, key: int) -> bool:
        """Whether a neighbours read passes over ``key``'s record (its text says nothing)."""
        return passed_over(self.records[key][3])

    def _places(self) -> dict[int, tuple[list[int], int]]:
        if not self.places and self.records:
            threads: dict[Any, list[tuple[float, int]]] = {}
            for seen, (key, row) in enumerate(self.records.items()):
                if row[5] is not None:
                    threads.setdefault(row[5], []).append((float(row[8]), key))
                if seen % BUILD_CHUNK == BUILD_CHUNK - 1:
                    let_loop_in()
            for members in threads.values():
                members.sort()
                line = [key for _, key in members]
                self.places.update((key, (line, place)) for place, key in enumerate(line))
        return self.places

    def counts(self, terms: Sequence[str], spelled: Callable[[str], str]) -> dict[str, int]:
        """How many of the records hold each of ``terms`` (held as ``spelled(term)``;
        the terms none holds left out)."""
        held = {spelled(term): term for term in terms}
        found = self.postings.frequencies("", list(held))
        return {held[form]: count for form, count in found.items()}

    def patched(
        self, at: ScopeState, found: Sequence[Row], removed: Sequence[int]
    ) -> ScopeTexts | None:
        """This set at ``at``, with the rows ``found`` of the keys handed out since and
        without the ``removed`` keys; None if the postings cannot follow."""
        postings = self.postings.patched(
            "", [(row[0], row[-1]) for row in found], removed, plain=False
        )
        if postings is None:
            return None
        records = dict(self.records)
        gone = sum(_row_bytes(records.pop(key)) for key in removed if key in records)
        added = [(row[0], row[:-1]) for row in found]
        records.update(added)
        size = self.record_bytes - gone + sum(_row_bytes(held) for _, held in added)
        return ScopeTexts(at.version, at.next_key, at.rows, postings, records, size)


def of(at: ScopeState, found: Sequence[Row]) -> ScopeTexts:
    """The set of the rows ``found`` (ascending keys, every searchable one) at ``at``;
    made in a worker thread, a stretch of rows at a time with the GIL given up between
    (``let_loop_in``)."""
    builder = Builder()
    records: dict[int, Row] = {}
    size = 0
    for start in range(0, len(found), BUILD_CHUNK):
        stretch = found[start : start + BUILD_CHUNK]
        builder.add([(row[0], row[-1]) for row in stretch])
        held = [(row[0], row[:-1]) for row in stretch]
        records.update(held)
        size += sum(_row_bytes(row) for _, row in held)
        let_loop_in()
    return ScopeTexts(at.version, at.next_key, at.rows, builder.built(), records, size)


async def read_whole(cur: Any, family: Family, scope_id: str, at: ScopeState) -> list[Row]:
    """The rows of the scope's searchable records as of ``at``."""
    await cur.execute(ROWS_BETWEEN, (scope_id, family, 0, at.next_key))
    return list(await cur.fetchall())


async def read_since(
    cur: Any, family: Family, scope_id: str, held: ScopeTexts, at: ScopeState
) -> tuple[list[Row], list[int]]:
    """What moved ``held`` to ``at``: the rows of the searchable records of the keys
    handed out since, and the held keys no longer searchable."""
    removed: list[int] = []
    if at.removed_at > held.version:
        await cur.execute(LIVE_KEYS, (scope_id, family, held.next_key))
        live = np.fromiter((int(key) for (key,) in await cur.fetchall()), np.int64)
        keys = held.postings.rows
        removed = keys[~among(keys, live)].tolist()
    await cur.execute(ROWS_BETWEEN, (scope_id, family, held.next_key, at.next_key))
    return list(await cur.fetchall()), removed


def _row_bytes(row: Row) -> int:
    """The bytes a row held costs, as counted against the bound."""
    return ROW_BYTES + sum(len(value) for value in row if isinstance(value, str))
