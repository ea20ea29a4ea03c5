"""The agent hooks in ``examples/hooks`` run as their hosts run them, and the services
they call: a real ``satchel serve`` subprocess, or a stub whose every answer a test picks."""

from __future__ import annotations

import contextlib
import functools
import http.server
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import claude_code
import codex
import httpx

from .._processes import STARTUP_SECONDS
from ..http.test_serve import start_line, wait_until_healthy
from . import EXAMPLES

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from pathlib import Path
    from types import ModuleType

HOOKS: Final = EXAMPLES / "hooks"
#: What each host adds to the fields both send (their own hook documentation and,
#: for Codex, its published input schema).
HOST_FIELDS: Final[Mapping[str, Mapping[str, Any]]] = {
    "claude_code": {"transcript_path": "/home/dev/.claude/projects/demo/s.jsonl"},
    "codex": {"transcript_path": None, "turn_id": "turn-1", "model": "gpt-5-codex"},
}
HOSTS: Final = tuple(HOST_FIELDS)
#: Each hook script, imported: its own copy of the client, for running it in process.
HOOK_MODULES: Final[Mapping[str, ModuleType]] = {"claude_code": claude_code, "codex": codex}
#: Each hook script's host description.
HOST_OBJECTS: Final[Mapping[str, Any]] = {
    "claude_code": claude_code.CLAUDE_CODE,
    "codex": codex.CODEX,
}
#: Variables that configure a hook: none leaks in from the environment running the tests.
HOOK_VARIABLES: Final = (
    "SATCHEL_URL", "SATCHEL_TOKEN", "SATCHEL_SCOPE", "SATCHEL_MAX_BYTES", "SATCHEL_MAX_WAIT",
    "CLAUDE_PROJECT_DIR",
)  # fmt: skip


def prompt_event(host: str, prompt: str, *, session_id: str, cwd: str) -> dict[str, Any]:
    """A ``UserPromptSubmit`` event as ``host`` sends it on the hook's stdin."""
    return {
        "session_id": session_id,
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
        **HOST_FIELDS[host],
    }


@dataclass(frozen=True)
class HookRun:
    """What one run of a hook did."""

    code: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def context(self) -> str | None:
        """The context the hook added (None: it printed nothing), once the output is
        checked to be exactly what both hosts' schemas accept."""
        if self.stdout == "":
            return None
        output = json.loads(self.stdout)
        assert set(output) == {"hookSpecificOutput"}, output
        specific = output["hookSpecificOutput"]
        assert set(specific) == {"hookEventName", "additionalContext"}, specific
        assert specific["hookEventName"] == "UserPromptSubmit"
        context: str = specific["additionalContext"]
        return context


def run_hook(host: str, stdin: Mapping[str, Any] | str, **env: str) -> HookRun:
    """Run ``examples/hooks/<host>.py`` with ``stdin`` (an event, or raw text) and the
    variables ``env``."""
    return run_script(HOOKS / f"{host}.py", stdin, **env)


def run_script(script: Path, stdin: Mapping[str, Any] | str, **env: str) -> HookRun:
    """Run the hook ``script`` as its host does, on a Python without site-packages: a
    hook needs none."""
    inherited = {k: v for k, v in os.environ.items() if k not in HOOK_VARIABLES}
    text = stdin if isinstance(stdin, str) else json.dumps(stdin)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-S", "-s", "-E", str(script)],
        input=text, capture_output=True, text=True, timeout=60, env=inherited | env,
    )  # fmt: skip
    return HookRun(done.returncode, done.stdout, done.stderr, time.monotonic() - started)


@contextlib.contextmanager
def satchel_serve(db: Path, *options: str) -> Iterator[str]:
    """A ``satchel serve`` subprocess over ``db`` on a free loopback port, answering; its
    URL. Stopped with SIGTERM on exit."""
    command = [
        sys.executable, "-m", "satchel", "serve", "--create", "--db", str(db),
        "--embedder", "hashing",
        "--port", "0", *options,
    ]  # fmt: skip
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        url = start_line(server).split(" at ")[1].split(" ")[0]
        with httpx.Client(base_url=url, timeout=30) as client:
            wait_until_healthy(client, server)
        yield url
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.communicate(timeout=STARTUP_SECONDS)
        finally:
            if server.poll() is None:
                server.kill()
                server.communicate()


