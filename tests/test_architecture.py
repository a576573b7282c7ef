"""The layers hold (issue 21): no import cycle in searchlab/, and no import up a layer.

Function-level imports count (they were how the old circles hid); ``if TYPE_CHECKING:``
imports do not (they never run). The layers themselves are the import-linter contract in
pyproject.toml (``lint-imports``); this file also finds cycles *inside* a layer, which a
layers contract does not forbid, and keeps the type-debt ratchet (docs/architecture.md).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "searchlab"


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skip


def _targets(node: ast.AST, module: str, is_package: bool, known: set[str] | dict[str, Path]) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            parts = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
            base = ".".join([*parts, base] if base else parts)
        names = [f"{base}.{a.name}" for a in node.names]
        # ``from pkg import submodule`` imports the submodule (pkg/__init__ runs first, as for every import of a
        # submodule); only a name that is not a module is one of the package's own (``searchlab.tune``, issue 54)
        return [*([] if all(n in known for n in names) else [base]), *names]
    return []


def import_graph() -> dict[str, set[str]]:
    """module -> the searchlab modules it imports (the nearest existing module of each name)."""
    files = {_module(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in files}
    for module, path in files.items():
        tree = ast.parse(path.read_text())
        skip = _type_checking_nodes(tree)
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            for name in _targets(node, module, path.name == "__init__.py", files):
                while name and name not in files:
                    name = name.rpartition(".")[0]
                if name and name != module:
                    graph[module].add(name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_planted_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_searchlab_has_no_import_cycle() -> None:
    found = cycles(import_graph())
    assert not found, "import cycles (function-level imports included):\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_layer_contract_holds() -> None:
    """``lint-imports`` (import-linter, installed by ``make setup`` from ``[dev]``) over pyproject's contract."""
    exe = str(Path(sys.executable).parent / "lint-imports")
    done = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_type_ignores_stay_under_the_ratchet() -> None:
    count = sum(p.read_text().count("type: ignore") for p in PACKAGE.rglob("*.py"))
    assert count < 30, f"{count} `type: ignore` in searchlab/ (issue 21: fewer than 30)"


def _packages(graph: dict[str, set[str]], depth: int = 2) -> dict[str, set[str]]:
    """The module graph folded to packages (``searchlab.study``, ``searchlab.tuning``, ...)."""
    def top(name: str) -> str:
        return ".".join(name.split(".")[:depth])

    folded: dict[str, set[str]] = {}
    for module, targets in graph.items():
        folded.setdefault(top(module), set()).update(top(t) for t in targets if top(t) != top(module))
    return folded


def test_no_two_packages_import_each_other() -> None:
    """Issue 45, item 4: ``study`` and ``tuning`` (and any other two packages) form no loop."""
    found = cycles(_packages(import_graph()))
    assert not found, "package loops:\n" + "\n".join(" <-> ".join(c) for c in found)
    assert cycles(_packages({"p.a.x": {"p.b.y"}, "p.b.y": {"p.a.z"}, "p.a.z": set()})) == [["p.a", "p.b"]]


def _private_imports(package: str, of: str) -> list[str]:
    """Imports in ``package`` of a private module or name of ``of`` (``_x`` after ``of.``)."""
    found = []
    for path in (PACKAGE / package.removeprefix("searchlab.").replace(".", "/")).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(of):
                rest = node.module[len(of):].split(".")
                names = [a.name for a in node.names]
                if any(p.startswith("_") for p in rest) or any(n.startswith("_") for n in names):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: from {node.module} import {', '.join(names)}")
    return found


def test_the_study_imports_no_private_name_of_run() -> None:
    """Issue 45, item 4: a study builds its parts through the run's public door (run.prepare.build_parts)."""
    assert _private_imports("searchlab.study", "searchlab.run") == []
    assert _private_imports("searchlab.tuning", "searchlab.run") == []


AGGREGATE_ONLY = """
import sys
from searchlab.study.__main__ import main
status = main([sys.argv[1], "--out", sys.argv[2]])
print(status, sorted(m for m in sys.modules if m.startswith(("searchlab.study.execution", "searchlab.run", "ray"))))
"""


