"""The session dedup ledger kept in the store (``shared_sessions=True``), so that every
runtime and every ``satchel serve`` replica over one store sees one session state.

Its semantics are the in-process ledger's (``_ledger``): a prepare whose pack is
returned is a turn of its owner's session; an item served at ``abstract`` or deeper at
turn t is held back at turns t+1 .. t+n and may return at t+n+1; bare-URI items and
what the budget dropped or a digest discarded are never held. The store
(:class:`~satchel.stores.SessionStore`) numbers the turns, atomically per session, so
two replicas taking turns of one session count each other's. Its bounds differ: a
session keeps its :data:`MAX_SESSION_ITEMS` most recently served identities, and one
with no turn for :data:`MAX_SESSION_AGE` seconds is forgotten (there is no bound on
the number of sessions). It reads the store once per prepare and writes one
transaction per returned pack, never anything else.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Final

from ._ledger import SEEN_TIERS

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from ..builder import DeliveredItem
    from ..stores import SessionStore
    from ._ledger import SessionOwner

#: Seconds a shared session lives after its last turn: a day.
MAX_SESSION_AGE: Final = 24 * 3600.0
#: Served identities a shared session keeps, the most recently served: about sixteen
#: full packs of 64 items (8,000 bytes of short notes), four of a 32 KB pack's 263.
MAX_SESSION_ITEMS: Final = 1024


class SharedLedger:
    """Held-back identities per owner and session, kept in ``store``.

    Args:
        store: where the sessions live.
        turns: how many following turns a served item is held back.
        clock: the wall clock, in UTC epoch seconds, that dates each turn.
        max_age: seconds a session lives after its last turn.
        max_items: served identities each session keeps.
    """

    def __init__(
        self,
        store: SessionStore,
        turns: int,
        *,
        clock: Callable[[], float] = time.time,
        max_age: float = MAX_SESSION_AGE,
        max_items: int = MAX_SESSION_ITEMS,
    ) -> None:
        self._store = store
        self._turns = turns
        self._clock = clock
        self._max_age = max_age
        self._max_items = max_items

    async def next_turn(
        self, session_id: str, *, owner: SessionOwner = None
    ) -> tuple[int, frozenset[str]]:
        """The number the session's next turn would have, and the identities held back
        in it. Writes nothing."""
        since = self._clock() - self._max_age
        return await self._store.next_turn(owner, session_id, turns=self._turns, active_since=since)

    async def record(
        self,
        session_id: str,
        turn: int,
        delivered: Iterable[DeliveredItem],
        *,
        owner: SessionOwner = None,
    ) -> None:
        """Count one more turn of the session and remember what the reader saw in it.

        ``turn`` is what :meth:`next_turn` said; the store numbers the turn itself (one
        more than the session's last, whoever recorded it), so a turn another replica
        recorded meanwhile still counts.
        """
        seen = [item.evidence.identity for item in delivered if item.tier in SEEN_TIERS]
        now = self._clock()
        await self._store.record_turn(
            owner,
            session_id,
            seen,
            now=now,
            active_since=now - self._max_age,
            keep=self._max_items,
        )
