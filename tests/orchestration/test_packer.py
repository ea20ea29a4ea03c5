"""The Packer: the profile joins every fit, held-back items never do; it reads nothing;
a fit runs in short loop turns, and once begun it finishes."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import anyio
import pytest

import satchel
from satchel.builder import FitMemo, _fitting
from satchel.orchestration import Exclusions, Packer, PrepareState
from satchel.orchestration._telemetry import BuildSpan
from satchel.vocabulary import Evidence, analyse_query, tracer, validate_request

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
    return Packer(state, limits, FitMemo(limits), BuildSpan(tracer(None)))


pytestmark = pytest.mark.anyio


async def test_held_back_items_and_the_profile_are_applied_to_every_fit() -> None:
    """The profile read for the prepare joins every fit; held-back identities never do."""
    kept = Evidence.from_record("memory", SCOPE, "e1", 1, text="kept fact")
    held = Evidence.from_record("memory", SCOPE, "e2", 1, text="held fact")
    profile = Evidence.from_record("profile", SCOPE, text="the profile")
    pack = packer({"profile": (profile,)}, frozenset({held.identity}))
    for _ in range(2):
        content = (await pack.pack({"memory": (kept, held)})).render().content or ""
        assert "kept fact" in content
        assert "the profile" in content
        assert "held fact" not in content


async def test_a_resource_without_its_body_is_served_at_its_abstract() -> None:
    """Fitting never reads: a resource whose body was not read is served at its abstract."""
    resource = Evidence.from_record("resource", SCOPE, "a.md", 1, abstract="abstract of a.md")
    content = (await packer().pack({"resource": (resource,)})).render().content or ""
    assert "abstract of a.md" in content


def memories(count: int) -> tuple[Evidence, ...]:
    return tuple(
        Evidence.from_record("memory", SCOPE, f"e{n}", 1, text=f"runbook fact number {n}")
        for n in range(count)
    )


async def test_the_host_runs_between_the_stretches_of_a_fit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fit of 40 candidates runs in stretches of 16 placed candidates, each a loop step
    of its own: a host task woken by the first placement runs before the fit ends, and
    between two stretches, never inside one (whichever order the loop runs it in)."""
    placed: list[Evidence] = []
    first_placed = anyio.Event()
    place = _fitting._Placer.__call__

    def placing(self: _fitting._Placer, evidence: Evidence, room: int) -> object:
        placed.append(evidence)
        first_placed.set()
        return place(self, evidence, room)

    monkeypatch.setattr(_fitting._Placer, "__call__", placing)
    seen_by_host: list[int] = []

    async def host() -> None:
        await first_placed.wait()
        seen_by_host.append(len(placed))

    async with anyio.create_task_group() as group:
        group.start_soon(host)
        await anyio.lowlevel.checkpoint()  # the host waits for the first placement
        build = await packer().pack({"memory": memories(40)})
    assert len(build.delivered) == len(placed) == 40
    [seen] = seen_by_host
    assert seen in {_fitting.FIT_STRETCH, 2 * _fitting.FIT_STRETCH}


async def test_a_fit_once_begun_finishes_though_its_prepare_is_cancelled() -> None:
    """Cancelled between two stretches, the fit still returns whole: what a prepare has
    committed and what it delivers never disagree."""
    whole = await packer().pack({"memory": memories(40)})
    build = None
    with anyio.CancelScope() as scope:
        scope.cancel()  # every unshielded checkpoint from here raises
        build = await packer().pack({"memory": memories(40)})
        await anyio.lowlevel.checkpoint()  # cancelled here, after the fit
    assert scope.cancelled_caught
    assert build is not None
    assert build.render() == whole.render()
