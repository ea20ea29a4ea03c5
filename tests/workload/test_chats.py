"""A messaging app's chat export read into memory entries (``satchel ingest --chat``)."""

from __future__ import annotations

import json
import zipfile
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import hypothesis
import hypothesis.strategies as st
import pytest

from satchel._workload import (
    ChatExport,
    DatesReadBothWays,
    MalformedLine,
    WorkloadEntry,
    read_chat_export,
)
from satchel.vocabulary._errors import InvalidRequestError
from satchel.vocabulary._records import MemoryEntry

if TYPE_CHECKING:
    from pathlib import Path

S = "chat:kate"
NNBSP = "\N{NARROW NO-BREAK SPACE}"
LRM = "\N{LEFT-TO-RIGHT MARK}"

ANDROID = """\
12/05/2023, 13:56 - Messages and calls are end-to-end encrypted.
Tap to learn more.
12/05/2023, 13:56 - Kate: Lisbon was lovely
12/05/2023, 13:56 - Elise: Did you try the pastéis?
Twice, actually: at Belém
13/05/2023, 09:02 - Kate changed the group description
13/05/2023, 09:03 - Kate: <Media omitted>
"""


def at(*fields: int) -> datetime:
    return datetime(*fields).replace(tzinfo=UTC)  # type: ignore[arg-type]


