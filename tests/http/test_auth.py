"""Bearer tokens: no token is 401, each token reads (and writes, if allowed) only its
scopes, a refusal says nothing about the refused scope, and tokens are compared in
constant time, every one of them."""

from __future__ import annotations

import hmac
import json
from typing import TYPE_CHECKING, Any, Final

import pytest

import satchel
from satchel.http import TokenGrant, load_tokens, parse_tokens

from ._service import add, error_of, memory_path, prepare, serving

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.anyio

READER: Final = "reader-token-0123456789"
WRITER: Final = "writer-token-0123456789"
ADMIN: Final = "admin-token-01234567890"
TOKENS: Final = {
    READER: TokenGrant(scopes=("project:*",), name="reader"),
    WRITER: TokenGrant(scopes=("chat-1", "team/*"), write=True, name="writer"),
    ADMIN: TokenGrant(scopes=("*",), write=True, name="admin"),
}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


NOTE = {"text": "Backups run nightly at 02:00 UTC"}


# --------------------------------------------------------------------------------- 401


@pytest.mark.parametrize(
    "headers",
    [
        {},
        bearer("not-a-token-of-this-service"),
        bearer(READER[:-1]),
        bearer(READER + "x"),
        {"Authorization": f"Basic {READER}"},
        {"Authorization": "Bearer"},
        {"Authorization": READER},
    ],
    ids=["none", "unknown", "prefix", "longer", "basic", "empty", "no-scheme"],
)
async def test_a_request_without_a_valid_token_is_401(headers: dict[str, str]) -> None:
    """Every API endpoint; one body whatever was wrong, and a Bearer challenge."""
    async with serving(tokens=TOKENS) as (client, runtime):
        responses = [
            await prepare(client, "project:a", "backups", headers=headers),
            await client.post(
                "/v1/memories", json={"scope_id": "chat-1", "entries": [NOTE]}, headers=headers
            ),
            await client.get(memory_path("chat-1", "e"), params={"version": 1}, headers=headers),
            await client.delete(memory_path("chat-1", "e"), params={"version": 1}, headers=headers),
        ]
        counts = await runtime.store.scope_counts()
    bodies = {response.text for response in responses}
    assert len(bodies) == 1
    for response in responses:
        assert response.status_code == 401
        assert error_of(response)["type"] == "unauthorized"
        assert response.headers["www-authenticate"].startswith("Bearer")
    assert counts == {}


async def test_two_authorization_headers_are_401() -> None:
    async with serving(tokens=TOKENS) as (client, _):
        response = await client.post(
            "/v1/context/prepare",
            json={"scope_id": "project:a", "query": "q"},
            headers=[("Authorization", f"Bearer {READER}"), ("Authorization", "Bearer x")],
        )
    assert response.status_code == 401


async def test_the_scheme_is_case_insensitive() -> None:
    async with serving(tokens=TOKENS) as (client, _):
        response = await prepare(
            client, "project:a", "q", headers={"Authorization": f"bearer {READER}"}
        )
    assert response.status_code == 200, response.text


async def test_health_and_the_openapi_document_need_no_token() -> None:
    async with serving(tokens=TOKENS) as (client, _):
        health = await client.get("/healthz")
        document = await client.get("/openapi.json")
    assert health.status_code == document.status_code == 200


async def test_no_configured_token_refuses_every_api_request() -> None:
    async with serving(tokens={}) as (client, _):
        response = await prepare(client, "s", "q", headers=bearer(READER))
        health = await client.get("/healthz")
    assert response.status_code == 401
    assert health.status_code == 200


# --------------------------------------------------------------------------------- 403


async def test_a_token_reads_only_its_scopes() -> None:
    async with serving(tokens=TOKENS) as (client, _):
        (ref,) = await add(client, "project:a", NOTE, headers=bearer(ADMIN))
        await add(client, "chat-1", NOTE, headers=bearer(ADMIN))
        own = await prepare(client, "project:a", "backups", headers=bearer(READER))
        other = await prepare(client, "chat-1", "backups", headers=bearer(READER))
        read = await client.get(
            memory_path("project:a", ref["entry_id"]), params={"version": 1}, headers=bearer(READER)
        )
        not_prefixed = await prepare(client, "projects:a", "backups", headers=bearer(READER))
        deadline = await client.post(
            "/v1/context/deadline",
            json={"scope_id": "chat-1", "query": "backups"},
            headers=bearer(READER),
        )
    assert own.status_code == 200
    assert own.json()["status"] == "ready"
    assert read.status_code == 200
    for response in (other, not_prefixed, deadline):
        assert response.status_code == 403
        assert error_of(response)["type"] == "forbidden"


