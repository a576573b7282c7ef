"""bench/ is one harness, not a second codebase (issue 52, item 5).

The harness (bench/harness.py, ``python -m bench NAME``) is the one command line and the one JSON writer; results
are in one layout (:func:`test_results_are_in_one_layout`).

Every module under bench/ is part of the harness, a registered benchmark, or a helper that a registered benchmark
imports (a module defining no ``BENCHMARK``: :mod:`bench.common`, or a family's own, such as auto's statistics).
A module imports only public searchlab names (no segment of the import and no imported name starts with an
underscore) and never edits ``sys.path``; of bench/ it imports the harness and helpers, never another benchmark
module, and bench/'s imports form no cycle (so a renamed private name cannot break a benchmark silently: mypy
checks bench/ like the package).
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import json
import re
from pathlib import Path

import pytest

import bench.registry  # noqa: F401  (fills the registry)
from bench import harness

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
HARNESS = {"__init__", "__main__", "harness", "provenance", "registry", "common"}
# Not yet on the harness: none (issue 52 item 5; the last, auto's and reproduce's, landed with issues 53 and 51).
# A module listed here would be exempt from the rules and must be in pyproject.toml's mypy overrides (the same list).
PENDING: set[str] = set()
# Benchmark modules that others may import for their constants (they import no benchmark themselves, so no cycle):
# auto's benches read the shared tables' location from bench/auto_kt.py (issue 53; a helper would do).
LENDERS = {"auto_kt"}
# Benchmark names other helpers' branches register (docs/reference.md's table lists them ahead of their landing).
UPCOMING = {"auto_kt", "auto_spaces", "auto_heldout", "auto_loto", "peers", "proposal_time", "integration_speed",
            "reproduce_field"}
MUTATORS = {"insert", "append", "extend", "remove", "pop", "clear"}
COMMAND_LINES = {"argparse", "optparse", "getopt", "click", "typer"}  # the harness parses every command line
LOGGERS = {"print", "log"}  # a JSON text in a progress line is no second writer


@functools.cache
def _modules() -> dict[str, Path]:
    return {p.stem: p for p in sorted(BENCH.glob("*.py"))}


@functools.cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _private(name: str) -> bool:
    return any(part.startswith("_") and not (part.startswith("__") and part.endswith("__")) for part in name.split("."))


def _imported_names(node: ast.AST) -> list[str]:
    """Dotted names an import statement brings in (``from bench import x`` -> bench, bench.x)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom):
        base = "bench" if node.level else (node.module or "")
        base = f"{base}.{node.module}" if node.level and node.module else base
        return [base, *(f"{base}.{a.name}" for a in node.names)]
    return []


def bench_imports(path: Path) -> set[str]:
    """The modules of bench/ (top level) that ``path`` imports, at module or function level."""
    found = set()
    for node in ast.walk(_tree(path)):
        found |= {n.split(".")[1] for n in _imported_names(node) if n.startswith("bench.")}
    return found


def _lent(path: Path) -> bool:
    return path.stem in LENDERS and not bench_imports(path) - HARNESS - helpers()


def violations(path: Path, siblings: set[str], benchmarks: set[str]) -> list[str]:
    """What ``path`` does against the rules: private imports, sys.path edits, imports of benchmark modules
    (``benchmarks``: the registered ones; ``siblings``: every module of bench/, imported by a sys.path edit),
    and, but in the harness, a command line or a JSON writer of its own."""
    found: list[str] = []
    logged = _logged(_tree(path))
    for node in ast.walk(_tree(path)):
        line = f"{path.name}:{getattr(node, 'lineno', 0)}"
        if _edits_sys_path(node):
            found.append(f"{line}: edits sys.path")
        if path.stem != "harness":
            found += [f"{line}: {v}" for v in _own_harness(node, logged)]
        found += [f"{line}: {v}" for v in _import_violations(node, path.stem, siblings, benchmarks)]
    return found


def _edits_sys_path(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr in MUTATORS and ast.unparse(node.value) == "sys.path"
    return isinstance(node, ast.Assign) and any(ast.unparse(t).startswith("sys.path") for t in node.targets)


def _logged(tree: ast.AST) -> set[int]:
    """The ``json.dumps`` calls inside a progress line (``print(...)``, ``ctx.log(...)``): text, not a file."""
    lines = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func).split(".")[-1] in LOGGERS]
    return {id(d) for n in lines for d in ast.walk(n) if d is not n}


