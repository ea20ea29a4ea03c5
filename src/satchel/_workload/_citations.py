"""The workload id map: which citation each ingested workload id will be delivered as.

A :data:`CitationKey` is what one rendered citation names; ingestion maps every workload
id to the key of what it wrote and appends the mapping to ``DB.ids.jsonl`` as it goes,
so a pack's citations can be mapped back to workload ids.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from collections.abc import Mapping

CitationKey: TypeAlias = tuple[str | int, ...]
"""What a delivered citation names: its family, its scope, then the family's identity."""


def append_id_map(path: str | Path, ids: Mapping[str, CitationKey]) -> None:
    """Append ``{"id": ..., "key": [...]}`` lines, one per workload id, to ``path``.

    Nothing to append creates no file.
    """
    if not ids:
        return
    with Path(path).open("a", encoding="utf-8") as out:
        for workload_id, key in ids.items():
            out.write(json.dumps({"id": workload_id, "key": list(key)}, ensure_ascii=False))
            out.write("\n")
