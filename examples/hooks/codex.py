#!/usr/bin/env python3
"""An OpenAI Codex CLI ``UserPromptSubmit`` hook: a satchel pack for every prompt.

Targets the hooks engine of Codex CLI 0.116 and later (``hooks.json``, the
``UserPromptSubmit`` event; ``[features] codex_hooks = true`` in ``config.toml`` before
hooks were on by default), whose input and output schemas are published in the Codex
repository (``codex-rs/hooks/schema/generated/user-prompt-submit.command.*.json``).
Codex's older ``notify`` program runs only after a turn and cannot add context, so it
is of no use here.

Codex runs the hook before the model sees a prompt, with the event as JSON on stdin::

    {"session_id": "...", "turn_id": "...", "transcript_path": null, "cwd": "/home/dev/web",
     "hook_event_name": "UserPromptSubmit", "model": "...",
     "permission_mode": "default", "prompt": "..."}

The hook asks the satchel service (``satchel serve``) for a pack for ``prompt`` in the
project's scope, sending ``session_id`` (Codex's thread id, kept across ``resume``) so
that, with ``satchel serve --dedup-turns N``, what this session was just given is not
given again. It prints the pack as the turn's additional context::

    {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "..."}}

and nothing else: Codex refuses an output with fields its schema does not name. With
nothing relevant, or on any failure or timeout, it prints nothing (which Codex reads as
"no decision, no context") and exits 0, so the prompt goes on without context. The
default scope is ``project:<name of the event's cwd>``; ``SATCHEL_SCOPE`` overrides it.
``_satchel_client.py`` describes every variable and the timeouts; ``examples/README.md``
shows the ``hooks.json`` entry. Standard library only.
"""

from __future__ import annotations

import sys

from _satchel_client import Host, run

CODEX = Host(name="codex")

if __name__ == "__main__":
    sys.exit(run(CODEX))