def _own_harness(node: ast.AST, logged: set[int]) -> list[str]:
    """A command line parsed or JSON written outside the harness (its options are the Benchmark's dataclass, its
    results what ``run`` returns, extra data files ``Context.save_data``); ``json.dumps`` only into a log line."""
    tops = {n.split(".")[0] for n in _imported_names(node)}
    if tops & COMMAND_LINES:
        return [f"imports {min(tops & COMMAND_LINES)} (the harness parses the command line: declare options)"]
    if not isinstance(node, ast.Call) or ast.unparse(node.func) not in {"json.dump", "json.dumps"}:
        return []
    if ast.unparse(node.func) == "json.dumps" and id(node) in logged:
        return []
    return [f"writes JSON itself ({ast.unparse(node.func)}: return results, or Context.save_data)"]


def _import_violations(node: ast.AST, stem: str, siblings: set[str], benchmarks: set[str]) -> list[str]:
    names = _imported_names(node)
    if not names:
        return []
    found = []
    if isinstance(node, ast.ImportFrom) and any(_private(a.name) for a in node.names) \
            and not names[0].startswith("searchlab"):
        found.append(f"from {names[0]} imports a private name")
    private = [n for n in names if n.split(".")[0] == "searchlab" and _private(n)]
    if private:
        found.append(f"imports {private[0]} (a private searchlab name)")
    tops = {n.split(".")[0] for n in names}
    if tops & siblings:
        found.append(f"imports the sibling script {min(tops & siblings)} (by a sys.path edit)")
    inner = {n.split(".")[1] for n in names if n.startswith("bench.")}
    wrong = (inner & (benchmarks - LENDERS)) | (inner & {"registry", "__main__"})
    if wrong and stem not in {"__main__", "registry"}:
        found.append(f"imports bench.{min(wrong)} (of bench/ a module imports the harness and helpers only)")
    return found


@functools.cache
def helpers() -> set[str]:
    """Modules that registered benchmarks import (directly or through another helper) and that register nothing."""
    modules, registered = _modules(), set(harness.REGISTRY.values())
    found: set[str] = set()
    todo = [m for m in registered if m in modules]
    while todo:
        for name in bench_imports(modules[todo.pop()]) - HARNESS - registered - found:
            if name in modules:
                found.add(name)
                todo.append(name)
    return found


def _legacy() -> set[str]:
    """Modules still on the old footing (exempt from the rules until their helper converts them)."""
    return (PENDING & set(_modules())) - set(harness.REGISTRY.values()) - helpers()


def test_the_rules_find_what_they_forbid(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import sys\nsys.path.insert(0, '.')\nfrom searchlab.adapters.grammar._fftw import FftwPlan\n"
                   "from searchlab.study.execution.grid import _compose_run\nfrom peers import TABLES\n"
                   "from bench.dag_search import run\nfrom bench.common import Table\nfrom bench.common import _cache\n"
                   "def later() -> None:\n    from bench import protocol\n    from bench.auto_stats import interval\n"
                   "import argparse\nimport json\njson.dump({}, open('x', 'w'))\nPath('x').write_text(json.dumps({}))\n"
                   "text = json.dumps({})\nprint(json.dumps({}))\n")  # a JSON line printed is no result file
    found = violations(bad, {"peers", "dag_search"}, {"dag_search", "protocol"})
    assert len(found) == 11, found
    assert sum("JSON itself" in f for f in found) == 3 and sum("argparse" in f for f in found) == 1
    assert sum("from bench.common" in f for f in found) == 1  # its private name; importing bench.common is allowed
    assert sum("bench.protocol" in f for f in found) == 1  # a function-level import counts; a helper is allowed


def test_benchmarks_and_helpers_import_public_names_only_and_leave_sys_path_alone() -> None:
    modules, benchmarks = _modules(), set(harness.REGISTRY.values())
    found = [v for name, path in modules.items() if name not in _legacy()
             for v in violations(path, set(modules), benchmarks)]
    found += [v for path in sorted((BENCH / "common").glob("*.py")) for v in violations(path, set(), benchmarks)]
    assert not found, "\n".join(found)


def test_bench_has_no_import_cycle() -> None:
    """Helpers and lenders import no benchmark, so the graph of bench/'s imports is acyclic; checked directly."""
    modules = _modules()
    graph = {name: bench_imports(path) & (set(modules) | {"common"}) - {name} for name, path in modules.items()
             if name not in _legacy()}
    graph["common"] = {m for p in (BENCH / "common").glob("*.py") for m in bench_imports(p)} & set(modules)
    done: set[str] = set()

    def visit(name: str, trail: tuple[str, ...]) -> None:
        assert name not in trail, f"an import cycle in bench/: {' -> '.join((*trail, name))}"
        if name not in done:
            for other in sorted(graph.get(name, ())):
                visit(other, (*trail, name))
            done.add(name)

    for name in sorted(graph):
        visit(name, ())
    lenders = {m for m in LENDERS if m in modules}
    assert all(_lent(modules[m]) for m in lenders), "a lender imports nothing of bench/ but the harness and helpers"