def export(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "WhatsApp Chat with Kate.txt"
    path.write_text(text, encoding="utf-8")
    return path


def said(chat: ChatExport) -> list[tuple[str, str, datetime | None]]:
    """Each entry's id, text and time; an error as its string."""
    rows: list[tuple[str, str, datetime | None]] = []
    for item in chat.items:
        if isinstance(item, MalformedLine):
            rows.append(("error", str(item), None))
        else:
            record = memory(item)
            assert (item.scope, item.family, record.kind, record.thread) == (
                S,
                "memory",
                "dialog",
                None,
            )
            rows.append((item.id, record.text, record.created_at))
    return rows


def memory(item: WorkloadEntry) -> MemoryEntry:
    assert isinstance(item.record, MemoryEntry)
    return item.record


def test_an_android_export_becomes_one_entry_a_message(tmp_path: Path) -> None:
    """Each message an entry "Sender: text" at its time; a message of two lines whole;
    the app's own lines (no sender), with a line going on from one, counted and skipped;
    the 13th tells day-first."""
    chat = read_chat_export(export(tmp_path, ANDROID), S)
    assert said(chat) == [
        (f"{S}/2023-05-12T13:56:00/0", "Kate: Lisbon was lovely", at(2023, 5, 12, 13, 56)),
        (
            f"{S}/2023-05-12T13:56:00/1",
            "Elise: Did you try the pastéis?\nTwice, actually: at Belém",
            at(2023, 5, 12, 13, 56),
        ),
        (f"{S}/2023-05-13T09:03:00/0", "Kate: <Media omitted>", at(2023, 5, 13, 9, 3)),
    ]
    assert chat.skipped == 2


def test_an_iphone_export_with_12_hour_times(tmp_path: Path) -> None:
    """The iPhone's "[DATE, TIME] Sender: text", seconds, "PM" after a narrow space, a
    line opening with a left-to-right mark, the app's note on an edited message left
    out; the 13th as second number tells month-first."""
    text = (
        f"[5/12/23, 1:56:12{NNBSP}PM] Kate: Lisbon was lovely\n"
        f"{LRM}[5/12/23, 12:07:00{NNBSP}AM] Elise: {LRM}image omitted\n"
        f"[5/13/23, 12:02:45 pm] Kate: Morning! {LRM}<This message was edited>\n"
    )
    chat = read_chat_export(export(tmp_path, text), S)
    assert said(chat) == [
        (f"{S}/2023-05-12T13:56:12/0", "Kate: Lisbon was lovely", at(2023, 5, 12, 13, 56, 12)),
        (f"{S}/2023-05-12T00:07:00/0", f"Elise: {LRM}image omitted", at(2023, 5, 12, 0, 7)),
        (f"{S}/2023-05-13T12:02:45/0", "Kate: Morning!", at(2023, 5, 13, 12, 2, 45)),
    ]
    assert chat.skipped == 0


@pytest.mark.parametrize(
    "heads",
    [
        ("[01/02/19 11:25] ", "[01/30/19 20:49] ", "[06/20/20 00:08] "),
        ("02/01/19, 11:25 - ", "30/01/19, 20:49 - ", "20/06/20, 00:08 - "),
        ("01/02/19, 11:25 - ", "01/30/19, 20:49 - ", "06/20/20, 00:08 - "),
        ("01/02/2019, 11:25 a. m. - ", "01/30/2019, 08:49 p. m. - ", "06/20/2020, 00:08 a. m. - "),
        ("2019/01/02, 11:25 - ", "2019/01/30, 20:49 - ", "2020/06/20, 00:08 - "),
        ("2019-01-02, 11:25 - ", "2019-01-30, 20:49 - ", "2020-06-20, 00:08 - "),
    ],
    ids=["bracket-no-comma", "dmy", "mdy", "spanish-12-hour", "year-first", "iso"],
)
def test_every_head_the_apps_write(tmp_path: Path, heads: tuple[str, str, str]) -> None:
    """The heads exports are seen with (no comma in the brackets, two-digit years, "p.
    m." with a space, year first) read to the same messages and times; a colon later in
    a message and an emoji for a name stay as written; a group's creation is the app's."""
    first, second, third = heads
    text = (
        f"{first}Ana Lima: We landed in Porto\n"
        f"{second}🐢: Nate says hi : from the tank\n"
        "and sends a photo\n"
        f'{third}+12 345 578 created group "Trip"\n'
    )
    chat = read_chat_export(export(tmp_path, text), S)
    assert [(row[1], row[2]) for row in said(chat)] == [
        ("Ana Lima: We landed in Porto", at(2019, 1, 2, 11, 25)),
        ("🐢: Nate says hi : from the tank\nand sends a photo", at(2019, 1, 30, 20, 49)),
    ]
    assert chat.skipped == 1


def test_dates_that_read_both_ways_need_an_order(tmp_path: Path) -> None:
    """A date of "03/04/2023" alone is April or March: the reader refuses to guess, and the
    caller's order decides; a year-first date needs none."""
    path = export(tmp_path, "03/04/2023, 10:00 - Kate: hi\n04/04/2023, 10:00 - Elise: hey\n")
    with pytest.raises(DatesReadBothWays, match="day-first and month-first alike"):
        read_chat_export(path, S)
    assert said(read_chat_export(path, S, date_order="dmy"))[0][2] == at(2023, 4, 3, 10)
    assert said(read_chat_export(path, S, date_order="mdy"))[0][2] == at(2023, 3, 4, 10)
    iso = export(tmp_path, "2023-04-03, 10:00 - Kate: hi\n")
    assert said(read_chat_export(iso, S))[0][2] == at(2023, 4, 3, 10)
    with pytest.raises(InvalidRequestError, match="date_order"):
        read_chat_export(path, S, date_order="ymd")  # type: ignore[arg-type]


def test_what_is_no_message_is_named_by_its_line(tmp_path: Path) -> None:
    """Text before the first message, a date the file's order makes impossible, a
    message saying nothing: each an error naming its line, the rest read; a file
    with no message at all, or a bad scope, is refused."""
    text = (
        "exported by a phone\n"  # 1
        "13/05/2023, 10:00 - Kate: hi\n"  # 2: the 13th makes the file day-first
        "05/13/2023, 10:01 - Elise: month 13\n"  # 3
        "14/05/2023, 10:02 - Elise:  \n"  # 4
        "14/05/2023, 25:02 - Kate: late\n"  # 5
        "14/05/2023, 10:03 - Kate: bye\n"  # 6
    )
    rows = said(read_chat_export(export(tmp_path, text), S))
    assert [row[1] for row in rows] == [
        "WhatsApp Chat with Kate.txt:1: text before the first message",
        "Kate: hi",
        "WhatsApp Chat with Kate.txt:3: no such time: '05/13/2023, 10:01' (month must be in 1..12)",
        "WhatsApp Chat with Kate.txt:4: Elise said nothing",
        "WhatsApp Chat with Kate.txt:5: no such time: '14/05/2023, 25:02' (hour must be in 0..23)",
        "Kate: bye",
    ]
    with pytest.raises(InvalidRequestError, match="holds no chat message"):
        read_chat_export(export(tmp_path, "just a note\n"), S)
    with pytest.raises(InvalidRequestError, match="scope"):
        read_chat_export(export(tmp_path, ANDROID), "")


def test_a_later_export_keeps_every_message_its_id(tmp_path: Path) -> None:
    """Ids are the time and the place among messages of that time, not the line: a
    later export holding older and newer messages too gives the shared ones the same
    ids, so importing it again writes only the new ones."""
    first = read_chat_export(export(tmp_path, ANDROID), S)
    later = (
        "11/05/2023, 08:00 - Kate: an older one\n"
        + ANDROID
        + "14/05/2023, 18:30 - Elise: a newer one\n"
    )
    again = read_chat_export(export(tmp_path, later), S)
    ids = {item.id for item in first.items if isinstance(item, WorkloadEntry)}
    shared = [item for item in again.items if isinstance(item, WorkloadEntry) and item.id in ids]
    assert [memory(item).text for item in shared] == [row[1] for row in said(first)]
    assert len(again.items) == len(first.items) + 2


_SENDERS = ("Kate", "Elise Moreau", "+1 555 0134", "kate_92")
_WORDS = st.text(st.sampled_from("abcdefghij .,!?'é😀"), min_size=1, max_size=30)


@hypothesis.settings(max_examples=60, deadline=None)
@hypothesis.given(
    messages=st.lists(
        st.tuples(
            st.sampled_from(_SENDERS),
            st.lists(_WORDS.filter(str.strip), min_size=1, max_size=3),
            st.integers(min_value=0, max_value=2_000_000),
        ),
        min_size=1,
        max_size=25,
    ),
    iphone=st.booleans(),
)
def test_what_an_app_writes_reads_back_exactly(
    tmp_path_factory: pytest.TempPathFactory,
    messages: list[tuple[str, list[str], int]],
    iphone: bool,
) -> None:
    """Messages written as either app writes them (Android 24-hour day-first, iPhone
    12-hour month-first, each opening with the app's line of a 13th) read back as the
    same texts and times."""
    start = datetime(2023, 1, 13, tzinfo=UTC)  # the 13th tells the date order
    times = sorted(start + timedelta(minutes=minutes) for *_, minutes in messages)
    if iphone:
        times = [time.replace(second=time.minute % 60) for time in times]
    lines, expected = [], []
    for (sender, paragraphs, _), time in zip(messages, times, strict=True):
        text = "\n".join(paragraphs)
        expected.append((f"{sender}: {text}", time))
        if iphone:
            hour = time.hour % 12 or 12
            half = "PM" if time.hour >= 12 else "AM"
            head = f"[{time.month}/{time.day}/{time:%y}, {hour}:{time:%M:%S}{NNBSP}{half}]"
            lines.append(f"{head} {sender}: {text}")
        else:
            lines.append(f"{time:%d/%m/%Y, %H:%M} - {sender}: {text}")
    opening = (  # the app's own first line, on the 13th
        f"[1/13/23, 12:00:00{NNBSP}AM] Kate created group"
        if iphone
        else "13/01/2023, 00:00 - Kate created group"
    )
    path = tmp_path_factory.mktemp("chat") / "chat.txt"
    path.write_text("\n".join([opening, *lines]) + "\n", encoding="utf-8")
    chat = read_chat_export(path, S)
    got = [
        (memory(item).text, memory(item).created_at)
        for item in chat.items
        if isinstance(item, WorkloadEntry)
    ]
    assert got == expected
    assert len(chat.items) == len(messages)


TELEGRAM = {
    "name": "Kate",
    "type": "personal_chat",
    "id": 4242,
    "messages": [
        {"id": 7, "type": "service", "date": "2023-05-12T13:55:00", "actor": "Kate",
         "action": "phone_call", "text": ""},
        {"id": 8, "type": "message", "date": "2023-05-12T13:56:12",
         "date_unixtime": "1683899772", "from": "Kate", "text": "Lisbon was lovely"},
        {"id": 9, "type": "message", "date": "2023-05-12T13:57:00", "from": "Elise",
         "text": ["Did you see ", {"type": "link", "text": "https://example.org/belem"},
                  {"type": "bold", "text": " the tower"}, "?\nTwice?"]},
        {"id": 10, "type": "message", "date": "2023-05-12T13:58:00", "from": "Kate",
         "photo": "photos/photo_1.jpg", "text": ""},
        {"id": 11, "type": "message", "date_unixtime": "1683900000", "from": None,
         "text": "an old account"},
    ],
}  # fmt: skip


def test_a_telegram_export_becomes_one_entry_a_message(tmp_path: Path) -> None:
    """Telegram's JSON: each message with text an entry "Sender: text" at its local
    time (else its Unix time), pieces of formatted text joined, its id the message's;
    a notice and a photo without text counted and skipped; a deleted sender named so."""
    path = tmp_path / "result.json"
    path.write_text(json.dumps(TELEGRAM), encoding="utf-8")
    chat = read_chat_export(path, S)
    assert said(chat) == [
        (f"{S}/8", "Kate: Lisbon was lovely", at(2023, 5, 12, 13, 56, 12)),
        (
            f"{S}/9",
            "Elise: Did you see https://example.org/belem the tower?\nTwice?",
            at(2023, 5, 12, 13, 57),
        ),
        (f"{S}/11", "Deleted Account: an old account", at(2023, 5, 12, 14, 0)),
    ]
    assert chat.skipped == 2


def test_the_zip_an_iphone_shares_and_a_telegram_folder(tmp_path: Path) -> None:
    """An iPhone shares its export as a zip holding ``_chat.txt`` (and media); Telegram
    exports a folder holding ``result.json``: both read as the chat inside. A zip of
    several texts says so."""
    shared = tmp_path / "WhatsApp Chat - Kate.zip"
    with zipfile.ZipFile(shared, "w") as archive:
        archive.writestr("_chat.txt", "[13/05/2023, 13:56:12] Kate: Lisbon was lovely\n")
        archive.writestr("00000012-PHOTO-2023-05-12.jpg", b"\xff\xd8")
    assert said(read_chat_export(shared, S))[0][1] == "Kate: Lisbon was lovely"
    folder = tmp_path / "ChatExport_2023-05-20"
    folder.mkdir()
    (folder / "result.json").write_text(json.dumps(TELEGRAM), encoding="utf-8")
    assert said(read_chat_export(folder, S))[0][1] == "Kate: Lisbon was lovely"
    with zipfile.ZipFile(shared, "w") as archive:
        archive.writestr("a.txt", "x")
        archive.writestr("b.txt", "y")
    with pytest.raises(InvalidRequestError, match="zip of 2 text files"):
        read_chat_export(shared, S)


def test_a_telegram_export_of_several_chats_is_refused(tmp_path: Path) -> None:
    """An export of every chat (``{"chats": {"list": [...]}}``) would mix conversations
    into one scope: refused, saying to export one; so is JSON of anything else, and a
    chat of no text. Messages without ids (as other tools write) keep theirs apart."""
    path = tmp_path / "result.json"
    path.write_text(json.dumps({"chats": {"list": [TELEGRAM]}}), encoding="utf-8")
    with pytest.raises(InvalidRequestError, match="several Telegram chats"):
        read_chat_export(path, S)
    path.write_text('{"name": "x"}', encoding="utf-8")
    with pytest.raises(InvalidRequestError, match="no Telegram export of one chat"):
        read_chat_export(path, S)
    twins = {"type": "message", "date_unixtime": "1683900000", "from": "Kate", "text": "hi"}
    path.write_text(json.dumps({"messages": [twins, twins]}), encoding="utf-8")
    assert [row[0] for row in said(read_chat_export(path, S))] == [
        f"{S}/2023-05-12T14:00:00/0",
        f"{S}/2023-05-12T14:00:00/1",
    ]  # without Telegram's ids, the time and the place among messages of that time
    path.write_text('{"messages": [{"id": 1, "type": "service", "text": ""}]}', "utf-8")
    with pytest.raises(InvalidRequestError, match="no chat message with text"):
        read_chat_export(path, S)
