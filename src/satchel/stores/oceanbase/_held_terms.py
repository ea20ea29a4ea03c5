"""The OceanBase store's full-text postings held in the process (``stores._postings``),
per (family, scope), under the rule its vectors follow (``_vector_cache``): never served
unless the scope's write version, read in the retrieve's snapshot, confirms them.

A held set carries the version and next key it was read at. At the same version it is
served as it is; at a newer one it is patched in the same snapshot with the terms of the
searchable records of the keys handed out since (keys only grow), and when that version
also took a record out of search (``removed_at`` above the held version) with the keys
still searchable read first; with nothing held, the scope's terms are read whole. A set
newer than the snapshot's version (another retrieve of this process read one) is not
served: the engine searches.

With the postings held, the full-text channel sends no statement: BM25 over the scope's
own statistics (its searchable records and their terms, as ``_search.lexical`` takes
them from the engine), over every record holding a selected term.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import attrs
import numpy as np

from .._postings import ScopePostings, Totals
from . import _schema as sql

if TYPE_CHECKING:
    from ...vocabulary._families import Family
    from ._search import ScopeState

#: Bytes of postings held in the process across every scope.
CACHE_BYTES: Final = 64 * 1024 * 1024
#: Scopes of more searchable records of a family are searched by the engine (about
#: 10 MB held and a second of Python to read at this size, as the embedded store's).
MOST_ROWS: Final = 32768


@attrs.frozen
class ScopeTerms:
    """A scope's postings of one family as of write ``version``, with the keys below
    ``next_key``."""

    version: int
    next_key: int
    postings: ScopePostings

    @property
    def nbytes(self) -> int:
        return self.postings.nbytes


def totals(state: ScopeState) -> Totals:
    """BM25's statistics of the scope at ``state``: its searchable records and terms."""
    return Totals(state.rows, state.term_total)


async def read_whole(cur: Any, family: Family, scope_id: str, state: ScopeState) -> list[Any]:
    """The ``(k, terms)`` rows of the scope's searchable records as of ``state``."""
    await cur.execute(sql.TERMS_BETWEEN, (scope_id, family, 0, state.next_key))
    return list(await cur.fetchall())


async def read_since(
    cur: Any, family: Family, scope_id: str, held: ScopeTerms, state: ScopeState
) -> tuple[list[tuple[int, str]], list[int]]:
    """What moved ``held`` to ``state``: the ``(k, terms)`` rows of the searchable
    records of the keys handed out since, and the held keys no longer searchable."""
    removed: list[int] = []
    if state.removed_at > held.version:
        await cur.execute(sql.LIVE_KEYS, (scope_id, family, held.next_key))
        live = np.fromiter((int(key) for (key,) in await cur.fetchall()), np.int64)
        rows = held.postings.rows
        removed = rows[~np.isin(rows, live)].tolist()
    await cur.execute(sql.TERMS_BETWEEN, (scope_id, family, held.next_key, state.next_key))
    added = [(int(key), terms) for key, terms in await cur.fetchall()]
    return added, removed
