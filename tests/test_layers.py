"""The shape of the house: every import in src/satchel follows the layer rules.

Layers, bottom to top: the loop's turn; the vocabulary; embedders; the recall policy,
the Builder and the stores side by side; the orchestration; the runtime; the package's
public facade; the workload files and the OTLP setup side by side; the servers; the CLI.
A module imports its own package or a lower layer, never a sibling or a higher one
(type-checking imports count: an arrow is an arrow), and no chain of imports runs in a
circle. The pure layers import nothing that does I/O, runs tasks, traces or reads a
clock. Only the orchestration starts tasks, and a thread (or a task outside the
orchestration) starts only at a place listed in ``STARTS_ALLOWED``, with its reason.

Each module is read and parsed once per session (the checks share the parsed trees).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import Final, NamedTuple

import pytest

import satchel

SRC: Final = Path(satchel.__file__).parent

#: Each top-level part of the package and its layer; equal layers are siblings.
LAYER: Final = {
    "_loop": -1,
    "vocabulary": 0,
    "embedders": 1,
    "recall": 2,
    "builder": 2,
    "stores": 2,
    "orchestration": 3,
    "runtime": 4,
    "__init__": 5,
    "_workload": 6,
    "_otlp": 6,
    "_wire": 6,
    "_contract": 6,
    "http": 7,
    "mcp": 7,
    "client": 7,
    "integrations": 7,
    "cli": 8,
    "__main__": 9,
}
#: What the layers above the public facade may import besides their own package: the
#: public API, and the vocabulary's plain values (for the workload files, and the short
#: spellings of ids that the servers and the CLI accept as a pack writes them).
CLIENT_IMPORTS: Final = {
    "_workload": {"vocabulary"},
    "_otlp": {"__init__"},
    "_wire": {"__init__", "vocabulary"},
    # The wire contract reads each bound where satchel's validation defines it.
    "_contract": {"vocabulary", "recall"},
    "http": {"__init__", "embedders", "_otlp", "_wire", "_contract"},
    "mcp": {"__init__", "embedders", "_otlp", "_wire", "_contract"},
    # The service's client checks a prepare request as the Runtime does, before sending.
    "client": {"__init__", "vocabulary", "_wire"},
    # Adapters to other frameworks: the public API only, over a Runtime or a Client.
    "integrations": {"__init__"},
    "cli": {"__init__", "embedders", "_workload", "_otlp", "_wire", "http", "mcp"},
    "__main__": {"cli"},
}
#: Modules the pure layers may not import: I/O, tasks, threads, processes, tracing, clocks.
IMPURE: Final = {
    "anyio",
    "trio",
    "asyncio",
    "sqlite3",
    "opentelemetry",
    "time",
    "threading",
    "_thread",
    "concurrent",
    "multiprocessing",
    "subprocess",
}
PURE_PARTS: Final = {"recall", "builder"}


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES: Final = {module_name(path): path for path in sorted(SRC.rglob("*.py"))}


@functools.cache
def tree_of(name: str) -> ast.Module:
    """Module ``name`` parsed, once per session."""
    return ast.parse(MODULES[name].read_text(encoding="utf-8"), filename=str(MODULES[name]))


def imports_in(tree: ast.Module, name: str, is_package: bool) -> set[str]:
    """Every module the source ``tree`` of module ``name`` imports, absolute,
    type-checking imports included."""
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            for alias in node.names:
                # "from . import _x" imports the module _x; "from .x import y" imports x
                submodule = f"{target}.{alias.name}"
                found.add(submodule if submodule in MODULES else target)
    return found


@functools.cache
def imports_of(name: str) -> frozenset[str]:
    """Every module satchel's module ``name`` imports (see :func:`imports_in`)."""
    is_package = MODULES[name].name == "__init__.py"
    return frozenset(imports_in(tree_of(name), name, is_package))


def part_of(module: str) -> str | None:
    """The top-level part of satchel a module belongs to, None outside satchel."""
    parts = module.split(".")
    if parts[0] != "satchel":
        return None
    return parts[1] if len(parts) > 1 else "__init__"


