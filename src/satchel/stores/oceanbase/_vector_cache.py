"""The OceanBase store's vectors held in the process, per (family, scope), and never
served unless the scope's write version in the database confirms them.

Every retrieve reads the scope's state first (``_schema.STATE``, inside the read
snapshot of ``_store.OceanBaseStore.retrieve``): its write version, its next key and
``removed_at``, the version of the last write that took a record out of search. A held
set of vectors carries the version it was read at:

- the same version: served as it is;
- a newer version: the held set is patched with the vectors of the keys handed out
  since (keys only grow), read in the same snapshot; when that version also removed a
  record (``removed_at`` above the held version), the keys still searchable are read
  first (keys only, no vectors) and the others' rows dropped;
- nothing held: the scope's vectors are read whole;
- an older version (another retrieve of this process already read a newer one): the
  engine searches, as it does for a scope too large to hold.

So nothing is served from the process that the store's write version has not confirmed,
and a write, forget or erase from any process is seen on the next call here.

Held sets (:class:`HeldSets`: of vectors here, of texts in ``_held_texts``) are bounded
together by bytes, least recently used dropped first. Only the store's loop thread reads
and changes them; a search's product runs in a worker thread over a set it holds, which
a patch never changes (it appends past the set's end, or copies).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Final, Generic, Protocol, TypeVar

import attrs
import numpy as np
import numpy.typing as npt

from ...vocabulary._keys import among
from ...vocabulary._retrieval import CommonDirection
from ...vocabulary._turns import let_loop_in

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ...vocabulary._families import Family

    Matrix = npt.NDArray[np.float32]
    Keys = npt.NDArray[np.int64]

#: Bytes of vectors held in the process across every scope, by default: 256 MiB, the
#: vectors of about 170,000 records of 384 dimensions (a scope larger than the bound is
#: searched by the engine).
CACHE_BYTES: Final = 256 * 1024 * 1024


@attrs.define
class _Buffer:
    """Rows of vectors with room to grow; ``filled`` rows are written. Sets share a
    buffer while each is a prefix of it."""

    keys: Keys
    matrix: Matrix
    filled: int

    @property
    def nbytes(self) -> int:
        return int(self.keys.nbytes + self.matrix.nbytes)


@attrs.frozen
class ScopeVectors:
    """A scope's searchable vectors of one family as of write ``version``: the first
    ``count`` rows of a buffer, each of unit length, and the keys below ``next_key``;
    ``total`` is their sum, the scope's common direction (``apart_from_common``)."""

    version: int
    next_key: int
    buffer: _Buffer
    count: int
    total: npt.NDArray[np.float64]
    #: The set's :class:`CommonDirection`, made by its first search (a set never
    #: changes, so once is enough).
    common: dict[str, CommonDirection | None] = attrs.field(factory=dict, eq=False, repr=False)

    @classmethod
    def of(cls, version: int, next_key: int, keys: Keys, matrix: Matrix) -> ScopeVectors:
        total = matrix.sum(axis=0, dtype=np.float64)
        return cls(version, next_key, _Buffer(keys, matrix, len(keys)), len(keys), total)

    def __len__(self) -> int:
        return self.count

    @property
    def nbytes(self) -> int:
        return self.buffer.nbytes

    def extended(self, version: int, next_key: int, keys: Keys, matrix: Matrix) -> ScopeVectors:
        """These vectors and ``keys``' (new keys, all at or above ``next_key``) as of
        ``version``. Appends in place when this set ends the buffer, doubling it when
        full; else copies. Either way this set's own rows stay as they are."""
        buffer, count, end = self.buffer, self.count, self.count + len(keys)
        if buffer.filled != count or end > len(buffer.keys):
            capacity = max(end, 2 * count, 64) if buffer.filled == count else end
            grown = _Buffer(
                np.empty(capacity, dtype=np.int64),
                np.empty((capacity, buffer.matrix.shape[1]), dtype=np.float32),
                count,
            )
            grown.keys[:count] = buffer.keys[:count]
            grown.matrix[:count] = buffer.matrix[:count]
            buffer = grown
        buffer.keys[count:end] = keys
        buffer.matrix[count:end] = matrix
        buffer.filled = end
        total = self.total + matrix.sum(axis=0, dtype=np.float64)
        return ScopeVectors(version, next_key, buffer, end, total)

    def kept(self, keys: Keys) -> ScopeVectors:
        """These vectors but those of keys not in ``keys`` (the ones still searchable),
        in a buffer of their own. A key's vector never changes (a new version of a
        record is a new key), so what remains is exact."""
        held = self.buffer.keys[: self.count]
        mask = among(held, keys)
        matrix = self.buffer.matrix[: self.count][mask]
        return ScopeVectors.of(self.version, self.next_key, held[mask], matrix)

    def nearest(self, query: Matrix, k: int) -> tuple[list[int], list[float]]:
        """The ``k`` keys most similar to ``query``, best first apart from the scope's
        common direction (``apart_from_common``), and their cosine similarities (one
        product over this set's rows)."""
        count = self.count
        if count == 0 or k <= 0:
            return [], []
        matrix, asked = self.buffer.matrix[:count], _unit(query)
        made = self._common_direction()
        scores, cosines = (matrix @ asked,) * 2 if made is None else made.rank(matrix, asked)
        top = np.argpartition(-scores, k - 1)[:k] if k < count else np.arange(count)
        order = top[np.argsort(-scores[top], kind="stable")]
        return self.buffer.keys[:count][order].tolist(), cosines[order].tolist()

    def similarities(
        self, keys: Sequence[int], query: Matrix, *, apart: bool = False
    ) -> npt.NDArray[np.float32]:
        """Each of ``keys``' cosine similarity to ``query`` (-1 for a key without a
        vector here); with ``apart``, its score apart from the scope's common direction,
        as :meth:`nearest` ranks (how the time channel orders a window's records)."""
        held = self.buffer.keys[: self.count]
        order = np.argsort(held, kind="stable")
        wanted = np.asarray(keys, dtype=np.int64)
        at = np.minimum(np.searchsorted(held[order], wanted), max(self.count - 1, 0))
        scores = np.full(len(wanted), -1.0, dtype=np.float32)
        if self.count == 0:
            return scores
        slots = order[at]
        present = held[slots] == wanted
        made = self._common_direction() if apart else None
        matrix = self.buffer.matrix[: self.count]
        if made is None:
            scores[present] = matrix[slots[present]] @ _unit(query)
        else:
            scores[present] = made.scores_of(matrix, _unit(query), slots[present])
        return scores

    def _common_direction(self) -> CommonDirection | None:
        """The set's :class:`CommonDirection`, made by its first search."""
        if "made" not in self.common:
            self.common["made"] = CommonDirection.of(self.buffer.matrix[: self.count], self.total)
        return self.common["made"]


