"""The tools, called in-process through the SDK's own client (``mcp.Client``) on a
server that ``satchel.mcp.create_server`` built over an in-memory runtime."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mcp.types as types
import pytest
from mcp import MCPError

import satchel
from satchel._wire import full_id
from satchel.mcp import INSTRUCTIONS

from ._client import S, connected, pack_items, structured, text, tool_error

if TYPE_CHECKING:
    from mcp import Client

pytestmark = pytest.mark.anyio

BACKUPS = "Backups run nightly at 02:00 UTC on the Kestrel cluster"
DEPLOYS = "Deploys happen on Thursdays after the 10:00 stand-up"


async def add(client: Client, *entries: dict[str, Any], scope: str = S) -> list[dict[str, Any]]:
    result = await client.call_tool("add_memories", {"scope_id": scope, "entries": list(entries)})
    refs: list[dict[str, Any]] = structured(result)["refs"]
    return refs


async def prepare(client: Client, query: str, **arguments: Any) -> types.CallToolResult:
    return await client.call_tool("prepare_context", {"scope_id": S, "query": query, **arguments})


def cited_ids(result: types.CallToolResult) -> list[str]:
    content = structured(result)["content"]
    return [str(item.citation.id) for item in satchel.parse_context(content)]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_add_prepare_get_forget_end_to_end(mode: str) -> None:
    """add -> prepare delivers it with its citation -> get reads that exact version ->
    forget -> prepare no longer delivers it, and get still reads it (modern and legacy
    protocol)."""
    async with connected(mode) as (client, _):
        refs = await add(
            client,
            {
                "text": BACKUPS,
                "kind": "runbook",
                "tags": ["ops", "backup"],
                "created_at": "2024-03-04T09:00:00+01:00",
                "thread": "chat-7",
                "key": "chat-7/1",
            },
            {"text": DEPLOYS},
        )
        assert [ref["scope_id"] for ref in refs] == [S, S]
        assert [ref["version"] for ref in refs] == [1, 1]
        backups = refs[0]

        ready = await prepare(client, "When do backups run?")
        fields = structured(ready)
        assert fields["schema"] == "satchel.prepared-context.v2"
        assert fields["status"] == "ready"
        assert text(ready) == fields["content"]  # the text result is the pack itself
        assert fields["content_bytes"] == len(fields["content"].encode()) <= 8000
        [item] = [i for i in satchel.parse_context(fields["content"]) if i.text == BACKUPS]
        assert item.citation == satchel.Citation("memory", S, full_id(backups["entry_id"]), 1)
        written = [i["citation"]["id"] for i in pack_items(fields["content"])]
        assert backups["entry_id"] in written  # the ref spells its id as the pack writes it

        record = structured(await client.call_tool("get_memory", backups))
        assert record == {
            **backups,
            "text": BACKUPS,
            "kind": "runbook",
            "tags": ["ops", "backup"],
            "created_at": "2024-03-04T09:00:00+01:00",
            "thread": "chat-7",
            "key": "chat-7/1",
        }

        forgotten = await client.call_tool("forget_memory", backups)
        assert structured(forgotten) == {**backups, "forgotten": True}
        assert "no longer searched" in text(forgotten)
        again = await client.call_tool("forget_memory", backups)  # forgetting twice is harmless
        assert structured(again) == structured(forgotten)

        after = await prepare(client, "When do backups run?")
        assert backups["entry_id"] not in cited_ids(after)
        assert BACKUPS not in (structured(after)["content"] or "")
        assert structured(await client.call_tool("get_memory", backups))["text"] == BACKUPS


async def test_an_empty_scope_prepares_the_empty_result() -> None:
    """Nothing relevant: status empty, content null, and a text note instead of a pack."""
    async with connected() as (client, _):
        result = await prepare(client, "anything at all?")
    assert structured(result) == {
        "schema": "satchel.prepared-context.v2",
        "status": "empty",
        "content": None,
        "content_bytes": 0,
    }
    assert "nothing relevant" in text(result)


async def test_an_idempotency_key_returns_the_same_ref() -> None:
    """The same key and content writes nothing new; new content writes version 2."""
    async with connected() as (client, _):
        first = await add(client, {"text": BACKUPS, "key": "k1"})
        again = await add(client, {"text": BACKUPS, "key": "k1"})
        changed = await add(client, {"text": DEPLOYS, "key": "k1"})
    assert again == first
    assert changed[0]["entry_id"] == first[0]["entry_id"]
    assert changed[0]["version"] == 2


async def test_a_created_at_without_an_offset_is_utc() -> None:
    """add_memories reads a created_at without a UTC offset as UTC (it was a tool
    error), as the CLI and the HTTP service read it."""
    async with connected() as (client, _):
        (ref,) = await add(client, {"text": BACKUPS, "created_at": "2024-03-04T09:00:00"})
        record = structured(await client.call_tool("get_memory", ref))
    assert record["created_at"] == "2024-03-04T09:00:00+00:00"


async def test_an_id_in_either_spelling_reads_and_forgets_the_same_entry() -> None:
    """add_memories answers the id as a pack writes it (22 characters); get_memory and
    forget_memory take it, or its full 32 hex digits, and answer the pack's spelling."""
    async with connected() as (client, _):
        (ref,) = await add(client, {"text": BACKUPS})
        full = {**ref, "entry_id": full_id(ref["entry_id"])}
        by_short = structured(await client.call_tool("get_memory", ref))
        by_full = structured(await client.call_tool("get_memory", full))
        forgotten = await client.call_tool("forget_memory", full)
    assert len(ref["entry_id"]) == 22
    assert len(full["entry_id"]) == 32
    assert by_short == by_full
    assert by_full["entry_id"] == ref["entry_id"]
    assert structured(forgotten)["entry_id"] == ref["entry_id"]
    assert repr(ref["entry_id"]) in text(forgotten)


