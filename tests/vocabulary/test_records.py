"""Record constructors: tags normalised to a tuple, nothing else checked until the write."""

from __future__ import annotations

import pytest

import satchel


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        (["ops", "backup"], ("ops", "backup")),
        (("ops",), ("ops",)),
        ("ops", ("ops",)),
        (iter(["a", "b"]), ("a", "b")),
        ((), ()),
    ],
)
def test_iterable_tags_become_a_tuple(tags: object, expected: tuple[str, ...]) -> None:
    """A list, tuple, iterator or single string of tags is stored as a tuple of strings."""
    assert satchel.MemoryEntry(text="x", tags=tags).tags == expected  # type: ignore[arg-type]
    assert satchel.MemoryEntry(text="x").tags == ()


@pytest.mark.parametrize("tags", [5, None, 2.5])
def test_non_iterable_tags_are_kept_for_the_write_to_name(tags: object) -> None:
    """MemoryEntry(tags=X) with a non-iterable X constructs (no TypeError); the write names it."""
    assert satchel.MemoryEntry(text="x", tags=tags).tags is tags  # type: ignore[arg-type]
