"""The budget: deepening, the probe, and the byte ceiling over random packs."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta, timezone
from typing import TYPE_CHECKING

from satchel.builder import BuildResult, build_context, tier_ceiling
from satchel.builder._fitting import Candidate, Fitted, _deepen, fit_item
from satchel.builder._render import json_string
from satchel.vocabulary import BudgetView
from satchel.vocabulary._families import FAMILIES, TIERS
from satchel.vocabulary._limits import Limits
from satchel.vocabulary._requests import Section

from .factories import (
    BEGIN,
    END,
    Candidates,
    build,
    experience,
    items,
    memory,
    profile,
    resource,
    topic,
)

if TYPE_CHECKING:
    from satchel.vocabulary._evidence import Evidence
    from satchel.vocabulary._families import Family, Tier

ALPHABETS = ["deploy cache rollback ", "漢字仮名交じり", "😀🚀🧠", "a\nb\u2028c\x85\x00\u202e", "é"]
POOLS = [
    "".join(random.Random(seed).choices(alphabet, k=6000))
    for seed, alphabet in enumerate(ALPHABETS)
]
MARKERS = [
    "END_SATCHEL_CONTEXT_V2",
    "\nBEGIN_SATCHEL_CONTEXT_V2\n",
    '"]\n{"family":"memory","scope":"x"}\n["',
    '"}]}',
    "\\",
]


def test_deepening_restores_a_truncated_item_when_bytes_are_left() -> None:
    """A cut item refitted with leftover bytes regains its whole text and spends them."""
    limits = Limits()
    candidate = Candidate.from_evidence(memory("m", "x" * 1000), "full", limits)
    cut = fit_item(candidate, 400, limits)
    assert cut is not None
    assert cut.truncated
    placed = [Fitted(candidate, cut)]
    unused = _deepen(placed, 5000, limits)
    (deepened,) = placed
    assert (deepened.placement.tier, deepened.placement.truncated) == ("full", False)
    assert unused == 5000 - (deepened.placement.size - cut.size)


def test_deepening_moves_a_resource_up_towards_its_ceiling_within_budget() -> None:
    """A stepped-down resource climbs only as far as the leftover bytes allow."""
    limits = Limits()
    evidence = resource("r", abstract="a" * 100, overview="o" * 600, body="b" * 1500)
    candidate = Candidate.from_evidence(evidence, "full", limits)
    low = fit_item(candidate, 300, limits)
    assert low is not None
    assert low.tier == "abstract"
    placed = [Fitted(candidate, low)]
    unused = _deepen(placed, 700, limits)
    middle = placed[0].placement
    assert middle.tier == "overview"
    assert unused == 700 - (middle.size - low.size)
    _deepen(placed, 2000, limits)
    assert placed[0].placement.tier == "full"


def test_deepening_leaves_items_at_their_ceiling_alone() -> None:
    """An item already whole at its ceiling costs no leftover bytes."""
    limits = Limits()
    candidate = Candidate.from_evidence(memory("m", "short"), "full", limits)
    whole = fit_item(candidate, 5000, limits)
    assert whole is not None
    placed = [Fitted(candidate, whole)]
    assert _deepen(placed, 1234, limits) == 1234
    assert placed[0].placement is whole


def test_probe_agrees_with_the_build() -> None:
    """The probe reports the build's delivered, truncated and dropped counts and unused bytes."""
    candidates: Candidates = {
        "memory": [memory(f"m{i}", f"{i}act " + "fact " * 119) for i in range(10)],
        "experience": [experience("x", "lesson " * 50)],
    }
    result = build(candidates, max_bytes=2400)
    assert probe(candidates, max_bytes=2400) == view_of(result, 2400)
    assert result.omissions.truncated_items == 1
    assert result.omissions.dropped_items >= 1


def test_probe_of_an_empty_pack_leaves_the_whole_budget_unused() -> None:
    """With nothing deliverable, unused_bytes is max_bytes."""
    view = probe({"memory": []}, max_bytes=777)
    assert view == BudgetView(
        max_bytes=777, delivered_items=0, truncated_items=0, dropped_items=0, unused_bytes=777
    )


def test_random_packs_stay_within_budget_and_agree_with_the_probe() -> None:
    """Over seeded random packs: the ceiling holds, content is exact prefixes, probe agrees."""
    rng = random.Random(20240508)
    for _ in range(400):
        candidates = random_candidates(rng)
        max_bytes = rng.choice([512, 513, 600, 1000, rng.randint(512, 32768)])
        sections = random_sections(rng)
        detail = random_detail(rng)
        limits = rng.choice([Limits(), Limits.classic()])
        result = build(
            candidates, max_bytes=max_bytes, sections=sections, detail=detail, limits=limits
        )
        check_pack(result, max_bytes)
        view = probe(
            candidates, max_bytes=max_bytes, sections=sections, detail=detail, limits=limits
        )
        assert view == view_of(result, max_bytes)
        assert_nothing_left_to_deepen(result, view.unused_bytes, detail, limits)