#: Arrows that run up on purpose, and why: each is taken only when the name is first
#: used (a module ``__getattr__``; for the type checker, a TYPE_CHECKING import), so
#: importing the lower module never loads the higher one.
LAZY_ARROWS: Final = {
    # satchel.Client: the facade names the client, which sits above it (it speaks the
    # service's JSON) and needs httpx, an extra that ``import satchel`` must not need.
    ("satchel", "satchel.client"),
}


@functools.cache
def graph() -> dict[str, frozenset[str]]:
    """Module -> the satchel modules it imports (names that are not modules dropped;
    the lazy arrows left out)."""
    return {
        name: frozenset(
            target
            for target in imports_of(name)
            if target in MODULES and target != name and (name, target) not in LAZY_ARROWS
        )
        for name in MODULES
    }


def test_the_lazy_arrows_are_lazy() -> None:
    """Importing satchel loads no module a lazy arrow points at (nor httpx)."""
    import subprocess
    import sys

    targets = sorted({target for _, target in LAZY_ARROWS} | {"httpx"})
    probe = f"import sys, satchel; print(sorted(set({targets!r}) & set(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
    assert all(target in MODULES for _, target in LAZY_ARROWS)


def test_every_part_has_a_layer() -> None:
    """A new top-level module or package must be given its place in the layers."""
    assert {part_of(name) for name in MODULES} == set(LAYER)


def against_the_rules(name: str, targets: set[str] | frozenset[str]) -> list[str]:
    """The imports of module ``name`` that break the layer rules."""
    source = part_of(name)
    assert source is not None
    wrong = []
    for target in targets:
        part = part_of(target)
        assert part is not None
        if part == source:
            continue
        if source in CLIENT_IMPORTS:
            allowed = part in CLIENT_IMPORTS[source]
        else:
            allowed = LAYER[part] < LAYER[source]
        if not allowed:
            wrong.append(target)
    return sorted(wrong)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_never_run_up_or_sideways(name: str) -> None:
    """A module imports its own package, a lower layer, or (above the facade) only the
    public API it is allowed."""
    wrong = against_the_rules(name, graph()[name])
    assert not wrong, f"{name} imports {wrong} against the layer rules"


@pytest.mark.parametrize(
    ("name", "target"),
    [
        ("satchel.recall._gate", "satchel.builder._fitting"),  # a sibling
        ("satchel.vocabulary._limits", "satchel.orchestration._coordinator"),  # back up
        ("satchel.stores._open", "satchel.runtime._runtime"),  # back up two layers
        ("satchel.cli._commands", "satchel.vocabulary._families"),  # below the public API
        ("satchel._loop", "satchel.vocabulary._turns"),  # the bottom imports nothing
    ],
)
def test_the_rules_catch_a_wrong_arrow(name: str, target: str) -> None:
    """The checker flags sideways, upward and below-the-API imports (a pass means something)."""
    assert against_the_rules(name, {target}) == [target]


def cycles_in(edges: dict[str, set[str]] | dict[str, frozenset[str]]) -> list[list[str]]:
    """Every circle a depth-first walk of ``edges`` runs into."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(edges[node]):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    return cycles


def test_no_import_cycles() -> None:
    """No chain of imports between satchel's modules runs in a circle."""
    cycles = cycles_in(graph())
    assert not cycles, f"import cycles: {cycles}"


def test_the_cycle_check_sees_a_circle() -> None:
    """A three-module circle is found (so an empty result means something)."""
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles_in(edges) == [["a", "b", "c", "a"]]


@pytest.mark.parametrize("name", sorted(name for name in MODULES if part_of(name) in PURE_PARTS))
def test_pure_layers_do_no_io_and_run_no_tasks(name: str) -> None:
    """The recall policy and the Builder import nothing that does I/O, runs tasks,
    traces or reads a clock."""
    roots = {target.split(".")[0] for target in imports_of(name)}
    assert not roots & IMPURE, f"{name} imports {sorted(roots & IMPURE)}"


# Starting a task or a thread.
#
# What counts: anything that makes code run beside the caller, on the event loop (a
# task) or on another thread or process: opening a task group or nursery, start_soon,
# asyncio's gather, create_task, ensure_future and TaskGroup, a coroutine handed to
# another thread's loop, a system task; a thread, a timer, a thread or process pool,
# a process; and anyio's, trio's and asyncio's to_thread (the caller waits, but the
# work runs on a worker thread, beside the loop: what it touches must be thread-safe)
# and from_thread.run / blocking portals (a task started from a thread). A reference
# counts as a call (``run = anyio.to_thread.run_sync`` starts threads later); a type
# annotation or a TYPE_CHECKING import does not. Not flagged: a bare ``.start()`` (a
# thread is flagged where it is made, a task group where it is opened) and a pool's
# ``.submit()`` (the pool is flagged where it is made).

