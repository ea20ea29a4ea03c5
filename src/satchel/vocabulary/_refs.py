"""The compact spellings of record ids and times in a pack, and their exact inverses.

Pure. Every byte a pack spends on its wrapper is a byte of evidence it does not deliver,
so the two values every item carries are spelled short, and :func:`satchel.parse_context`
(and the servers, for ids a host copies off a pack) read them back exactly:

- A record id satchel minted (32 lowercase hex digits, a UUID) is written as the 22
  characters of its 16 bytes in unpadded URL-safe base64. Any other id is written as it
  is, behind a ``=`` when it could be taken for such a token (or starts with ``=``).
- A time is written in ISO 8601 with a space for the ``T``, to the minute when it has no
  seconds, and without an offset when it is UTC: ``2023-05-07 14:03``. Any other offset
  is kept (``2023-05-07 14:03+02:00``); a time without one is read as UTC.
"""

from __future__ import annotations

import base64
import re
from datetime import UTC, datetime
from typing import Final

_MINTED: Final = re.compile(r"[0-9a-f]{32}")
_TOKEN: Final = re.compile(r"[A-Za-z0-9_-]{22}")
_RAW: Final = "="


def compact_id(record_id: str) -> str:
    """The short spelling of ``record_id``; :func:`full_id` is its inverse."""
    if _MINTED.fullmatch(record_id):
        return base64.urlsafe_b64encode(bytes.fromhex(record_id)).decode()[:22]
    if record_id.startswith(_RAW) or _TOKEN.fullmatch(record_id):
        return _RAW + record_id
    return record_id


def full_id(ref: str) -> str:
    """The record id that :func:`compact_id` spelled as ``ref``."""
    if ref.startswith(_RAW):
        return ref[1:]
    if _TOKEN.fullmatch(ref):
        return base64.urlsafe_b64decode(ref + "==").hex()
    return ref


def compact_time(when: datetime) -> str:
    """The short ISO 8601 spelling of an aware ``when``; :func:`full_time` is its inverse."""
    if when.microsecond:
        timespec = "microseconds"
    elif when.second:
        timespec = "seconds"
    else:
        timespec = "minutes"
    if when.utcoffset():
        return when.isoformat(sep=" ", timespec=timespec)
    return when.replace(tzinfo=None).isoformat(sep=" ", timespec=timespec)


def full_time(text: str) -> datetime:
    """The aware time :func:`compact_time` spelled as ``text`` (no offset: UTC).

    Raises:
        ValueError: ``text`` is no ISO 8601 time.
    """
    when = datetime.fromisoformat(text)
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)
