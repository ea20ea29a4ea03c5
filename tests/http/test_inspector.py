"""The inspector's pages in process (httpx over ASGI, asyncio and trio): the headers
every answer carries, a service without tokens opening directly yet refusing a write
without its CSRF token, a write from another origin refused, a forged or expired
session cookie worth nothing, ``ui=False`` serving no page, and the playground's gate
switch choosing its runtime. The browser tests (``test_inspector_browser.py``) drive
the same pages in Chromium."""

from __future__ import annotations

import contextlib
import re
import time
from typing import TYPE_CHECKING, Any, Final

import httpx
import pytest

import satchel
from satchel.http import TokenGrant, create_app
from satchel.http._inspector import _sessions

from ._service import BASE

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping

pytestmark = pytest.mark.anyio

TOKEN: Final = "inspector-token-0123456789"


def csrf_of(page: httpx.Response) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text)
    assert found is not None, page.text
    return found.group(1)


@contextlib.asynccontextmanager
async def open_client(runtime: satchel.Runtime, **options: Any) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(runtime, **options)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as client:
        yield client


async def test_every_page_carries_a_strict_policy_and_no_script() -> None:
    """Without tokens the inspector opens at once; each page forbids script, framing
    and foreign forms, and holds no script element."""
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime:
        await runtime.add_memories("demo", [satchel.MemoryEntry(text="backups at 02:00")])
        async with open_client(runtime) as client:
            for path in ("/ui/", "/ui/scope?scope=demo", "/ui/prepare", "/ui/inspector.css"):
                page = await client.get(path)
                assert page.status_code == 200, path
                policy = page.headers["content-security-policy"]
                assert "default-src 'none'" in policy
                assert "script-src" not in policy  # none: default-src forbids it
                assert "frame-ancestors 'none'" in policy
                assert page.headers["x-content-type-options"] == "nosniff"
                assert "<script" not in page.text
            assert "backups at 02:00" in (await client.get("/ui/scope?scope=demo")).text


async def test_without_tokens_a_write_still_needs_the_csrf_token() -> None:
    """A page elsewhere may post a form to a loopback service: without the visitor
    cookie's CSRF token, or from another origin, the erase is refused."""
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime:
        (ref,) = await runtime.add_memories("demo", [satchel.MemoryEntry(text="keep me")])
        async with open_client(runtime) as client:
            csrf = csrf_of(await client.get("/ui/prepare"))
            form = {"scope": "demo", "family": "memory", "id": ref.entry_id}
            assert (await client.post("/ui/erase", data=form)).status_code == 403
            foreign = {"Origin": "http://evil.example"}
            refused = await client.post("/ui/erase", data={**form, "csrf": csrf}, headers=foreign)
            assert refused.status_code == 403
            assert (await runtime.get_memory(ref)).text == "keep me"
            erased = await client.post("/ui/erase", data={**form, "csrf": csrf})
            assert erased.status_code == 303
            assert erased.headers["location"] == "/ui/scope?scope=demo&notice=erased"
            with pytest.raises(satchel.NotFoundError):
                await runtime.get_memory(ref)


@pytest.mark.parametrize(
    "cookie",
    [
        "s1.9999999999.forged-nonce-000000.00",  # no token signed it
        "s1.{past}.{nonce}.{mac}",  # signed, but expired
        "{token}",  # the bearer token itself is no session
    ],
)
async def test_a_forged_or_expired_session_is_sent_to_the_login(cookie: str) -> None:
    tokens = {TOKEN: TokenGrant(scopes=("*",), write=True, name="ops")}
    async with (
        satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime,
        open_client(runtime, tokens=tokens) as client,
    ):
        (_grant, key) = next(iter(_check_keys(tokens)))
        past = int(time.time()) - 1
        nonce = "n" * 24
        mac = _sessions._mac(key, f"s1.{past}.{nonce}")
        value = cookie.format(past=past, nonce=nonce, mac=mac, token=TOKEN)
        client.cookies.set(_sessions.COOKIE, value, path="/ui/")
        page = await client.get("/ui/")
        assert page.status_code == 303
        assert page.headers["location"] == "/ui/login"


def _check_keys(tokens: Mapping[str, TokenGrant]) -> list[tuple[TokenGrant, bytes]]:
    from satchel.http._auth import Tokens

    return Tokens(tokens).session_keys()