def test_reporting_recorded_runs_imports_nothing_of_the_execution(tmp_path: Path) -> None:
    """Issue 52: ``python -m searchlab.study DIR`` (the analysis-only command) reads records and reports; it
    imports no module of the study's execution half, of the run lifecycle or of Ray."""
    from searchlab.core.records import Candidate, Config, Measurement, Result
    from searchlab.core.store import RecordWriter, RunRecord

    results = [Result(Candidate(i, Config(x=i), Config(x=i)), Measurement.ok(10.0 - i)) for i in range(5)]
    with RecordWriter(tmp_path / "records" / "results.db") as writer:
        writer.write([RunRecord(f"p/random/seed_{s}", "p", "random", s, {"searcher": {}}, fingerprint="f",
                                evaluations=RunRecord.encode(results)) for s in range(2)])
    out = subprocess.run([sys.executable, "-c", AGGREGATE_ONLY, str(tmp_path / "records"), str(tmp_path / "study")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip().splitlines()[-1] == "0 []", out.stdout + out.stderr[-2000:]
    assert (tmp_path / "study" / "report.html").is_file()


# -- issue 52: one door for each job -----------------------------------------------------------------
BUILDER = "searchlab/searchers/_build.py"
LOOP = "searchlab/run/loop.py"
# Paths exempt from the one-builder rule: none (reproduce's last direct registry lookup moved with issue 51).
NOT_YET_MOVED: tuple[str, ...] = ()


def _calls(path: Path) -> list[ast.Call]:
    return [n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Call)]


def _first_arg(call: ast.Call) -> object:
    return call.args[0].value if call.args and isinstance(call.args[0], ast.Constant) else None


def _searcher_lookups(path: Path) -> list[str]:
    """Calls that find a searcher class by name or config without the one builder."""
    found = []
    for call in _calls(path):
        name = ast.unparse(call.func)
        if (name.endswith("registry.searcher_class") or name.endswith("get_class")
                or (name.endswith(("load_class", "registered_class")) and _first_arg(call) == "searcher")):
            found.append(f"{path.relative_to(ROOT)}:{call.lineno}: {ast.unparse(call)[:80]}")
    return found


def test_exactly_one_module_builds_searchers_from_names_or_configs() -> None:
    """Issue 52, item 1: every searcher built from a name or a config comes through searchlab.searchers._build
    (build_searcher, and searcher_class, the one lookup); an AST scan of every module."""
    own = (BUILDER, "searchlab/registry.py", *NOT_YET_MOVED)  # the registry defines the lookup the builder uses
    found = [hit for path in sorted(PACKAGE.rglob("*.py")) if not str(path.relative_to(ROOT)).startswith(own)
             for hit in _searcher_lookups(path)]
    assert found == []
    assert _searcher_lookups(ROOT / BUILDER), "the builder itself must look searchers up (the scan can see it)"


STEPS = ("ask", "tell", "replay", "observe")


def _searcher_steps(path: Path) -> list[str]:
    """Calls of a searcher's ask/tell/replay/observe (on something named ``...searcher``)."""
    found = []
    for call in _calls(path):
        if isinstance(call.func, ast.Attribute) and call.func.attr in STEPS:
            receiver = ast.unparse(call.func.value)
            if receiver.split(".")[-1].endswith("searcher"):
                found.append(f"{path.relative_to(ROOT)}:{call.lineno}: {ast.unparse(call)[:80]}")
    return found


def test_exactly_one_module_drives_a_searcher() -> None:
    """Issue 52, item 2: the ask/tell loop is searchlab.run.loop's; every door (the run, studies, tuning, the Kernel
    Tuner, Optuna and Ray Tune adapters) drives a searcher through it. Searchers holding searchers (portfolio,
    transfer) and the contract tests of the protocol itself (searchlab.testing) call a searcher directly."""
    own = ("searchlab/searchers/", "searchlab/testing/contract.py", LOOP, *NOT_YET_MOVED)
    found = [hit for path in sorted(PACKAGE.rglob("*.py")) if not str(path.relative_to(ROOT)).startswith(own)
             for hit in _searcher_steps(path)]
    assert found == []
    assert _searcher_steps(ROOT / LOOP), "the loop itself must call the searcher (the scan can see it)"


def _hook_names() -> set[str]:
    from searchlab.run.budget import Progress
    from searchlab.searchers import Searcher

    declared = {n for n in vars(Searcher) if not n.startswith("_")} | {n for n in vars(Progress) if not n.startswith("_")}
    return declared - {"close", "name", "unique", "requires", "space_kinds", "defaults_chosen_on"}


def test_no_getattr_finds_a_searcher_or_progress_hook() -> None:
    """Issue 52, item 3: every hook is declared on Searcher or Progress with a default; nothing probes for one
    (``close`` is checked by receiver: caches and Ray objects have their own)."""
    hooks = _hook_names()
    assert {"attach_prior", "prior_report", "shortfall", "set_budget", "resumed", "phase", "next_id"} <= hooks
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for call in _calls(path):
            if ast.unparse(call.func) not in ("getattr", "hasattr") or len(call.args) < 2:
                continue
            attr, receiver = _first_arg(ast.Call(func=call.func, args=call.args[1:], keywords=[])), ast.unparse(call.args[0])
            probed = attr in hooks or (attr == "close" and any(w in receiver for w in ("searcher", "progress")))
            if probed:
                found.append(f"{path.relative_to(ROOT)}:{call.lineno}: {ast.unparse(call)[:80]}")
    assert found == []