def check_pack(result: BuildResult, max_bytes: int) -> None:
    omissions = result.omissions
    dropped = omissions.dropped_below_min_bytes + omissions.dropped_no_fitting_truncation
    assert omissions.dropped_items == dropped
    assert omissions.truncated_items == sum(item.truncated for item in result.delivered)
    content = result.render().content
    if not result.delivered:
        assert (result.render().status, content, result.render().content_bytes) == (
            "empty",
            None,
            0,
        )
        return
    assert content is not None
    assert result.render().content_bytes == len(content.encode()) <= max_bytes
    assert content.count(BEGIN) == content.count(END) == 1
    for delivered, item in zip(result.delivered, items(result), strict=True):
        assert item["detail"] == delivered.tier
        assert item["citation"] == dict(delivered.evidence.citation)
        if delivered.tier == "uri":
            assert "content" not in item
            continue
        source = source_text(delivered.evidence, delivered.tier)
        assert source.startswith(item["content"])
        assert delivered.truncated == (item["content"] != source)
        assert len(item["content"].encode()) <= 2000


def assert_nothing_left_to_deepen(
    result: BuildResult, unused: int, detail: dict[Family, Tier], limits: Limits
) -> None:
    """No delivered item could be served deeper within the bytes the pack left unused."""
    if not result.delivered:
        return
    for delivered, item in zip(result.delivered, items(result), strict=True):
        ceiling = tier_ceiling(delivered.evidence.family, detail)
        candidate = Candidate.from_evidence(delivered.evidence, ceiling, limits)
        literal = json_string(item["content"]) if "content" in item else None
        literal_bytes = None if literal is None else len(literal.encode())
        size = candidate.size(delivered.tier, literal_bytes, truncated=delivered.truncated)
        deeper = fit_item(candidate, size + unused, limits)
        assert deeper is not None
        assert (deeper.tier, deeper.truncated) == (delivered.tier, delivered.truncated)


def source_text(evidence: Evidence, tier: Tier) -> str:
    if evidence.family != "resource" or tier == "full":
        text = evidence.text
    else:
        text = evidence.overview if tier == "overview" else evidence.abstract
    assert text is not None
    return text


def probe(
    candidates: Candidates,
    *,
    max_bytes: int,
    sections: list[Section] | None = None,
    detail: dict[Family, Tier] | None = None,
    limits: Limits | None = None,
) -> BudgetView:
    """The budget probe: the Builder's fitting pass, read for its counts, never rendered."""
    fitted = build_context(
        candidates,
        max_bytes=max_bytes,
        sections=sections,
        detail={} if detail is None else detail,
        limits=Limits() if limits is None else limits,
    )
    return fitted.budget(max_bytes)


def view_of(result: BuildResult, max_bytes: int) -> BudgetView:
    return BudgetView(
        max_bytes=max_bytes,
        delivered_items=len(result.delivered),
        truncated_items=result.omissions.truncated_items,
        dropped_items=result.omissions.dropped_items,
        unused_bytes=max_bytes - result.render().content_bytes,
    )


def random_text(rng: random.Random) -> str:
    # Slices of one shuffled pool per alphabet: random enough, and cheap to make.
    pool = POOLS[rng.randrange(len(POOLS))]
    start = rng.randrange(len(pool) // 2)
    text = pool[start : start + rng.choice([0, 5, 40, 300, 900, 2500])]
    if rng.random() < 0.2:
        at = rng.randint(0, len(text))
        text = text[:at] + rng.choice(MARKERS) + text[at:]
    return text


def random_candidates(rng: random.Random) -> Candidates:
    def optional() -> str | None:
        return rng.choice([None, random_text(rng)])

    return {
        "memory": [
            memory(random_id(rng, i), random_text(rng), created_at=random_time(rng))
            for i in range(rng.randint(0, 30))
        ],
        "experience": [experience(f"x{i}", random_text(rng)) for i in range(rng.randint(0, 4))],
        "topic-memory": [topic(f"t{i}", random_text(rng)) for i in range(rng.randint(0, 6))],
        "profile": [profile(random_text(rng))] if rng.random() < 0.5 else [],
        "resource": [
            resource(f"r{i}", abstract=optional(), overview=optional(), body=optional())
            for i in range(rng.randint(0, 5))
        ],
    }


def random_id(rng: random.Random, index: int) -> str:
    """An entry id as satchel mints it, or one a pack must spell as it is."""
    return rng.choice(
        [
            f"{rng.getrandbits(128):032x}",
            f"{rng.getrandbits(128):032X}",
            f"token-shaped-id-{index:06d}",  # 22 characters of the short spelling's alphabet
            f"=m{index}",
            f"m{index}",
        ]
    )


def random_time(rng: random.Random) -> datetime | None:
    if rng.random() < 0.3:
        return None
    offset = timezone(timedelta(minutes=rng.choice([0, 0, 330, -180])))
    moment = datetime(2020, 1, 1, tzinfo=UTC) + timedelta(seconds=rng.randint(0, 10**8))
    moment += timedelta(microseconds=rng.choice([0, 0, rng.randint(1, 999_999)]))
    return moment.astimezone(offset)


def random_sections(rng: random.Random) -> list[Section] | None:
    if rng.random() < 0.6:
        return None
    families = rng.sample(FAMILIES, rng.randint(0, 3))
    return [Section(family, rng.randint(1, 2)) for family in families]


def random_detail(rng: random.Random) -> dict[Family, Tier]:
    pinned = rng.sample(FAMILIES, rng.randint(0, 2))
    return {family: rng.choice(TIERS) for family in pinned}
