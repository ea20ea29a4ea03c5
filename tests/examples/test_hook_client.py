"""The client each hook holds a copy of (``examples/hooks/_satchel_client.py``), run in
process from each hook against a stub service: the request it sends, and every refusal,
unreadable answer or empty pack ending in no context, one line on stderr saying why and
exit code 0."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Final

import pytest

from ._hooks import (
    DEADLINE,
    EMPTY,
    HOOK_MODULES,
    HOST_OBJECTS,
    HOSTS,
    PREPARE,
    READY,
    Answer,
    StubService,
    deadline_of,
    prompt_event,
    run_in_process,
    satchel_error,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

QUESTION: Final = "when do backups run?"
PROJECT: Final = "/home/dev/demo"


@pytest.mark.parametrize("host", HOSTS)
def test_the_deadline_and_the_prepare_get_the_same_body(host: str) -> None:
    """Scope, prompt (cut to the 8192 characters a query may hold), SATCHEL_MAX_BYTES and
    the session id, the same for the deadline as for the prepare."""
    prompt = "backups " * 2000
    with StubService({DEADLINE: deadline_of(2.0), PREPARE: EMPTY}) as stub:
        event = prompt_event(host, prompt, session_id="s-1", cwd=PROJECT)
        run = run_in_process(host, event, SATCHEL_URL=stub.url, SATCHEL_MAX_BYTES="1000")
    assert (run.code, run.stdout) == (0, "")
    body = {"scope_id": "project:demo", "query": prompt[:8192], "max_bytes": 1000,
            "session_id": "s-1"}  # fmt: skip
    assert stub.requests == [(DEADLINE, body), (PREPARE, body)]


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize(
    ("session_id", "why"),
    [
        ("s-1", "project:demo is relevant to the prompt, or this session was given all of it"
                " in its last turns\n"),
        (None, "project:demo is relevant to the prompt\n"),
    ],
    ids=["session", "no-session"],
)  # fmt: skip
def test_an_empty_pack_says_why_there_is_none(host: str, session_id: str | None, why: str) -> None:
    """Nothing on stdout, and one line on stderr: nothing relevant, or (with a session,
    which the service may hold back what it was given for) nothing new."""
    event = prompt_event(host, QUESTION, session_id=session_id or "", cwd=PROJECT)
    if session_id is None:
        del event["session_id"]
    with StubService({DEADLINE: deadline_of(2.0), PREPARE: EMPTY}) as stub:
        run = run_in_process(host, event, SATCHEL_URL=stub.url)
    assert (run.code, run.stdout) == (0, "")
    assert run.stderr.endswith(f"no context: the pack is empty: nothing in {why}")
    assert run.stderr.count("\n") == 1


@pytest.mark.parametrize("host", HOSTS)
def test_a_ready_pack_is_the_additional_context_of_6000_bytes_by_default(host: str) -> None:
    """Without SATCHEL_MAX_BYTES the budget is 6000 bytes; the pack is printed whole."""
    with StubService({DEADLINE: deadline_of(2.0), PREPARE: READY}) as stub:
        event = prompt_event(host, QUESTION, session_id="s", cwd=PROJECT)
        run = run_in_process(host, event, SATCHEL_URL=stub.url)
    assert run.context == "PACK"
    assert [body["max_bytes"] for _, body in stub.requests] == [6000, 6000]


@pytest.mark.parametrize("host", HOSTS)
def test_the_default_settings_name_the_local_service(host: str) -> None:
    """``satchel serve``'s own default address, no token, no wait beyond 10 s."""
    hook = HOOK_MODULES[host]
    settings = hook.Settings.from_env({}, HOST_OBJECTS[host], "/home/dev/demo")
    assert settings == hook.Settings(
        url="http://127.0.0.1:8765",
        token=None,
        scope="project:demo",
        max_bytes=6000,
        max_wait=10.0,
    )


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize(
    ("answers", "note"),
    [
        ({DEADLINE: satchel_error(401, "unauthorized")}, "answered 401 (unauthorized)"),
        ({DEADLINE: (500, b"oops")}, "answered 500"),
        ({DEADLINE: (200, b"<html>")}, "not JSON"),
        ({DEADLINE: (200, b"[]")}, "not an object"),
        ({DEADLINE: (200, b"{}")}, "the deadline is malformed"),
        ({DEADLINE: (200, b'{"deadline_seconds": "soon"}')}, "the deadline is malformed"),
        ({DEADLINE: deadline_of(0)}, "the deadline is malformed"),
        ({DEADLINE: deadline_of(2.0), PREPARE: satchel_error(504, "timeout")}, "504 (timeout)"),
        ({DEADLINE: deadline_of(2.0), PREPARE: satchel_error(503, "store_unavailable")}, "503"),
        ({DEADLINE: deadline_of(2.0), PREPARE: (200, b'{"status": "ready"}')}, "malformed"),
        ({DEADLINE: deadline_of(2.0), PREPARE: (200, b"{")}, "not JSON"),
        (
            {DEADLINE: satchel_error(422, "invalid_request", field="scope_id",
                                     message="scope_id must not\nbe blank")},
            "answered 422 (invalid_request) on field scope_id (set by SATCHEL_SCOPE):"
            " scope_id must not be blank",
        ),
        (
            {DEADLINE: satchel_error(422, "invalid_request", field="query", message="x" * 300)},
            f"answered 422 (invalid_request) on field query: {'x' * 200}\n",
        ),
    ],
    ids=[
        "401", "500", "html", "array", "no-deadline", "string-deadline", "zero-deadline",
        "prepare-504", "prepare-503", "pack-without-content", "truncated-pack",
        "field-of-a-setting", "field-long-message",
    ],
)  # fmt: skip
def test_a_refusal_or_an_unreadable_answer_injects_nothing(
    host: str, answers: Mapping[str, Answer], note: str
) -> None:
    """Nothing on stdout, one line on stderr saying why, exit 0."""
    with StubService(answers) as stub:
        event = prompt_event(host, QUESTION, session_id="s", cwd=PROJECT)
        run = run_in_process(host, event, SATCHEL_URL=stub.url)
    assert (run.code, run.stdout) == (0, "")
    assert note in run.stderr
    assert run.stderr.count("\n") == 1


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize(
    ("stdin", "note"),
    [
        ("not json", "not JSON"),
        ('{"session_id": "s"}', "no prompt"),
        (json.dumps(prompt_event("codex", "   ", session_id="s", cwd=PROJECT)), "blank"),
    ],
    ids=["not-json", "no-prompt", "blank-prompt"],
)
def test_an_event_without_a_prompt_asks_nothing(host: str, stdin: str, note: str) -> None:
    """A malformed event, or a blank prompt, never reaches the service, and says so."""
    with StubService({DEADLINE: deadline_of(2.0), PREPARE: READY}) as stub:
        run = run_in_process(host, stdin, SATCHEL_URL=stub.url)
    assert (run.code, run.stdout) == (0, "")
    assert note in run.stderr
    assert run.stderr.count("\n") == 1
    assert stub.requests == []


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("SATCHEL_MAX_BYTES", "lots"),
        ("SATCHEL_MAX_BYTES", "6000.5"),
        ("SATCHEL_MAX_WAIT", "-1"),
        ("SATCHEL_URL", "127.0.0.1:8765"),
    ],
)
def test_a_malformed_setting_injects_nothing(host: str, variable: str, value: str) -> None:
    """A misconfigured hook says which variable is wrong, and lets the prompt through."""
    with StubService({DEADLINE: deadline_of(2.0), PREPARE: READY}) as stub:
        event = prompt_event(host, QUESTION, session_id="s", cwd=PROJECT)
        env = {"SATCHEL_URL": stub.url} | {variable: value}
        run = run_in_process(host, event, **env)
    assert (run.code, run.stdout) == (0, "")
    assert variable in run.stderr
    assert stub.requests == []
