"""The README's claims about defaults are the code's (issue 46 item 5).

The README is a guide, so it states a few defaults in words; each such statement is read out of the
README's text here and compared with the code that decides it, so a change to either side without
the other fails this test: the quick start (exactly ``make demo`` and ``make test``), what ``make demo``
runs, the default executor, ``auto``'s delegates on thresholds and DAGs (and ``--help``'s line for
``auto``), the length and the "next steps" section, the links, and the problem/searcher names in the
README's commands.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import yaml

from searchlab import registry

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _blocks() -> list[str]:
    return re.findall(r"```bash\n(.*?)```", README, flags=re.S)


def _commands(block: str) -> list[str]:
    joined = block.replace("\\\n", " ")
    return [line.split("#")[0].strip() for line in joined.splitlines() if line.split("#")[0].strip()]


def test_quick_start_is_exactly_make_demo_and_make_test() -> None:
    section = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1
    assert _commands(blocks[0]) == ["make demo", "make test"]


def test_the_demo_runs_what_the_readme_says() -> None:
    said = re.search(r"`make demo` runs `\.venv/bin/python -m searchlab ([^`]*)`", README)
    assert said, "the README says what make demo runs"
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^demo:.*\n\t(.*)$", makefile, flags=re.M)
    assert recipe
    assert recipe.group(1).replace("$(BIN)/python", ".venv/bin/python").replace(" $(ARGS)", "") == (
        f".venv/bin/python -m searchlab {said.group(1)}")


def test_the_default_executor_is_the_readmes() -> None:
    said = re.search(r"`executor=(\w+)` \(the default\)", README)
    assert said
    config = yaml.safe_load((ROOT / "searchlab/conf/config.yaml").read_text(encoding="utf-8"))
    executors = [d["executor"] for d in config["defaults"] if isinstance(d, dict) and "executor" in d]
    assert executors == [said.group(1)]


def test_autos_delegates_are_the_readmes_and_helps() -> None:
    said = re.search(r"`binary` on thresholds, `(\w+)` on DAGs", README)
    assert said and "`auto`" in README[: said.start()].rsplit("\n- ", 1)[-1]
    params = inspect.signature(registry.searcher_class("auto").__init__).parameters
    assert params["thresholds"].default == "binary"
    assert params["dag"].default == said.group(1)
    help_line = (ROOT / "searchlab/conf/searcher/auto.yaml").read_text(encoding="utf-8").splitlines()[0]
    assert f"{params['thresholds'].default} on thresholds" in help_line
    assert f"{params['dag'].default} on DAGs" in help_line


def test_readme_is_a_guide_with_next_steps() -> None:
    assert len(README.splitlines()) <= 120
    assert "\n## Next steps\n" in README


def test_every_link_in_the_readme_exists() -> None:
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    assert links
    for link in links:
        assert (ROOT / link).exists(), link
    for path in re.findall(r"`((?:examples|bench)/[\w/.-]+\.\w+)`", README):
        assert (ROOT / path).exists(), path


def test_the_readmes_commands_name_registered_problems_and_searchers() -> None:
    names = {"problem": set(registry.problems()), "searcher": set(registry.searchers())}
    seen = 0
    for block in _blocks():
        for command in _commands(block):
            for kind, value in re.findall(r"(?:^|\s)(problem|searcher)=([\w,]+)", command):
                for name in value.split(","):
                    assert name in names[kind], f"{kind}={name} in {command!r}"
                    seen += 1
    assert seen >= 5


def test_the_compare_example_is_held_out_where_it_names_auto_and_has_the_seeds_its_test_needs() -> None:
    """Issue 54, item 6: the README's sweep named ``auto`` on a table its defaults were chosen on and ran 5
    seeds where the report's own rule needs 7 for three searchers."""
    from searchlab.cli.compose import compose
    from searchlab.core.provenance import file_digest, matches
    from searchlab.study.analysis.headline import pairs_needed

    section = README.split("**Compare searchers.**", 1)[1].split("\n**", 1)[0]
    (sweep,) = [c for block in re.findall(r"```bash\n(.*?)```", section, flags=re.S) for c in _commands(block)
                if "searchlab -m " in c]
    args = sweep.split("searchlab -m ", 1)[1].split()
    values = dict(a.split("=", 1) for a in args)
    searchers, seeds = values["searcher"].split(","), values["seed"].split(",")
    n = len(searchers)
    assert len(seeds) >= pairs_needed(n * (n - 1) // 2)  # every pair of searchers can be told apart
    problem = compose([a for a in args if not a.startswith(("searcher=", "seed="))]).cfg.problem
    path = problem.get("path")
    digest = file_digest(ROOT / str(path)) if path else None
    for name in searchers:  # a searcher's own training tables are no example of how it does
        chosen_on = registry.searcher_class(name).defaults_chosen_on
        assert matches(tuple(chosen_on), dict(problem), digest) is None, (name, dict(problem))
    assert "auto" in searchers
