"""``RecallEffort``: what one prepare spent on recall, for the in-process sink. Pure.

It carries counts only: no query text and no entry identity.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

import attrs

if TYPE_CHECKING:
    from ._admission import AdmissionCounts


@attrs.frozen(kw_only=True)
class RecallEffort:
    """The effort of one prepare: rounds, actions, candidates and omissions.

    Attributes:
        policy: the policy id (``"disabled"`` when the gate is off).
        assessment: the final gate reason.
        rounds: search passes executed, ``1 + expansion rounds run`` (1..3).
        expansion_actions: the actions of committed expansion rounds, in order.
        candidates_by_round: candidates offered to the Builder after each round.
        admission_by_family: per family and scope, measured in the last complete round.
        added_embeddings: query embeddings paid by expansion rounds (0 with reuse).
        added_generation_calls: model calls paid by expansion rounds (satchel makes none).
        truncated_items: delivered items that were cut.
        dropped_items: whole items lost to the budget.
        dropped_below_min_bytes: drops where the room left was under the minimum.
        dropped_no_fitting_truncation: drops where no truncation fitted.
        stages: the outcome of each host stage, ``planner`` and ``digest``: ``off``,
            ``ok``, ``failed``, ``timeout`` or (digest) ``no_relevant``.
    """

    policy: str
    assessment: str
    rounds: int
    expansion_actions: tuple[str, ...]
    candidates_by_round: tuple[int, ...]
    admission_by_family: tuple[AdmissionCounts, ...]
    added_embeddings: int
    added_generation_calls: int
    truncated_items: int
    dropped_items: int
    dropped_below_min_bytes: int
    dropped_no_fitting_truncation: int
    stages: Mapping[str, str] = attrs.field(factory=lambda: {"planner": "off", "digest": "off"})

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready mapping of every field."""
        return attrs.asdict(self)


#: What ``open_runtime(recall_effort_sink=...)`` takes: awaited after each prepare.
RecallEffortSink: TypeAlias = Callable[[RecallEffort], Awaitable[None]]
