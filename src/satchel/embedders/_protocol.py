"""The ``satchel.Embedder`` protocol, and what the runtime reads of any embedder.

An embedder turns text into unit-length float32 vectors for the vector channel. Beyond
the protocol an embedder may carry a ``calibration`` (the cosine thresholds that suit
it) and a ``fingerprint`` (what a store records as the builder of its vectors); the
functions here read them with a default for embedders that have neither.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Protocol, runtime_checkable

import numpy as np

from ..vocabulary._calibration import Calibration
from ..vocabulary._errors import InvalidRequestError

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy.typing as npt


@runtime_checkable
class Embedder(Protocol):
    """Anything that embeds text: ``dimension`` and ``async embed(texts)``.

    ``embed`` returns an array of shape ``(len(texts), dimension)``, float32, each row
    L2-normalised (or all zeros for a text with nothing to embed).
    """

    @property
    def dimension(self) -> int: ...

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...


def check_embedder(value: object, field: str = "embedder") -> Embedder:
    """``value`` if it is an embedder: an integer ``dimension`` >= 1 and a callable ``embed``.

    Raises:
        InvalidRequestError: naming ``field``.
    """
    message = f"{field} must be a satchel.Embedder (an integer dimension and async embed)"
    try:
        if not isinstance(value, Embedder):  # reads ``dimension``, which may raise
            raise InvalidRequestError(message)
        dimension = value.dimension
    except InvalidRequestError:
        raise
    except Exception as exc:
        raise InvalidRequestError(f"{message}: reading it raised {exc!r}") from exc
    if (
        isinstance(dimension, bool)
        or not isinstance(dimension, int)
        or dimension < 1
        or not callable(value.embed)
    ):
        raise InvalidRequestError(message)
    return value


def calibration_of(embedder: Embedder) -> Calibration:
    """An embedder's calibrated thresholds: its ``calibration`` attribute, else the design's."""
    calibration = getattr(embedder, "calibration", None)
    return calibration if isinstance(calibration, Calibration) else Calibration()


def fingerprint_of(embedder: Embedder) -> str:
    """What built a store's vectors: the embedder's ``fingerprint`` attribute, else its
    class and dimension. A store refuses an embedder of another fingerprint."""
    fingerprint = getattr(embedder, "fingerprint", None)
    if isinstance(fingerprint, str) and fingerprint:
        return fingerprint
    kind = type(embedder)
    return f"{kind.__module__}.{kind.__qualname__}/{embedder.dimension}"


#: How far a row's length may stray from 1 (float32 rounding of a normalised vector
#: stays far inside it).
UNIT_TOLERANCE: Final = 1e-3


def checked_vectors(
    embedder: Embedder, texts: Sequence[str], output: object
) -> npt.NDArray[np.float32]:
    """What ``embedder.embed(texts)`` returned, as the float32 rows a store keeps.

    Checked at the boundary, before anything is stored or searched: an array (or a
    nested sequence) of real numbers of shape ``(len(texts), dimension)``, finite in
    float32, each row of unit length or all zeros. Other numbers become float32 only
    when float32 holds them exactly (a float64 value that round-trips); else refused. A
    wrong output stored once (float64 bytes read back as float32) broke every later
    prepare of its scope.

    Raises:
        InvalidRequestError: naming the embedder and what was wrong; nothing is written.
    """
    name = f"embedder {type(embedder).__name__}"
    try:
        array = np.asarray(output)
    except (TypeError, ValueError) as exc:
        raise InvalidRequestError(f"{name} returned no array of vectors: {exc}") from None
    if array.dtype.kind not in "fiu":
        raise InvalidRequestError(f"{name} returned {array.dtype} values, not float32 numbers")
    expected = (len(texts), embedder.dimension)
    if array.shape != expected:
        raise InvalidRequestError(f"{name} returned shape {array.shape}, expected {expected}")
    with np.errstate(over="ignore", invalid="ignore"):
        vectors = array.astype(np.float32, copy=False)
    if not np.isfinite(vectors).all():
        raise InvalidRequestError(f"{name} returned values that are not finite in float32")
    if vectors is not array and not np.array_equal(vectors, array):
        raise InvalidRequestError(
            f"{name} returned {array.dtype} values that float32 cannot hold exactly;"
            " return float32 vectors"
        )
    # Squares summed in float64 (no float32 overflow) without a float64 copy of the
    # whole output: 36,187 rows of 256 took 58 ms through ``norm`` of a copy, 8 ms so.
    norms = np.sqrt(np.einsum("ij,ij->i", vectors, vectors, dtype=np.float64))
    if ((np.abs(norms - 1.0) > UNIT_TOLERANCE) & (norms != 0.0)).any():
        raise InvalidRequestError(f"{name} returned rows that are not of unit length")
    return vectors
