"""``satchel prepare --explain``: the receipts and omissions of a pack, as two tables.

Printed on stdout after the pack (which stays byte for byte what ``prepare`` prints
without ``--explain``), or with ``--json`` as the pack's JSON object with ``receipts``
and ``omitted`` beside its four fields. Reads only the public values.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .._wire import compact_id, explanation_json
from ._table import print_table

if TYPE_CHECKING:
    from collections.abc import Mapping

    import satchel

RECEIPT_HEADER = ["item", "citation", "channels:ranks", "score", "round", "tier", "truncated"]
OMISSION_HEADER = ["best", "citation", "cause", "channels:ranks", "score"]


def print_explanation(explanation: satchel.Explanation) -> None:
    """The receipts table, one row per delivered item in pack order, then the omitted
    candidates, best first; a blank line before each."""
    print()
    if explanation.receipts:
        print_table(
            RECEIPT_HEADER,
            [_receipt_row(index, receipt) for index, receipt in enumerate(explanation.receipts)],
            numeric=("item", "score", "round"),
        )
    else:
        print("no item delivered")
    print()
    if explanation.omitted:
        print_table(
            OMISSION_HEADER,
            [_omission_row(index, omitted) for index, omitted in enumerate(explanation.omitted)],
            numeric=("best", "score"),
        )
    else:
        print("no candidate left out")


def print_explanation_json(explanation: satchel.Explanation) -> None:
    """The pack's four fields, its receipts and its omissions, as one JSON object."""
    print(json.dumps(explanation_json(explanation), ensure_ascii=False, indent=2))


def _receipt_row(index: int, receipt: satchel.Receipt) -> list[str]:
    return [
        str(index + 1),
        _citation(receipt.citation),
        _channels(receipt.channels),
        _score(receipt.score),
        str(receipt.round),
        receipt.tier,
        "yes" if receipt.truncated else "no",
    ]


def _omission_row(index: int, omission: satchel.Omission) -> list[str]:
    return [
        str(index + 1),
        _citation(omission.citation),
        omission.cause,
        _channels(omission.channels),
        _score(omission.score),
    ]


def _citation(citation: satchel.Citation) -> str:
    """``family scope [id] [vN]``: what ``satchel get`` and ``exclude`` take, the id
    spelled as the pack spells it, so a row matches a pack line by eye."""
    parts = [citation.family, citation.scope]
    if citation.id is not None:
        parts.append(compact_id(citation.id))
    if citation.version is not None:
        parts.append(f"v{citation.version}")
    return " ".join(parts)


def _channels(channels: Mapping[str, int]) -> str:
    return " ".join(f"{name}:{rank}" for name, rank in channels.items()) or "-"


def _score(score: float | None) -> str:
    return "-" if score is None else f"{score:.5f}"
