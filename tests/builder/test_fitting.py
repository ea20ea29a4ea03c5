"""Fitting: the item cap, UTF-8-safe truncation, the 64-byte floor, drops and step-downs."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest

from satchel.builder._render import WRAPPER_BYTES, group_line

from .factories import Candidates, build, contents, items, memory, resource

if TYPE_CHECKING:
    from satchel.vocabulary._families import Family, Tier

WRAPPER = WRAPPER_BYTES + group_line(("memory", "project:demo"))[1]
CJK = "漢字仮名交じり文"  # 3 bytes a character
EMOJI = "😀🚀🧠"  # 4 bytes a character


def uri_item_bytes(candidates: Candidates) -> int:
    """Bytes of the first memory's bare citation item, measured from a real pack."""
    return build(candidates, detail={"memory": "uri"}).render().content_bytes - WRAPPER


def pack_bytes(candidates: Candidates) -> int:
    return build(candidates, max_bytes=32768).render().content_bytes


def test_content_is_capped_at_the_item_limit() -> None:
    """A 5000-byte memory is served as its first 2000 bytes, marked truncated."""
    result = build({"memory": [memory("m", "x" * 5000)]})
    assert contents(result) == ["x" * 2000]
    assert [item.truncated for item in result.delivered] == [True]
    assert result.omissions.truncated_items == 1


def test_content_at_exactly_the_item_limit_is_whole() -> None:
    """A memory of exactly 2000 bytes is not truncated."""
    result = build({"memory": [memory("m", "x" * 2000)]})
    assert contents(result) == ["x" * 2000]
    assert result.omissions.truncated_items == 0


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (CJK * 100, 666),  # 666 * 3 = 1998 bytes
        ("😀" * 600, 500),  # 500 * 4 = 2000 bytes
        ("a" + "😀" * 600, 500),  # 1 + 499 * 4 = 1997 bytes
    ],
)
def test_the_item_cap_cuts_on_a_character_boundary(text: str, kept: int) -> None:
    """Capping multi-byte text keeps whole characters only."""
    (content,) = contents(build({"memory": [memory("m", text)]}))
    assert content == text[:kept]
    assert len(content.encode()) <= 2000


@pytest.mark.parametrize("unit", [CJK, EMOJI, "naïve café ", "a\u2028b\x00c\u202e"])
def test_budget_truncation_is_utf8_safe_at_every_budget(unit: str) -> None:
    """Across budgets, truncated content decodes, is a prefix, and keeps at least 64 bytes."""
    text = unit * 200
    for max_bytes in range(512, 1400, 7):
        result = build({"memory": [memory("m", text)]}, max_bytes=max_bytes)
        assert result.render().content_bytes <= max_bytes
        for content in contents(result):
            encoded = content.encode()
            assert encoded.decode() == content
            assert text.startswith(content)
            assert len(encoded) >= 64


def test_truncation_keeps_exactly_the_floor_and_no_less() -> None:
    """With room for 64 content bytes the item is cut to 64; with 63 it is dropped, never
    served as a bare citation (a memory's citation alone carries nothing)."""
    filler = memory("a", "f" * 400)
    candidate = memory("b", "y" * 500)
    base = pack_bytes({"memory": [filler]})
    at_floor = base + len(f'[null,"{"y" * 64}","b",{{"truncated":true}}]\n')
    cut = build({"memory": [filler, candidate]}, max_bytes=at_floor)
    assert contents(cut)[1] == "y" * 64
    assert [item.truncated for item in cut.delivered] == [False, True]
    assert cut.render().content_bytes == at_floor
    below = build({"memory": [filler, candidate]}, max_bytes=at_floor - 1)
    assert [(item.tier, item.truncated) for item in below.delivered] == [("full", False)]
    assert below.omissions.dropped_below_min_bytes == 1


def test_drop_below_min_bytes_is_counted_under_its_cause() -> None:
    """An item with content meeting too little room to cut it to 64 bytes is below-min."""
    filler = memory("a", "f" * 400)
    max_bytes = pack_bytes({"memory": [filler]}) + 20  # '[null,"a remembered fact","b"]' is 31
    result = build({"memory": [filler, memory("b")]}, max_bytes=max_bytes)
    assert len(result.delivered) == 1
    assert result.omissions.dropped_below_min_bytes == 1
    assert result.omissions.dropped_no_fitting_truncation == 0
    assert result.omissions.dropped_items == 1


def test_an_item_too_short_to_truncate_is_below_min_whatever_the_room() -> None:
    """With 150 bytes of room but a citation too long for it, an item whose text is too
    short to truncate is dropped below-min: a cut could never reach the minimum."""
    filler = memory("a", "f" * 400)
    long_citation = memory("b" * 300)  # a 17-byte text
    max_bytes = pack_bytes({"memory": [filler]}) + 1 + 150
    other = memory("c" * 300, "another fact here")  # 17 bytes as well, another text
    result = build({"memory": [filler, long_citation, other]}, max_bytes=max_bytes)
    assert len(result.delivered) == 1
    assert result.omissions.dropped_below_min_bytes == 2
    assert result.omissions.dropped_no_fitting_truncation == 0
    assert result.omissions.dropped_items == 2