async def test_exclude_takes_a_pack_citation_verbatim() -> None:
    """A citation read off a pack's lines ({family, scope, id as the pack writes it,
    version}) or spelled with the full entry id is never delivered again."""
    async with connected() as (client, _):
        await add(client, {"text": BACKUPS}, {"text": "Backups are kept for 30 days"})
        first = structured(await prepare(client, "backups"))
        items = pack_items(first["content"])
        assert len(items) == 2
        held = items[0]["citation"]
        assert set(held) == {"family", "scope", "id", "version"}
        second = await prepare(client, "backups", exclude=[held])
        full = satchel.parse_context(first["content"])[0].citation
        assert len(held["id"]) == 22 < len(str(full.id)) == 32
        spelled = {"family": "memory", "scope": S, "entry_id": full.id, "version": 1}
        third = await prepare(client, "backups", exclude=[spelled])
    kept = [item.citation.id for item in satchel.parse_context(first["content"])[1:]]
    assert cited_ids(second) == cited_ids(third) == kept


async def test_sections_references_detail_and_session() -> None:
    """The optional arguments reach the prepare: an assembly's family groups, a
    reference scope searched too, a detail pin, and a session that holds back what an
    earlier turn delivered (with the runtime's dedup_turns)."""
    async with connected(dedup_turns=2) as (client, _):
        await add(client, {"text": BACKUPS})
        await add(client, {"text": "Backups of the billing database run hourly"}, scope="billing")
        sectioned = structured(
            await prepare(
                client,
                "backups",
                sections=[{"family": "memory", "limit": 4}],
                references=["billing"],
            )
        )
        scopes = {item.citation.scope for item in satchel.parse_context(sectioned["content"])}
        assert scopes == {S, "billing"}
        pinned = structured(await prepare(client, "backups", detail="uri"))
        bare = satchel.parse_context(pinned["content"])
        assert bare
        assert all(item.text is None and item.tier == "uri" for item in bare)
        turn1 = await prepare(client, "backups", session_id="chat-1")
        turn2 = await prepare(client, "backups", session_id="chat-1")
    assert structured(turn1)["status"] == "ready"
    assert structured(turn2)["status"] == "empty"


async def test_add_memories_is_all_or_nothing() -> None:
    """One bad entry refuses the batch, naming it, and writes none of it."""
    async with connected() as (client, _):
        result = await client.call_tool(
            "add_memories",
            {"scope_id": S, "entries": [{"text": BACKUPS}, {"text": "x", "created_at": "soon"}]},
        )
        assert "entries[1].created_at" in tool_error(result)
        assert structured(await prepare(client, "When do backups run?"))["status"] == "empty"


PREPARE = {"scope_id": S, "query": "backups"}
ENTRY = {"text": BACKUPS}
REF = {"scope_id": S, "entry_id": "e1", "version": 1}


def entry(**fields: Any) -> dict[str, Any]:
    """add_memories arguments: one entry, ENTRY with ``fields``."""
    return {"scope_id": S, "entries": [{**ENTRY, **fields}]}