#: Names (as imported) whose use starts a task on the event loop.
TASK_STARTERS: Final = frozenset({
    "anyio.create_task_group",
    "trio.open_nursery",
    "trio.lowlevel.spawn_system_task",
    "asyncio.TaskGroup",
    "asyncio.gather",
    "asyncio.create_task",
    "asyncio.ensure_future",
    "asyncio.as_completed",
    "asyncio.wait",
})  # fmt: skip
#: Names whose use starts a thread or process, or a task from another thread.
THREAD_STARTERS: Final = frozenset({
    "threading.Thread",
    "threading.Timer",
    "_thread.start_new_thread",
    "_thread.start_new",
    "concurrent.futures.ThreadPoolExecutor",
    "concurrent.futures.ProcessPoolExecutor",
    "concurrent.futures.InterpreterPoolExecutor",
    "concurrent.futures.thread.ThreadPoolExecutor",
    "concurrent.futures.process.ProcessPoolExecutor",
    "multiprocessing.Process",
    "multiprocessing.Pool",
    "multiprocessing.pool.Pool",
    "multiprocessing.pool.ThreadPool",
    "asyncio.to_thread",
    "asyncio.run_coroutine_threadsafe",
    "anyio.to_thread.run_sync",
    "anyio.to_process.run_sync",
    "anyio.to_interpreter.run_sync",
    "anyio.from_thread.run",
    "anyio.from_thread.start_blocking_portal",
    "anyio.from_thread.BlockingPortal",
    "trio.to_thread.run_sync",
    "trio.from_thread.run",
})  # fmt: skip
#: Methods that start a task or a thread whatever they are called on.
TASK_METHODS: Final = frozenset({"start_soon", "create_task", "spawn_system_task"})
THREAD_METHODS: Final = frozenset({"run_in_executor"})


class Start(NamedTuple):
    """One place where a module starts a task or a thread."""

    #: The enclosing function or class (dotted), or ``<module>``.
    place: str
    #: What starts it: the name as imported (``threading.Thread``) or ``.method``.
    what: str
    line: int

    @property
    def is_task(self) -> bool:
        return self.what in TASK_STARTERS or self.what.removeprefix(".") in TASK_METHODS


