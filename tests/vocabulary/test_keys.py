"""Key membership without ``np.isin``: the same answer, and no ``numpy.ma`` loaded on
the way (its first import held the host's loop 40-50 ms inside a prepare)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from satchel.vocabulary._keys import among

keys = st.lists(st.integers(min_value=-(2**40), max_value=2**40), max_size=60)


@given(keys, keys)
@example([], [])
@example([1, 2, 3], [])
@example([], [4])
@example([5, 5, 900_000], [900_000, 5, 5])
def test_among_answers_as_isin(values: list[int], held: list[int]) -> None:
    found = among(np.asarray(values, dtype=np.int64), np.asarray(held, dtype=np.int64))
    assert found.dtype == np.bool_
    assert found.tolist() == np.isin(values, held).tolist()


#: Each use of key membership on a prepare's or a write's path, with keys spread wide
#: (what makes ``np.isin`` sort through ``np.unique``): the vouched candidates of a
#: search and a scope's postings patched after a removal.
PROBE = """
import sys
import numpy as np
from satchel.recall._relevance import vouched
from satchel.stores._postings import Builder
from satchel.vocabulary._evidence import Pool

wide = np.arange(0, 64 * 100_003, 100_003, dtype=np.int64)
pool = Pool(family="memory", scope_id="s", version=0, lexical_keys=wide[::3],
            lexical_scores=[-1.0] * len(wide[::3]), lexical_matches=[1] * len(wide[::3]),
            vector_keys=wide[1::5], vector_similarities=[0.5] * len(wide[1::5]))
assert vouched(wide, pool).any()
builder = Builder()
builder.add([(int(row), f"p:term{row % 7} p:other") for row in wide])
postings = builder.built()
patched = postings.patched("p:", [(int(wide[-1]) + 1, "term1 fresh")], wide[::2].tolist())
assert patched is not None and len(patched.rows) == len(wide) // 2 + 1
print("numpy.ma" in sys.modules)
"""


def test_membership_on_the_hot_paths_never_loads_numpy_ma() -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False"]
