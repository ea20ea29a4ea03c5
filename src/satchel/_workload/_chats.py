"""Reading a messaging app's chat export into the memory entries of one scope.

Telegram's "Export chat history" (as JSON) writes each message with its id, its local
time, its sender and its text (a string, or pieces of text and formatting); its
notices ("Kate joined the group") are of type ``service``. Each message with text
becomes a memory entry ``"Kate: ..."`` at its time, its id the scope and the message's
own id; the notices and media sent without text are counted and skipped.

WhatsApp's "Export chat" writes a text file, each message led by its time and its
sender, in one of two shapes (12-hour locales add "pm", and may put a narrow space
before it)::

    12/05/2023, 13:56 - Kate: Lisbon was lovely       (Android)
    [12/05/2023, 13:56:12] Kate: Lisbon was lovely    (iPhone)

A message of several lines goes on in lines with no such head; the note the app adds to
a message its sender edited ("<This message was edited>") is left out. A line the app wrote
itself ("Messages and calls are end-to-end encrypted.", "Kate created group ...") has a
time and no sender; it is counted and skipped. Each message becomes a memory entry
``"Kate: Lisbon was lovely"`` (how satchel reads a turn: its speaker, a colon, what was
said) of kind ``dialog``, said at its time, which is read as UTC as a workload's times
without a zone are, and without a thread: an app keeps a chat as one conversation in
time order, and satchel orders a scope's threadless turns by their time. An entry's id,
its idempotency key, is the scope, the message's time and its place among the messages
of that time, so importing a later export of the same chat writes only what is new.

Whether "03/04/2023" is the 3rd of April or the 4th of March is not in the line: the
caller's ``date_order`` decides, else most of the file's dates that tell (a first
number past 12 is a day, a second one a month); a date the order makes impossible is a
line in error. Pure but for reading the file.
"""

from __future__ import annotations

import json
import re
import zipfile
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
#: What WhatsApp appends to a message its sender edited (an English export's spelling):
#: the app's note, not the sender's words, so the entry leaves it out.
_EDITED: Final = re.compile(r"\s*\u200e?<This message was edited>$")
_HEADS: Final = (
    re.compile(rf"\u200e?{_DATE},? {_TIME} - (?P<rest>.*)"),
    re.compile(rf"\u200e?\[{_DATE},? {_TIME}\] (?P<rest>.*)"),
)


class DatesReadBothWays(InvalidRequestError):
    """Every date of a chat export reads day-first and month-first alike, and no date
    order was given."""


@attrs.frozen
class ChatExport:
    """What :func:`read_chat_export` made of a file: one entry or one error per message
    (and one for any text before the first), in file order, and how many lines or
    messages hold no one's words (the app's own notices, media sent without text):
    skipped."""

    items: tuple[WorkloadEntry | MalformedLine, ...]
    skipped: int


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
        path: A WhatsApp "Export chat" text file (or the zip an iPhone shares it
            in), or a Telegram "Export chat history" JSON file of one chat (or the
            folder holding it); UTF-8.
        scope: The scope every entry is written to.
        date_order: Day or month first, for a file whose dates read either way; the
            file's own dates decide otherwise.

    Raises:
        InvalidRequestError: the scope breaks the scope rule, ``date_order`` is not
            one of ``DATE_ORDERS``, the file holds no message, a JSON file is no
            export of one Telegram chat, or its dates read neither way;
            :class:`DatesReadBothWays` when they read either way and no
            ``date_order`` was given.
        OSError: the file cannot be read.
        UnicodeDecodeError: the file is not UTF-8.
    """
    scope = validate_scope(scope, "scope")
    if date_order is not None and date_order not in DATE_ORDERS:
        raise InvalidRequestError(f"date_order must be one of {DATE_ORDERS}, got {date_order!r}")
    text = _export_text(path)
    if text.lstrip().startswith("{"):
        return _telegram(path, scope, text)
    messages, errors, dates, app_lines = _messages(path, text.splitlines())
    if not messages:
        raise InvalidRequestError(
            f"{path} holds no chat message (expected lines such as "
            "'12/05/2023, 13:56 - Kate: ...' or '[12/05/2023, 13:56:12] Kate: ...', "
            "or a Telegram chat's JSON)"
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
        text = _EDITED.sub("", "\n".join(message.lines))
        if not text.strip():
            error = MalformedLine(path, message.line_number, f"{message.sender} said nothing")
            items.append((message.line_number, error))
            continue
        entry = _entry(scope, _timed_key(places, said_at), message.sender, text, said_at)
        items.append((message.line_number, entry))
    items.sort(key=lambda numbered: numbered[0])
    return ChatExport(tuple(item for _, item in items), app_lines)


def _entry(scope: str, key: object, sender: str, said: str, said_at: datetime) -> WorkloadEntry:
    """A message as the memory entry a workload line would give: ``"Sender: said"`` of
    kind ``dialog`` at its time, no thread, its id the scope and ``key``."""
    record = MemoryEntry(text=f"{sender}: {said}", kind=KIND, created_at=said_at)
    return WorkloadEntry(id=f"{scope}/{key}", scope=scope, family="memory", record=record)


def _timed_key(places: dict[str, int], said_at: datetime) -> str:
    """A message's time and its place among the messages of that time read so far
    (``places``): ``2023-05-12T13:56:00/1``."""
    stamp = f"{said_at:%Y-%m-%dT%H:%M:%S}"
    places[stamp] = places.get(stamp, -1) + 1
    return f"{stamp}/{places[stamp]}"


def _export_text(path: Path) -> str:
    """The export's text: the file, the chat inside a zip an iPhone shares (its one
    ``.txt``, ``_chat.txt``), or a Telegram export folder's ``result.json``."""
    if path.is_dir():
        path = path / "result.json"
    if not zipfile.is_zipfile(path):
        return path.read_text(encoding="utf-8-sig")
    with zipfile.ZipFile(path) as archive:
        chats = [name for name in archive.namelist() if name.lower().endswith(".txt")]
        if len(chats) != 1:
            raise InvalidRequestError(
                f"{path} is a zip of {len(chats)} text files, where an export holds its chat"
                " as one (_chat.txt)"
            )
        return archive.read(chats[0]).decode("utf-8-sig")


