"""Bad input on every new path through the real command line: one line, exit 2, no traceback, no results.db."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.byo_helpers import EXAMPLES, assert_refused, cli


def _files(tmp_path: Path) -> dict[str, Path]:
    t1 = json.loads((EXAMPLES / "stencil2d" / "stencil2d.json").read_text())
    t1["ConfigurationSpace"]["TuningParameters"][0]["Values"] = "__import__('os').getcwd()"
    (tmp_path / "evil.json").write_text(json.dumps(t1))
    (tmp_path / "cmd.yaml").write_text("knobs: {x: [1, 2]}\nrun: [true]\nshell: 'rm -rf /'\n")
    (tmp_path / "not_t4.json").write_text('{"schema_version": "1.0.0", "results": [{"configuration": 3}]}')
    return {p.stem: p for p in tmp_path.iterdir()}


@pytest.mark.parametrize("args, needles", [
    (["problem=opencl_kernel"], ["problem.spec", "no value given"]),
    (["problem=opencl_kernel", "problem.spec={evil}"], ["Values=", "Call is not allowed"]),
    (["problem=command", "problem.spec={cmd}"], ["unknown keys", "shell"]),
    (["problem=t4", "problem.path={not_t4}"], ["not a valid T4 document"]),
    (["problem=t4", "problem.path=absent.json"], ["absent.json", "no such file"]),
], ids=["no-spec", "t1-eval", "command-key", "t4-schema", "t4-missing"])
def test_bad_input_is_one_line_exit_2(tmp_path: Path, args: list[str], needles: list[str]) -> None:
    files = _files(tmp_path)
    argv = [a.format(**{k: str(v) for k, v in files.items()}) for a in args]
    out = cli(tmp_path, "searchlab", *argv, "searcher=random", "executor=serial", "progress=off")
    assert_refused(out, tmp_path, *needles)
