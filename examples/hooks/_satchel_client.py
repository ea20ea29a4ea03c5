"""The satchel hook client: read the host's prompt event, ask a satchel service for a
context pack, print it as the host's additional context.

Standard library only (``urllib.request``), so a hook runs with any ``python3`` and
without satchel installed. A hook must never hold up or break the agent's prompt: every
way to go without context (no service, a refusal, a timeout, an answer it cannot read,
an empty pack, a bug here) ends the same way: nothing on stdout, one line on stderr
saying why, exit code 0. The prompt then goes on without context.

Timeouts: the hook first asks ``POST /v1/context/deadline`` (the same body as the
prepare) how long the prepare may take, waiting at most :data:`DEADLINE_PROBE_SECONDS`;
it then waits for ``POST /v1/context/prepare`` exactly that long in all (connecting,
sending, the service's work, reading), or ``SATCHEL_MAX_WAIT`` seconds when the service
sets no deadline (``null``). ``satchel serve --timeout SECONDS`` bounds the deadline.

Configuration (environment variables):

- ``SATCHEL_URL``: the service (default ``http://127.0.0.1:8765``, ``satchel serve``'s own);
  reached directly, never through a proxy, so the token goes nowhere else.
- ``SATCHEL_TOKEN``: a bearer token, for a service started with ``--token-file``.
- ``SATCHEL_SCOPE``: the scope to read (default ``project:<name of the project directory>``,
  which each hook's docstring defines).
- ``SATCHEL_MAX_BYTES``: the pack's byte budget, 512..32768 (default 6000).
- ``SATCHEL_MAX_WAIT``: seconds to wait for a prepare the service sets no deadline for
  (default 10).

Each hook (``claude_code.py``, ``codex.py``) holds a copy of this client between two
marker comments, so that it runs as one file; ``examples/hooks/_satchel_client.py`` is
the original, and ``python scripts/sync_hooks.py`` copies it into the hooks.
"""

from __future__ import annotations

import http.client
import json
import math
import os
import sys
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, TextIO

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

DEFAULT_URL: Final = "http://127.0.0.1:8765"
DEFAULT_MAX_BYTES: Final = 6000
DEFAULT_MAX_WAIT: Final = 10.0
#: How long the hook waits for the deadline's answer.
DEADLINE_PROBE_SECONDS: Final = 1.0
#: A prepare's ``query`` is at most this many characters: a longer prompt is cut.
MAX_QUERY_CHARS: Final = 8192
#: The largest answer read (a pack is at most 32768 bytes, escaped in JSON).
MAX_ANSWER_BYTES: Final = 1 << 20
#: The event both hosts run the hook for; the output names it again.
EVENT: Final = "UserPromptSubmit"
#: The request's fields a setting chooses: a refusal naming one names the setting too.
SETTING_OF_FIELD: Final = {"max_bytes": "SATCHEL_MAX_BYTES", "scope_id": "SATCHEL_SCOPE"}
#: The longest message of the service's quoted in the note.
MAX_MESSAGE_CHARS: Final = 200


class NoContextError(Exception):
    """Why this prompt goes without context (the one line the hook writes on stderr)."""


@dataclass(frozen=True)
class Host:
    """What differs between agent hosts: a name for the stderr note, and the variable
    (if any) the host sets to the project's root, preferred over the event's ``cwd``
    (which follows the agent's ``cd``) when deriving the default scope."""

    name: str
    project_dir_variable: str | None = None


@dataclass(frozen=True)
class PromptEvent:
    """The fields of a ``UserPromptSubmit`` event the hook uses (both hosts send them)."""

    prompt: str
    session_id: str | None
    cwd: str

    @classmethod
    def from_json(cls, text: str) -> PromptEvent:
        try:
            event = json.loads(text)
        except ValueError as exc:
            raise NoContextError("the hook's input is not JSON") from exc
        if not isinstance(event, dict) or not isinstance(event.get("prompt"), str):
            raise NoContextError("the hook's input has no prompt")
        session = event.get("session_id")
        cwd = event.get("cwd")
        return cls(
            prompt=event["prompt"],
            session_id=session if isinstance(session, str) and session else None,
            cwd=cwd if isinstance(cwd, str) and cwd else os.getcwd(),
        )


