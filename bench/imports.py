"""What ``import satchel`` costs, and what a core install weighs, against earlier trees.

For each source tree compared (``--rev REV``: that commit's ``src/``, read with ``git
archive``; always the working tree's ``src/`` as ``now``):

- **cold import**: ``--repeat`` fresh interpreters per tree, interleaved, each timing
  ``import satchel`` alone (``time.perf_counter`` around it, interpreter start-up
  excluded) and the whole process (start-up included); median and p90. Each run also
  reports how many modules the import loaded and whether the optional heavy ones
  (``usearch``, ``numkong``, ``httpx``, ``starlette``, ``opentelemetry.sdk``) came with it.
- **where the time goes**: one more run under ``python -X importtime``: the top-level
  packages with the most cumulative import time.
- **core install size**: the bytes on disk of every distribution a plain ``pip install
  satchel`` of that tree installs, read from this interpreter's site-packages: the
  tree's ``[project] dependencies`` and their own unconditional requirements,
  recursively, each distribution's files (its ``RECORD``), plus the ``satchel`` package
  itself (the bundled model included). A distribution this environment lacks is listed
  as missing, never guessed. Bytecode is not counted there; with ``--install`` each tree
  is also installed for real (``uv venv`` and ``uv pip install --compile-bytecode TREE``
  into a temporary directory, from the package index pip is configured with) and its
  ``site-packages`` weighed, bytecode included.

All trees run on this interpreter and its installed packages, so a difference is the
tree's own (what it imports eagerly, what it declares), not the environment's. JSON goes
to ``bench/results/imports.json``, a Markdown table to stdout.

Run: ``python -m bench imports [--rev ca13842^] [--repeat 30] [--install]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
from importlib import metadata
from io import BytesIO
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).parent / "results"
#: The last commit before usearch moved from the core dependencies to ``satchel[ann]``.
BEFORE_ANN_EXTRA = "ca13842^"
#: Optional packages whose presence after ``import satchel`` is reported.
HEAVY = ("usearch", "numkong", "httpx", "starlette", "opentelemetry.sdk", "mcp", "trio")
_PROBE = """
import json, sys, time
started = time.perf_counter()
import satchel
took = time.perf_counter() - started
heavy = {name: name in sys.modules for name in HEAVY}
print(json.dumps({"seconds": took, "modules": len(sys.modules), "heavy": heavy,
                  "file": satchel.__file__}))
"""


def extract(rev: str, into: Path) -> Path:
    """``rev``'s files unpacked under ``into``; the tree's root."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def probe(root: Path) -> dict[str, Any]:
    """One cold interpreter importing satchel from ``root/src``: the import's seconds, the
    process's, the modules loaded and which heavy ones."""
    env = {**os.environ, "PYTHONPATH": str(root / "src")}  # the warm-up run writes its .pyc
    code = f"HEAVY = {HEAVY!r}\n{_PROBE}"
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True
    )
    wall = time.perf_counter() - started
    result: dict[str, Any] = json.loads(done.stdout)
    if not result["file"].startswith(str(root / "src")):
        raise RuntimeError(f"imported {result['file']}, not the tree at {root}")
    return {**result, "process_seconds": wall}


def import_profile(root: Path, top: int = 12) -> list[tuple[str, float]]:
    """Where one ``python -X importtime -c 'import satchel'`` run spent its time: each
    package other than satchel with the cumulative milliseconds of its first import
    (where its whole cost is paid), then satchel's own modules' self time, largest
    first."""
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import satchel"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    costs: dict[str, float] = {}
    for line in done.stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        self_us, total_us, name = int(parts[0]), int(parts[1]), parts[2].strip()
        package = name.split(".")[0]
        if package == "satchel":
            costs["satchel (self)"] = costs.get("satchel (self)", 0.0) + self_us / 1000
        else:  # the outermost import of a package comes last: it holds the others
            costs[package] = max(costs.get(package, 0.0), total_us / 1000)
    ranked = sorted(costs.items(), key=lambda item: -item[1])
    return [(name, round(ms, 1)) for name, ms in ranked[:top]]


