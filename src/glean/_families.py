"""The memory families and the tiers they are served at."""

from __future__ import annotations

from typing import Final, Literal, TypeAlias

Family: TypeAlias = Literal["memory", "experience", "topic-memory", "profile", "resource"]
Tier: TypeAlias = Literal["uri", "abstract", "overview", "full"]

FAMILIES: Final[tuple[Family, ...]] = (
    "memory",
    "experience",
    "topic-memory",
    "profile",
    "resource",
)
SEARCHABLE: Final[frozenset[Family]] = frozenset(
    {"memory", "experience", "topic-memory", "resource"}
)
DEFAULT_FAMILIES: Final[tuple[Family, ...]] = ("memory", "experience", "topic-memory")
# Rank order of the interleave: memory first (DESIGN §5).
INTERLEAVE_ORDER: Final[tuple[Family, ...]] = (
    "memory",
    "experience",
    "topic-memory",
    "resource",
    "profile",
)
TIERS: Final[tuple[Tier, ...]] = ("uri", "abstract", "overview", "full")