@dataclass(frozen=True)
class Settings:
    """The service and the request, from the environment."""

    url: str
    token: str | None
    scope: str
    max_bytes: int
    max_wait: float

    @classmethod
    def from_env(cls, env: Mapping[str, str], host: Host, cwd: str) -> Settings:
        project = cwd
        if host.project_dir_variable and env.get(host.project_dir_variable):
            project = env[host.project_dir_variable]
        name = os.path.basename(os.path.normpath(project)) or "root"
        url = env.get("SATCHEL_URL") or DEFAULT_URL
        if not url.startswith(("http://", "https://")):
            raise NoContextError(f"SATCHEL_URL is not an http:// or https:// URL: {url!r}")
        return cls(
            url=url.rstrip("/"),
            token=env.get("SATCHEL_TOKEN") or None,
            scope=env.get("SATCHEL_SCOPE") or f"project:{name}",
            max_bytes=int(_positive(env, "SATCHEL_MAX_BYTES", DEFAULT_MAX_BYTES, int)),
            max_wait=_positive(env, "SATCHEL_MAX_WAIT", DEFAULT_MAX_WAIT, float),
        )


def _positive(
    env: Mapping[str, str], name: str, default: float, kind: Callable[[str], float]
) -> float:
    spelled = env.get(name)
    if not spelled:
        return default
    try:
        value = kind(spelled)
    except ValueError:
        value = -1
    if not 0 < value < math.inf:
        raise NoContextError(f"{name} is not a positive {kind.__name__}: {spelled!r}")
    return value


