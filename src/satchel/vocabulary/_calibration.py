"""``satchel.Calibration``: the cosine thresholds that suit one embedder.

Cosine values mean different things for different embedders (a hashing embedder's 0.3
is noise, a semantic model's is a paraphrase), so the vector floors of admission and
the gate's weak-top-hit threshold come from the embedder. Embedders carry one; the
recall policy fills its default thresholds from it. Pure values.
"""

from __future__ import annotations

import attrs

from ._errors import InvalidRequestError


def _cosine_share(instance: object, attribute: attrs.Attribute[float], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise InvalidRequestError(f"Calibration.{attribute.name} must be in 0..1")


@attrs.frozen(kw_only=True)
class Calibration:
    """Cosine thresholds calibrated for one embedder (``python -m bench.calibrate``).

    Attributes:
        baseline: round 0's vector floor (at most the design's 0.3).
        expansion: the lowest vector floor an expansion round may apply.
        min_top_similarity: a best hit below this is a weak top hit.
    """

    baseline: float = attrs.field(default=0.3, validator=_cosine_share)
    expansion: float = attrs.field(default=0.3, validator=_cosine_share)
    min_top_similarity: float = attrs.field(default=0.45, validator=_cosine_share)
