"""The bounds and names the wire contract states, each read from where satchel defines it.

Nothing here is a new literal: every bound is the constant satchel's validation applies,
every name list the one it checks against, so a schema stating them can neither refuse
what satchel accepts nor promise what it refuses.
"""

from __future__ import annotations

from typing import Final, get_args

import attrs

from satchel.recall import MAX_EXPANSIONS
from satchel.vocabulary import FAMILY_RULES, SCHEMA, MemoryEntry, Status

#: The pack format's id, as a prepared context names it.
SCHEMA_ID: Final = SCHEMA
#: A prepared context's statuses.
STATUSES: Final[tuple[str, ...]] = get_args(Status)
#: The last round a receipt may name (round 0, then at most this many expansions).
MAX_ROUND: Final = MAX_EXPANSIONS
#: The most items an assembly section of each family may ask for (``MAX_SECTION_LIMIT``
#: bounds their sum), and the largest of them.
SECTION_LIMITS: Final = {family: rules.max_section_limit for family, rules in FAMILY_RULES.items()}
MAX_SECTION_ITEMS: Final = max(SECTION_LIMITS.values())
#: How every answer spells a record id, and which spellings a request may use.
ID_SPELLING: Final = (
    "Answers spell an id as a pack writes it (one satchel minted in 22 characters, e.g."
    " kP9B2Wm3Qfi9_NgtzOvWoQ); a request may give that spelling or a minted id's 32 hex"
    " digits."
)
#: A memory entry's kind when it names none.
DEFAULT_KIND: Final = str(attrs.fields(MemoryEntry).kind.default)
#: A string holding at least one character that is not whitespace: satchel refuses a
#: blank scope, query, session, text, kind, tag, thread, key or entry id.
NOT_BLANK: Final = r"\S"
