"""``satchel scopes``: every scope of a store with its searchable records per family.

A table, or with ``--json`` a JSON array, from the store's ``scope_counts`` alone (no
embedder: whatever built the vectors, the store answers).
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Final

import attrs

import satchel

from . import _options as options
from ._running import on_store, store_label
from ._table import print_table

if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping

#: The families ``satchel scopes`` counts searchable records of, in the table's order.
SEARCHABLE: Final = tuple(
    family for family, rules in satchel.stores.FAMILY_RULES.items() if rules.searchable
)

_DESCRIPTION = """\
List every scope of a database that holds a searchable record or a profile:
one line per scope with how many searchable records it holds of each family
(memory counts entries, not versions; forgotten entries and replaced versions
are not counted) and whether it has a profile. With --json, a JSON array of
{"scope": ..., "records": {"memory": N, ...}, "profile": true|false}, one
object per scope, sorted by scope. An empty database prints nothing on stdout
and a note on stderr.

Exits 2 for bad input (e.g. no database at --db or --store: scopes never
creates one)."""

_EPILOG = """\
examples:
  satchel scopes --db team.db
  satchel scopes --db team.db --json
  satchel scopes --store "oceanbase://reader@db.internal:2881/satchel"
"""


def _arguments(command: argparse.ArgumentParser) -> None:
    options.where_option(command, "an existing database file")
    command.add_argument("--json", action="store_true", help="print the scopes as a JSON array")


def scopes_command(args: argparse.Namespace) -> int:
    """``satchel scopes``: every scope with its searchable records per family, and whether
    it has a profile; a table, or with ``--json`` a JSON array."""
    counts = on_store(args, lambda store: store.scope_counts())
    rows = [_ScopeRow.of(scope, counts[scope]) for scope in sorted(counts)]
    if args.json:
        print(json.dumps([row.to_json() for row in rows], ensure_ascii=False, indent=2))
    elif rows:
        print_table(
            ["scope", *SEARCHABLE, "profile"], [row.cells() for row in rows], numeric=SEARCHABLE
        )
    else:
        print(f"satchel scopes: {store_label(args)} holds no scope yet", file=sys.stderr)
    return 0


COMMAND: Final = options.Command(
    "scopes",
    summary="list every scope with its searchable records per family",
    description=_DESCRIPTION,
    epilog=_EPILOG,
    arguments=_arguments,
    run=scopes_command,
)


@attrs.frozen
class _ScopeRow:
    """One scope as ``satchel scopes`` shows it."""

    scope: str
    records: dict[satchel.stores.Family, int]  # every searchable family, 0 when it holds none
    profile: bool

    @classmethod
    def of(cls, scope: str, counts: Mapping[satchel.stores.Family, int]) -> _ScopeRow:
        records = {family: counts.get(family, 0) for family in SEARCHABLE}
        return cls(scope, records, counts.get("profile", 0) > 0)

    def to_json(self) -> dict[str, object]:
        return {"scope": self.scope, "records": self.records, "profile": self.profile}

    def cells(self) -> list[str]:
        counts = [f"{self.records[family]:,}" for family in SEARCHABLE]
        return [self.scope, *counts, "yes" if self.profile else "no"]
