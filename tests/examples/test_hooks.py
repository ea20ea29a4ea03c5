"""The Claude Code and Codex hooks (``examples/hooks``) inject the pack a real ``satchel
serve`` prepares for the prompt, with the session id, each from one file copied alone;
and with an empty pack or on any failure (no service, a refusal, an answer they cannot
read, a prepare past its deadline) they add nothing, say why on stderr, exit 0 and
return on time, so the agent's prompt never waits on satchel."""

from __future__ import annotations

import json
import shutil
import socket
import uuid
from typing import TYPE_CHECKING, Final

import pytest

from ._hooks import (
    DEADLINE,
    HANG,
    HOOKS,
    HOSTS,
    PREPARE,
    READY,
    TRICKLE,
    Answer,
    StubService,
    deadline_of,
    prompt_event,
    remember,
    run_hook,
    run_script,
    satchel_serve,
)

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from pathlib import Path

BACKUPS: Final = "Backups run nightly at 02:00 UTC"
KESTREL: Final = "The Kestrel staging database listens on port 7400"
QUESTION: Final = "when do backups run?"
PROJECT: Final = "/home/dev/demo"
TOKEN: Final = "hook-token-0123456789abcdef"
WRITER: Final = "writer-token-0123456789abcdef"


def session() -> str:
    return f"session-{uuid.uuid4()}"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``satchel serve`` (no tokens, no deadline, dedup over 8 turns) with a fact in
    ``project:demo`` and another in ``project:other``; its URL."""
    db = tmp_path_factory.mktemp("hooks") / "agent.db"
    with satchel_serve(db, "--dedup-turns", "8") as url:
        remember(url, "project:demo", BACKUPS)
        remember(url, "project:other", KESTREL)
        yield url


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``satchel serve --token-file`` with a 5 s deadline: the hook's token may read
    ``project:demo`` only, where another token wrote the fact; its URL."""
    folder = tmp_path_factory.mktemp("guarded")
    tokens = folder / "tokens.json"
    grants = [
        {"name": "hook", "token": TOKEN, "scopes": ["project:demo"]},
        {"name": "writer", "token": WRITER, "scopes": ["project:demo"], "write": True},
    ]
    tokens.write_text(json.dumps({"tokens": grants}))
    tokens.chmod(0o600)
    with satchel_serve(folder / "agent.db", "--token-file", str(tokens), "--timeout", "5") as url:
        remember(url, "project:demo", BACKUPS, token=WRITER)
        yield url


# ------------------------------------------------------------------ with the service


@pytest.mark.parametrize("host", HOSTS)
def test_the_hook_injects_the_pack_prepared_for_the_prompt(host: str, service: str) -> None:
    """The prompt's pack, from the project's scope, is the additional context."""
    event = prompt_event(host, QUESTION, session_id=session(), cwd=PROJECT)
    run = run_hook(host, event, SATCHEL_URL=service)
    assert run.code == 0
    assert run.stderr == ""
    assert run.context is not None
    assert "BEGIN_SATCHEL_CONTEXT_V2" in run.context
    assert BACKUPS in run.context
    assert KESTREL not in run.context


@pytest.mark.parametrize("host", HOSTS)
def test_the_session_id_reaches_the_service(host: str, service: str) -> None:
    """With --dedup-turns the service holds back what a session was given: the same
    session's second prompt gets nothing new, another session gets the fact again."""
    first, other = session(), session()

    def ask(session_id: str) -> str | None:
        run = run_hook(host, prompt_event(host, QUESTION, session_id=session_id, cwd=PROJECT),
                       SATCHEL_URL=service)  # fmt: skip
        assert run.code == 0
        return run.context

    assert BACKUPS in (ask(first) or "")
    assert ask(first) is None
    assert BACKUPS in (ask(other) or "")


@pytest.mark.parametrize("host", HOSTS)
def test_a_session_given_everything_already_is_told_so(host: str, service: str) -> None:
    """The same session's second prompt gets an empty pack: nothing on stdout, and the
    note on stderr says the session may have been given it already."""
    event = prompt_event(host, QUESTION, session_id=session(), cwd=PROJECT)
    assert run_hook(host, event, SATCHEL_URL=service).context is not None
    again = run_hook(host, event, SATCHEL_URL=service)
    assert (again.code, again.stdout) == (0, "")
    assert again.stderr == (
        f"satchel {host.replace('_', '-')} hook: no context: the pack is empty: nothing in"
        " project:demo is relevant to the prompt, or this session was given all of it in its"
        " last turns\n"
    )