def test_an_item_with_nothing_to_cut_is_no_fitting_rendering() -> None:
    """A resource with no abstract or overview can only be a bare citation; when even that
    does not fit, no rendering fit at all: no-fitting-truncation."""
    filler = memory("a", "f" * 400)
    bare = resource("r" * 300, abstract=None, overview=None, body="never served")
    max_bytes = pack_bytes({"memory": [filler]}) + 1 + 150
    result = build({"memory": [filler], "resource": [bare]}, max_bytes=max_bytes)
    assert len(result.delivered) == 1
    assert result.omissions.dropped_no_fitting_truncation == 1
    assert result.omissions.dropped_below_min_bytes == 0


def test_an_item_that_cannot_fit_at_all_leaves_an_empty_pack() -> None:
    """When nothing fits the context is empty, and the drop is still counted."""
    result = build({"memory": [memory("e" * 600)]}, max_bytes=512)
    assert result.render().status == "empty"
    assert result.render().content is None
    assert result.render().content_bytes == 0
    assert result.delivered == ()
    assert result.omissions.dropped_items == 1


def test_no_candidates_is_the_empty_result() -> None:
    """Empty candidate lists give status "empty", no content and zero counts."""
    result = build({"memory": [], "experience": []})
    assert result.render().status == "empty"
    assert result.render().content is None
    assert result.render().content_bytes == 0
    assert result.omissions.truncated_items == result.omissions.dropped_items == 0


def test_resource_steps_down_a_tier_before_truncating() -> None:
    """A full-pinned resource too big for the budget serves its whole overview, then abstract."""
    abstract, overview, body = "a" * 400, "o" * 900, "b" * 1800
    evidence = resource("r", abstract=abstract, overview=overview, body=body)
    detail: dict[Family, Tier] = {"resource": "full"}
    sizes = {
        tier: build({"resource": [evidence]}, detail={"resource": tier}).render().content_bytes
        for tier in ("full", "overview", "abstract")
    }
    served = [
        (item.tier, item.truncated, contents(result)[0])
        for max_bytes in (sizes["full"], sizes["full"] - 1, sizes["overview"] - 1)
        for result in [build({"resource": [evidence]}, max_bytes=max_bytes, detail=detail)]
        for item in result.delivered
    ]
    assert served == [
        ("full", False, body),
        ("overview", False, overview),
        ("abstract", False, abstract),
    ]


def test_resource_truncates_its_lowest_tier_when_no_tier_fits_whole() -> None:
    """Below the abstract's whole size, the abstract (not the body) is cut."""
    evidence = resource("r", abstract="a" * 600, overview="o" * 900, body="b" * 1800)
    result = build({"resource": [evidence]}, max_bytes=600, detail={"resource": "full"})
    assert [(item.tier, item.truncated) for item in result.delivered] == [("abstract", True)]
    (content,) = contents(result)
    assert set(content) == {"a"}
    assert 64 <= len(content) < 600


def test_the_best_item_takes_the_room_first() -> None:
    """Rank order decides who is cut: the first memory is whole, the next truncated."""
    candidates: Candidates = {"memory": [memory("m0", "x" * 1500), memory("m1", "y" * 1500)]}
    result = build(candidates, max_bytes=2400)
    assert [item.truncated for item in result.delivered] == [False, True]
    assert result.render().content_bytes == 2400


def test_timestamps_do_not_change_the_fit_arithmetic() -> None:
    """Items with and without ``at`` fill a budget exactly without crossing it."""
    stamped = memory("m0", "x" * 900, created_at=datetime(2023, 5, 8, 13, 56, tzinfo=UTC))
    result = build({"memory": [stamped, memory("m1", "y" * 900)]}, max_bytes=1700)
    assert result.render().content_bytes == 1700
    assert items(result)[0]["at"] == "2023-05-08T13:56:00+00:00"
    assert "at" not in items(result)[1]
    assert [item.truncated for item in result.delivered] == [False, True]


@pytest.mark.parametrize("entry", ["m", "漢字" * 20, 'q"\\\n\u2028' * 10, "😀" * 30])
def test_a_bare_citation_fits_a_budget_of_exactly_its_size(entry: str) -> None:
    """Pinned at "uri", a budget of exactly the wrapper and one bare citation delivers it;
    a byte less drops it."""
    candidates: Candidates = {"memory": [memory(entry, "z" * 1000)]}
    exact = WRAPPER + uri_item_bytes(candidates)
    fits = build(candidates, max_bytes=exact, detail={"memory": "uri"})
    assert [(item.tier, item.truncated) for item in fits.delivered] == [("uri", False)]
    assert fits.render().content_bytes == exact
    short = build(candidates, max_bytes=exact - 1, detail={"memory": "uri"})
    assert short.delivered == ()
    assert short.omissions.dropped_items == 1


def test_a_resource_whose_abstract_does_not_fit_is_still_cited() -> None:
    """A resource's citation points at something the host can fetch, so with room for
    its URI but not for a 64-byte cut of its abstract it is served bare; a memory in
    the same room is dropped instead."""
    filler = memory("a", "f" * 400)
    cited = resource("r", abstract="s" * 300)
    room = len('{"family":"resource","scope":"project:demo"}\n') + 60
    max_bytes = pack_bytes({"memory": [filler]}) + room
    result = build({"memory": [filler], "resource": [cited]}, max_bytes=max_bytes)
    assert [(item.tier, item.truncated) for item in result.delivered] == [
        ("full", False),
        ("uri", False),
    ]
    same_room = max_bytes - len('{"family":"resource","scope":"project:demo"}\n')
    dropped = build({"memory": [filler, memory("b", "s" * 300)]}, max_bytes=same_room)
    assert [item.evidence.identity for item in dropped.delivered] == ["a:1"]
    assert dropped.omissions.dropped_below_min_bytes == 1