async def test_every_reference_scope_must_be_readable_too() -> None:
    async with serving(tokens=TOKENS) as (client, _):
        await add(client, "chat-1", NOTE, headers=bearer(ADMIN))
        allowed = await prepare(
            client, "project:a", "backups", references=["project:b"], headers=bearer(READER)
        )
        refused = await prepare(
            client,
            "project:a",
            "backups",
            references=["project:b", "chat-1"],
            headers=bearer(READER),
        )
    assert allowed.status_code == 200
    assert refused.status_code == 403
    assert "chat-1" not in refused.text


async def test_a_refusal_reveals_nothing_about_the_scope() -> None:
    """The same status and body for a scope that holds the entry and for one that does
    not exist; the store is never asked (no 404 can leak through)."""
    async with serving(tokens=TOKENS) as (client, _):
        (ref,) = await add(client, "chat-1", NOTE, headers=bearer(ADMIN))
        entry = ref["entry_id"]
        pairs = [
            (
                await client.get(
                    memory_path("chat-1", entry), params={"version": 1}, headers=bearer(READER)
                ),
                await client.get(
                    memory_path("chat-9", entry), params={"version": 1}, headers=bearer(READER)
                ),
            ),
            (
                await client.get(
                    memory_path("chat-1", entry), params={"version": 7}, headers=bearer(READER)
                ),
                await client.get(
                    memory_path("chat-1", "0" * 32), params={"version": 1}, headers=bearer(READER)
                ),
            ),
            (
                await prepare(client, "chat-1", "backups", headers=bearer(READER)),
                await prepare(client, "chat-9", "backups", headers=bearer(READER)),
            ),
            (
                await prepare(
                    client, "project:a", "b", references=["chat-1"], headers=bearer(READER)
                ),
                await prepare(
                    client, "project:a", "b", references=["chat-9"], headers=bearer(READER)
                ),
            ),
            (
                await client.delete(
                    memory_path("chat-1", entry), params={"version": 1}, headers=bearer(READER)
                ),
                await client.delete(
                    memory_path("chat-9", entry), params={"version": 1}, headers=bearer(READER)
                ),
            ),
        ]
    for existing, absent in pairs:
        assert existing.status_code == absent.status_code == 403
        assert existing.content == absent.content
        assert "chat-" not in existing.text


async def test_a_read_only_token_cannot_write_or_forget() -> None:
    async with serving(tokens=TOKENS) as (client, runtime):
        (ref,) = await add(client, "project:a", NOTE, headers=bearer(ADMIN))
        written = await client.post(
            "/v1/memories",
            json={"scope_id": "project:a", "entries": [{"text": "planted"}]},
            headers=bearer(READER),
        )
        forgot = await client.delete(
            memory_path("project:a", ref["entry_id"]), params={"version": 1}, headers=bearer(READER)
        )
        counts = await runtime.store.scope_counts()
        still = await prepare(client, "project:a", "backups", headers=bearer(READER))
    assert written.status_code == forgot.status_code == 403
    assert counts["project:a"]["memory"] == 1
    assert still.json()["status"] == "ready"


async def test_a_writing_token_writes_only_its_scopes() -> None:
    async with serving(tokens=TOKENS) as (client, runtime):
        into_prefix = await client.post(
            "/v1/memories",
            json={"scope_id": "team/eu", "entries": [NOTE]},
            headers=bearer(WRITER),
        )
        outside = await client.post(
            "/v1/memories",
            json={"scope_id": "teamx", "entries": [NOTE]},
            headers=bearer(WRITER),
        )
        ref = into_prefix.json()["refs"][0]
        forgot = await client.delete(
            memory_path("team/eu", ref["entry_id"]), params={"version": 1}, headers=bearer(WRITER)
        )
        counts = await runtime.store.scope_counts()
    assert into_prefix.status_code == 200
    assert outside.status_code == 403
    assert forgot.status_code == 204
    assert "teamx" not in counts


# --------------------------------------------------------------------- constant time


