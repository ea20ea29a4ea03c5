"""``bench postings``: the statement's and the held postings' search, reading and
patching, measured per scope size, and the table naming each."""

from __future__ import annotations

from bench import postings
from satchel.stores.sqlite import _postings_cache


def test_a_small_scope_is_measured_and_held_postings_search_for_less() -> None:
    """Every figure is measured and positive; held postings search for less CPU than
    the statement (the point of holding them), and the wait follows the constant."""
    measured = postings.measure(120, 30)
    assert measured["rows"] == 120
    for field in ("statement_us", "held_us", "read_ms", "patch_ms", "bytes"):
        assert measured[field] > 0, field
    assert measured["held_us"] < measured["statement_us"]
    assert measured["waits_for"] == 1 + 120 // _postings_cache.ROWS_PER_SEARCH


def test_the_table_has_a_row_per_size() -> None:
    row = {
        "rows": 2000, "statement_us": 1158.2, "held_us": 142.0, "read_ms": 10.62,
        "patch_ms": 0.49, "pays_back": 10.4, "read_over_statement": 9.2, "waits_for": 11,
        "bytes": 1013240,
    }  # fmt: skip
    assert postings.report([row]).splitlines()[2] == (
        "| 2,000 | 1158 | 142 | 10.62 | 0.49 | 10 | 9 | 11 | 1,013,240 |"
    )
