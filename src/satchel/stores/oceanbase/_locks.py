"""A write's lock on its scope: taken with bounded waits, and a clear error naming what
holds it when it cannot be had.

Every write moves its scope's row in ``satchel_scopes`` first, which locks the row until
the commit: writes to one scope serialise across processes, as the record rules need
(an idempotency key is looked up and written under the lock). The lock is asked for in
waits of :data:`LOCK_WAIT`; between two waits the engine is asked whether a transaction
without a session holds locks: the write of a process whose engine stopped in the middle
of it (see ``_engine.py``), which seekdb recovers on restart and does not end (it held
its locks through restarts and 25 minutes in our trials). Then the write fails at once
with a message saying so, rather than after every retry.
"""

from __future__ import annotations

import time
from typing import Any, Final

from ...vocabulary._errors import StoreUnavailableError
from . import _schema as sql

#: One wait for the scope's lock, in seconds (a statement hint, ``QUERY_TIMEOUT``).
LOCK_WAIT: Final = 5.0
#: Longest wait for a scope another live writer holds, in seconds.
LOCK_BUDGET: Final = 300.0
#: The engine's error for a lock wait that ran out (MySQL's ER_LOCK_WAIT_TIMEOUT).
LOCK_WAIT_TIMEOUT: Final = 1205

#: A write transaction's whole life (``ob_trx_timeout``), in seconds: the base, and
#: what each record it writes adds. A 4,096-entry batch took 21 s on seekdb.
WRITE_TIMEOUT: Final = 600.0
WRITE_TIMEOUT_PER_RECORD: Final = 0.05

#: Transactions holding locks with no session: recovered, their writer gone.
_SESSIONLESS: Final = (
    "SELECT DISTINCT TRANS_ID FROM oceanbase.V$OB_LOCKS WHERE SESSION_ID = 0 ORDER BY 1"
)


def bump(wait: float) -> str:
    """``sql.BUMP_SCOPE`` waiting at most ``wait`` seconds for the scope's row."""
    return sql.BUMP_SCOPE.replace(
        "INSERT INTO", f"INSERT /*+ QUERY_TIMEOUT({int(wait * 1e6)}) */ INTO", 1
    )


def write_timeout_us(records: int) -> int:
    """The ``ob_trx_timeout`` of a write of ``records`` records, in microseconds."""
    return int((WRITE_TIMEOUT + WRITE_TIMEOUT_PER_RECORD * records) * 1e6)


def lock_timed_out(exc: BaseException) -> bool:
    """Whether ``exc`` is the engine's lock wait running out."""
    import asyncmy.errors

    return isinstance(exc, asyncmy.errors.OperationalError) and bool(
        exc.args and exc.args[0] == LOCK_WAIT_TIMEOUT
    )


async def begin_locked(cur: Any, operation: str, scope_id: str, new_keys: int) -> None:
    """``BEGIN`` a write of ``new_keys`` records (its transaction limit sized by them),
    then move the scope's write version and reserve the keys, which locks its row until
    the transaction ends.

    Raises:
        StoreUnavailableError: a transaction without a session holds locks (at the first
            wait that runs out), or a live writer held the scope for :data:`LOCK_BUDGET`.
    """
    await cur.execute("SET SESSION ob_trx_timeout = %s", (write_timeout_us(new_keys),))
    started = time.monotonic()
    while True:
        await cur.execute("BEGIN")
        try:
            await cur.execute(bump(LOCK_WAIT), (scope_id, new_keys))
        except Exception as exc:
            await cur.execute("ROLLBACK")
            if not lock_timed_out(exc):
                raise
            waited = time.monotonic() - started
            if waited >= LOCK_BUDGET or await sessionless(cur):
                raise await unavailable(cur, operation, scope_id, waited) from exc
            continue
        return


async def sessionless(cur: Any) -> list[int]:
    """The transactions holding locks without a session (empty if the engine will not
    say: a server without the view, or a user without the right to read it)."""
    import asyncmy.errors

    try:
        await cur.execute(_SESSIONLESS)
        return [int(tx) for (tx,) in await cur.fetchall()]
    except asyncmy.errors.MySQLError:
        return []


async def unavailable(
    cur: Any, operation: str, scope_id: str, waited: float
) -> StoreUnavailableError:
    """The error of a write whose lock wait ran out, naming what holds the lock."""
    left = await sessionless(cur)
    if left:
        ids = ", ".join(map(str, left[:5])) + (", ..." if len(left) > 5 else "")
        return StoreUnavailableError(
            f"{operation}: scope {scope_id!r} stayed locked for {waited:.0f} s: the engine"
            f" holds the locks of {len(left)} transaction(s) with no session ({ids}), the"
            " writes of a process whose engine stopped before they ended; seekdb keeps"
            " them across restarts, so writes to the rows they locked cannot proceed."
            " Reads still work: copy the store into a new one and use that"
            " ('satchel copy --verify SOURCE NEW'; docs/stores.md, 'A writer killed"
            " mid-write')"
        )
    return StoreUnavailableError(
        f"{operation}: another writer held scope {scope_id!r}'s write lock for"
        f" {waited:.0f} s (a write holds it from its first statement to its commit);"
        " try again later"
    )
