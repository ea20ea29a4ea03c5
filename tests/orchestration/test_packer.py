"""The Packer: the profile joins every fit, held-back items never do; it reads nothing."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import satchel
from satchel.builder import FitMemo
from satchel.orchestration import Exclusions, Packer, PrepareState
from satchel.vocabulary import Evidence, analyse_query, validate_request

if TYPE_CHECKING:
    from collections.abc import Mapping

    from satchel.vocabulary import Family

SCOPE = "project:demo"


def packer(
    unsearched: Mapping[Family, tuple[Evidence, ...]] | None = None,
    held_back: frozenset[str] = frozenset(),
) -> Packer:
    request = validate_request(satchel.PrepareContextRequest(scope_id=SCOPE, query="runbook"))
    limits = satchel.Limits()
    state = PrepareState(
        request,
        math.inf,
        0.0,
        (analyse_query("runbook"),),
        (None,),
        Exclusions(held_back=held_back),
        unsearched or {},
    )
    return Packer(state, limits, FitMemo(limits))


def test_held_back_items_and_the_profile_are_applied_to_every_fit() -> None:
    """The profile read for the prepare joins every fit; held-back identities never do."""
    kept = Evidence.from_record("memory", SCOPE, "e1", 1, text="kept fact")
    held = Evidence.from_record("memory", SCOPE, "e2", 1, text="held fact")
    profile = Evidence.from_record("profile", SCOPE, text="the profile")
    pack = packer({"profile": (profile,)}, frozenset({held.identity}))
    for _ in range(2):
        content = pack.pack({"memory": (kept, held)}).render().content or ""
        assert "kept fact" in content
        assert "the profile" in content
        assert "held fact" not in content


def test_a_resource_without_its_body_is_served_at_its_abstract() -> None:
    """Fitting never reads: a resource whose body was not read is served at its abstract."""
    resource = Evidence.from_record("resource", SCOPE, "a.md", 1, abstract="abstract of a.md")
    content = packer().pack({"resource": (resource,)}).render().content or ""
    assert "abstract of a.md" in content
