"""The shape of the house: every import in src/satchel follows the layer rules.

Layers, bottom to top: the vocabulary; embedders; the recall policy, the Builder and the
stores side by side; the orchestration; the runtime; the package's public facade; the
workload files and the OTLP setup side by side; the servers; the CLI. A module imports
its own package or a lower layer, never a sibling or a higher one (type-checking imports
count: an arrow is an arrow), and no chain of imports runs in a circle. The pure layers
import nothing that does I/O, runs tasks, traces or reads a clock, and only the
orchestration starts tasks.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Final

import pytest

import satchel

SRC: Final = Path(satchel.__file__).parent

#: Each top-level part of the package and its layer; equal layers are siblings.
LAYER: Final = {
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
    "http": 7,
    "mcp": 7,
    "cli": 8,
    "__main__": 9,
}
#: What the layers above the public facade may import besides their own package: the
#: public API, and the vocabulary's plain values (for the workload files, and the short
#: spellings of ids that the servers accept as a pack writes them).
CLIENT_IMPORTS: Final = {
    "_workload": {"vocabulary"},
    "_otlp": {"__init__"},
    "_wire": {"__init__", "vocabulary"},
    "http": {"__init__", "embedders", "_otlp", "_wire"},
    "mcp": {"__init__", "embedders", "_otlp", "_wire"},
    "cli": {"__init__", "embedders", "_workload", "_otlp", "http", "mcp"},
    "__main__": {"cli"},
}
#: Modules the pure layers may not import: I/O, tasks, tracing, clocks.
IMPURE: Final = {"anyio", "trio", "asyncio", "sqlite3", "opentelemetry", "time", "threading"}
PURE_PARTS: Final = {"recall", "builder"}


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every module ``path`` imports, absolute, type-checking imports included."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
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


def part_of(module: str) -> str | None:
    """The top-level part of satchel a module belongs to, None outside satchel."""
    parts = module.split(".")
    if parts[0] != "satchel":
        return None
    return parts[1] if len(parts) > 1 else "__init__"


MODULES: Final = {
    module_name(path): path for path in sorted(SRC.rglob("*.py")) if path.name != "py.typed"
}


def graph() -> dict[str, set[str]]:
    """Module -> the satchel modules it imports (names that are not modules dropped)."""
    return {
        name: {target for target in imports_of(path) if target in MODULES and target != name}
        for name, path in MODULES.items()
    }


def test_every_part_has_a_layer() -> None:
    """A new top-level module or package must be given its place in the layers."""
    assert {part_of(name) for name in MODULES} == set(LAYER)


def against_the_rules(name: str, targets: set[str]) -> list[str]:
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
        ("satchel.stores._sqlite", "satchel.runtime._runtime"),  # back up two layers
        ("satchel.cli._commands", "satchel.vocabulary._families"),  # below the public API
    ],
)
def test_the_rules_catch_a_wrong_arrow(name: str, target: str) -> None:
    """The checker flags sideways, upward and below-the-API imports (a pass means something)."""
    assert against_the_rules(name, {target}) == [target]


def cycles_in(edges: dict[str, set[str]]) -> list[list[str]]:
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
    roots = {target.split(".")[0] for target in imports_of(MODULES[name])}
    assert not roots & IMPURE, f"{name} imports {sorted(roots & IMPURE)}"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_only_the_orchestration_starts_tasks(name: str) -> None:
    """Task groups are opened in the orchestration and nowhere else."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    starts = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr in {"create_task_group", "start_soon"}
    ]
    if part_of(name) != "orchestration":
        assert not starts, f"{name} starts tasks at lines {starts}"