def run(
    host: Host,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    """The whole hook: the pack, if any, on ``stdout``; the exit code is always 0.

    The streams and the environment are the process's unless given.
    """
    try:
        event = PromptEvent.from_json((stdin or sys.stdin).read())
        settings = Settings.from_env(os.environ if env is None else env, host, event.cwd)
        context = prepare_context(event, settings)
    except NoContextError as exc:
        _note(host, str(exc), stderr or sys.stderr)
        return 0
    except Exception as exc:  # a bug here must not cost the user their prompt either
        _note(host, f"unexpected {type(exc).__name__}: {exc}", stderr or sys.stderr)
        return 0
    output = {"hookSpecificOutput": {"hookEventName": EVENT, "additionalContext": context}}
    (stdout or sys.stdout).write(json.dumps(output))
    return 0


def _note(host: Host, reason: str, stderr: TextIO) -> None:
    print(f"satchel {host.name} hook: no context: {reason}", file=stderr)


def prepare_context(event: PromptEvent, settings: Settings) -> str:
    """The pack for the event's prompt.

    Raises:
        NoContextError: the prompt is blank, the pack is empty, or the service could not
            be asked, refused, or did not answer in time.
    """
    if not event.prompt.strip():
        raise NoContextError("the prompt is blank")
    body: dict[str, Any] = {
        "scope_id": settings.scope,
        "query": event.prompt[:MAX_QUERY_CHARS],
        "max_bytes": settings.max_bytes,
    }
    if event.session_id is not None:  # satchel holds back what this session was given
        body["session_id"] = event.session_id
    seconds = _deadline(_post(settings, "/v1/context/deadline", body, DEADLINE_PROBE_SECONDS))
    pack = _post(settings, "/v1/context/prepare", body, seconds or settings.max_wait)
    if pack.get("status") == "empty":
        raise NoContextError(_empty(settings.scope, event.session_id))
    content = pack.get("content")
    if pack.get("status") != "ready" or not isinstance(content, str):
        raise NoContextError(f"the pack is malformed: {_shown(pack)}")
    return content


def _empty(scope: str, session_id: str | None) -> str:
    """Why a pack is empty: nothing relevant fits, or (with ``satchel serve
    --dedup-turns``) the session was given all of it in its last turns."""
    reason = f"the pack is empty: nothing in {scope} is relevant to the prompt"
    if session_id is None:
        return reason
    return f"{reason}, or this session was given all of it in its last turns"


def _deadline(answer: dict[str, Any]) -> float | None:
    """The ``deadline_seconds`` of the deadline's answer: a positive number, or None
    when the service sets no deadline."""
    if "deadline_seconds" not in answer:
        raise NoContextError(f"the deadline is malformed: {_shown(answer)}")
    seconds = answer["deadline_seconds"]
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise NoContextError(f"the deadline is malformed: {_shown(answer)}")
    if not 0 < seconds < math.inf:
        raise NoContextError(f"the deadline is malformed: {_shown(answer)}")
    return float(seconds)


def _shown(answer: object) -> str:
    text = json.dumps(answer)
    return text if len(text) <= 80 else text[:77] + "..."


def _post(settings: Settings, path: str, body: object, seconds: float) -> dict[str, Any]:
    """POST ``body`` to the service; its JSON object answer, within ``seconds`` in all."""
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if settings.token is not None:
        headers["Authorization"] = f"Bearer {settings.token}"
    request = urllib.request.Request(
        settings.url + path, data=json.dumps(body).encode(), headers=headers, method="POST"
    )
    # No proxy (HTTP_PROXY and the like): the token goes to SATCHEL_URL and nowhere else.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def exchange() -> bytes:
        with opener.open(request, timeout=seconds) as response:
            answer: bytes = response.read(MAX_ANSWER_BYTES)
            return answer

    try:
        raw = _within(seconds, exchange)
    except urllib.error.HTTPError as exc:
        raise NoContextError(f"{path} answered {exc.code}{_refusal(exc)}") from None
    except urllib.error.URLError as exc:
        raise NoContextError(f"cannot reach {settings.url}: {exc.reason}") from None
    except TimeoutError:
        raise NoContextError(f"{path} did not answer within {seconds:g} s") from None
    except (OSError, http.client.HTTPException) as exc:
        raise NoContextError(f"{path} failed: {type(exc).__name__}: {exc}") from None
    try:
        answer = json.loads(raw)
    except ValueError:
        raise NoContextError(f"{path} answered something that is not JSON") from None
    if not isinstance(answer, dict):
        raise NoContextError(f"{path} answered JSON that is not an object")
    return answer


def _refusal(exc: urllib.error.HTTPError) -> str:
    """What a satchel error answer (``{"error": {"type", "field", "message"}}``) says:
    `` (TYPE) on field FIELD (set by SETTING): MESSAGE``, each part only when the answer
    has it; ``""`` for any other answer (its status says enough)."""
    try:
        error = json.loads(exc.read(4096))["error"]
    except Exception:
        return ""
    if not isinstance(error, dict):
        return ""
    kind, field, message = error.get("type"), error.get("field"), error.get("message")
    said = f" ({kind})" if isinstance(kind, str) else ""
    if isinstance(field, str):
        setting = SETTING_OF_FIELD.get(field)
        said += f" on field {field}" + (f" (set by {setting})" if setting else "")
    if isinstance(message, str) and message.strip():
        said += ": " + " ".join(message.split())[:MAX_MESSAGE_CHARS]
    return said


def _within(seconds: float, call: Callable[[], bytes]) -> bytes:
    """``call()``'s result, or TimeoutError once ``seconds`` have passed.

    A socket timeout bounds each read, not the exchange: a service that trickles bytes
    could hold the prompt far longer. So the exchange runs on a daemon thread, which is
    abandoned (and dies with the process) if it overruns.
    """
    outcome: list[bytes | BaseException] = []

    def attempt() -> None:
        try:
            outcome.append(call())
        except BaseException as exc:
            outcome.append(exc)

    worker = threading.Thread(target=attempt, name="satchel-request", daemon=True)
    worker.start()
    worker.join(seconds)
    if not outcome:
        raise TimeoutError(f"no answer within {seconds:g} s")
    (result,) = outcome
    if isinstance(result, BaseException):
        raise result
    return result