async def test_a_login_session_is_signed_and_logs_out() -> None:
    tokens = {TOKEN: TokenGrant(scopes=("*",), name="ops")}
    async with (
        satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime,
        open_client(runtime, tokens=tokens) as client,
    ):
        form = await client.get("/ui/login")
        wrong = await client.post("/ui/login", data={"token": "x" * 20, "csrf": csrf_of(form)})
        assert wrong.status_code == 401
        done = await client.post("/ui/login", data={"token": TOKEN, "csrf": csrf_of(form)})
        assert done.status_code == 303
        cookie = done.headers["set-cookie"]
        assert "HttpOnly" in cookie
        assert "SameSite=strict" in cookie
        assert TOKEN not in cookie
        home = await client.get("/ui/")
        assert home.status_code == 200
        assert "signed in as ops" in home.text
        out = await client.post("/ui/logout", data={"csrf": csrf_of(home)})
        assert out.status_code == 303
        assert (await client.get("/ui/")).status_code == 303


async def test_ui_false_serves_no_page() -> None:
    async with (
        satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime,
        open_client(runtime, ui=False) as client,
    ):
        assert (await client.get("/ui/")).status_code == 404
        assert (await client.get("/healthz")).status_code == 200


async def test_the_gate_switch_prepares_with_the_runtime_it_names() -> None:
    """The playground's gate switch runs the prepare on the runtime of that setting."""
    seen: list[str] = []

    async def gated(effort: satchel.RecallEffort) -> None:
        seen.append("on")

    async def ungated(effort: satchel.RecallEffort) -> None:
        seen.append("off")

    store = satchel.stores.MemoryStore()
    embedder = satchel.HashingEmbedder()
    async with (
        satchel.open_runtime(store=store, embedder=embedder, recall_effort_sink=ungated) as off,
        satchel.open_runtime(
            store=satchel.stores.MemoryStore(), embedder=embedder,
            recall_policy=satchel.RecallSufficiencyPolicy(), recall_effort_sink=gated,
        ) as on,
    ):  # fmt: skip
        await off.add_memories("demo", [satchel.MemoryEntry(text="backups at 02:00")])
        await on.add_memories("demo", [satchel.MemoryEntry(text="backups at 02:00")])
        async with open_client(off, playground={"on": on, "off": off}) as client:
            csrf = csrf_of(await client.get("/ui/prepare"))
            fields = {"scope": "demo", "query": "when are backups?", "max_bytes": "2000"}
            for gate in ("on", "off"):
                page = await client.post("/ui/prepare", data={**fields, "csrf": csrf, "gate": gate})
                assert page.status_code == 200, page.text
                assert "backups at 02:00" in page.text
            assert seen == ["on", "off"]
            bad = await client.post("/ui/prepare", data={**fields, "csrf": csrf, "max_bytes": "9"})
            assert bad.status_code == 422
            assert "max_bytes" in bad.text


async def test_a_playground_without_both_settings_is_refused() -> None:
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime:
        with pytest.raises(satchel.InvalidRequestError, match="playground"):
            create_app(runtime, playground={"on": runtime})


async def test_a_text_filter_walks_every_match_once() -> None:
    """A filtered page reads on until it has a page of matches (or its bound), and its
    next page resumes after what it read: walked to the end, every matching record shows
    exactly once, whatever the reads' sizes."""
    entries = [
        satchel.MemoryEntry(text=f"{'needle' if n % 9 == 0 else 'hay'} {n}") for n in range(2500)
    ]
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime:
        await runtime.add_memories("demo", entries)
        async with open_client(runtime) as client:
            shown: list[str] = []
            path: str | None = "/ui/scope?scope=demo&q=NEEDLE"
            while path is not None:
                page = await client.get(path.replace("&amp;", "&"))
                assert page.status_code == 200
                shown += re.findall(r'<td class="text">(needle \d+)</td>', page.text)
                assert 'class="text">hay' not in page.text
                found = re.search(r'<a href="([^"]+)" id="next-page"', page.text)
                path = None if found is None else found.group(1)
    expected = [f"needle {n}" for n in reversed(range(0, 2500, 9))]
    assert shown == expected


@pytest.mark.parametrize(
    "path",
    [
        "/ui/record?scope=demo&id=",
        "/ui/scope?scope=demo&cursor=not-a-cursor",
        "/ui/scope?scope=demo&family=colour",
        "/ui/confirm?action=erase&scope=demo&family=memory&id=x&v=-1",
    ],
)
async def test_a_malformed_address_is_a_page_naming_what_is_wrong(path: str) -> None:
    """A mangled id, cursor, family or version is a 422 page saying so, never a 500."""
    async with (
        satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime,
        open_client(runtime) as client,
    ):
        await runtime.add_memories("demo", [satchel.MemoryEntry(text="backups at 02:00")])
        page = await client.get(path)
        assert page.status_code == 422, page.text
        assert 'class="error"' in page.text
        assert "Traceback" not in page.text