@pytest.mark.parametrize("token", [READER, ADMIN, "wrong-token-0123456789"])
async def test_every_configured_token_is_compared_in_constant_time(
    token: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """hmac.compare_digest runs once per configured token on every request, whichever
    token (if any) matches: the first, the last or none."""
    compared: list[tuple[bytes, bytes]] = []
    original = hmac.compare_digest

    def counting(a: Any, b: Any) -> bool:
        compared.append((a, b))
        return original(a, b)

    monkeypatch.setattr(hmac, "compare_digest", counting)
    async with serving(tokens=TOKENS) as (client, _):
        response = await prepare(client, "project:a", "q", headers=bearer(token))
    assert len(compared) == len(TOKENS)
    assert all(len(a) == len(b) == 32 for a, b in compared)  # digests: lengths never differ
    assert response.status_code == (401 if token.startswith("wrong") else 200)


# -------------------------------------------------------------------------- the grant


@pytest.mark.parametrize(
    ("patterns", "scope", "expected"),
    [
        (("chat-1",), "chat-1", True),
        (("chat-1",), "chat-10", False),
        (("project:*",), "project:", True),
        (("project:*",), "project:a/b", True),
        (("project:*",), "project", False),
        (("*",), "anything", True),
        (("a?c",), "abc", False),  # only a trailing * is a pattern
        (("a[b]",), "a[b]", True),
    ],
)
def test_a_grant_covers_exact_names_and_star_prefixes(
    patterns: tuple[str, ...], scope: str, expected: bool
) -> None:
    grant = TokenGrant(scopes=patterns)
    assert grant.may_read(scope) is expected
    assert grant.may_write(scope) is False
    assert TokenGrant(scopes=patterns, write=True).may_write(scope) is expected


# ------------------------------------------------------------------------- token files


def test_a_token_file_is_loaded(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    path.write_text(
        json.dumps(
            {
                "tokens": [
                    {"name": "agent", "token": WRITER, "scopes": ["project:*"], "write": True},
                    {"token": READER, "scopes": ["chat-1", "chat-2"]},
                ]
            }
        )
    )
    assert load_tokens(path) == {
        WRITER: TokenGrant(scopes=("project:*",), write=True, name="agent"),
        READER: TokenGrant(scopes=("chat-1", "chat-2")),
    }


@pytest.mark.parametrize(
    ("data", "named"),
    [
        ([], "one object"),
        ({"tokens": [], "extra": 1}, "one object"),
        ({"tokens": []}, "non-empty list"),
        ({"tokens": ["tok"]}, r"tokens\[0\] must be an object"),
        ({"tokens": [{"token": "short-secret", "scopes": ["a"]}]}, r"tokens\[0\]\.token"),
        ({"tokens": [{"token": 12345678901234567890, "scopes": ["a"]}]}, r"tokens\[0\]\.token"),
        ({"tokens": [{"token": f" {READER}", "scopes": ["a"]}]}, r"tokens\[0\]\.token"),
        ({"tokens": [{"token": "é" * 20, "scopes": ["a"]}]}, r"tokens\[0\]\.token"),
        ({"tokens": [{"token": READER}]}, r"tokens\[0\]\.scopes"),
        ({"tokens": [{"token": READER, "scopes": []}]}, r"tokens\[0\]\.scopes"),
        ({"tokens": [{"token": READER, "scopes": "a"}]}, r"tokens\[0\]\.scopes"),
        ({"tokens": [{"token": READER, "scopes": ["a", ""]}]}, r"tokens\[0\]\.scopes\[1\]"),
        ({"tokens": [{"token": READER, "scopes": ["a"], "write": "yes"}]}, r"tokens\[0\]\.write"),
        ({"tokens": [{"token": READER, "scopes": ["a"], "name": ""}]}, r"tokens\[0\]\.name"),
        ({"tokens": [{"token": READER, "scopes": ["a"], "read": True}]}, r"tokens\[0\]\.read"),
        (
            {"tokens": [{"token": READER, "scopes": ["a"]}, {"token": READER, "scopes": ["b"]}]},
            r"tokens\[1\]\.token repeats",
        ),
    ],
)
def test_a_malformed_token_file_is_refused_by_field_never_showing_a_token(
    data: object, named: str
) -> None:
    with pytest.raises(satchel.InvalidRequestError, match=named) as raised:
        parse_tokens(data)
    assert READER not in str(raised.value)
    assert "short-secret" not in str(raised.value)


def test_a_token_file_that_is_not_json_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    path.write_text("{tokens: nope")
    with pytest.raises(satchel.InvalidRequestError, match="not JSON"):
        load_tokens(path)


# ------------------------------------------------------------------------ allowed hosts


@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("127.0.0.1:8765", 200),
        ("localhost:8765", 200),
        ("LOCALHOST", 200),
        ("[::1]:8765", 200),
        ("evil.example:8765", 421),
        ("127.0.0.1.evil.example", 421),
        ("", 421),
    ],
)
async def test_allowed_hosts_refuse_any_other_host_header(host: str, status: int) -> None:
    """A loopback service without tokens answers only requests naming it: a web page
    reaching it through DNS rebinding names its own host, and is refused."""
    async with serving(allowed_hosts=("127.0.0.1", "localhost", "::1")) as (client, _):
        response = await client.get("/healthz", headers={"Host": host})
        written = await client.post(
            "/v1/memories",
            json={"scope_id": "s", "entries": [NOTE]},
            headers={"Host": host},
        )
    assert response.status_code == written.status_code == status
    if status == 421:
        assert error_of(written)["type"] == "misdirected_request"
