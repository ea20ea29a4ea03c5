"""The ``glean.Store`` protocol: what a backend must do for the runtime.

Stores know nothing of the gate, the coordinator or the Builder: they write records
and retrieve pools.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import numpy as np
    import numpy.typing as npt

    from ..vocabulary._analysis import AnalysedQuery
    from ..vocabulary._evidence import Evidence, Pool
    from ..vocabulary._families import Family
    from ..vocabulary._records import (
        Experience,
        MemoryEntry,
        MemoryRecord,
        MemoryRef,
        Profile,
        RecordRef,
        Resource,
        TopicMemory,
    )

    Vectors = npt.NDArray[np.float32]


@runtime_checkable
class Store(Protocol):
    """A memory backend. Every write is atomic per call and durable when it returns."""

    async def add_memories(
        self, scope_id: str, entries: Sequence[MemoryEntry], vectors: Vectors
    ) -> list[MemoryRef]: ...

    async def update_memory(
        self, ref: MemoryRef, entry: MemoryEntry, vector: Vectors
    ) -> MemoryRef: ...

    async def forget_memory(self, ref: MemoryRef) -> None: ...

    async def get_memory(self, ref: MemoryRef) -> MemoryRecord: ...

    async def add_experiences(
        self, scope_id: str, experiences: Sequence[Experience]
    ) -> list[RecordRef]: ...

    async def add_topic_memories(
        self, scope_id: str, topics: Sequence[TopicMemory], vectors: Vectors
    ) -> list[RecordRef]: ...

    async def add_resources(
        self, scope_id: str, resources: Sequence[Resource], vectors: Vectors
    ) -> list[RecordRef]: ...

    async def set_profile(self, scope_id: str, profile: Profile) -> None: ...

    async def get_profile(self, scope_id: str) -> Evidence | None: ...

    async def read_resource_bodies(
        self, scope_id: str, uris: Sequence[str]
    ) -> Mapping[str, str]: ...

    async def retrieve(
        self,
        family: Family,
        scope_id: str,
        query: AnalysedQuery,
        vector: Vectors | None,
        pool_size: int,
    ) -> Pool:
        """Return up to ``pool_size`` candidates per channel, before any admission."""
        ...

    async def neighbours(
        self, family: Family, scope_id: str, keys: Sequence[int]
    ) -> Mapping[int, tuple[int, ...]]:
        """Per key, the searchable keys just before and after it in its thread."""
        ...

    async def evidence(
        self, family: Family, scope_id: str, keys: Sequence[int]
    ) -> Mapping[int, Evidence]:
        """Read the evidence of pool keys that are still searchable."""
        ...

    async def bind_embedder(self, fingerprint: str, dimension: int) -> None:
        """Accept the runtime's embedder, or raise if the stored vectors came from another."""
        ...

    def scope_version(self, scope_id: str) -> int:
        """A number that changes whenever anything in the scope is written."""
        ...

    async def aclose(self) -> None: ...
