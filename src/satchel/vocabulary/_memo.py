"""What a prepare works out of a stored text, kept by the text: the same turns come
back prepare after prepare, and telling them again is most of reading them. Pure.

Every such memo is a plain dict of strings to plain values, which the garbage
collector never walks, made by :func:`text_memo` so that :func:`forget_texts` reaches
it: after an erase no copy of an erased text outlives it in any memo. A full memo drops
its oldest eighth at once (:func:`remembered`), as the stores' evidence caches do.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, Final, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable

T = TypeVar("T")

#: Every memo :func:`text_memo` made (a module's own, made once at import).
_MEMOS: Final[list[dict[str, Any]]] = []
_MISSING: Final = object()


def text_memo() -> dict[str, Any]:
    """A new memo, which :func:`forget_texts` clears."""
    memo: dict[str, Any] = {}
    _MEMOS.append(memo)
    return memo


def remembered(memo: dict[str, T], text: str, make: Callable[[str], T], most: int) -> T:
    """What ``make`` gives for ``text``, kept in ``memo``; past ``most`` texts the oldest
    eighth go."""
    found = memo.get(text, _MISSING)
    if found is _MISSING:
        found = memo[text] = make(text)
        if len(memo) > most:
            for old in list(itertools.islice(memo, 1 + most // 8)):
                memo.pop(old, None)
    return found  # type: ignore[return-value]


def forget_texts() -> None:
    """Clear every memo (after an erase: no copy of an erased text outlives it here)."""
    for memo in _MEMOS:
        memo.clear()
