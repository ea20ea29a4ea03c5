"""Test helper: evidence and pools built from plain values."""

from __future__ import annotations

from typing import TYPE_CHECKING

from satchel.vocabulary._evidence import Evidence, Pool

if TYPE_CHECKING:
    from collections.abc import Sequence

    from satchel.vocabulary._families import Family


def evidence(name: str, family: Family = "memory", scope: str = "s") -> Evidence:
    return Evidence(
        family=family,
        scope_id=scope,
        identity=f"{family}|{scope}|{name}",
        citation={"family": family, "scope": scope, "entry_id": name, "version": 1},
        text=f"text of {name}",
    )


def pool(
    lexical: Sequence[tuple[int, int]] = (),
    vector: Sequence[tuple[int, float]] = (),
    family: Family = "memory",
    scope: str = "s",
) -> Pool:
    """``lexical`` is (key, matched term count) in BM25 order; ``vector`` is (key, cosine)."""
    return Pool(
        family=family,
        scope_id=scope,
        version=0,
        lexical_keys=[key for key, _ in lexical],
        lexical_scores=[-float(i) for i in range(len(lexical))],
        lexical_matches=[matches for _, matches in lexical],
        vector_keys=[key for key, _ in vector],
        vector_similarities=[s for _, s in vector],
    )
