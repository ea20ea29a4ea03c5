"""RecallEffort: exactly its thirteen fields, JSON-ready, with no query text."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest

from satchel.recall._admission import AdmissionCounts
from satchel.recall._effort import RecallEffort

QUERY = "How do I verify the HTTP API after changing the contract?"

EFFORT_FIELDS = [
    "policy",
    "assessment",
    "rounds",
    "expansion_actions",
    "candidates_by_round",
    "admission_by_family",
    "added_embeddings",
    "added_generation_calls",
    "truncated_items",
    "dropped_items",
    "dropped_below_min_bytes",
    "dropped_no_fitting_truncation",
    "stages",
]


def effort(**changes: Any) -> RecallEffort:
    values: dict[str, Any] = {
        "policy": "satchel.recall-gate.v1",
        "assessment": "sufficient",
        "rounds": 3,
        "expansion_actions": ("admission", "policy-floor"),
        "candidates_by_round": (3, 7, 7),
        "admission_by_family": (
            AdmissionCounts(family="memory", scope_id="project:demo", retrieved=64, admitted=7),
            AdmissionCounts(family="experience", scope_id="project:demo", retrieved=8, admitted=0),
        ),
        "added_embeddings": 0,
        "added_generation_calls": 0,
        "truncated_items": 1,
        "dropped_items": 2,
        "dropped_below_min_bytes": 1,
        "dropped_no_fitting_truncation": 1,
        "stages": {"planner": "off", "digest": "off"},
    }
    values.update(changes)
    return RecallEffort(**values)


def test_fields_are_exactly_those_of_design_section_4_in_order() -> None:
    """RecallEffort has the thirteen documented fields, in that order, and nothing else."""
    assert [field.name for field in attrs.fields(RecallEffort)] == EFFORT_FIELDS


def test_effort_is_frozen_and_keyword_only() -> None:
    """A reported effort cannot be changed after the fact; fields are named at construction."""
    report = effort()
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        report.rounds = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        RecallEffort("satchel.recall-gate.v1")  # type: ignore[call-arg]


def test_to_json_is_json_serialisable_with_every_field() -> None:
    """to_json maps every field, in order, to JSON types that json.dumps accepts."""
    payload = effort().to_json()
    assert list(payload) == EFFORT_FIELDS
    assert json.loads(json.dumps(payload)) == {
        "policy": "satchel.recall-gate.v1",
        "assessment": "sufficient",
        "rounds": 3,
        "expansion_actions": ["admission", "policy-floor"],
        "candidates_by_round": [3, 7, 7],
        "admission_by_family": [
            {"family": "memory", "scope_id": "project:demo", "retrieved": 64, "admitted": 7},
            {"family": "experience", "scope_id": "project:demo", "retrieved": 8, "admitted": 0},
        ],
        "added_embeddings": 0,
        "added_generation_calls": 0,
        "truncated_items": 1,
        "dropped_items": 2,
        "dropped_below_min_bytes": 1,
        "dropped_no_fitting_truncation": 1,
        "stages": {"planner": "off", "digest": "off"},
    }


def test_to_json_of_a_disabled_gate_with_no_searches() -> None:
    """A one-round effort with empty tuples still serialises (empty lists)."""
    payload = effort(
        policy="disabled",
        assessment="no-content",
        rounds=1,
        expansion_actions=(),
        candidates_by_round=(0,),
        admission_by_family=(),
    ).to_json()
    text = json.dumps(payload)
    assert json.loads(text)["expansion_actions"] == []
    assert json.loads(text)["admission_by_family"] == []


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [*map(str, value), *(s for v in value.values() for s in _strings(v))]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


def test_to_json_carries_no_query_text() -> None:
    """Every string in the report is a field name, policy id, reason, action, family or scope."""
    text = json.dumps(effort().to_json())
    assert QUERY not in text
    for word in ("verify", "HTTP", "contract"):
        assert word not in text
    allowed = {
        *EFFORT_FIELDS,
        "satchel.recall-gate.v1",
        "sufficient",
        "admission",
        "policy-floor",
        "memory",
        "experience",
        "project:demo",
        "family",
        "scope_id",
        "retrieved",
        "admitted",
        "planner",
        "digest",
        "off",
    }
    assert set(_strings(json.loads(text))) <= allowed


def test_to_json_returns_a_fresh_mapping() -> None:
    """Editing the returned mapping does not reach the effort."""
    report = effort()
    payload = report.to_json()
    payload["rounds"] = 99
    payload["admission_by_family"][0]["admitted"] = 0
    assert report.rounds == 3
    assert report.admission_by_family[0].admitted == 7
    assert report.to_json()["rounds"] == 3
