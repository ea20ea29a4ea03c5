"""One prepare, from a validated plan to a fitted pack: the runtime's hot path.

Analyses and embeds the query once, reads the profile once, lets the coordinator run
the rounds, and fits candidates with the Builder, reading a resource body only when
the request pins it. Reports the effort to the sink, whose errors are logged and
swallowed.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Final

import attrs

from ._dedup import DedupLedger, hold_back
from .builder import BuildResult, build_context, needs_body
from .builder._fitting import FitMemo
from .recall._analysis import analyse_query

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    from ._coordinator import Candidates, Coordinator
    from ._embedders import Embedder
    from ._families import Family
    from ._limits import Limits
    from ._locks import ScopeGuards
    from ._requests import PreparePlan
    from .recall._effort import RecallEffort
    from .recall._evidence import Evidence
    from .stores._protocol import Store

    RecallEffortSink = Callable[[RecallEffort], Awaitable[None]]

logger = logging.getLogger("glean")

#: Families whose search has a vector channel (experience is lexical only).
VECTOR_FAMILIES: Final = frozenset({"memory", "topic-memory", "resource"})


@attrs.frozen
class Preparer:
    """Runs prepares for one runtime."""

    store: Store
    embedder: Embedder
    limits: Limits
    guards: ScopeGuards
    coordinator: Coordinator
    sink: RecallEffortSink | None
    ledger: DedupLedger | None = None
    #: Encoded candidates shared by every prepare: an item is encoded once, not per fit.
    memo: FitMemo = attrs.field(
        default=attrs.Factory(lambda self: FitMemo(self.limits), takes_self=True)
    )

    async def prepare(self, plan: PreparePlan) -> BuildResult:
        query = analyse_query(plan.query)
        vector = None
        if any(family in VECTOR_FAMILIES for family in plan.families):
            vector = (await self.embedder.embed([plan.query]))[0]
        profile = await self._profile(plan)
        bodies: dict[tuple[str, str], str] = {}
        turn, held = 0, frozenset[str]()
        session = plan.session_id if self.ledger is not None else None
        if session is not None and self.ledger is not None:
            turn, held = self.ledger.begin_turn(session)

        def fit(candidates: Candidates) -> BuildResult:
            merged = {**candidates, **profile}
            return self._fit(plan, hold_back(merged, held) if held else merged, bodies)

        recalled = await self.coordinator.recall(
            plan, query, vector, fit, bodies=lambda c: self._read_bodies(plan, c, bodies),
            effort=self.sink is not None,
        )  # fmt: skip
        if session is not None and self.ledger is not None:
            self.ledger.record(session, turn, recalled.build.delivered)
        if recalled.effort is not None:
            await self._report(recalled.effort)
        return recalled.build

    async def _profile(self, plan: PreparePlan) -> dict[Family, tuple[Evidence, ...]]:
        if "profile" not in plan.families:
            return {}
        async with self.guards.reading(plan.scope_id):
            found = await self.store.get_profile(plan.scope_id)
        return {"profile": () if found is None else (found,)}

    def _fit(
        self,
        plan: PreparePlan,
        candidates: Candidates,
        bodies: Mapping[tuple[str, str], str],
    ) -> BuildResult:
        if bodies and "resource" in candidates:
            candidates["resource"] = tuple(
                attrs.evolve(item, text=bodies.get((item.scope_id, str(item.citation["uri"]))))
                if needs_body(item, plan.detail)
                else item
                for item in candidates["resource"]
            )
        return build_context(
            candidates,
            max_bytes=plan.max_bytes,
            sections=plan.sections,
            detail=plan.detail,
            limits=self.limits,
            memo=self.memo,
        )

    async def _read_bodies(
        self, plan: PreparePlan, candidates: Candidates, bodies: dict[tuple[str, str], str]
    ) -> None:
        """Read the bodies of resources whose tier ceiling is ``full`` and not read yet."""
        wanted: dict[str, list[str]] = {}
        for item in candidates.get("resource", ()):
            uri = str(item.citation["uri"])
            if needs_body(item, plan.detail) and (item.scope_id, uri) not in bodies:
                wanted.setdefault(item.scope_id, []).append(uri)
        for scope, uris in wanted.items():
            async with self.guards.reading(scope):
                found = await self.store.read_resource_bodies(scope, uris)
            bodies.update(((scope, uri), body) for uri, body in found.items())

    async def _report(self, effort: RecallEffort) -> None:
        assert self.sink is not None
        try:
            await self.sink(effort)
        except Exception:  # a failing sink never fails the prepare
            logger.exception("recall effort sink failed")
