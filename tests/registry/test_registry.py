"""The registry (entry points), options declared once, and the per-run plot."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest
from omegaconf import OmegaConf

from searchlab import registry
from searchlab.core.problem import Problem
from searchlab.core.spaces import KnobSpace, OrdinalKnob
from searchlab.errors import ConfigError
from searchlab.searchers import OptunaGpSearcher, RandomSearcher, Searcher, searcher_config
from searchlab.searchers._schema import option_defaults, schema_defaults


# -- a fake plugin, loaded through fabricated entry points -----------------------------------------
class PluginSearcher(RandomSearcher):
    name = "plugin_random"

    def __init__(self, space: Any, *, width: int = 3, labels: tuple[str, ...] = ("a",), **kwargs: Any) -> None:
        super().__init__(space, **kwargs)
        self.width, self.labels = width, labels


@dataclasses.dataclass
class DriftedConfig:  # hand-written, and wrong: the constructor says width=3
    _target_: str = "tests.registry.test_registry.PluginSearcher"
    width: int = 4
    labels: list[str] = dataclasses.field(default_factory=lambda: ["a"])
    tries: int = 200


BUNDLE = {"bundled_one": searcher_config(PluginSearcher)}


def _eps(group: str, **values: str) -> list[EntryPoint]:
    return [EntryPoint(name, value, group) for name, value in values.items()]


@pytest.fixture
def fake_entry_points(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, list[EntryPoint]]]:
    groups: dict[str, list[EntryPoint]] = {"searchlab.searchers": [], "searchlab.problems": []}
    monkeypatch.setattr(registry, "entry_points", lambda group: groups[group])
    monkeypatch.setattr(registry, "BUILTINS", {"problem": {}, "searcher": {}})
    registry.refresh()
    yield groups
    monkeypatch.undo()
    registry.refresh()


def test_builtins_are_registered_through_entry_points() -> None:
    from searchlab.adapters import problem_schemas
    from searchlab.searchers import SCHEMAS

    assert set(SCHEMAS) <= set(registry.searchers()) and set(problem_schemas()) | {"table"} <= set(registry.problems())
    for name in registry.searchers():
        assert issubclass(registry.searcher_class(name), Searcher), name
    for name in ("synthetic_knobs", "table", "dft"):
        assert issubclass(registry.problem_class(name), Problem)


def test_builtin_fallback_equals_pyproject_and_works_without_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    import tomllib

    project = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())["project"]
    for kind, group in registry.GROUPS.items():
        assert project["entry-points"][group] == registry.BUILTINS[kind]
    installed = {k: set(registry.entries(k)) for k in registry.GROUPS}
    monkeypatch.setattr(registry, "entry_points", lambda group: [])  # a source tree on PYTHONPATH, no install
    registry.refresh()
    try:
        assert {k: set(registry.entries(k)) for k in registry.GROUPS} == installed
    finally:
        monkeypatch.undo()
        registry.refresh()


def test_is_registered_target_is_the_gate_for_records() -> None:
    assert registry.is_registered_target("searchlab.searchers.RandomSearcher", "searcher")
    assert registry.is_registered_target("searchlab.searchers._random.RandomSearcher")  # its defining module
    assert registry.is_registered_target("searchlab.adapters.synthetic.SyntheticKnobs", "problem")
    assert registry.is_registered_target("searchlab.run.execution.SerialExecutor", "executor")
    assert not registry.is_registered_target("searchlab.searchers.RandomSearcher", "problem")  # wrong kind
    for evil in ("os.system", "subprocess.Popen", "builtins.eval", "", None, 3, ["os.system"]):
        assert not registry.is_registered_target(evil), evil
    with pytest.raises(ConfigError, match=r"'os.system' is not a registered problem"):
        registry.check_target("os.system", "problem", "results.db")
    with pytest.raises(ConfigError, match="searcher=nope: no such searcher is registered"):
        registry.searcher_class("nope")


def test_plugin_entry_point_kinds_and_errors(fake_entry_points: dict[str, list[EntryPoint]],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    group = fake_entry_points["searchlab.searchers"]
    group += _eps("searchlab.searchers", cls="tests.registry.test_registry:PluginSearcher",
                  bundle="tests.registry.test_registry:BUNDLE", broken="tests.no_such_module:X")
    found = registry.searchers()
    assert set(found) == {"cls", "bundled_one"}  # the broken plugin is skipped, with a warning
    assert "entry point searchlab.searchers:broken" in capsys.readouterr().err
    assert found["cls"].target == "tests.registry.test_registry.PluginSearcher"
    assert registry.is_registered_target(found["cls"].target)
    assert schema_defaults(found["cls"].schema) == {"width": 3, "labels": ["a"], "tries": 200}

    group.append(EntryPoint("bundled_one", "tests.registry.test_registry:DriftedConfig", "searchlab.searchers"))
    registry.refresh()
    with pytest.raises(ConfigError, match="searcher=bundled_one is registered twice"):
        registry.searchers()
    group[:] = _eps("searchlab.searchers", **{"bad-name": "tests.registry.test_registry:PluginSearcher"})
    registry.refresh()
    with pytest.raises(ConfigError, match="must be an identifier"):
        registry.searchers()
    group[:] = _eps("searchlab.searchers", notaschema="tests.registry.test_registry:BUNDLE_VALUE")
    registry.refresh()
    with pytest.raises(ConfigError, match="is not a class"):
        registry.searchers()


BUNDLE_VALUE = 42  # what a mistaken entry point might name


def _disagreements(schema: type, cls: type) -> dict[str, Any]:
    declared, accepted = schema_defaults(schema), option_defaults(cls)
    return {k: (declared.get(k, "<absent>"), accepted.get(k, "<absent>"))
            for k in declared.keys() | accepted.keys() if declared.get(k, "<absent>") != accepted.get(k, "<absent>")}


@pytest.mark.parametrize("name", sorted(registry.searchers()))
def test_each_searchers_options_are_declared_once(name: str) -> None:
    """Config schema and constructor can never disagree: same option names, same defaults,
    and OmegaConf accepts the schema (every type is one it can check)."""
    entry = registry.entry("searcher", name)
    cls = registry.searcher_class(name)
    assert _disagreements(entry.schema, cls) == {}
    assert OmegaConf.structured(entry.schema)._target_ == entry.target


def test_a_drifted_hand_written_schema_is_caught() -> None:
    assert _disagreements(DriftedConfig, PluginSearcher) == {"width": (4, 3)}


def test_optuna_gp_max_retries_is_four_everywhere() -> None:
    space = KnobSpace((OrdinalKnob("a", (1, 2, 3)),))
    schema = registry.entry("searcher", "optuna_gp").schema
    assert schema_defaults(schema)["max_retries"] == 4
    if OptunaGpSearcher.incompatibility(space) is None:  # needs torch
        assert OptunaGpSearcher(space).max_retries == 4


def test_derived_types_are_checked_by_hydra() -> None:
    node = OmegaConf.structured(searcher_config(PluginSearcher))
    with pytest.raises(Exception, match="width"):
        node.width = "wide"
    node.labels = ["x", "y"]
    assert OmegaConf.to_container(node) == {"_target_": "tests.registry.test_registry.PluginSearcher", "width": 3,
                                            "labels": ["x", "y"], "tries": 200}


def test_help_lists_registered_searchers_with_defaults() -> None:
    from searchlab.cli.main import help_text

    text = help_text()
    assert "optuna_gp" in text and "synthetic_knobs" in text
    assert "  searcher.max_retries=4 " in help_text(["searcher=optuna_gp"])


def test_run_writes_a_best_so_far_png(tmp_path: Path) -> None:
    from searchlab.run.lifecycle import execute

    cfg = {"problem": {"_target_": "searchlab.adapters.synthetic.SyntheticKnobs"},
           "searcher": {"_target_": "searchlab.searchers.RandomSearcher"},
           "executor": {"_target_": "searchlab.run.execution.SerialExecutor"},
           "budget": {"evaluations": 15}, "seed": 1, "progress": "off"}
    summary = execute(cfg, tmp_path / "run", quiet=True)
    png = tmp_path / "run" / "best_so_far.png"
    data = png.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and data[12:16] == b"IHDR"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (700, 400)
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["evaluations"] == summary["evaluations"] == 15
    execute({**cfg, "plot": False}, tmp_path / "noplot", quiet=True)
    assert (tmp_path / "noplot" / "summary.json").is_file() and not (tmp_path / "noplot" / "best_so_far.png").exists()
