"""The OceanBase store's sessions (``SessionStore``): two tables made with the others
(``_schema.BASE_TABLES``).

``satchel_sessions`` holds each session's last turn and when it was recorded;
``satchel_session_items`` the identities its turns served (keyed by their digest, since
an identity may be longer than an index key), with the turn that last served each. A
turn is one transaction that first bumps the session's row, which locks it until the
commit, so two processes recording turns of one session get two numbers. Every
statement is a round trip, and the commit a log sync: a turn runs as few as it can. No scope's row
in ``satchel_scopes`` is touched: a session's turn moves no write version. Reading a
session's state is one statement, so one snapshot.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Final

from .._sessions import item_key

#: Seconds between two sweeps of expired sessions by one store.
SWEEP_EVERY: Final = 60.0

if TYPE_CHECKING:
    from collections.abc import Sequence

#: The session's last turn, with every identity served in its last ``turns`` turns (a
#: row with a NULL identity when none).
STATE: Final = (
    "SELECT s.turn, i.identity FROM satchel_sessions s"
    " LEFT JOIN satchel_session_items i"
    " ON i.session_key = s.session_key AND i.turn > s.turn - %s"
    " WHERE s.session_key = %s AND s.seen_at >= %s"
)
EXPIRED_ITEMS: Final = (
    "DELETE FROM satchel_session_items WHERE session_key IN"
    " (SELECT session_key FROM satchel_sessions WHERE seen_at < %s)"
)
EXPIRED: Final = "DELETE FROM satchel_sessions WHERE seen_at < %s"
#: The session's next turn: its last plus one, or 1 for a new or expired session (the
#: ``IF`` reads ``seen_at`` before it is set).
NEXT_TURN: Final = (
    "INSERT INTO satchel_sessions (session_key, turn, seen_at) VALUES (%s, 1, %s)"
    " ON DUPLICATE KEY UPDATE turn = IF(seen_at < %s, 1, turn + 1), seen_at = VALUES(seen_at)"
)
#: The turn just counted, and how many identities the session holds.
COUNTED: Final = (
    "SELECT s.turn, (SELECT COUNT(*) FROM satchel_session_items i"
    " WHERE i.session_key = s.session_key) FROM satchel_sessions s WHERE s.session_key = %s"
)
SERVED: Final = (
    "INSERT INTO satchel_session_items (session_key, item_key, identity, turn) VALUES {rows}"
    " ON DUPLICATE KEY UPDATE turn = VALUES(turn)"
)
#: All but the session's ``keep`` most recently served identities (ties: by identity).
BEYOND_BOUND: Final = (
    "DELETE FROM satchel_session_items WHERE session_key = %s AND item_key IN"
    " (SELECT item_key FROM (SELECT item_key FROM satchel_session_items"
    " WHERE session_key = %s ORDER BY turn DESC, identity"
    " LIMIT %s, 2147483647) beyond)"
)


async def next_turn(
    cur: Any, key: str, turns: int, active_since: float
) -> tuple[int, frozenset[str]]:
    """The session's next turn and what its last ``turns`` turns served."""
    await cur.execute(STATE, (turns, key, active_since))
    found = await cur.fetchall()
    if not found:
        return 1, frozenset()
    return int(found[0][0]) + 1, frozenset(str(i) for _, i in found if i is not None)


class SessionTables:
    """One store's access to the session tables; remembers when it last dropped the
    expired sessions, which it does at most every :data:`SWEEP_EVERY` seconds (a
    session that expired is restarted by its own next turn, whenever that is)."""

    def __init__(self) -> None:
        self._swept: float | None = None

    async def record_turn(
        self, cur: Any, key: str, served: Sequence[str], now: float, active_since: float, keep: int
    ) -> int:
        """Record one more turn of the session in one transaction: a bump of the
        session's row (which locks it until the commit), a read of the turn, the served
        identities; the bound and the sweep only when there is something to drop."""
        identities = list(dict.fromkeys(served))
        sweep = self._swept is None or not 0 <= now - self._swept < SWEEP_EVERY
        await cur.execute("BEGIN")
        try:
            await cur.execute(NEXT_TURN, (key, now, active_since))
            await cur.execute(COUNTED, (key,))
            turn, held = (int(value) for value in await cur.fetchone())
            if turn == 1 and held:  # an expired session starts again with nothing
                await cur.execute(
                    "DELETE FROM satchel_session_items WHERE session_key = %s", (key,)
                )
                held = 0
            if identities:
                rows = ", ".join(["(%s, %s, %s, %s)"] * len(identities))
                values = [v for i in identities for v in (key, item_key(i), i, turn)]
                await cur.execute(SERVED.format(rows=rows), values)
            if held + len(identities) > keep:
                await cur.execute(BEYOND_BOUND, (key, key, keep))
            if sweep:
                await cur.execute(EXPIRED_ITEMS, (active_since,))
                await cur.execute(EXPIRED, (active_since,))
            await cur.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(Exception):
                await cur.execute("ROLLBACK")
            raise
        if sweep:
            self._swept = now
        return turn


async def forget(cur: Any, ranges: list[tuple[str, str]]) -> None:
    """Drop every session's served identities in ``ranges``
    (``_sessions.erased_identities``), inside an erase's transaction."""
    if not ranges:
        return
    where = " OR ".join(["(identity >= %s AND identity < %s)"] * len(ranges))
    await cur.execute(
        f"DELETE FROM satchel_session_items WHERE {where}", [v for pair in ranges for v in pair]
    )
