"""The inspector in a real browser: headless Chromium (the system's, ``/usr/bin/chromium``;
never a downloaded one) driven by Playwright, against a real ``satchel serve`` with
three tokens: a writer and a reader of ``project:*``, and a writer of ``other:*``.

With ``SATCHEL_SCREENSHOTS=DIR`` in the environment the tests also save a screenshot of
each page they visit into DIR (``docs/inspector/`` holds the ones the docs show).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import anyio
import pytest

import satchel

from .._processes import STARTUP_SECONDS, announced

if TYPE_CHECKING:
    from collections.abc import Iterator

    from playwright.sync_api import Browser, Dialog, Page

CHROMIUM: Final = Path(os.environ.get("SATCHEL_CHROMIUM", "/usr/bin/chromium"))
WRITER: Final = "writer-token-0123456789abcdef"
READER: Final = "reader-token-0123456789abcdef"
OTHER: Final = "other-token-0123456789abcdef"
#: Records in the paged scope: three pages of the inspector's 50.
PAGED: Final = 120
SCRIPT_TEXT: Final = "<script>document.title='owned'</script> the deploy key rotates monthly"
ATTRIBUTE_TEXT: Final = '"><img src=x onerror="document.title=\'owned\'"> deploy notes'
#: Chromium's flags on a machine without a network: no sandbox (root in CI), and none
#: of its own connections (updates, sync), which the closed network refuses.
CHROMIUM_ARGS: Final = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip

pytestmark = pytest.mark.slow


def _need_chromium() -> None:
    """Chromium and Playwright, or a skip; in CI (which installs both) their absence
    is a failure."""
    missing = None
    if not CHROMIUM.exists():
        missing = f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    elif importlib.util.find_spec("playwright") is None:
        missing = "no Playwright (the dev extra installs it)"
    if missing is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{missing}: .ci/run installs it")
    pytest.skip(missing)


async def _seed(database: Path) -> None:
    async with satchel.open_runtime(str(database), embedder=satchel.HashingEmbedder()) as rt:
        await rt.add_memories(
            "project:big",
            [
                satchel.MemoryEntry(text=f"note {n:03d} about the nightly backups")
                for n in range(PAGED)
            ],
        )
        await rt.add_experiences(
            "project:big",
            [satchel.Experience(situation="a restore failed", action="re-ran it",
                                outcome="it worked", lesson="check the disk first")],
        )  # fmt: skip
        await rt.add_memories(
            "project:demo",
            [
                satchel.MemoryEntry(text="Backups run nightly at 02:00 UTC", key="backups"),
                satchel.MemoryEntry(text="Restores of the backups take twenty minutes"),
                satchel.MemoryEntry(text="The backups go to the eu-west bucket"),
                satchel.MemoryEntry(text=SCRIPT_TEXT),
                satchel.MemoryEntry(text=ATTRIBUTE_TEXT),
            ],
        )
        await rt.add_memories(
            "other:secret", [satchel.MemoryEntry(text="the other tenant's backups plan")]
        )


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A ``satchel serve`` over a seeded database, with three tokens; its URL."""
    _need_chromium()
    folder = tmp_path_factory.mktemp("inspector")
    database = folder / "agent.db"
    anyio.run(_seed, database)
    tokens = folder / "tokens.json"
    grants = [
        {"name": "writer", "token": WRITER, "scopes": ["project:*"], "write": True},
        {"name": "reader", "token": READER, "scopes": ["project:*"]},
        {"name": "other", "token": OTHER, "scopes": ["other:*"], "write": True},
    ]
    tokens.write_text(json.dumps({"tokens": grants}))
    tokens.chmod(0o600)
    command = [
        sys.executable, "-m", "satchel", "serve", "--db", str(database), "--embedder",
        "hashing", "--port", "0", "--token-file", str(tokens),
    ]  # fmt: skip
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        line = announced(server.stderr, rb"satchel serve: serving", "satchel serve").group()
        yield line.decode().split(" at ")[1].split(" ")[0]
    finally:
        server.terminate()
        server.communicate(timeout=STARTUP_SECONDS)