def sections(*items: Any) -> dict[str, Any]:
    """prepare_context arguments with these sections."""
    return {**PREPARE, "sections": list(items)}


def exclude(*items: Any) -> dict[str, Any]:
    """prepare_context arguments excluding these citations."""
    return {**PREPARE, "exclude": list(items)}


MEMORY = {"family": "memory", "scope": S}

#: (tool, arguments, what the error must say): the field, as the tool's schema names it.
BAD_INPUT = [
    ("prepare_context", {"scope_id": S}, "query is required"),
    ("prepare_context", {**PREPARE, "query": ""}, "query must be 1..8192 characters"),
    ("prepare_context", {**PREPARE, "query": 7}, "query must be a string"),
    ("prepare_context", {**PREPARE, "scope_id": 5}, "scope_id must be a string"),
    ("prepare_context", {**PREPARE, "max_bytes": 100}, "max_bytes must be in 512..32768"),
    ("prepare_context", {**PREPARE, "max_bytes": "8000"}, "max_bytes must be an integer"),
    ("prepare_context", {**PREPARE, "max_bytes": True}, "max_bytes must be an integer"),
    ("prepare_context", {**PREPARE, "references": "other"}, "references must be a list"),
    ("prepare_context", {**PREPARE, "references": [""]}, "references[0] must be a non-empty"),
    ("prepare_context", {**PREPARE, "session_id": ""}, "session_id must be a non-empty"),
    ("prepare_context", sections(), "sections must name at least one family"),
    ("prepare_context", {**PREPARE, "sections": "memory"}, "sections must be a list"),
    ("prepare_context", sections("memory"), "sections[0] must be an object"),
    (
        "prepare_context",
        sections({"family": "notes", "limit": 1}),
        "sections[0].family must be one of memory, experience",
    ),
    (
        "prepare_context",
        sections({"family": "experience", "limit": 3}),
        "sections[0].limit must be an integer in 1..2",
    ),
    (
        "prepare_context",
        sections({"family": "memory", "limit": 5}, {"family": "resource", "limit": 4}),
        "sections limits must sum to at most 8",
    ),
    ("prepare_context", sections({"family": "memory"}), "sections[0].limit is required"),
    (
        "prepare_context",
        sections({"family": "memory", "limit": 1, "max": 2}),
        "sections[0].max is not a field",
    ),
    ("prepare_context", {**PREPARE, "detail": "deep"}, "detail must be one of uri"),
    ("prepare_context", {**PREPARE, "detail": {"memory": "x"}}, "detail['memory'] must be one of"),
    ("prepare_context", {**PREPARE, "detail": {"notes": "uri"}}, "detail key 'notes' must be"),
    ("prepare_context", {**PREPARE, "exclude": "all"}, "exclude must be a list"),
    ("prepare_context", exclude({"family": "memory"}), "exclude[0].scope is required"),
    ("prepare_context", exclude({**MEMORY, "family": "x"}), "exclude[0].family must be one of"),
    (
        "prepare_context",
        exclude({**MEMORY, "id": "a", "entry_id": "a"}),
        "exclude[0].entry_id repeats exclude[0].id",
    ),
    ("prepare_context", exclude({**MEMORY, "version": "1"}), "exclude[0].version must be"),
    ("prepare_context", {**PREPARE, "maxBytes": 600}, "maxBytes is not an argument"),
    ("add_memories", {"scope_id": S}, "entries is required"),
    ("add_memories", {"scope_id": S, "entries": "remember this"}, "entries must be a list"),
    ("add_memories", {"scope_id": S, "entries": ["remember"]}, "entries[0] must be an object"),
    ("add_memories", {"scope_id": S, "entries": [{}]}, "entries[0].text is required"),
    ("add_memories", entry(text=" "), "entries[0].text must be a non-empty string"),
    ("add_memories", {**entry(), "scope_id": ""}, "scope_id must be a non-empty string"),
    (
        "add_memories",
        {"scope_id": S, "entries": [ENTRY, {**ENTRY, "kind": ""}]},
        "entries[1].kind must be a non-empty string",
    ),
    ("add_memories", entry(tags="a"), "entries[0].tags must be a list"),
    ("add_memories", entry(tags=[""]), "entries[0].tags[0] must be a non-empty string"),
    ("add_memories", entry(created_at="last week"), "entries[0].created_at must be an ISO 8601"),
    ("add_memories", entry(created_at=1709542800), "entries[0].created_at must be an ISO 8601"),
    ("add_memories", entry(thread=""), "entries[0].thread must be a non-empty string"),
    ("add_memories", entry(key="k" * 513), "entries[0].key must be at most 512"),
    (
        "add_memories",
        {"scope_id": S, "entries": [{**ENTRY, "key": "k"}, {"text": DEPLOYS, "key": "k"}]},
        "entries[1].key 'k' appears twice",
    ),
    ("add_memories", entry(when="now"), "entries[0].when is not a field"),
    ("get_memory", {**REF, "version": 0}, "version must be an integer in 1..2**63-1"),
    ("get_memory", {**REF, "version": True}, "version must be an integer"),
    ("get_memory", {**REF, "entry_id": ""}, "entry_id must be a non-empty string"),
    ("get_memory", {"scope_id": S, "entry_id": "e1"}, "version is required"),
    ("forget_memory", {**REF, "version": "1"}, "version must be an integer"),
    ("forget_memory", {**REF, "scope_id": " "}, "scope_id must be a non-empty string"),
]