def _unit(query: Matrix) -> Matrix:
    query = np.asarray(query, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(query))
    return query / norm if norm > 0 else query


def parse(found: Sequence[tuple[int, str]], dimension: int) -> tuple[Keys, Matrix]:
    """Keys and unit vectors from ``(k, embedding)`` rows as the engine shows a vector
    (``[x,y,...]``); a zero vector is left out (the engine gives it no distance)."""
    keys = np.fromiter((int(key) for key, _ in found), np.int64, len(found))
    matrix = np.empty((len(found), dimension), dtype=np.float32)
    for row, (_, shown) in enumerate(found):
        matrix[row] = np.fromstring(shown.strip("[]"), dtype=np.float32, sep=",")
        let_loop_in()  # the host's loop waits no longer than a millisecond of parsing
    norms = np.linalg.norm(matrix, axis=1)
    kept = norms > 0
    return keys[kept], matrix[kept] / norms[kept, None]


class Held(Protocol):
    """What a held set says of itself: the write version it was read at, and its size."""

    @property
    def version(self) -> int: ...

    @property
    def nbytes(self) -> int: ...


H = TypeVar("H", bound=Held)


class HeldSets(Generic[H]):
    """The held sets of one store (its vectors, or its texts), least recently used
    first, at most ``max_bytes`` together."""

    def __init__(self, max_bytes: int = CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._held: OrderedDict[tuple[Family, str], H] = OrderedDict()
        self._bytes = 0

    @property
    def nbytes(self) -> int:
        """Bytes held now (never above ``max_bytes``)."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._held)

    def get(self, family: Family, scope_id: str) -> H | None:
        found = self._held.get((family, scope_id))
        if found is not None:
            self._held.move_to_end((family, scope_id))
        return found

    def put(self, family: Family, scope_id: str, held: H) -> None:
        """Hold ``held`` (instead of the scope's older set), dropping the least
        recently used sets over the bound; a set larger than the bound is not held."""
        self.drop(family, scope_id)
        if held.nbytes > self.max_bytes:
            return
        self._held[(family, scope_id)] = held
        self._bytes += held.nbytes
        while self._bytes > self.max_bytes:
            _, dropped = self._held.popitem(last=False)
            self._bytes -= dropped.nbytes

    def newer(self, family: Family, scope_id: str, held: H) -> None:
        """Hold ``held`` unless a set of the same or a newer version is held already
        (another search read one meanwhile)."""
        latest = self.get(family, scope_id)
        if latest is None or latest.version < held.version:
            self.put(family, scope_id, held)

    def drop(self, family: Family, scope_id: str) -> None:
        old = self._held.pop((family, scope_id), None)
        if old is not None:
            self._bytes -= old.nbytes

    def drop_scope(self, scope_id: str) -> None:
        """Drop the scope's sets of every family."""
        for family, scope in list(self._held):
            if scope == scope_id:
                self.drop(family, scope)