@pytest.mark.parametrize(
    ("host", "cwd", "env", "found"),
    [
        ("claude_code", PROJECT, {}, True),
        ("claude_code", f"{PROJECT}/src", {"CLAUDE_PROJECT_DIR": PROJECT}, True),
        ("claude_code", f"{PROJECT}/src", {}, False),
        ("codex", f"{PROJECT}/", {}, True),
        ("codex", f"{PROJECT}/src", {"CLAUDE_PROJECT_DIR": PROJECT}, False),
    ],
    ids=["claude-cwd", "claude-project-dir", "claude-subdir", "codex-cwd", "codex-subdir"],
)
def test_the_default_scope_is_named_after_the_project(
    host: str, cwd: str, env: Mapping[str, str], found: bool, service: str
) -> None:
    """``project:<directory name>``: Claude Code's project directory when it names one,
    else the event's cwd (Codex names none, so a sub-directory is another scope, empty)."""
    event = prompt_event(host, QUESTION, session_id=session(), cwd=cwd)
    run = run_hook(host, event, SATCHEL_URL=service, **env)
    assert run.code == 0
    assert (BACKUPS in (run.context or "")) is found
    assert ("nothing in project:src is relevant" in run.stderr) is not found


@pytest.mark.parametrize("host", HOSTS)
def test_satchel_scope_overrides_the_default(host: str, service: str) -> None:
    """SATCHEL_SCOPE names the scope whatever the directory."""
    event = prompt_event(host, "which port does Kestrel staging use?", session_id=session(),
                         cwd=PROJECT)  # fmt: skip
    run = run_hook(host, event, SATCHEL_URL=service, SATCHEL_SCOPE="project:other")
    assert run.context is not None
    assert KESTREL in run.context
    assert BACKUPS not in run.context


@pytest.mark.parametrize("host", HOSTS)
def test_an_empty_pack_injects_nothing_and_says_why(host: str, service: str) -> None:
    """Nothing relevant in the scope: no output, exit 0, and one line on stderr saying
    the pack was empty (a hook run by hand otherwise prints nothing at all)."""
    event = prompt_event(host, QUESTION, session_id=session(), cwd="/home/dev/empty")
    run = run_hook(host, event, SATCHEL_URL=service)
    assert (run.code, run.stdout) == (0, "")
    assert "no context: the pack is empty: nothing in project:empty is relevant" in run.stderr
    assert run.stderr.count("\n") == 1


@pytest.mark.parametrize("host", HOSTS)
def test_a_budget_the_service_refuses_names_the_field_and_the_setting(
    host: str, service: str
) -> None:
    """SATCHEL_MAX_BYTES=100: the service's 422 reaches stderr with the field it named,
    the setting that chose it and the service's message."""
    event = prompt_event(host, QUESTION, session_id=session(), cwd=PROJECT)
    run = run_hook(host, event, SATCHEL_URL=service, SATCHEL_MAX_BYTES="100")
    assert (run.code, run.stdout) == (0, "")
    assert run.stderr == (
        f"satchel {host.replace('_', '-')} hook: no context: /v1/context/deadline answered 422"
        " (invalid_request) on field max_bytes (set by SATCHEL_MAX_BYTES):"
        " max_bytes must be in 512..32768\n"
    )