class _StartFinder(ast.NodeVisitor):
    """Walks a module: each reference to a starter, with the place it is in."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}  # local name -> full dotted name
        self.places: list[str] = []
        self.found: list[Start] = []

    def _record(self, what: str, node: ast.expr) -> None:
        place = ".".join(self.places) or "<module>"
        self.found.append(Start(place, what, node.lineno))

    # Names in scope: imports anywhere in the module (inside functions too).
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self.aliases[alias.asname] = alias.name
            else:
                root = alias.name.split(".")[0]
                self.aliases[root] = root

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level == 0 and node.module:
            for alias in node.names:
                self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    # Places.
    def _in_place(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        if not isinstance(node, ast.ClassDef):
            for default in [*node.args.defaults, *node.args.kw_defaults]:
                if default is not None:
                    self.visit(default)
        else:
            for base in [*node.bases, *node.keywords]:
                self.visit(base)
        self.places.append(node.name)
        for statement in node.body:
            self.visit(statement)
        self.places.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _in_place

    # Annotations and type-checking imports start nothing.
    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.visit(node.target)
        if node.value is not None:
            self.visit(node.value)

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        checking = (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
            isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
        )
        if not checking:
            self.visit(test)
            for statement in node.body:
                self.visit(statement)
        for statement in node.orelse:
            self.visit(statement)

    # References.
    def _dotted(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self._dotted(node.value)
            return None if base is None else f"{base}.{node.attr}"
        return None

    def visit_Name(self, node: ast.Name) -> None:
        full = self.aliases.get(node.id)
        if full in TASK_STARTERS or full in THREAD_STARTERS:
            self._record(full, node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        full = self._dotted(node)
        if full in TASK_STARTERS or full in THREAD_STARTERS:
            self._record(full, node)
            return  # its parts are no starters of their own
        if node.attr in TASK_METHODS or node.attr in THREAD_METHODS:
            self._record(f".{node.attr}", node)
        self.visit(node.value)


def starts_in(tree: ast.Module) -> list[Start]:
    """Every place where the source ``tree`` starts a task or a thread, in order."""
    finder = _StartFinder()
    finder.visit(tree)
    return finder.found


@functools.cache
def starts_of(name: str) -> tuple[Start, ...]:
    return tuple(starts_in(tree_of(name)))


#: The places outside the orchestration that start a task or a thread, and (anywhere)
#: a thread: (module, place, what) -> why this one is right. A start not listed here
#: fails the test below, and so does an entry whose start is gone.
STARTS_ALLOWED: Final[dict[tuple[str, str, str], str]] = {
    (
        "satchel.http._inspector._pages",
        "Inspector.render",
        "anyio.to_thread.run_sync",
    ): "a page of a hundred records takes Jinja2 more than a millisecond to render: it "
    "renders on a worker thread so the service's loop keeps answering; the page awaits it",
    (
        "satchel.integrations.langgraph",
        "SatchelStore.batch",
        "anyio.from_thread.run",
    ): "LangGraph calls a store's sync methods from a worker thread (a sync node): they "
    "run the async batch on the store's event loop and wait for it there",
    (
        "satchel.embedders._offload",
        "embed_nearby",
        "anyio.to_thread.run_sync",
    ): "a long batch is embedded on a worker thread so the host's loop keeps running; "
    "the caller awaits the result",
    (
        "satchel.embedders._offload",
        "embed_checked",
        "anyio.to_thread.run_sync",
    ): "a large embedder output (thousands of vectors) is checked on a worker thread: "
    "on the loop a write of 36,187 notes held it 165-440 ms; the caller awaits it",
    (
        "satchel.embedders._sentence",
        "SentenceTransformerEmbedder.embed",
        "anyio.to_thread.run_sync",
    ): "the model's encode holds the CPU for a long time: it runs on a worker thread, "
    "limited by the embedder's own CapacityLimiter",
    (
        "satchel.stores._open",
        "_embedded_seekdb",
        "anyio.to_thread.run_sync",
    ): "starting an embedded seekdb engine blocks for seconds: it waits on a worker thread",
    (
        "satchel.stores._open",
        "StoreOpening._open",
        "anyio.to_thread.run_sync",
    ): "a reader's store must exist: its SQLite file's first bytes are read, blocking I/O",
    (
        "satchel.stores.sqlite._store",
        "SqliteStore.open",
        "anyio.to_thread.run_sync",
    ): "opening (and creating or migrating) the SQLite file is blocking I/O",
    (
        "satchel.stores._archive",
        "_in_thread",
        "anyio.to_thread.run_sync",
    ): "an archive's file is read and written through gzip, blocking I/O",
    (
        "satchel.stores.sqlite._connections",
        "Connections.read",
        "anyio.to_thread.run_sync",
    ): "sqlite3 reads block: each runs on a worker thread with a reader connection, "
    "as many at once as the store's read limiter allows",
    (
        "satchel.stores.sqlite._connections",
        "Connections.write",
        "anyio.to_thread.run_sync",
    ): "sqlite3 writes block: each runs on a worker thread with the one writer connection",
    (
        "satchel.stores.sqlite._scope_matrices",
        "ScopeMatrices.__init__",
        "concurrent.futures.ThreadPoolExecutor",
    ): "the store's own two threads: a large scope's vector product runs beside its "
    "full-text query (numpy releases the GIL)",
    (
        "satchel.stores.sqlite._scope_matrices",
        "ScopeMatrices._consider_index",
        "threading.Thread",
    ): "the store's one index-builder thread: an HNSW build takes seconds and must not "
    "hold up a search; searches use the exact matrix until it is done",
    (
        "satchel.stores.oceanbase._bridge",
        "LoopThread.__init__",
        "threading.Thread",
    ): "the OceanBase store's own asyncio loop thread: asyncmy runs on asyncio only, so "
    "the store runs it there whichever backend the host uses",
    (
        "satchel.stores.oceanbase._bridge",
        "LoopThread.run",
        "asyncio.run_coroutine_threadsafe",
    ): "each store call is one coroutine on the bridge's own loop (see LoopThread)",
    (
        "satchel.stores.oceanbase._bridge",
        "LoopThread.call",
        "asyncio.run_coroutine_threadsafe",
    ): "the blocking form of LoopThread.run, for a close outside any event loop",
    (
        "satchel.stores.oceanbase._store",
        "OceanBaseStore.retrieve.search_at",
        "asyncio.gather",
    ): "a search's full-text statement and its vector product over the scope's held "
    "vectors (in a worker thread) run at once; both tasks live on the store's own bridge "
    "loop (LoopThread), never on the host's loop, and end before the call returns",
    (
        "satchel.stores.oceanbase._store",
        "OceanBaseStore._load_later",
        ".create_task",
    ): "a large scope's vectors and texts read in the background on the store's own "
    "bridge loop, so that a first search does not wait for them; one per scope, cancelled "
    "and awaited when the store closes",
    (
        "satchel.stores.oceanbase._store",
        "_in_thread",
        ".run_in_executor",
    ): "a vector product, a parse of a scope's vectors or the postings of its texts, off "
    "the store's bridge loop and the host's; awaited by the one store call that started it",
    (
        "satchel.mcp._lines",
        "DescriptorLines._read",
        "anyio.to_thread.run_sync",
    ): "a stdin the event loop cannot watch (a regular file, /dev/null) is read on a worker "
    "thread; such a read never blocks, so a cancelled read leaves no thread waiting",
    (
        "satchel.mcp._transports",
        "serve_http",
        "anyio.create_task_group",
    ): "uvicorn serves beside the task that awaits the caller's shutdown trigger and then "
    "tells it to stop; both end before serve_http returns",
    ("satchel.mcp._transports", "serve_http", ".start_soon"): "the shutdown trigger's task "
    "(see above)",
    (
        "satchel.cli._mcp",
        "_Stopping.run",
        "anyio.create_task_group",
    ): "'satchel mcp' serves stdio beside the task that waits for SIGINT or SIGTERM and "
    "cancels the serving; both end before the call returns",
    ("satchel.cli._mcp", "_Stopping.run", ".start_soon"): "the signal watcher (see above)",
    (
        "satchel.cli._serve",
        "_serve_first",
        "anyio.to_thread.run_sync",
    ): "'satchel serve --workers' starts its worker processes and waits until each says "
    "it is ready (blocking reads of their pipes) on a worker thread, awaited before it "
    "serves",
    (
        "satchel.cli._workers",
        "Workers.astop",
        "anyio.to_thread.run_sync",
    ): "stopping the workers waits for each process to exit (blocking): a worker thread, "
    "awaited before 'satchel serve' returns",
    (
        "satchel.cli._workers",
        "Workers.watch",
        "threading.Thread",
    ): "the first 'satchel serve' process waits for each worker process to end (a "
    "blocking wait) in a daemon thread per worker, which starts another in its place: "
    "the event loop never waits on a process",
    (
        "satchel.cli._workers",
        "stop_with_first_process",
        "threading.Thread",
    ): "a worker process watches its stdin, the first process's pipe, with a blocking "
    "read in a daemon thread, and signals itself to stop when the pipe closes: it never "
    "outlives the first process",
    (
        "satchel.runtime._runtime",
        "open_runtime",
        "anyio.to_thread.run_sync",
    ): "warming the embedder and the analysers up loads files and models: a worker "
    "thread, once per runtime, awaited before the runtime is handed out",
    (
        "satchel._otlp._exporting",
        "_close_within",
        "threading.Thread",
    ): "a command's telemetry is exported as it exits, and an OTLP exporter retries an "
    "unreachable collector for seconds: the SDK providers shut down on a daemon thread "
    "the exit waits for at most a second",
}


def allowed(name: str, start: Start) -> bool:
    """Whether module ``name`` may start what ``start`` starts, where it does."""
    if start.is_task and part_of(name) == "orchestration":
        return True
    return (name, start.place, start.what) in STARTS_ALLOWED


@pytest.mark.parametrize("name", sorted(MODULES))
def test_tasks_and_threads_start_only_where_allowed(name: str) -> None:
    """Tasks start in the orchestration; threads, processes, worker-thread calls and any
    task outside the orchestration only at a place listed in STARTS_ALLOWED."""
    wrong = [start for start in starts_of(name) if not allowed(name, start)]
    assert not wrong, (
        f"{name} starts tasks or threads where nothing allows it: "
        + ", ".join(f"{s.what} in {s.place} (line {s.line})" for s in wrong)
        + "; start tasks in the orchestration, or list the place in STARTS_ALLOWED with "
        "the reason it must start a thread there"
    )


def test_every_allowed_start_is_still_there() -> None:
    """An entry of STARTS_ALLOWED whose start has gone (or moved) is removed with it, so
    the list says exactly where threads start."""
    present = {(name, s.place, s.what) for name in MODULES for s in starts_of(name)}
    stale = sorted(set(STARTS_ALLOWED) - present)
    assert not stale, f"STARTS_ALLOWED names starts that are no longer there: {stale}"


STARTING_SOURCE: Final = """
import asyncio
import threading as th
import anyio.to_thread
import concurrent.futures as cf
from anyio import create_task_group, to_thread
from concurrent.futures import ProcessPoolExecutor

