"""satchel.Calibration: an embedder's cosine thresholds, validated by name."""

from __future__ import annotations

import pytest

import satchel


def test_calibration_is_public_with_the_design_defaults() -> None:
    """The default calibration is round 0's 0.3 floor and the gate's 0.45 top hit."""
    calibration = satchel.Calibration()
    assert (calibration.baseline, calibration.expansion, calibration.min_top_similarity) == (
        0.3,
        0.3,
        0.45,
    )
    assert satchel.HashingEmbedder().calibration == calibration


@pytest.mark.parametrize("field", ["baseline", "expansion", "min_top_similarity"])
@pytest.mark.parametrize("value", [-0.1, 1.5, True, "0.3"])
def test_calibration_fields_are_cosines_in_0_1(field: str, value: object) -> None:
    """Each threshold must be a number in 0..1; the error names the field."""
    with pytest.raises(satchel.InvalidRequestError, match=rf"Calibration\.{field}\b"):
        satchel.Calibration(**{field: value})  # type: ignore[arg-type]
