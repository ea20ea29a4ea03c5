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
    """A fit of 40 candidates runs in stretches of 16 placed candidates, each its own loop
    turn: a host task beside it runs between them, never inside one."""
    host_passes = 0
    seen: list[int] = []  # the host's passes when each candidate was placed
    place = _fitting._Placer.__call__

    def placing(self: _fitting._Placer, evidence: Evidence, room: int) -> object:
        seen.append(host_passes)
        return place(self, evidence, room)

    monkeypatch.setattr(_fitting._Placer, "__call__", placing)

    async def host(done: anyio.Event) -> None:
        nonlocal host_passes
        while not done.is_set():
            host_passes += 1
            await anyio.lowlevel.checkpoint()

    done = anyio.Event()
    async with anyio.create_task_group() as group:
        group.start_soon(host, done)
        await anyio.lowlevel.checkpoint()  # the host is running
        build = await packer().pack({"memory": memories(40)})
        done.set()
    assert len(build.delivered) == 40
    assert len(seen) == 40
    stretches = [seen[n : n + _fitting.FIT_STRETCH] for n in range(0, 40, _fitting.FIT_STRETCH)]
    # No host pass inside a stretch; at least one between each two.
    assert all(len(set(stretch)) == 1 for stretch in stretches)
    assert stretches[0][0] < stretches[1][0] < stretches[2][0]


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
