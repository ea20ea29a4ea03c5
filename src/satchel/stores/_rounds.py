"""A round of searches as a store sees it: one look for other processes' commits.

A store that other processes may write (the embedded SQLite store) looks for their
commits before it serves a read, so that nothing stale is served. The searches of one
round of a prepare (its retrieves, neighbour and evidence reads, all started together)
need one look between them, not one each: the orchestration runs each round inside
:func:`searching`, and a store asks :func:`current_round` whether it already looked in
this one. A commit that lands while a round runs is seen by the next round, as it
would be had it landed just after the round's first read; a read outside any round
(a record's exact read, a listing, a copy) always looks.

The round is a context variable, so every task the round's task group starts (each
copies its starter's context) is in it, and two prepares' rounds are never the same.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Iterator

_ROUND: Final = ContextVar[object | None]("satchel_search_round", default=None)


@contextmanager
def searching() -> Iterator[None]:
    """Run the block (one round's searches) as one round."""
    token = _ROUND.set(object())
    try:
        yield
    finally:
        _ROUND.reset(token)


def current_round() -> object | None:
    """The round the running task searches in (None outside any): a token compared by
    identity."""
    return _ROUND.get()
