"""The committed state of one prepare: round 0 allocated, later rounds merged whole,
every transition a new frozen value."""

from __future__ import annotations

import attrs
import pytest

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
    assert state.candidates_by_round == (3,)
    assert state.joined_neighbours == 1
    assert (state.abstained, state.vouched_only) == (False, False)


def test_a_merged_round_appends_new_identities_after_the_committed_prefix() -> None:
    """Round 0 stays a prefix; a repeated identity keeps its first place."""
    state, a, b = committed(satchel.Limits(memory_candidates=6))
    staged = {a: outcome(a, ["a1", "a4"]), b: outcome(b, ["b2"])}
    merged = state.commit(staged, settings(1, "admission"), satchel.Limits(memory_candidates=6))
    assert merged.grew
    assert names(merged) == ["a1", "b1", "a2", "a3", "a4", "b2"]
    assert merged.actions == ("admission",)
    assert merged.candidates_by_round == (4, 6)
    assert merged.known[a] == frozenset({0, 1, 2})
    assert [index for index, _, _ in merged.rounds] == [0, 1]
    # The value it came from is unchanged: a transition never edits a state.
    assert names(state) == ["a1", "b1", "a2", "a3"]
    assert (state.actions, state.candidates_by_round) == ((), (4,))


def test_a_saturated_family_cannot_grow() -> None:
    """At its ceiling a family takes nothing more, and the commit says nothing was added."""
    limits = satchel.Limits(memory_candidates=3)
    state, a, b = committed(limits)
    merged = state.commit({a: outcome(a, ["a9"]), b: outcome(b, ["b9"])}, settings(1), limits)
    assert not merged.grew
    assert names(merged) == ["a1", "b1", "a2"]


def test_a_state_is_frozen() -> None:
    state, _, _ = committed(satchel.Limits())
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        state.steps = 1  # type: ignore[misc]


def test_a_step_is_counted_and_a_discarded_round_adds_nothing() -> None:
    state, _, _ = committed(satchel.Limits(memory_candidates=3))
    stepped = state.stepped().stepped()
    assert (state.steps, stepped.steps) == (0, 2)
    discarded = stepped.discarded()
    assert discarded.candidates_by_round == (3, 3)
    assert not discarded.grew
    assert names(discarded) == names(state)


def test_round_zero_without_evidence_of_relevance_abstains() -> None:
    """A verdict of None abstains; a vouched-only kind keeps only vouched candidates."""
    a = SearchSpec("memory", "a")
    outcomes = {a: outcome(a, ["a1"])}
    abstaining = Committed.round_zero([a], outcomes, settings(), satchel.Limits(), judged=None)
    assert (abstaining.abstained, abstaining.vouched_only) == (True, False)
    vouched = Committed.round_zero(
        [a], outcomes, settings(), satchel.Limits(), judged=satchel.recall.VOCABULARY
    )
    assert (vouched.abstained, vouched.vouched_only) == (False, True)