def _telegram(path: Path, scope: str, text: str) -> ChatExport:
    """A Telegram export of one chat: ``{"messages": [{"id", "type", "date", "from",
    "text"}, ...]}``."""
    try:
        chat = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidRequestError(f"{path} is not JSON: {exc.msg} (line {exc.lineno})") from None
    messages = chat.get("messages") if isinstance(chat, dict) else None
    if not isinstance(messages, list):
        several = isinstance(chat, dict) and "chats" in chat
        raise InvalidRequestError(
            f"{path} exports several Telegram chats: export the one to read"
            if several
            else f"{path} is no Telegram export of one chat (it holds no list of messages)"
        )
    items: list[WorkloadEntry | MalformedLine] = []
    skipped = 0
    places: dict[str, int] = {}
    for number, message in enumerate(messages, start=1):
        said = _telegram_text(message.get("text")) if isinstance(message, dict) else None
        if not said or not said.strip() or message.get("type", "message") != "message":
            skipped += 1  # a notice, media without text, or no message at all
            continue
        try:
            said_at = _telegram_time(message)
        except MalformedLineError as exc:
            items.append(MalformedLine(path, number, f"message {number}: {exc}"))
            continue
        sender = message.get("from") or "Deleted Account"
        key = message.get("id")
        if key is None:  # not in Telegram's own exports
            key = _timed_key(places, said_at)
        items.append(_entry(scope, key, sender, said, said_at))
    if not items:
        raise InvalidRequestError(f"{path} holds no chat message with text")
    return ChatExport(tuple(items), skipped)


def _telegram_text(text: object) -> str | None:
    """A message's text: a string, or pieces that are strings or ``{"text": ...}``."""
    if isinstance(text, str):
        return text
    if not isinstance(text, list):
        return None
    pieces = (piece.get("text") if isinstance(piece, dict) else piece for piece in text)
    return "".join(piece for piece in pieces if isinstance(piece, str))


def _telegram_time(message: dict[str, object]) -> datetime:
    """The message's local time as written (read as UTC, as WhatsApp's are), else its
    Unix time."""
    date, unix = message.get("date"), message.get("date_unixtime")
    try:
        if isinstance(date, str):
            local = datetime.fromisoformat(date)
            return local.replace(tzinfo=UTC) if local.tzinfo is None else local.astimezone(UTC)
        if isinstance(unix, str | int):
            return datetime.fromtimestamp(int(unix), UTC)
    except (ValueError, OverflowError, OSError) as exc:
        raise MalformedLineError(f"no such time: {date or unix!r} ({exc})") from None
    raise MalformedLineError("no date")


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
    headed = False  # a line with a head was read: what follows continues it
    for number, line in enumerate(lines, start=1):
        head = _head(line)
        if head is None:
            if current is not None:
                current.lines.append(line)
            elif not headed and line.strip():
                errors.append(MalformedLine(path, number, "text before the first message"))
            continue
        headed = True
        first, second, third = (int(part) for part in re.split(r"[./-]", head.group("date")))
        dates.append((first, second, third))
        sender, colon, said = head.group("rest").partition(": ")
        if not colon or not sender.strip() or len(sender) > MAX_SENDER_CHARS:
            app_lines += 1
            current = None  # what follows it continues the app's line, skipped with it
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
    days_first = months_first = unordered = 0
    for first, second, _ in dates:
        days_first += 12 < first <= 31
        months_first += second > 12
        unordered += first <= 31  # a date whose order is not in it
    if days_first != months_first:
        return "dmy" if days_first > months_first else "mdy"
    if not unordered:  # every date opens with its year
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
