"""searchlab as an installed package: a wheel in a fresh venv, run from outside the checkout,
plus the example plugin (examples/plugin) found through entry points in the CLI, ``--help``,
a study and a portfolio.

Offline-fast: the wheels of searchlab and of the plugin are built here without build
isolation and installed with ``--no-deps`` into a new venv (no system site-packages); the
third-party dependencies are borrowed from this test venv by a plain path line in a ``.pth``
file, which adds that directory without running its ``.pth`` files, so the editable
searchlab of the checkout is *not* importable there (checked). The dependency list itself is
checked against the package's imports (:func:`test_wheel_declares_what_it_imports`).
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "examples" / "plugin"
pytestmark = pytest.mark.slow


def _run(cmd: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PATH"] = os.defpath
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def _pip(*args: str) -> None:
    out = subprocess.run([sys.executable, "-m", "pip", "-q", "--disable-pip-version-check", *args],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]


def _wheel(src: Path, dist: Path) -> Path:
    _pip("wheel", "--no-deps", "--no-build-isolation", "-w", str(dist), str(src))
    return max(dist.glob("*.whl"), key=lambda p: p.stat().st_mtime)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """searchlab's wheel, built from a copy of the working tree (the checkout stays clean)."""
    tmp = tmp_path_factory.mktemp("wheel")
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.split("\n")
    src = tmp / "src"
    for name in files:
        if name and not name.startswith(("bench/results/", "examples/", "tests/")) and (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            (src / name).write_bytes((ROOT / name).read_bytes())
    return _wheel(src, tmp / "dist")


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the searchlab wheel and the example plugin installed: returns its python."""
    tmp = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp / "v")], check=True, timeout=120)
    python = tmp / "v" / "bin" / "python"
    src = tmp / "plugin_src"  # built from a copy: an in-tree build would leave build/ and *.egg-info behind
    shutil.copytree(PLUGIN, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    plugin = _wheel(src, tmp / "plugin_dist")
    _pip("--python", str(python), "install", "--no-deps", "--no-index", str(wheel), str(plugin))
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "_searchlab_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def test_wheel_ships_configs_and_declares_entry_points(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        entry_points = next(z.read(n).decode() for n in names if n.endswith("entry_points.txt"))
    assert "searchlab/conf/config.yaml" in names and "searchlab/conf/problem/synthetic_knobs.yaml" in names
    assert "searchlab/testing/contract.py" in names and "searchlab/adapters/grammar/examples/schedule.yaml" in names
    assert not any(n.startswith(("adapters/", "tests/", "conf/")) for n in names)  # no generic top-level names
    assert "[searchlab.searchers]" in entry_points and "[searchlab.problems]" in entry_points


def test_wheel_declares_what_it_imports(wheel: Path) -> None:
    """Every third-party module the package imports belongs to a declared dependency (or an extra)."""
    from importlib.metadata import packages_distributions

    with zipfile.ZipFile(wheel) as z:
        meta = next(z.read(n).decode() for n in z.namelist() if n.endswith("METADATA"))
        sources = [z.read(n).decode() for n in z.namelist() if n.endswith(".py")]
    declared = {line.split(":", 1)[1].strip().split(";")[0].split("[")[0].split(">")[0].split("=")[0].split("<")[0]
                .strip().lower().replace("_", "-") for line in meta.splitlines() if line.startswith("Requires-Dist:")}
    modules = set()
    for text in sources:
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import):
                modules |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                modules.add(node.module.split(".")[0])
    owners = packages_distributions()
    third_party = {m for m in modules if m in owners and m != "searchlab"}
    missing = {m: owners[m] for m in third_party
               if not {d.lower().replace("_", "-") for d in owners[m]} & declared}
    assert not missing, f"imported but not declared in pyproject.toml: {missing}"


def test_installed_package_runs_from_any_directory(venv: Path, tmp_path: Path) -> None:
    where = _run([str(venv), "-c", "import searchlab; print(searchlab.__file__)"], tmp_path)
    assert where.returncode == 0, where.stderr
    assert str(venv.parents[1]) in where.stdout and str(ROOT) not in where.stdout  # the wheel, not the checkout
    out = _run([str(venv), "-m", "searchlab", "problem=synthetic_knobs", "searcher=random", "executor=serial",
                "budget.evaluations=12", "progress=off", "hydra.run.dir=run"], tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["problem"] == "synthetic_knobs" and summary["evaluations"] == 12
    assert (tmp_path / "run" / "best_so_far.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    script = _run([str(venv.parent / "searchlab"), "--help"], tmp_path)  # the console script (issue 36, item 6)
    assert script.returncode == 0 and "usage:" in script.stdout, script.stderr[-3000:]


def test_plugin_in_cli_help_portfolio_and_study(venv: Path, tmp_path: Path) -> None:
    helped = _run([str(venv), "-m", "searchlab", "--help"], tmp_path)
    assert helped.returncode == 0, helped.stderr
    assert "coordinate_descent" in helped.stdout and "sphere_knobs" in helped.stdout
    helped = _run([str(venv), "-m", "searchlab", "searcher=coordinate_descent", "--help"], tmp_path)
    assert helped.returncode == 0 and "  searcher.restarts=10 " in helped.stdout, helped.stdout

    cli = _run([str(venv), "-m", "searchlab", "problem=sphere_knobs", "searcher=coordinate_descent",
                "searcher.restarts=2", "executor=serial", "budget.evaluations=25", "progress=off", "hydra.run.dir=cli"],
               tmp_path)
    assert cli.returncode == 0, cli.stderr[-3000:]
    summary = json.loads((tmp_path / "cli" / "summary.json").read_text())
    assert (summary["problem"], summary["searcher"]) == ("sphere_knobs", "coordinate_descent")
    assert summary["evaluations"] > 0 and summary["best"] is not None

    bad = _run([str(venv), "-m", "searchlab", "problem=sphere_knobs", "searcher=coordinate_descent",
                "searcher.restarts=-1", "executor=serial", "hydra.run.dir=bad"], tmp_path)
    assert bad.returncode == 2 and "searcher.restarts=-1" in bad.stderr and "Traceback" not in bad.stderr

    port = _run([str(venv), "-m", "searchlab", "problem=synthetic_knobs", "searcher=portfolio",
                 "searcher.members=[coordinate_descent,random]", "executor=serial", "budget.evaluations=30",
                 "progress=off", "hydra.run.dir=port"], tmp_path)
    assert port.returncode == 0, port.stderr[-3000:]
    with sqlite3.connect(tmp_path / "port" / "results.db") as db:
        members = [json.loads(m).get("member") for (m,) in db.execute("SELECT meta FROM evaluations")]
    assert members.count("coordinate_descent") > 0 and members.count("random") > 0

    study = _run([str(venv), "-m", "searchlab.study", "study=live_sweep",
                  "+searchers.cd=coordinate_descent", "seeds=1", "budget.evaluations=15",
                  "overrides=['executor=serial','progress=off']", "--out", "study"], tmp_path, timeout=600)
    assert study.returncode == 0, study.stderr[-3000:]
    cells = {p.parent.parent.name: json.loads(p.read_text()) for p in (tmp_path / "study").glob("runs/*/*/seed_0/summary.json")}
    assert cells["cd"]["evaluations"] == 15 and cells["random"]["evaluations"] == 15
    assert (tmp_path / "study" / "report.html").is_file()


def test_plugin_tests_reuse_the_shipped_contract(venv: Path, tmp_path: Path) -> None:
    """The plugin's own tests run against the installed searchlab.testing, outside the checkout."""
    (tmp_path / "test_plugin.py").write_text((PLUGIN / "tests" / "test_plugin.py").read_text())
    out = _run([str(venv), "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_plugin.py"], tmp_path)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert " passed" in out.stdout and "failed" not in out.stdout
