"""Cancel scopes for deadlines, and none where there is no deadline.

A prepare without ``prepare_timeout`` or ``round_timeout`` (the defaults) has no
deadline (``math.inf``), and a cancel scope ending never that nobody cancels changes
nothing: yet entering and leaving one cost 6 us on asyncio and 9 us on trio (``python
-m bench primitives``), twice a prepare. :func:`until` gives such a block a stand-in
that, as a scope ending never would, caught no cancellation.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Final

import anyio

if TYPE_CHECKING:
    from types import TracebackType


class _Unbounded:
    """A block without a deadline: no cancel scope, and so no cancellation caught."""

    __slots__ = ()

    cancelled_caught: Final = False

    def __enter__(self) -> _Unbounded:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        return None


_UNBOUNDED: Final = _Unbounded()


def until(deadline: float) -> anyio.CancelScope | _Unbounded:
    """A cancel scope ending at ``deadline`` (on anyio's clock) for a ``with`` block,
    or, for ``math.inf``, none: only the block's ``cancelled_caught`` is read, and no
    code in it may cancel the scope itself."""
    if deadline == math.inf:
        return _UNBOUNDED
    return anyio.CancelScope(deadline=deadline)
