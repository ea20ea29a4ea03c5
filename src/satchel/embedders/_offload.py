"""Where an embedder's work runs: a short text on the calling thread, the rest in a
worker thread, so embedding never holds the host's event loop.

Embedding costs by the character (tokenising dominates: about 1 µs per character with
the bundled model), not by the text: a batch of 64 one-line notes and a single 1 MB
document differ a thousandfold. So the rule is the batch's total length. A query is
far below it and costs a fraction of a millisecond inline, less than a worker-thread
round trip (0.15 ms on asyncio, 0.6 ms on trio).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Final

import anyio.to_thread

from .._loop import loop_turn
from ._protocol import checked_vectors

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import numpy as np
    import numpy.typing as npt

    from ._protocol import Embedder

#: Batches of at most this many characters in all are embedded inline (about 0.3 ms).
INLINE_CHARS: Final = 512


async def embed_nearby(
    embed_sync: Callable[[Sequence[str]], npt.NDArray[np.float32]], texts: Sequence[str]
) -> npt.NDArray[np.float32]:
    """``embed_sync(texts)``, inline (in the loop's turn) when the batch is short, else in
    a worker thread."""
    if _short(texts):
        async with loop_turn():
            return embed_sync(texts)
    return await anyio.to_thread.run_sync(embed_sync, texts)


def _short(texts: Sequence[str]) -> bool:
    """Whether ``texts`` hold at most ``INLINE_CHARS`` characters in all, read only as
    far as it takes to tell: summing 36,187 notes' lengths held the host's loop 1 ms."""
    return all(total <= INLINE_CHARS for total in itertools.accumulate(map(len, texts)))


#: Outputs of at most this many numbers are checked inline (1,024 vectors of 256
#: dimensions: about 0.3 ms); larger ones in a worker thread.
INLINE_VALUES: Final = 262_144


async def embed_checked(embedder: Embedder, texts: Sequence[str]) -> npt.NDArray[np.float32]:
    """``embedder.embed(texts)`` as :func:`checked_vectors` returns it. A large output is
    checked in a worker thread: a write of 36,187 notes held the host's loop 165-440 ms
    checking its vectors there (docs/benchmarks.md, "Checking a large write's vectors")."""
    output = await embedder.embed(texts)
    if len(texts) * embedder.dimension <= INLINE_VALUES:
        return checked_vectors(embedder, texts, output)
    return await anyio.to_thread.run_sync(checked_vectors, embedder, texts, output)
