"""The embedded store's sessions (``SessionStore``): two tables beside the records.

``sessions`` holds each session's last turn and when it was recorded; ``session_items``
the identities its turns served, with the turn that last served each. A turn is recorded
in one IMMEDIATE transaction on the writer connection, which every process sharing the
file takes in turn: the session's row is bumped, then read, so two processes recording
turns of one session get two numbers. Such a write is no record write
(``Connections.write(records=False)``): no scope's write version moves and no process
drops a cache for it. Reading a session's state is one statement, so one snapshot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

#: The session's last turn, with every identity served in its last ``?1`` turns (a row
#: with a NULL identity when none): ``?2`` its key, ``?3`` the oldest time still live.
STATE: Final = """
SELECT s.turn, i.identity FROM sessions s
LEFT JOIN session_items i ON i.session_key = s.session_key AND i.turn > s.turn - ?1
WHERE s.session_key = ?2 AND s.seen_at >= ?3
"""
EXPIRED_ITEMS: Final = (
    "DELETE FROM session_items WHERE session_key IN"
    " (SELECT session_key FROM sessions WHERE seen_at < ?)"
)
EXPIRED: Final = "DELETE FROM sessions WHERE seen_at < ?"
NEXT_TURN: Final = """
INSERT INTO sessions (session_key, turn, seen_at) VALUES (?1, 1, ?2)
ON CONFLICT (session_key) DO UPDATE SET turn = turn + 1, seen_at = excluded.seen_at
"""
SERVED: Final = """
INSERT INTO session_items (session_key, identity, turn) VALUES (?, ?, ?)
ON CONFLICT (session_key, identity) DO UPDATE SET turn = excluded.turn
"""
#: All but the session's ``?2`` most recently served identities (ties: by identity).
BEYOND_BOUND: Final = """
DELETE FROM session_items WHERE session_key = ?1 AND identity IN (
    SELECT identity FROM session_items WHERE session_key = ?1
    ORDER BY turn DESC, identity LIMIT -1 OFFSET ?2)
"""


def next_turn(
    conn: sqlite3.Connection, key: str, turns: int, active_since: float
) -> tuple[int, frozenset[str]]:
    """The session's next turn and what its last ``turns`` turns served."""
    found = conn.execute(STATE, (turns, key, active_since)).fetchall()
    if not found:
        return 1, frozenset()
    return int(found[0][0]) + 1, frozenset(
        identity for _, identity in found if identity is not None
    )


def record_turn(
    conn: sqlite3.Connection,
    key: str,
    served: Sequence[str],
    now: float,
    active_since: float,
    keep: int,
) -> int:
    """Record one more turn of the session inside the caller's transaction: every
    expired session is dropped first (this one too, which then starts again at 1)."""
    conn.execute(EXPIRED_ITEMS, (active_since,))
    conn.execute(EXPIRED, (active_since,))
    conn.execute(NEXT_TURN, (key, now))
    (turn,) = conn.execute("SELECT turn FROM sessions WHERE session_key = ?", (key,)).fetchone()
    conn.executemany(SERVED, [(key, identity, turn) for identity in dict.fromkeys(served)])
    conn.execute(BEYOND_BOUND, (key, keep))
    return int(turn)


def forget(conn: sqlite3.Connection, ranges: list[tuple[str, str]]) -> None:
    """Drop every session's served identities in ``ranges`` (``_sessions.erased_identities``),
    inside an erase's transaction."""
    if not ranges:
        return
    where = " OR ".join(["(identity >= ? AND identity < ?)"] * len(ranges))
    conn.execute(f"DELETE FROM session_items WHERE {where}", [v for pair in ranges for v in pair])