@pytest.fixture(scope="module")
def browser(service: str) -> Iterator[Browser]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser, service: str) -> Iterator[Page]:
    """A fresh browser context (no cookies) on the service."""
    context = browser.new_context(base_url=service, viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    dialogs: list[str] = []

    def seen(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    opened.on("dialog", seen)
    yield opened
    context.close()
    assert dialogs == [], "a page opened a dialog: stored text ran as script"


def shot(page: Page, name: str) -> None:
    """Save a screenshot of the page when ``SATCHEL_SCREENSHOTS`` names a folder."""
    folder = os.environ.get("SATCHEL_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect

    return expect(locator)


def log_in(page: Page, token: str) -> None:
    page.goto("/ui/")
    assert page.url.endswith("/ui/login")  # no session: the login form
    page.get_by_label("Token").fill(token)
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(re.compile(r"/ui/$"))
    assert token not in page.url


def record_texts(page: Page) -> list[str]:
    return page.locator("#records td.text").all_inner_texts()


def prepare(page: Page, scope: str, query: str) -> tuple[str, list[str]]:
    """Run the playground; the pack and the receipts' ids."""
    page.goto("/ui/prepare")
    page.get_by_label("Scope").select_option(scope)
    page.get_by_label("Query").fill(query)
    page.get_by_role("button", name="Prepare").click()
    pack = page.locator("#pack").inner_text()
    ids = page.locator("#receipts tr.receipt .id").all_inner_texts()
    return pack, ids


def record_link(page: Page, text: str) -> str:
    """The link of the record page of the row showing ``text`` on a scope page."""
    row = page.locator("#records tr.record", has_text=text)
    href = row.locator("a.id").get_attribute("href")
    assert href is not None
    return href


def test_log_in_open_a_scope_and_page_past_the_first_page(page: Page) -> None:
    """A wrong token is refused; the right one opens the scopes it may read, and a
    scope's records page by page, each record on exactly one page."""
    page.goto("/ui/login")
    shot(page, "login")
    page.get_by_label("Token").fill("not-a-token-of-this-service")
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("#login-error")).to_be_visible()
    log_in(page, WRITER)
    cookies = page.context.cookies()
    assert [(c["name"], c["httpOnly"], c["sameSite"]) for c in cookies] == [
        ("satchel_ui", True, "Strict")
    ]
    assert WRITER not in cookies[0]["value"]
    shot(page, "scopes")
    scopes = page.locator("#scopes tbody th").all_inner_texts()
    assert scopes == ["project:big", "project:demo"]
    with page.expect_navigation():
        page.get_by_role("link", name="project:big").click()
    shot(page, "scope")
    seen = record_texts(page)
    while page.locator("#next-page").count():
        with page.expect_navigation():  # the records are read off the page it loads
            page.locator("#next-page").click()
        seen += record_texts(page)
    notes = [text for text in seen if text.startswith("note ")]
    assert len(seen) == PAGED + 1  # the experience too
    assert notes == [f"note {n:03d} about the nightly backups" for n in reversed(range(PAGED))]
    assert page.locator("#first-page").count() == 1


def test_filter_by_family_and_text(page: Page) -> None:
    log_in(page, WRITER)
    page.goto("/ui/scope?scope=project%3Abig")
    page.get_by_label("Family").select_option("experience")
    with page.expect_navigation():  # a GET form: read the records of the page it loads
        page.get_by_role("button", name="Filter").click()
    assert [text.splitlines()[0] for text in record_texts(page)] == ["Situation: a restore failed"]
    page.get_by_label("Family").select_option("")
    page.get_by_label("Text").fill("NOTE 10")
    with page.expect_navigation():
        page.get_by_role("button", name="Filter").click()
    assert record_texts(page) == [f"note {n} about the nightly backups" for n in range(109, 99, -1)]


def test_every_receipt_is_cited_in_the_pack(page: Page) -> None:
    log_in(page, WRITER)
    pack, ids = prepare(page, "project:demo", "when do the backups run?")
    shot(page, "prepare")
    assert pack.startswith("Everything between the markers")
    assert "Backups run nightly at 02:00 UTC" in pack
    assert ids
    for cited in ids:
        assert f'"{cited}"' in pack
    items = satchel.parse_context(pack)
    assert len(items) == len(ids)


def test_a_forgotten_record_leaves_the_next_prepare(page: Page) -> None:
    log_in(page, WRITER)
    _, before = prepare(page, "project:demo", "where do the backups go? eu-west bucket")
    page.goto("/ui/scope?scope=project%3Ademo")
    target = record_link(page, "eu-west bucket").split("id=")[1]
    assert target in before
    row = page.locator("#records tr.record", has_text="eu-west bucket")
    with page.expect_navigation():  # the scope's page has an h1 of its own
        row.get_by_role("link", name="Forget…").click()
    shot(page, "confirm")
    assert "Forget this record?" in page.locator("h1").inner_text()
    page.get_by_role("button", name="Forget").click()
    assert page.locator("#notice").inner_text().startswith("Forgotten")
    assert "eu-west bucket" not in " ".join(record_texts(page))
    pack, after = prepare(page, "project:demo", "where do the backups go? eu-west bucket")
    assert target not in after
    assert "eu-west" not in pack
    page.goto("/ui/scope?scope=project%3Ademo&forgotten=on")
    row = page.locator("#records tr.record", has_text="eu-west bucket")
    assert "forgotten" in row.inner_text()


def test_an_erased_record_is_gone_from_every_page(page: Page) -> None:
    log_in(page, WRITER)
    page.goto("/ui/scope?scope=project%3Ademo")
    record = record_link(page, "twenty minutes")
    page.goto(record)
    shot(page, "record")
    assert page.locator("#pack-citation").inner_text().startswith('{"family":"memory"')
    page.get_by_role("link", name="Erase…").click()
    page.get_by_role("button", name="Erase").click()
    assert page.locator("#notice").inner_text().startswith("Erased")
    page.goto("/ui/scope?scope=project%3Ademo&forgotten=on")
    assert not [text for text in record_texts(page) if "twenty minutes" in text]
    response = page.goto(record)
    assert response is not None
    assert response.status == 404
    pack, _ = prepare(page, "project:demo", "how long do restores of the backups take?")
    assert "twenty minutes" not in pack


def test_stored_markup_renders_as_text(page: Page) -> None:
    """Records holding a script element and an attribute break-out show as their text:
    no element made of them, no script run (the fixture fails on any dialog)."""
    log_in(page, WRITER)
    page.goto("/ui/scope?scope=project%3Ademo")
    texts = record_texts(page)
    assert SCRIPT_TEXT in texts
    assert ATTRIBUTE_TEXT in texts
    assert page.locator("main img").count() == 0
    assert page.locator("main script").count() == 0
    page.goto(record_link(page, "deploy notes"))
    assert page.locator("pre.text").inner_text() == ATTRIBUTE_TEXT
    assert page.title() != "owned"
    pack, _ = prepare(page, "project:demo", "deploy key notes")
    assert "document.title" in pack
    assert page.locator("main img").count() == 0
    assert page.title() != "owned"


def test_a_reader_sees_no_write_buttons_and_a_forged_post_is_refused(page: Page) -> None:
    log_in(page, READER)
    page.goto("/ui/scope?scope=project%3Ademo")
    assert page.locator("#records tr.record").count() >= 3
    assert page.get_by_role("link", name=re.compile("Forget|Erase")).count() == 0
    page.goto(record_link(page, "Backups run nightly"))
    assert page.get_by_role("link", name=re.compile("Forget|Erase")).count() == 0
    entry = page.url.split("id=")[1]
    form: dict[str, Any] = {"scope": "project:demo", "family": "memory", "id": entry, "v": "1"}
    forged = page.request.post("/ui/forget", form=form)  # the session's cookie, no CSRF token
    assert forged.status == 403
    csrf = page.locator("input[name=csrf]").first.get_attribute("value")
    assert csrf
    refused = page.request.post("/ui/forget", form={**form, "csrf": csrf})
    assert refused.status == 403  # a valid token, but a reader's session
    page.goto("/ui/scope?scope=project%3Ademo")
    assert "Backups run nightly" in " ".join(record_texts(page))


def test_a_forged_post_of_a_writer_without_csrf_is_refused(page: Page) -> None:
    log_in(page, WRITER)
    page.goto("/ui/scope?scope=project%3Ademo")
    entry = record_link(page, "Backups run nightly").split("id=")[1]
    form: dict[str, Any] = {"scope": "project:demo", "family": "memory", "id": entry}
    assert page.request.post("/ui/erase", form=form).status == 403
    assert page.request.post("/ui/erase", form={**form, "csrf": "0" * 32}).status == 403
    page.reload()
    assert "Backups run nightly" in " ".join(record_texts(page))


def test_a_second_token_never_sees_the_first_ones_scopes(page: Page) -> None:
    log_in(page, OTHER)
    assert page.locator("#scopes tbody th").all_inner_texts() == ["other:secret"]
    for path in ("/ui/scope?scope=project%3Ademo", "/ui/scope?scope=project%3Abig"):
        response = page.goto(path)
        assert response is not None
        assert response.status == 404
        assert "Backups" not in page.content()
    page.goto("/ui/prepare")
    options = page.locator("#scope option").all_inner_texts()
    assert options == ["other:secret"]


def test_the_pages_work_from_the_keyboard(page: Page) -> None:
    """Log in, open a scope and its next page with the keyboard alone: the skip link
    comes first, and every link and field is reached with Tab."""
    page.goto("/ui/login")
    expect(page.locator("#token")).to_be_focused()  # the form's field has the focus
    page.keyboard.type(WRITER)
    with page.expect_navigation():
        page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"/ui/$"))
    page.keyboard.press("Tab")
    expect(page.locator(":focus")).to_have_text("Skip to content")
    for _ in range(30):  # Tab to the scope's link, then follow it
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent") == "project:big":
            break
    with page.expect_navigation():
        page.keyboard.press("Enter")
    expect(page.locator("h1")).to_have_text("Scope project:big")
    page.locator("#next-page").focus()
    with page.expect_navigation():
        page.keyboard.press("Enter")
    expect(page.locator("#first-page")).to_be_visible()


def test_a_dark_theme_when_the_system_asks_for_one(page: Page) -> None:
    """The stylesheet follows ``prefers-color-scheme``: dark text on light by default,
    light on dark when the system is dark."""
    log_in(page, WRITER)
    background = "getComputedStyle(document.body).backgroundColor"
    page.emulate_media(color_scheme="light")
    assert page.evaluate(background) == "rgb(253, 253, 252)"
    page.emulate_media(color_scheme="dark")
    assert page.evaluate(background) == "rgb(22, 24, 27)"
    prepare(page, "project:demo", "when do the backups run?")
    shot(page, "prepare-dark")
