"""Copy the hook client (``examples/hooks/_satchel_client.py``) into each agent hook.

A hook is copied into a project or a home directory on its own, so each one holds the
whole client, between two marker comments; the client's docstring becomes comments
there. Edit ``_satchel_client.py``, then run::

    python scripts/sync_hooks.py           # rewrite the hooks
    python scripts/sync_hooks.py --check   # exit 1 if a hook's copy is out of date

``tests/examples/test_hook_files.py`` fails while a copy differs from the client.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

HOOKS = Path(__file__).resolve().parent.parent / "examples" / "hooks"
CLIENT = HOOKS / "_satchel_client.py"
#: The hooks that carry a copy of the client.
HOOK_FILES = (HOOKS / "claude_code.py", HOOKS / "codex.py")
BEGIN = "# >>> satchel hook client: copied from _satchel_client.py by scripts/sync_hooks.py"
END = "# <<< the satchel hook client"
FUTURE = "from __future__ import annotations\n"


def client_block(client: str) -> str:
    """The client as a hook holds it: the markers around its docstring, as comments, and
    its code, less the ``__future__`` import the hook makes itself."""
    module = ast.parse(client)
    docstring = ast.get_docstring(module, clean=True) or ""
    first = module.body[1] if ast.get_docstring(module) else module.body[0]
    code = "".join(client.splitlines(keepends=True)[first.lineno - 1 :])
    if not code.startswith(FUTURE):
        raise ValueError(f"{CLIENT.name} must start its code with {FUTURE.strip()!r}")
    comments = "".join(f"# {line}".rstrip() + "\n" for line in docstring.splitlines())
    return f"{BEGIN}\n{comments}{code.removeprefix(FUTURE).lstrip()}\n\n{END}\n"


def synced(hook: str, client: str) -> str:
    """``hook`` with the copy between its markers replaced by ``client``'s block."""
    start, end = hook.find(BEGIN), hook.find(END)
    if start < 0 or end < start:
        raise ValueError("a hook must hold the client's two marker comments, in order")
    return hook[:start] + client_block(client) + hook[end + len(END) + 1 :]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale copies")
    args = parser.parse_args()
    client = CLIENT.read_text(encoding="utf-8")
    stale = []
    for path in HOOK_FILES:
        hook = path.read_text(encoding="utf-8")
        fresh = synced(hook, client)
        if fresh != hook:
            stale.append(path.name)
            if not args.check:
                path.write_text(fresh, encoding="utf-8")
    verb = "out of date" if args.check else "rewritten"
    print(f"{verb}: {', '.join(stale)}" if stale else "every hook's copy is current")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