def _defines_benchmark(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    targets = [t for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign))
               for t in (n.targets if isinstance(n, ast.Assign) else [n.target])]
    return any(isinstance(t, ast.Name) and t.id == "BENCHMARK" for t in targets)


def test_every_module_is_the_harness_a_registered_benchmark_or_its_helper() -> None:
    registered, modules = set(harness.REGISTRY.values()), _modules()
    assert not registered - set(modules), f"registered but missing: {sorted(registered - set(modules))}"
    stray = set(modules) - registered - HARNESS - helpers() - _legacy()
    assert not stray, f"bench/ modules no registered benchmark imports: register or delete them: {sorted(stray)}"
    benchmarks = {m for m in helpers() if _defines_benchmark(modules[m])}
    assert not benchmarks, f"helpers that define a BENCHMARK: register them: {sorted(benchmarks)}"
    scripts = {p.stem for p in BENCH.glob("*.sh")}
    assert not scripts, f"a shell script is no benchmark: make it a registered one: {sorted(scripts)}"


def test_results_are_in_one_layout() -> None:
    """bench/results/ holds ``NAME*.json`` in the schema, written by the registered benchmark NAME (``--out``
    names a variant), the artefacts beside a result (``<its stem>_...`` or ``<its stem>.<suffix>``: figures,
    tables, raw runs) and historical/ (INDEX.md); nothing else, but the files of the scripts still PENDING."""
    results = BENCH / "results"
    stems, found = [], []
    for path in sorted(results.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.get("schema") == harness.SCHEMA:
            name = str(data.get("benchmark"))
            stems.append(path.stem)
            if name not in set(harness.REGISTRY) | UPCOMING or not path.stem.startswith(name):
                found.append(f"{path.name}: written by {name!r}, not a registered benchmark of that name")
    for path in sorted(results.iterdir()):
        if path.name == "historical" or path.stem in stems or path.name.startswith(tuple(PENDING)):
            continue
        if path.suffix == ".json" or not any(path.name.startswith((f"{s}_", f"{s}.")) for s in stems):
            found.append(f"{path.name}: neither a result in the schema nor beside one (historical/ keeps old ones)")
    assert not found, "\n".join(found)


def test_pending_modules_are_the_ones_mypy_skips() -> None:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    skipped: set[str] = set()
    for block in text.split("[[tool.mypy.overrides]]")[1:]:
        body = block.split("\n[", 1)[0]
        if "ignore_errors" in body:
            skipped |= set(re.findall(r'"bench\.(\w+)"', body))
    assert skipped == PENDING


@pytest.mark.parametrize("name", sorted(harness.REGISTRY))
def test_a_registered_benchmark_declares_its_options_as_data(name: str) -> None:
    bench = harness.load(name)
    assert bench.name == name and bench.summary
    assert dataclasses.is_dataclass(bench.options) and bench.options.__dataclass_params__.frozen  # type: ignore[attr-defined]
    bench.options()  # every option has a default
    harness.parser(bench).parse_args([])
    for doc in bench.cited_by:
        assert (ROOT / doc).is_file(), f"{name}: cited_by {doc} does not exist"


def test_reference_lists_every_benchmark_and_each_cites_docs_that_name_it() -> None:
    section = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8").split("## Benchmarks", 1)[1]
    section = section.split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `(\w+)` \|", section, flags=re.M))
    registered = set(harness.REGISTRY)
    assert not registered - listed, f"registered, not in docs/reference.md's table: {sorted(registered - listed)}"
    assert not listed - registered - UPCOMING, f"in docs/reference.md's table, not registered: " \
                                               f"{sorted(listed - registered - UPCOMING)}"
    for name in harness.REGISTRY:
        for doc in harness.load(name).cited_by:
            text = (ROOT / doc).read_text(encoding="utf-8")
            assert f"bench {name}" in text or f"bench/{name}.py" in text, f"{doc} does not name {name}"


def test_every_historical_result_is_listed_with_who_wrote_it() -> None:
    historical = BENCH / "results" / "historical"
    index = (historical / "INDEX.md").read_text(encoding="utf-8")
    listed = {m.rstrip("/") for m in re.findall(r"^\| `([^`]+)` \|", index, flags=re.M)}
    present = {p.name for p in historical.iterdir()} - {"INDEX.md"}
    assert listed == present, f"INDEX.md vs the files: {sorted(listed ^ present)}"
