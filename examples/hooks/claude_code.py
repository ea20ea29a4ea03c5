#!/usr/bin/env python3
"""A Claude Code ``UserPromptSubmit`` hook: a satchel pack for every prompt.

Claude Code runs the hook before the model sees a prompt, with the event as JSON on
stdin::

    {"session_id": "...", "transcript_path": "...", "cwd": "/home/dev/web",
     "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": "..."}

The hook asks the satchel service (``satchel serve``) for a pack for ``prompt`` in the
project's scope, sending ``session_id`` so that, with ``satchel serve --dedup-turns N``,
what this session was just given is not given again. It prints the pack as the
event's additional context, which Claude Code adds to what the model sees::

    {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "..."}}

With nothing relevant, or on any failure or timeout, it prints nothing and exits 0:
the prompt goes on without context (a failure writes one line on stderr saying why).
The default scope is ``project:<name of $CLAUDE_PROJECT_DIR>`` (the directory Claude
Code was started in), else of the event's ``cwd``; ``SATCHEL_SCOPE`` overrides it.
``_satchel_client.py`` describes every variable and the timeouts; ``examples/README.md``
shows the ``.claude/settings.json`` entry. Standard library only.
"""

from __future__ import annotations

import sys

from _satchel_client import Host, run

CLAUDE_CODE = Host(name="claude-code", project_dir_variable="CLAUDE_PROJECT_DIR")

if __name__ == "__main__":
    sys.exit(run(CLAUDE_CODE))
