"""The session dedup ledger: what a session was served recently is held back a while.

With a ``session_id`` and the runtime option ``dedup_turns > 0``, each prepare whose pack
is returned to the caller is a turn of that session; a failed or cancelled prepare is
not and cools nothing. An item served at tier ``abstract`` or deeper at turn t is held
back at turns t+1 .. t+n and may return at t+n+1. An item served only as a bare ``uri``
citation, or dropped by the budget, is never held back: the reader has not seen it.
In-process and bounded (least recently used sessions are forgotten); it must never write
to the store. The preparer asks it once per prepare what the turn holds back (that goes
into the prepare's ``Exclusions.held_back``) and tells it once what the turn served.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Final

import attrs

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..builder import DeliveredItem

#: Tiers at which an item counts as seen by the reader.
SEEN_TIERS: Final = frozenset({"abstract", "overview", "full"})


@attrs.define
class _Session:
    turn: int = 0
    served: dict[str, int] = attrs.Factory(dict)  # identity -> turn it was last served


class DedupLedger:
    """Held-back identities per session, for ``turns`` turns after they were served.

    Args:
        turns: how many following turns a served item is held back.
        max_sessions: sessions kept; the least recently used is forgotten first.
    """

    def __init__(self, turns: int, *, max_sessions: int = 4096) -> None:
        self._turns = turns
        self._max_sessions = max_sessions
        self._sessions: OrderedDict[str, _Session] = OrderedDict()

    def next_turn(self, session_id: str) -> tuple[int, frozenset[str]]:
        """The number of the session's next turn and the identities held back in it.

        Nothing is consumed: the turn counts only when :meth:`record` is called with it,
        once its pack has been returned. A prepare that fails or is cancelled leaves the
        session as it was.
        """
        session = self._touch(session_id)
        turn = session.turn + 1
        # Served before turn - n: never held back again, whatever turn comes next.
        oldest = turn - self._turns
        session.served = {i: t for i, t in session.served.items() if t >= oldest}
        return turn, frozenset(session.served)

    def record(self, session_id: str, turn: int, delivered: Iterable[DeliveredItem]) -> None:
        """Count ``turn`` as served and remember what the reader saw in it: the items
        served at abstract or deeper."""
        session = self._touch(session_id)
        session.turn = max(session.turn, turn)
        for item in delivered:
            if item.tier in SEEN_TIERS:
                session.served[item.evidence.identity] = turn

    def _touch(self, session_id: str) -> _Session:
        """The session, now the most recently used; the least recently used past the bound
        are forgotten."""
        session = self._sessions.pop(session_id, None) or _Session()
        self._sessions[session_id] = session
        while len(self._sessions) > self._max_sessions:
            self._sessions.popitem(last=False)
        return session
