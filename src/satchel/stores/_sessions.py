"""What every store's sessions (``SessionStore``) share: how a session is named in a table,
and which of its served identities an erase reaches. Pure: no I/O.

A session is stored under :func:`session_key`, a digest of its owner and id, never the
id itself: session ids (and token names) are often user identifiers, and a digest has a
fixed length every engine can index. Served identities are stored as they are
(``Evidence.identity``: the family, scope, record id and version joined by
:data:`SEPARATOR`), since the ledger hands them back to be held back.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Final

from ..vocabulary._families import FAMILY_RULES, citation

if TYPE_CHECKING:
    from ..vocabulary._families import Family

#: What ``Evidence.identity`` puts between the values of a citation.
SEPARATOR: Final = "\x1f"
#: The character right after :data:`SEPARATOR`: every identity that starts with a prefix
#: ending in the separator sorts below that prefix with this character in its place.
_AFTER_SEPARATOR: Final = chr(ord(SEPARATOR) + 1)


def session_key(owner: str | None, session_id: str) -> str:
    """The session's name in a table: 64 hex digits, one per (owner, id) pair (the
    owner None and an owner named ``""`` stay apart)."""
    spelled = json.dumps([owner, session_id]).encode()
    return hashlib.sha256(spelled).hexdigest()


def item_key(identity: str) -> str:
    """A served identity's fixed-length digest, for engines whose keys are bounded."""
    return hashlib.sha256(identity.encode("utf-8", "surrogatepass")).hexdigest()


def erased_identities(
    family: Family | None, scope_id: str, record_id: str | None
) -> list[tuple[str, str]]:
    """The served identities an erase reaches, as ranges ``[low, high)`` of strings.

    ``family`` None is every record of the scope (``erase_scope``); otherwise the one
    record ``record_id`` names (None: the scope's profile), every version of it.
    """
    families = list(FAMILY_RULES) if family is None else [family]
    record = None if family is None else record_id
    ranges = []
    for each in families:
        prefix = _spelled(each, scope_id, record)
        # The identity itself (a resource's, a profile's: no version), then every
        # identity it starts (a version of the record; every record of the scope).
        ranges.append((prefix, prefix + "\x00"))
        ranges.append((prefix + SEPARATOR, prefix + _AFTER_SEPARATOR))
    return ranges


def _spelled(family: Family, scope_id: str, record_id: str | None) -> str:
    return SEPARATOR.join(str(value) for value in citation(family, scope_id, record_id).values())


def matches(identity: str, ranges: list[tuple[str, str]]) -> bool:
    """Whether ``identity`` lies in one of ``ranges`` (:func:`erased_identities`)."""
    return any(low <= identity < high for low, high in ranges)
