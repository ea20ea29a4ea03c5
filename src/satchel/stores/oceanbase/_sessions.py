"""The OceanBase store's sessions (``SessionStore``): two tables made with the others
(``_schema.BASE_TABLES``).

``satchel_sessions`` holds each session's last turn and when it was recorded;
``satchel_session_items`` the identities its turns served (keyed by their digest, since
an identity may be longer than an index key), with the turn that last served each. A
turn is one transaction in which the session's row is bumped, which locks it until the
commit, so two processes recording turns of one session get two numbers. No scope's row
in ``satchel_scopes`` is touched: a session's turn moves no write version. Reading a
session's state is one statement, so one snapshot.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Final

from .._sessions import item_key

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
NEXT_TURN: Final = (
    "INSERT INTO satchel_sessions (session_key, turn, seen_at) VALUES (%s, 1, %s)"
    " ON DUPLICATE KEY UPDATE turn = turn + 1, seen_at = VALUES(seen_at)"
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


async def record_turn(
    cur: Any, key: str, served: Sequence[str], now: float, active_since: float, keep: int
) -> int:
    """Record one more turn of the session in one transaction: every expired session is
    dropped first (this one too, which then starts again at 1)."""
    await cur.execute("BEGIN")
    try:
        await cur.execute(EXPIRED_ITEMS, (active_since,))
        await cur.execute(EXPIRED, (active_since,))
        await cur.execute(NEXT_TURN, (key, now))
        await cur.execute("SELECT turn FROM satchel_sessions WHERE session_key = %s", (key,))
        (turn,) = await cur.fetchone()
        identities = list(dict.fromkeys(served))
        if identities:
            rows = ", ".join(["(%s, %s, %s, %s)"] * len(identities))
            values = [v for i in identities for v in (key, item_key(i), i, turn)]
            await cur.execute(SERVED.format(rows=rows), values)
        await cur.execute(BEYOND_BOUND, (key, key, keep))
        await cur.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(Exception):
            await cur.execute("ROLLBACK")
        raise
    return int(turn)


async def forget(cur: Any, ranges: list[tuple[str, str]]) -> None:
    """Drop every session's served identities in ``ranges``
    (``_sessions.erased_identities``), inside an erase's transaction."""
    if not ranges:
        return
    where = " OR ".join(["(identity >= %s AND identity < %s)"] * len(ranges))
    await cur.execute(
        f"DELETE FROM satchel_session_items WHERE {where}", [v for pair in ranges for v in pair]
    )