@pytest.mark.parametrize(("tool", "arguments", "expected"), BAD_INPUT)
async def test_bad_input_is_a_tool_error_naming_the_field(
    tool: str, arguments: dict[str, Any], expected: str
) -> None:
    """A bad argument is a tool error (isError) whose message names it; the server then
    serves the next call."""
    async with connected() as (client, _):
        message = tool_error(await client.call_tool(tool, arguments))
        assert message.startswith("invalid argument: ")
        assert expected in message
        assert structured(await prepare(client, "still serving?"))["status"] == "empty"


async def test_a_missing_entry_or_version_is_a_not_found_tool_error() -> None:
    """get_memory and forget_memory of an absent entry or version: 'not found: ...'."""
    async with connected() as (client, _):
        [ref] = await add(client, {"text": BACKUPS})
        missing = [
            ("get_memory", {**ref, "entry_id": "no-such-entry"}),
            ("get_memory", {**ref, "version": 2}),
            ("get_memory", {**ref, "scope_id": "elsewhere"}),
            ("forget_memory", {**ref, "version": 2}),
        ]
        messages = [tool_error(await client.call_tool(tool, args)) for tool, args in missing]
    assert all(message.startswith("not found: ") for message in messages)
    assert "no version 2" in messages[1]


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (satchel.PrepareTimeoutError("round 0 overran"), "timed out"),
        (satchel.StoreUnavailableError("the engine stopped"), "store unavailable, try again"),
        (satchel.PrepareFailedError("a search failed"), "PrepareFailedError: a search failed"),
    ],
)
async def test_satchel_errors_are_tool_errors(
    error: satchel.SatchelError, expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every error satchel raises on purpose is a tool error saying what happened."""

    async def failing(request: object) -> satchel.PreparedContext:
        raise error

    async with connected() as (client, runtime):
        monkeypatch.setattr(runtime, "prepare_context", failing)
        message = tool_error(await prepare(client, "backups"))
    assert message.startswith(expected)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_defect_is_a_protocol_error_that_reveals_nothing(
    mode: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """An unexpected exception is logged and answered as an internal protocol error that
    does not carry its message; the server keeps serving."""

    async def broken(ref: satchel.MemoryRef) -> satchel.MemoryRecord:
        raise RuntimeError("secret internals")

    async with connected(mode) as (client, runtime):
        monkeypatch.setattr(runtime, "get_memory", broken)
        with pytest.raises(MCPError) as raised:
            await client.call_tool("get_memory", REF)
        assert structured(await prepare(client, "still serving?"))["status"] == "empty"
    assert raised.value.code == types.INTERNAL_ERROR
    assert "secret" not in raised.value.message
    assert "secret internals" in caplog.text  # the log (stderr) has the whole story


async def test_an_unknown_tool_is_a_protocol_error() -> None:
    """Calling a tool the server does not have is an invalid-params protocol error."""
    async with connected("legacy") as (client, _):
        with pytest.raises(MCPError) as raised:
            await client.call_tool("delete_everything", {})
    assert raised.value.code == types.INVALID_PARAMS
    assert "delete_everything" in raised.value.message


async def test_the_server_introduces_itself() -> None:
    """The server is named satchel and tells the host's model how to use the tools."""
    async with connected("legacy") as (client, _):
        assert client.server_info is not None
        assert client.server_info.name == "satchel"
        assert client.instructions == INSTRUCTIONS
    assert "prepare_context" in INSTRUCTIONS
    assert "untrusted" in INSTRUCTIONS
