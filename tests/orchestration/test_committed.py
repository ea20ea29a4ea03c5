"""The committed state of one prepare: round 0 allocated, later rounds merged whole."""

from __future__ import annotations

import satchel
from satchel.orchestration import Committed, RoundSettings, SearchOutcome, SearchSpec
from satchel.recall import AdmissionFloor, admit, fuse
from satchel.vocabulary import analyse_query
from tests.recall._factory import evidence, pool

QUERY = analyse_query("alpha beta")


def outcome(spec: SearchSpec, names: list[str], joined: int = 0) -> SearchOutcome:
    found = pool(lexical=[(i, 1) for i in range(len(names))], scope=spec.scope_id)
    search = fuse(admit(found, 2, AdmissionFloor()), 2)
    items = tuple(evidence(name, spec.family, spec.scope_id) for name in names)
    keys = tuple(range(len(names)))
    return SearchOutcome(spec, found, search, keys, items, joined_neighbours=joined)


def settings(index: int = 0, action: str = "search") -> RoundSettings:
    return RoundSettings(index, action, AdmissionFloor(), {"memory": 4})


def committed(limits: satchel.Limits) -> tuple[Committed, SearchSpec, SearchSpec]:
    a, b = SearchSpec("memory", "a"), SearchSpec("memory", "b")
    outcomes = {a: outcome(a, ["a1", "a2", "a3"], joined=1), b: outcome(b, ["b1"])}
    return Committed.round_zero([a, b], outcomes, settings(), limits), a, b


def names(state: Committed) -> list[str]:
    return [str(item.citation["entry_id"]) for item in state.candidates["memory"]]


def test_round_zero_is_allocated_round_robin_under_the_ceiling() -> None:
    """Rank 1 of every scope, then rank 2, ... up to the family's ceiling."""
    state, _, _ = committed(satchel.Limits(memory_candidates=3))
    assert names(state) == ["a1", "b1", "a2"]
    assert state.candidates_by_round == [3]
    assert state.joined_neighbours == 1


def test_a_merged_round_appends_new_identities_after_the_committed_prefix() -> None:
    """Round 0 stays a prefix; a repeated identity keeps its first place."""
    state, a, b = committed(satchel.Limits(memory_candidates=6))
    staged = {a: outcome(a, ["a1", "a4"]), b: outcome(b, ["b2"])}
    assert state.commit(staged, settings(1, "admission"), satchel.Limits(memory_candidates=6))
    assert names(state) == ["a1", "b1", "a2", "a3", "a4", "b2"]
    assert state.actions == ["admission"]
    assert state.candidates_by_round == [4, 6]
    assert state.known[a] == frozenset({0, 1, 2})


def test_a_saturated_family_cannot_grow() -> None:
    """At its ceiling a family takes nothing more, and the commit says nothing was added."""
    limits = satchel.Limits(memory_candidates=3)
    state, a, b = committed(limits)
    assert not state.commit({a: outcome(a, ["a9"]), b: outcome(b, ["b9"])}, settings(1), limits)
    assert names(state) == ["a1", "b1", "a2"]