def core_install(root: Path) -> dict[str, Any]:
    """The distributions a plain install of the tree at ``root`` pulls in, and their
    bytes on disk here (the satchel package itself counted from the tree)."""
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = [Requirement(text) for text in project["dependencies"]]
    seen: dict[str, int] = {}
    missing: list[str] = []
    while wanted:
        requirement = wanted.pop()
        name = requirement.name.lower().replace("_", "-")
        if name in seen or name in missing:
            continue
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        try:
            distribution = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
            continue
        seen[name] = _size(distribution)
        wanted.extend(Requirement(text) for text in distribution.requires or ())
    package = sum(
        path.stat().st_size
        for path in (root / "src").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    )
    total = sum(seen.values()) + package
    return {
        "total_mb": round(total / 1e6, 1),
        "satchel_mb": round(package / 1e6, 1),
        "distributions_mb": {name: round(size / 1e6, 1) for name, size in sorted(seen.items())},
        "missing": sorted(missing),
    }


def installed_mb(root: Path, scratch: Path) -> float:
    """The megabytes of ``site-packages`` after a real install of the tree at ``root``
    (and its core dependencies, bytecode compiled as pip would) into a new environment."""
    uv = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
    environment = scratch / "venv"
    subprocess.run([uv, "venv", "-q", str(environment)], check=True)
    python = environment / "bin" / "python"
    install = [uv, "pip", "install", "-q", "--python", str(python), "--compile-bytecode"]
    subprocess.run([*install, str(root)], check=True)
    packages = next((environment / "lib").glob("python3*/site-packages"))
    size = sum(path.stat().st_size for path in packages.rglob("*") if path.is_file())
    shutil.rmtree(environment)
    return round(size / 1e6, 1)


def _size(distribution: metadata.Distribution) -> int:
    total = 0
    for file in distribution.files or ():
        path = Path(str(distribution.locate_file(file)))
        if path.is_file():
            total += path.stat().st_size
    return total


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    imports = sorted(run["seconds"] * 1000 for run in runs)
    processes = sorted(run["process_seconds"] * 1000 for run in runs)
    return {
        "import_ms_p50": round(statistics.median(imports), 1),
        "import_ms_p90": round(imports[int(0.9 * (len(imports) - 1))], 1),
        "process_ms_p50": round(statistics.median(processes), 1),
        "modules": runs[-1]["modules"],
        "heavy_loaded": sorted(name for name, loaded in runs[-1]["heavy"].items() if loaded),
    }


def measure(trees: dict[str, Path], repeat: int) -> dict[str, Any]:
    runs: dict[str, list[dict[str, Any]]] = {label: [] for label in trees}
    for root in trees.values():  # one unmeasured run each: the file cache warms
        probe(root)
    for _ in range(repeat):
        for label, root in trees.items():
            runs[label].append(probe(root))
    return {
        label: {
            **summarise(runs[label]),
            "import_profile_ms": import_profile(root),
            "core_install": core_install(root),
        }
        for label, root in trees.items()
    }


def table(results: dict[str, Any]) -> str:
    lines = [
        "| tree | import p50 ms | import p90 ms | process p50 ms | modules |"
        " heavy loaded | core install MB (files / installed) |",
        "|---|---:|---:|---:|---:|---|---:|",
    ]
    for label, found in results["trees"].items():
        lines.append(
            f"| {label} | {found['import_ms_p50']} | {found['import_ms_p90']} |"
            f" {found['process_ms_p50']} | {found['modules']} |"
            f" {', '.join(found['heavy_loaded']) or '-'} | {found['core_install']['total_mb']}"
            f" / {found['core_install'].get('installed_mb', '-')} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--rev",
        action="append",
        help=f"a commit to compare with the working tree (default: {BEFORE_ANN_EXTRA}, the"
        " last before usearch left the core dependencies); may be given again",
    )
    parser.add_argument("--repeat", type=int, default=30, help="cold imports per tree")
    parser.add_argument(
        "--install",
        action="store_true",
        help="also install each tree into a new environment (uv) and weigh site-packages",
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "imports.json")
    args = parser.parse_args()
    revs = args.rev or [BEFORE_ANN_EXTRA]
    with tempfile.TemporaryDirectory(prefix="satchel-imports-") as scratch:
        trees = {rev: extract(rev, Path(scratch) / str(n)) for n, rev in enumerate(revs)}
        trees["now"] = ROOT
        results: dict[str, Any] = {
            "python": sys.version.split()[0],
            "repeat": args.repeat,
            "load_average": os.getloadavg(),
            "trees": measure(trees, args.repeat),
        }
        if args.install:
            for label, root in trees.items():
                installed = installed_mb(root, Path(scratch))
                results["trees"][label]["core_install"]["installed_mb"] = installed
    args.out.parent.mkdir(exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))


if __name__ == "__main__":
    main()