@pytest.mark.parametrize("host", HOSTS)
def test_a_hook_copied_alone_runs(host: str, service: str, tmp_path: Path) -> None:
    """The hook file, copied into an empty directory without anything beside it, injects
    the pack: it imports nothing but the standard library."""
    copy = tmp_path / "hooks" / f"{host}.py"
    copy.parent.mkdir()
    shutil.copy(HOOKS / f"{host}.py", copy)
    event = prompt_event(host, QUESTION, session_id=session(), cwd=PROJECT)
    run = run_script(copy, event, SATCHEL_URL=service)
    assert (run.code, run.stderr) == (0, "")
    assert BACKUPS in (run.context or "")
    assert sorted(path.name for path in copy.parent.iterdir()) == [f"{host}.py"]


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize(
    ("token", "refusal"),
    [(TOKEN, None), (None, "401 (unauthorized)"), ("x" * 26, "401 (unauthorized)")],
    ids=["token", "no-token", "wrong-token"],
)
def test_a_bearer_token_opens_a_guarded_service(
    host: str, token: str | None, refusal: str | None, guarded: str
) -> None:
    """SATCHEL_TOKEN is sent as a bearer token; without the right one the service refuses
    and the prompt goes on without context."""
    env = {"SATCHEL_URL": guarded} | ({} if token is None else {"SATCHEL_TOKEN": token})
    run = run_hook(host, prompt_event(host, QUESTION, session_id=session(), cwd=PROJECT), **env)
    assert run.code == 0
    if refusal is None:
        assert BACKUPS in (run.context or "")
        assert run.stderr == ""
    else:
        assert run.stdout == ""
        assert refusal in run.stderr


@pytest.mark.parametrize("host", HOSTS)
def test_a_scope_the_token_may_not_read_injects_nothing(host: str, guarded: str) -> None:
    """A 403 for another scope is a refusal like any other."""
    event = prompt_event(host, QUESTION, session_id=session(), cwd="/home/dev/secret")
    run = run_hook(host, event, SATCHEL_URL=guarded, SATCHEL_TOKEN=TOKEN)
    assert (run.code, run.stdout) == (0, "")
    assert "403 (forbidden)" in run.stderr


# ------------------------------------------------------------ against a stub service


def free_port() -> int:
    """A loopback port nothing listens on (it was free a moment ago)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.mark.parametrize("host", HOSTS)
def test_no_service_means_no_context_at_once(host: str) -> None:
    """A refused connection: nothing on stdout, a note on stderr, exit 0, no waiting."""
    event = prompt_event(host, QUESTION, session_id="s", cwd=PROJECT)
    run = run_hook(host, event, SATCHEL_URL=f"http://127.0.0.1:{free_port()}")
    assert (run.code, run.stdout) == (0, "")
    assert "cannot reach" in run.stderr
    assert run.stderr.count("\n") == 1
    assert run.seconds < 5


@pytest.mark.parametrize(
    ("host", "deadline", "prepare", "env", "expected"),
    [
        ("claude_code", deadline_of(0.3), HANG, {}, 0.3),
        ("codex", deadline_of(0.3), HANG, {}, 0.3),
        ("codex", deadline_of(None), HANG, {"SATCHEL_MAX_WAIT": "0.6"}, 0.6),
        ("claude_code", deadline_of(0.3), TRICKLE, {}, 0.3),
    ],
    ids=["claude-deadline", "codex-deadline", "unbounded", "trickle"],
)
def test_a_prepare_that_does_not_answer_in_time_is_abandoned_at_its_deadline(
    host: str, deadline: Answer, prepare: Answer, env: Mapping[str, str], expected: float
) -> None:
    """The hook waits for the prepare exactly the deadline the service gave (or
    SATCHEL_MAX_WAIT when it gave none), then goes on without context: the stub sees the
    hook hang up after that long, the two settings give different waits, and a body
    trickling in (no single read ever waits long) is cut off all the same."""
    with StubService({DEADLINE: deadline, PREPARE: prepare}) as stub:
        event = prompt_event(host, QUESTION, session_id="s", cwd=PROJECT)
        run = run_hook(host, event, SATCHEL_URL=stub.url, **env)
        waited = stub.waited(PREPARE)
    assert (run.code, run.stdout) == (0, "")
    assert f"did not answer within {expected:g} s" in run.stderr
    assert expected - 0.1 <= waited < expected + 1.5
    assert run.seconds < 5


def test_a_deadline_that_never_comes_is_abandoned_after_a_second() -> None:
    """The deadline question itself waits at most 1 s; the prepare is never asked."""
    with StubService({DEADLINE: HANG, PREPARE: READY}) as stub:
        run = run_hook("codex", prompt_event("codex", QUESTION, session_id="s", cwd=PROJECT),
                       SATCHEL_URL=stub.url)  # fmt: skip
        waited = stub.waited(DEADLINE)
    assert (run.code, run.stdout) == (0, "")
    assert "did not answer within 1 s" in run.stderr
    assert 0.9 <= waited < 2.5
    assert [path for path, _ in stub.requests] == [DEADLINE]
