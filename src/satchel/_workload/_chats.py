"""Reading a messaging app's chat export into the memory entries of one scope.

WhatsApp's "Export chat" writes a text file, each message led by its time and its
sender, in one of two shapes (12-hour locales add "pm", and may put a narrow space
before it)::

    12/05/2023, 13:56 - Kate: Lisbon was lovely       (Android)
    [12/05/2023, 13:56:12] Kate: Lisbon was lovely    (iPhone)

A message of several lines goes on in lines with no such head. A line the app wrote
itself ("Messages and calls are end-to-end encrypted.", "Kate created group ...") has a
time and no sender; it is counted and skipped. Each message becomes a memory entry
``"Kate: Lisbon was lovely"`` (how satchel reads a turn: its speaker, a colon, what was
said) of kind ``dialog``, said at its time, which is read as UTC as a workload's times
without a zone are, and without a thread: an app keeps a chat as one conversation in
time order, and satchel orders a scope's threadless turns by their time. An entry's id,
its idempotency key, is the scope, the time as written and the message's place among
those of that time, so importing a later export of the same chat writes only what is new.

Whether "03/04/2023" is the 3rd of April or the 4th of March is not in the line: the
caller's ``date_order`` decides, else most of the file's dates that tell (a first
number past 12 is a day, a second one a month); a date the order makes impossible is a
line in error. Pure but for reading the file.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final, Literal

import attrs

from ..vocabulary._errors import InvalidRequestError, MalformedLineError
from ..vocabulary._records import MemoryEntry
from ..vocabulary._requests import validate_scope
from ._reading import MalformedLine, WorkloadEntry

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

DateOrder = Literal["dmy", "mdy"]
DATE_ORDERS: Final[tuple[DateOrder, ...]] = ("dmy", "mdy")
KIND: Final = "dialog"
#: The longest sender name read as one: past it, a colon belongs to a line the app wrote
#: ("Kate changed the subject to "Trip: Lisbon"").
MAX_SENDER_CHARS: Final = 60

_DATE: Final = r"(?P<date>\d{1,4}[./-]\d{1,2}[./-]\d{1,4})"
_TIME: Final = r"(?P<time>\d{1,2}[:.]\d{2}(?:[:.]\d{2})?)(?:\s?(?P<half>[AaPp]\.?\s?[Mm]\.?))?"
#: A message's head: Android's "DATE, TIME - " or the iPhone's "[DATE, TIME] ", then the
#: rest of the line. An iPhone line may open with a left-to-right mark.
_HEADS: Final = (
    re.compile(rf"\u200e?{_DATE},? {_TIME} - (?P<rest>.*)"),
    re.compile(rf"\u200e?\[{_DATE},? {_TIME}\] (?P<rest>.*)"),
)


class DatesReadBothWays(InvalidRequestError):
    """Every date of a chat export reads day-first and month-first alike, and no date
    order was given."""


@attrs.frozen
class ChatExport:
    """What :func:`read_chat_export` made of a file: one entry or one error per message,
    in file order, and how many lines the app wrote itself (skipped)."""

    items: tuple[WorkloadEntry | MalformedLine, ...]
    app_lines: int


@attrs.frozen
class _Message:
    line_number: int
    written: str  # the date and time as the line wrote them
    date: tuple[int, int, int]
    time: str
    half: str | None
    sender: str
    lines: list[str]


def read_chat_export(path: Path, scope: str, *, date_order: DateOrder | None = None) -> ChatExport:
    """The messages of the chat export at ``path`` as memory entries of ``scope``.

    Args:
        path: A WhatsApp "Export chat" text file (UTF-8).
        scope: The scope every entry is written to.
        date_order: Day or month first, for a file whose dates read either way; the
            file's own dates decide otherwise.

    Raises:
        InvalidRequestError: the scope breaks the scope rule, ``date_order`` is not
            one of ``DATE_ORDERS``, the file holds no message, or its dates read
            neither way; :class:`DatesReadBothWays` when they read either way and no
            ``date_order`` was given.
        OSError: the file cannot be read.
    """
    scope = validate_scope(scope, "scope")
    if date_order is not None and date_order not in DATE_ORDERS:
        raise InvalidRequestError(f"date_order must be one of {DATE_ORDERS}, got {date_order!r}")
    lines = path.read_text(encoding="utf-8-sig").splitlines()
    messages, errors, dates, app_lines = _messages(path, lines)
    if not messages:
        raise InvalidRequestError(
            f"{path} holds no chat message (expected lines such as "
            "'12/05/2023, 13:56 - Kate: ...' or '[12/05/2023, 13:56:12] Kate: ...')"
        )
    order = _date_order(path, dates, date_order)
    items: list[tuple[int, WorkloadEntry | MalformedLine]] = [
        (error.line_number, error) for error in errors
    ]
    places: dict[str, int] = {}
    for message in messages:
        try:
            said_at = _time_of(message, order)
        except MalformedLineError as exc:
            items.append((message.line_number, MalformedLine(path, message.line_number, str(exc))))
            continue
        stamp = said_at.strftime("%Y-%m-%dT%H:%M:%S")
        place = places[stamp] = places.get(stamp, -1) + 1
        text = "\n".join(message.lines)
        if not text.strip():
            error = MalformedLine(path, message.line_number, f"{message.sender} said nothing")
            items.append((message.line_number, error))
            continue
        record = MemoryEntry(text=f"{message.sender}: {text}", kind=KIND, created_at=said_at)
        entry = WorkloadEntry(
            id=f"{scope}/{stamp}/{place}", scope=scope, family="memory", record=record
        )
        items.append((message.line_number, entry))
    items.sort(key=lambda numbered: numbered[0])
    return ChatExport(tuple(item for _, item in items), app_lines)


def _messages(
    path: Path, lines: list[str]
) -> tuple[list[_Message], list[MalformedLine], list[tuple[int, int, int]], int]:
    """The file's messages (their lines gathered), the lines before any message, the
    dates of every line with a head (the app's own too), and how many the app wrote."""
    messages: list[_Message] = []
    errors: list[MalformedLine] = []
    dates: list[tuple[int, int, int]] = []
    app_lines = 0
    current: _Message | None = None
    for number, line in enumerate(lines, start=1):
        head = _head(line)
        if head is None:
            if current is not None:
                current.lines.append(line)
            elif line.strip():
                errors.append(MalformedLine(path, number, "text before the first message"))
            continue
        first, second, third = (int(part) for part in re.split(r"[./-]", head.group("date")))
        dates.append((first, second, third))
        sender, colon, said = head.group("rest").partition(": ")
        if not colon or not sender.strip() or len(sender) > MAX_SENDER_CHARS:
            app_lines += 1
            current = None  # what follows it continues no message
            continue
        written = head.group(0)[: head.start("rest")].strip("\u200e[] -")
        current = _Message(
            number, written, dates[-1], head.group("time"), head.group("half"),
            sender.strip(), [said],
        )  # fmt: skip
        messages.append(current)
    return messages, errors, dates, app_lines


def _head(line: str) -> re.Match[str] | None:
    for pattern in _HEADS:
        if match := pattern.match(line):
            return match
    return None


def _date_order(
    path: Path, dates: Iterable[tuple[int, int, int]], given: DateOrder | None
) -> DateOrder:
    """Day or month first: ``given``, else what most of the file's telling dates say (a
    first number past 12 is a day, a second one a month; a date that opens with its
    year says nothing), so one mangled line does not turn the whole file."""
    if given is not None:
        return given
    days_first = months_first = either = 0
    for first, second, _ in dates:
        days_first += 12 < first <= 31
        months_first += second > 12
        either += first <= 31
    if days_first != months_first:
        return "dmy" if days_first > months_first else "mdy"
    if not either:  # every date opens with its year: no order to tell
        return "dmy"
    if not days_first:
        raise DatesReadBothWays(
            f"the dates of {path} read day-first and month-first alike; say which "
            "(date order 'dmy' or 'mdy')"
        )
    raise InvalidRequestError(
        f"{days_first} dates of {path} read day-first and as many month-first"
    )


def _time_of(message: _Message, order: DateOrder) -> datetime:
    """When ``message`` was said, as UTC."""
    first, second, third = message.date
    if first > 31:
        year, month, day = first, second, third
    else:
        day, month = (first, second) if order == "dmy" else (second, first)
        year = third + 2000 if third < 100 else third
    hour, minute, *rest = (int(part) for part in re.split(r"[:.]", message.time))
    if message.half is not None:
        if hour > 12:
            raise MalformedLineError(f"no such time: {message.written!r} (hour {hour} of 12)")
        hour = hour % 12 + (12 if message.half[0] in "Pp" else 0)
    try:
        return datetime(year, month, day, hour, minute, rest[0] if rest else 0, tzinfo=UTC)
    except ValueError as exc:
        raise MalformedLineError(f"no such time: {message.written!r} ({exc})") from None
