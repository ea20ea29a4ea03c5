"""The ``satchel.Embedder`` protocol, and what the runtime reads of any embedder.

An embedder turns text into unit-length float32 vectors for the vector channel. Beyond
the protocol an embedder may carry a ``calibration`` (the cosine thresholds that suit
it) and a ``fingerprint`` (what a store records as the builder of its vectors); the
functions here read them with a default for embedders that have neither.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..vocabulary._calibration import Calibration
from ..vocabulary._errors import InvalidRequestError

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np
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
