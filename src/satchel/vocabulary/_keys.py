"""Which record keys are among others, by one sort and a binary search. Pure.

``np.isin`` answers the same, but for keys spread wide (a large scope's row ids) it
sorts through a bare ``np.unique``, which asks ``np.ma.is_masked`` and so imports
``numpy.ma`` the first time: 40-50 ms on the host's loop, in whichever prepare first
searches such a scope (measured at 100,000 entries, docs/benchmarks.md). satchel
never needs ``numpy.ma``, so its hot paths ask :func:`among` instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt


def among(values: npt.ArrayLike, keys: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """Whether each of ``values`` is one of ``keys`` (integer keys, in any order,
    repeats allowed): ``np.isin(values, keys)``, without importing ``numpy.ma``."""
    wanted = np.asarray(values, dtype=np.int64)
    ordered = np.sort(np.asarray(keys, dtype=np.int64))
    if not len(ordered):
        return np.zeros(wanted.shape, dtype=np.bool_)
    at = np.minimum(np.searchsorted(ordered, wanted), len(ordered) - 1)
    found: npt.NDArray[np.bool_] = ordered[at] == wanted
    return found
