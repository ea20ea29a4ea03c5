"""The in-process store's sessions (``SessionStore``): plain dictionaries.

Every method runs without an ``await``, so a turn is recorded whole before any other
task looks: that is the atomicity the protocol asks for.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

import attrs

from .._sessions import matches, session_key

if TYPE_CHECKING:
    from collections.abc import Sequence


@attrs.define
class _Session:
    turn: int
    seen_at: float  # when its last turn was recorded (UTC epoch seconds)
    served: dict[str, int] = attrs.Factory(dict)  # identity -> the turn it was last served


class Sessions:
    """Every session of one store, by :func:`~.._sessions.session_key`, the least
    recently recorded first (so the expired ones are found at the front)."""

    def __init__(self) -> None:
        self._sessions: OrderedDict[str, _Session] = OrderedDict()

    def next_turn(
        self, owner: str | None, session_id: str, *, turns: int, active_since: float
    ) -> tuple[int, frozenset[str]]:
        session = self._sessions.get(session_key(owner, session_id))
        if session is None or session.seen_at < active_since:
            return 1, frozenset()
        oldest = session.turn + 1 - turns
        return session.turn + 1, frozenset(i for i, t in session.served.items() if t >= oldest)

    def record_turn(
        self,
        owner: str | None,
        session_id: str,
        served: Sequence[str],
        *,
        now: float,
        active_since: float,
        keep: int,
    ) -> int:
        while self._sessions:
            oldest = next(iter(self._sessions.values()))
            if oldest.seen_at >= active_since:
                break
            self._sessions.popitem(last=False)
        key = session_key(owner, session_id)
        session = self._sessions.pop(key, None)
        if session is None or session.seen_at < active_since:
            session = _Session(0, now)
        self._sessions[key] = session
        session.turn += 1
        session.seen_at = now
        session.served.update(dict.fromkeys(served, session.turn))
        if len(session.served) > keep:  # the most recent first, then by identity
            ranked = sorted(session.served.items(), key=lambda item: (-item[1], item[0]))
            session.served = dict(ranked[:keep])
        return session.turn

    def forget(self, ranges: list[tuple[str, str]]) -> None:
        """Drop the served identities in ``ranges`` (``_sessions.erased_identities``)."""
        for session in self._sessions.values():
            for identity in [i for i in session.served if matches(i, ranges)]:
                del session.served[identity]

    def clear(self) -> None:
        self._sessions.clear()