async def tasks(group, loop):
    async with create_task_group() as tg:
        tg.start_soon(tasks)
    await asyncio.gather(tasks(), tasks())
    asyncio.create_task(tasks())
    loop.create_task(tasks())
    asyncio.ensure_future(tasks())
    async with asyncio.TaskGroup() as tg:
        pass

class Worker:
    def __init__(self):
        self.thread = th.Thread(target=print)
        self.pool = cf.ThreadPoolExecutor(2)
        self.processes = ProcessPoolExecutor()
    async def go(self, loop):
        await anyio.to_thread.run_sync(print)
        await to_thread.run_sync(print)
        await loop.run_in_executor(None, print)
        run = asyncio.to_thread
"""


def test_the_start_check_sees_every_way_to_start() -> None:
    """Task groups, start_soon, gather, create_task (asyncio's and a loop's),
    ensure_future, asyncio's TaskGroup, threads, pools, to_thread under any import
    spelling: each is found where it is (so an empty result means something)."""
    found = [(start.place, start.what) for start in starts_in(ast.parse(STARTING_SOURCE))]
    assert found == [
        ("tasks", "anyio.create_task_group"),
        ("tasks", ".start_soon"),
        ("tasks", "asyncio.gather"),
        ("tasks", "asyncio.create_task"),
        ("tasks", ".create_task"),
        ("tasks", "asyncio.ensure_future"),
        ("tasks", "asyncio.TaskGroup"),
        ("Worker.__init__", "threading.Thread"),
        ("Worker.__init__", "concurrent.futures.ThreadPoolExecutor"),
        ("Worker.__init__", "concurrent.futures.ProcessPoolExecutor"),
        ("Worker.go", "anyio.to_thread.run_sync"),
        ("Worker.go", "anyio.to_thread.run_sync"),
        ("Worker.go", ".run_in_executor"),
        ("Worker.go", "asyncio.to_thread"),
    ]


def test_annotations_and_type_checking_imports_start_nothing() -> None:
    """A thread in a type annotation or a TYPE_CHECKING block is no start."""
    source = (
        "from __future__ import annotations\n"
        "import threading\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from concurrent.futures import ThreadPoolExecutor\n"
        "    pool: ThreadPoolExecutor = ThreadPoolExecutor()\n"
        "class Holder:\n"
        "    thread: threading.Thread | None = None\n"
        "    def keep(self, thread: threading.Thread) -> threading.Thread:\n"
        "        return thread\n"
    )
    assert starts_in(ast.parse(source)) == []


@pytest.mark.parametrize(
    ("name", "start", "expected"),
    [
        ("satchel.orchestration._coordinator", Start("f", "anyio.create_task_group", 1), True),
        ("satchel.orchestration._coordinator", Start("f", "threading.Thread", 1), False),
        ("satchel.stores.sqlite._store", Start("f", ".start_soon", 1), False),
        ("satchel.builder._fitting", Start("f", "anyio.to_thread.run_sync", 1), False),
    ],
)
def test_the_orchestration_may_start_tasks_but_no_unlisted_thread(
    name: str, start: Start, expected: bool
) -> None:
    """A task is allowed in the orchestration; a thread is not, even there; neither is
    allowed elsewhere unless listed."""
    assert allowed(name, start) is expected
