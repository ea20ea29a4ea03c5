"""The Packer: turns one prepare's committed candidates into a fitted pack.

The coordinator calls :meth:`Packer.pack` after round 0 and after each expansion round
that adds candidates. It joins the profile read for this prepare, leaves out what the
session ledger holds back, reads the bodies of resources the request pins at ``full``
(each body once per prepare, under the scope's read guard), then runs the pure Builder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from ..builder import BuildResult, build_context, needs_body
from ._ledger import hold_back

if TYPE_CHECKING:
    from ..builder import FitMemo
    from ..stores import Store
    from ..vocabulary import Evidence, Family, Limits, ResolvedRequest
    from ._committed import Candidates
    from ._locks import ScopeGuards


@attrs.define
class Packer:
    """Fits candidates for one prepare, reading what the Builder may not read itself.

    Attributes:
        request: the validated request being prepared.
        store: where pinned resource bodies are read.
        guards: the per-scope read guards those reads take.
        limits: the runtime's limits.
        memo: the runtime's encoding memo, shared by every fit.
        unsearched: the families read whole rather than searched (the profile), as read.
        held: evidence identities the session ledger holds back this turn.
    """

    request: ResolvedRequest
    store: Store
    guards: ScopeGuards
    limits: Limits
    memo: FitMemo
    unsearched: dict[Family, tuple[Evidence, ...]] = attrs.Factory(dict)
    held: frozenset[str] = frozenset()
    _bodies: dict[tuple[str, str], str] = attrs.field(factory=dict, init=False)

    async def pack(self, candidates: Candidates) -> BuildResult:
        """Read the pinned bodies ``candidates`` still lack, then fit them all."""
        await self._read_bodies(candidates)
        merged = {**candidates, **self.unsearched}
        if self.held:
            merged = hold_back(merged, self.held)
        if self._bodies:
            merged = self._with_bodies(merged)
        return build_context(
            merged,
            max_bytes=self.request.max_bytes,
            sections=self.request.sections,
            detail=self.request.detail,
            limits=self.limits,
            memo=self.memo,
        )

    async def _read_bodies(self, candidates: Candidates) -> None:
        """Read the bodies of pinned resources not read yet in this prepare."""
        wanted: dict[str, list[str]] = {}
        for items in candidates.values():
            for item in items:
                if needs_body(item, self.request.detail):
                    uri = _uri(item)
                    if (item.scope_id, uri) not in self._bodies:
                        wanted.setdefault(item.scope_id, []).append(uri)
        for scope, uris in wanted.items():
            async with self.guards.reading(scope):
                found = await self.store.read_resource_bodies(scope, uris)
            self._bodies.update(((scope, uri), body) for uri, body in found.items())

    def _with_bodies(self, candidates: Candidates) -> Candidates:
        detail = self.request.detail
        return {
            family: tuple(
                attrs.evolve(item, text=self._bodies.get((item.scope_id, _uri(item))))
                if needs_body(item, detail)
                else item
                for item in items
            )
            for family, items in candidates.items()
        }


def _uri(item: Evidence) -> str:
    return str(item.citation["uri"])
