"""``HashingEmbedder``: a deterministic feature-hashing embedder with no model.

It hashes analysed terms and character trigrams into signed buckets, so it sees
spelling, not meaning: the test embedder, and the fallback when the bundled model
cannot load.
"""

from __future__ import annotations

import functools
import hashlib
from typing import TYPE_CHECKING

import numpy as np

from ..vocabulary._analysis import analyse
from ..vocabulary._calibration import Calibration
from ..vocabulary._errors import InvalidRequestError
from ..vocabulary._turns import let_loop_in
from ._offload import embed_nearby

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy.typing as npt


@functools.lru_cache(maxsize=1 << 17)
def _bucket(feature: str, dimension: int) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % dimension, 1.0 if value >> 63 else -1.0


class HashingEmbedder:
    """A deterministic feature-hashing embedder: no model, no download, no dependency.

    Args:
        dimension: vector size; 256 by default.
    """

    def __init__(self, dimension: int = 256) -> None:
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 8:
            raise InvalidRequestError("HashingEmbedder.dimension must be an integer >= 8")
        self._dimension = dimension

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def fingerprint(self) -> str:
        """What built a store's vectors: a store refuses an embedder of another fingerprint."""
        return f"hashing-v1/{self._dimension}"

    #: A paraphrase's evidence scores below filler with it, so a lower cosine floor only
    #: admits noise: expansions lower the lexical floor alone (bench/README.md).
    calibration = Calibration(baseline=0.3, expansion=0.3, min_top_similarity=0.45)

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return await embed_nearby(self.embed_sync, texts)

    def embed_sync(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed without a worker thread."""
        out = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for index, text in enumerate(texts):
            self._embed_into(out[index], text)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

    def _embed_into(self, row: npt.NDArray[np.float32], text: str) -> None:
        for term in analyse(text):
            slot, sign = _bucket(term, self._dimension)
            row[slot] += sign
            padded = f"<{term}>"
            for start in range(len(padded) - 2):
                slot, sign = _bucket(padded[start : start + 3], self._dimension)
                row[slot] += 0.5 * sign
            let_loop_in()  # a long text in a worker thread: see ``vocabulary._turns``
