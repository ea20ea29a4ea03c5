"""The vector channel's ranking: what a record says apart from its scope's common
direction (``vocabulary.apart_from_common``)."""

from __future__ import annotations

import numpy as np

from satchel.vocabulary import apart_from_common


def test_a_record_is_ranked_by_what_it_says_apart_from_its_scopes_common_direction() -> None:
    """``apart_from_common``: a record lying along the scope's common direction scores
    nothing however near the query it is; the scores rank by what the query and a
    record say beyond it, and the plain cosines come back beside them."""
    common = np.array([1, 0, 0], dtype=np.float32)
    said = np.array([0.6, 0.8, 0], dtype=np.float32)
    other = np.array([0.6, 0, 0.8], dtype=np.float32)
    matrix = np.stack([common, said, other])
    query = np.array([0.95, np.sqrt(1 - 0.95**2), 0], dtype=np.float32)
    scores, cosines = apart_from_common(matrix, query, np.array([3.0, 0, 0]))
    assert np.allclose(cosines, matrix @ query)
    assert cosines.argmax() == 0  # by the plain cosine, the common record is nearest
    assert scores.argmax() == 1
    assert abs(float(scores[0])) < 1e-6
    assert np.allclose(scores[1:], [np.sqrt(1 - 0.95**2), 0.0], atol=1e-6)
    plain, same = apart_from_common(matrix, query, None)
    assert np.allclose(plain, matrix @ query)
    assert np.allclose(same, plain)
    zero, _ = apart_from_common(matrix, query, np.zeros(3))
    assert np.allclose(zero, matrix @ query)
