"""Printed commands work when pasted (searchlab.core.commands; issue 46, item 1; issue 47, case 6): every value
reads back unchanged through Hydra's override grammar and the shell, and the program is this interpreter."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from hydra.core.override_parser.overrides_parser import OverridesParser

from searchlab.core import commands
from searchlab.core.commands import command, hydra_value, override

VALUES = ["/tmp/sw3/0_budget.evaluations=5,seed=1", "/tmp/a b/c", "/x/it's", '/x/a"b', "/x/a\\", '/x/a\\"b',
          "/x/[1,2]", "/x/{a:b}", "/x/(y)", "/plain/x-1.2_y", "/x/~me", "/x/a*b?c", "/x/tab\there"]


@pytest.mark.parametrize("value", VALUES)
def test_a_value_reads_back_unchanged_through_hydra_and_the_shell(value: str) -> None:
    line = command("searchlab", override("resume", value))
    words = shlex.split(line)  # what a fresh shell hands the program
    (parsed,) = OverridesParser.create().parse_overrides([words[-1]])
    assert parsed.key_or_group == "resume" and parsed.value() == value


def test_an_interpolation_is_not_resolved() -> None:
    (parsed,) = OverridesParser.create().parse_overrides([override("resume", "/x/${oc.env:HOME}")])
    assert parsed.value() == "/x/\\${oc.env:HOME}"  # OmegaConf reads \\${ as a literal ${


def test_a_plain_path_stays_plain_and_a_word_is_quoted() -> None:
    assert hydra_value("/a/b.c") == "/a/b.c"
    assert hydra_value("true") == '"true"' and hydra_value("12") == '"12"'  # not a bool, not an int


def test_the_program_is_this_interpreter_unless_the_console_script_is_its(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("MAKELEVEL", raising=False)
    assert commands.program() == [sys.executable, "-m", "searchlab"]  # no searchlab on PATH
    script = tmp_path / "searchlab"
    script.write_text("#!/somewhere/else/bin/python\n")
    script.chmod(0o755)
    assert commands.program() == [sys.executable, "-m", "searchlab"]  # another interpreter's
    script.write_text(f"#!{Path(sys.executable).parent / 'python'}\n")
    assert commands.program() == ["searchlab"]
    assert commands.program("searchlab.study") == [sys.executable, "-m", "searchlab.study"]


def test_under_make_the_program_is_the_interpreter_even_with_our_console_script_on_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``make demo`` puts .venv/bin on make's PATH only: a ``searchlab resume=...`` printed after Ctrl-C
    was "command not found" in the user's shell (bench/walk.py, step 3)."""
    script = tmp_path / "searchlab"
    script.write_text(f"#!{Path(sys.executable).parent / 'python'}\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("MAKELEVEL", "1")
    assert commands.program() == [sys.executable, "-m", "searchlab"]
