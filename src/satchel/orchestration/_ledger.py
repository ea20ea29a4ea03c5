"""The session dedup ledger: what a session was served recently is held back a while.

With a ``session_id`` and the runtime option ``dedup_turns > 0``, each prepare whose pack
is returned to the caller is a turn of that session; a failed or cancelled prepare is
not and cools nothing. An item served at tier ``abstract`` or deeper at turn t is held
back at turns t+1 .. t+n and may return at t+n+1. An item served only as a bare ``uri``
citation, or dropped by the budget, is never held back: the reader has not seen it.

A session belongs to its owner: the caller's identity (the service's token name; None
for a host calling the runtime in its own process). The same session id under two owners
is two sessions, and each owner's sessions are bounded on their own, least recently
used forgotten first, so no owner can push another's sessions out; past the bound on
owners the least recently active owner is forgotten whole. In-process and bounded; it
must never write to the store. The preparer asks it once per prepare what the turn
holds back (that goes into the prepare's ``Exclusions.held_back``) and tells it once
what the turn served. ``_shared_ledger.SharedLedger`` keeps the same ledger in the store
instead, with the same two methods.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Final, TypeAlias

import attrs

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..builder import DeliveredItem

#: Tiers at which an item counts as seen by the reader.
SEEN_TIERS: Final = frozenset({"abstract", "overview", "full"})
#: Sessions kept per owner (for an in-process host, the one owner None: the whole
#: ledger, as before sessions had owners).
MAX_SESSIONS_PER_OWNER: Final = 4096
#: Owners kept. Owners are the service's configured tokens, which a caller cannot
#: make up, so this bounds memory (with the bound above) rather than guarding a share.
MAX_OWNERS: Final = 64

#: Who a session belongs to: a caller's identity, or None for the runtime's own host.
SessionOwner: TypeAlias = "str | None"


@attrs.define
class _Session:
    turn: int = 0
    served: dict[str, int] = attrs.Factory(dict)  # identity -> turn it was last served


class DedupLedger:
    """Held-back identities per owner and session, for ``turns`` turns after they were
    served.

    Args:
        turns: how many following turns a served item is held back.
        max_sessions_per_owner: sessions kept for each owner; past it that owner's least
            recently used session is forgotten, never another owner's.
        max_owners: owners kept; past it the least recently active owner is forgotten
            with all its sessions.
    """

    def __init__(
        self,
        turns: int,
        *,
        max_sessions_per_owner: int = MAX_SESSIONS_PER_OWNER,
        max_owners: int = MAX_OWNERS,
    ) -> None:
        self._turns = turns
        self._max_sessions = max_sessions_per_owner
        self._max_owners = max_owners
        self._owners: OrderedDict[SessionOwner, OrderedDict[str, _Session]] = OrderedDict()

    async def next_turn(
        self, session_id: str, *, owner: SessionOwner = None
    ) -> tuple[int, frozenset[str]]:
        """The number of the session's next turn and the identities held back in it.

        Nothing is consumed: the turn counts only when :meth:`record` is called with it,
        once its pack has been returned. A prepare that fails or is cancelled leaves the
        session as it was.
        """
        session = self._touch(owner, session_id)
        turn = session.turn + 1
        # Served before turn - n: never held back again, whatever turn comes next.
        oldest = turn - self._turns
        session.served = {i: t for i, t in session.served.items() if t >= oldest}
        return turn, frozenset(session.served)

    async def record(
        self,
        session_id: str,
        turn: int,
        delivered: Iterable[DeliveredItem],
        *,
        owner: SessionOwner = None,
    ) -> None:
        """Count ``turn`` as served and remember what the reader saw in it: the items
        served at abstract or deeper. Never a checkpoint: it cannot be cancelled half
        way."""
        session = self._touch(owner, session_id)
        session.turn = max(session.turn, turn)
        for item in delivered:
            if item.tier in SEEN_TIERS:
                session.served[item.evidence.identity] = turn

    def _touch(self, owner: SessionOwner, session_id: str) -> _Session:
        """The owner's session, both now the most recently used; past the bounds the
        owner's least recently used sessions, then the least recently used owners, are
        forgotten."""
        sessions = self._owners.pop(owner, None)
        if sessions is None:
            sessions = OrderedDict()
        self._owners[owner] = sessions
        while len(self._owners) > self._max_owners:
            self._owners.popitem(last=False)
        session = sessions.pop(session_id, None) or _Session()
        sessions[session_id] = session
        while len(sessions) > self._max_sessions:
            sessions.popitem(last=False)
        return session
