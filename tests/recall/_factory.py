"""Test helper: evidence and pools built from plain values."""

from __future__ import annotations

from glean._families import Family
from glean.recall._evidence import Evidence, LexicalHit, Pool, VectorHit


def evidence(name: str, family: Family = "memory", scope: str = "s") -> Evidence:
    return Evidence(
        family=family,
        scope_id=scope,
        identity=f"{family}|{scope}|{name}",
        citation={"family": family, "scope": scope, "entry_id": name, "version": 1},
        text=f"text of {name}",
    )


def pool(
    lexical: list[tuple[str, int]] = (),  # type: ignore[assignment]
    vector: list[tuple[str, float]] = (),  # type: ignore[assignment]
    family: Family = "memory",
    scope: str = "s",
) -> Pool:
    """``lexical`` is (name, matched term count) in BM25 order; ``vector`` is (name, cosine)."""
    return Pool(
        family=family,
        scope_id=scope,
        version=0,
        lexical=tuple(
            LexicalHit(evidence(n, family, scope), -float(i), frozenset(f"t{k}" for k in range(m)))
            for i, (n, m) in enumerate(lexical)
        ),
        vector=tuple(VectorHit(evidence(n, family, scope), s) for n, s in vector),
    )