def remember(url: str, scope: str, *texts: str, token: str | None = None) -> None:
    """Add ``texts`` to ``scope`` through the service."""
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    entries = [{"text": text} for text in texts]
    response = httpx.post(
        f"{url}/v1/memories", json={"scope_id": scope, "entries": entries}, headers=headers
    )
    assert response.status_code == 200, response.text


#: A stub's answer: a status and a body; ``HANG`` (never answer); or ``TRICKLE`` (a 200
#: whose body comes one byte every 50 ms, so that no single read ever waits long).
Answer = tuple[int, bytes] | str
HANG: Final = "hang"
TRICKLE: Final = "trickle"
DEADLINE: Final = "/v1/context/deadline"
PREPARE: Final = "/v1/context/prepare"
READY: Final = (200, b'{"status": "ready", "content": "PACK", "content_bytes": 4}')
EMPTY: Final = (200, b'{"status": "empty", "content": null, "content_bytes": 0}')


def deadline_of(seconds: float | None) -> Answer:
    """The deadline's answer: ``seconds``, or unbounded (None)."""
    return 200, json.dumps({"deadline_seconds": seconds}).encode()


def satchel_error(
    status: int, kind: str, *, field: str | None = None, message: str | None = None
) -> Answer:
    """An error answer as the service spells one (its message the type, unless given)."""
    error = {"type": kind, "message": message or kind, "field": field}
    return status, json.dumps({"error": error}).encode()


class StubService:
    """A loopback HTTP server standing in for the satchel service: each path answers what
    the test chose (404 when it chose nothing), or never answers and records how long
    the client waited before it hung up."""

    def __init__(self, answers: Mapping[str, Answer]) -> None:
        self.answers = dict(answers)
        self.requests: list[tuple[str, Any]] = []
        self._waited: dict[str, float] = {}
        self._hung_up = threading.Condition()
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        host, port = self._server.server_address[:2]
        self.url = f"http://{host!s}:{port}"

    def __enter__(self) -> StubService:
        serve = functools.partial(self._server.serve_forever, poll_interval=0.01)
        threading.Thread(target=serve, daemon=True).start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def waited(self, path: str) -> float:
        """Seconds the client held a request to ``path`` open before it hung up."""
        with self._hung_up:
            assert self._hung_up.wait_for(lambda: path in self._waited, timeout=30), path
            return self._waited[path]

    def record_hang_up(self, path: str, seconds: float) -> None:
        with self._hung_up:
            self._waited[path] = seconds
            self._hung_up.notify_all()


def _handler(stub: StubService) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            stub.requests.append((self.path, json.loads(body)))
            answer = stub.answers.get(self.path, (404, b'{"error": {"type": "not_found"}}'))
            if answer == HANG:
                self._hang()
                return
            if answer == TRICKLE:
                self._trickle()
                return
            assert isinstance(answer, tuple)
            status, content = answer
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

        def _hang(self) -> None:
            started = time.monotonic()
            self.connection.settimeout(60)
            with contextlib.suppress(OSError):
                self.rfile.read(1)  # b"" once the client hangs up
            stub.record_hang_up(self.path, time.monotonic() - started)
            self.close_connection = True

        def _trickle(self) -> None:
            started = time.monotonic()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "1000")
            self.end_headers()
            with contextlib.suppress(OSError):  # until the client hangs up
                for _ in range(1000):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.05)
            stub.record_hang_up(self.path, time.monotonic() - started)
            self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: the tests read the stub's records instead

    return Handler


def run_in_process(host: str, stdin: Mapping[str, Any] | str, **env: str) -> HookRun:
    """What :func:`run_hook` does, in this process: the hook script's own copy of the
    client, with its host (faster, for the many ways to fail)."""
    text = stdin if isinstance(stdin, str) else json.dumps(stdin)
    stdout, stderr = io.StringIO(), io.StringIO()
    module = HOOK_MODULES[host]
    # These runs are about what the hook says, not how long it waits (run_hook's tests
    # time it): a stub answering late on a loaded machine must not read as a timeout.
    probe = getattr(module, "DEADLINE_PROBE_SECONDS")  # noqa: B009
    setattr(module, "DEADLINE_PROBE_SECONDS", 30.0)  # noqa: B010
    started = time.monotonic()
    try:
        code = module.run(
            HOST_OBJECTS[host], stdin=io.StringIO(text), stdout=stdout, stderr=stderr, env=env
        )
    finally:
        setattr(module, "DEADLINE_PROBE_SECONDS", probe)  # noqa: B010
    return HookRun(code, stdout.getvalue(), stderr.getvalue(), time.monotonic() - started)
