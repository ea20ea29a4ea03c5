"""The host's stages: a planner before round 0 and a digest after the fit, each behind
a fuse.

Both are the host's own coroutines (a model call, usually), so neither may hold a
prepare hostage or break it: each runs under its timeout, and a failure or a timeout
falls back to what satchel would have done without it. Each reports its outcome: ``off``
(none configured), ``ok``, ``failed``, ``timeout`` or, for the digest, ``no_relevant``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeAlias

import anyio

from ..builder import parse_context
from ..vocabulary import ContextItem
from ..vocabulary._requests import MAX_QUERY_CHARS

if TYPE_CHECKING:
    from ..builder import BuildResult

#: ``async (query, *, scope_id, session_id) -> Sequence[str]``: queries to search beside
#: the caller's.
Planner: TypeAlias = Callable[..., Awaitable[Sequence[str]]]
#: ``async (query, items) -> Sequence[int]``: the indices of the fitted items to keep.
Digest: TypeAlias = Callable[[str, Sequence[ContextItem]], Awaitable[Sequence[int]]]

logger = logging.getLogger("satchel")

#: The most queries one prepare searches: the caller's and two a planner adds.
MAX_QUERIES: Final = 3
OFF, OK, FAILED, TIMEOUT, NO_RELEVANT = "off", "ok", "failed", "timeout", "no_relevant"


async def ask_planner(
    planner: Planner | None,
    query: str,
    *,
    scope_id: str,
    session_id: str | None,
    fuse: float,
) -> tuple[tuple[str, ...], str]:
    """The queries to search, the caller's first, and the planner's outcome.

    satchel keeps the caller's query first whatever the planner returns, drops blank,
    repeated and non-string entries, and keeps at most :data:`MAX_QUERIES`.
    """
    if planner is None:
        return (query,), OFF
    planned, outcome = await _fused(
        "planner", fuse, lambda: planner(query, scope_id=scope_id, session_id=session_id)
    )
    if outcome != OK:
        return (query,), outcome
    if isinstance(planned, str) or not isinstance(planned, Sequence):
        logger.warning("planner returned %s, not a sequence of queries", type(planned).__name__)
        return (query,), FAILED
    extra = (q for q in planned if isinstance(q, str) and q.strip() and len(q) <= MAX_QUERY_CHARS)
    queries = tuple(dict.fromkeys((query, *extra)))[:MAX_QUERIES]
    return queries, OK


async def digest_pack(
    digest: Digest | None, query: str, build: BuildResult, *, fuse: float
) -> tuple[BuildResult, str]:
    """The fitted pack as the digest keeps it, and the digest's outcome.

    The digest is shown the fitted items and returns the indices of those to keep, in
    the order to deliver them; an empty answer means nothing is relevant (an empty pack).
    An answer that is not distinct in-range indices counts as a failure: the fitted pack
    stands, as it does on a failure or a timeout.
    """
    if digest is None or not build.delivered:
        return build, OFF
    items = parse_context(build.render().content)
    kept, outcome = await _fused("digest", fuse, lambda: digest(query, items))
    if outcome != OK:
        return build, outcome
    indices = _indices(kept, len(items))
    if indices is None:
        logger.warning("digest returned no valid indices of %d items: keeping the pack", len(items))
        return build, FAILED
    if not indices:
        return build.keep(()), NO_RELEVANT
    return build.keep(indices), OK


def _indices(kept: object, count: int) -> tuple[int, ...] | None:
    if isinstance(kept, str) or not isinstance(kept, Sequence):
        return None
    indices = tuple(kept)
    if any(isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < count for i in indices):
        return None
    return indices if len(set(indices)) == len(indices) else None


async def _fused(name: str, fuse: float, call: Callable[[], Awaitable[Any]]) -> tuple[Any, str]:
    """Await a host stage for at most ``fuse`` seconds; its result and outcome.

    Its exceptions are logged, never raised; the caller's cancellation still propagates.
    """
    with anyio.move_on_after(fuse) as scope:
        try:
            return await call(), OK
        except Exception:  # a host stage never fails the prepare
            logger.exception("the %s stage failed; satchel goes on without it", name)
            return None, FAILED
    logger.warning("the %s stage took more than %.3g s; satchel goes on without it", name, fuse)
    assert scope.cancelled_caught
    return None, TIMEOUT
