"""``--help`` (issue 27, item 4): an overview, or one problem / searcher with a phrase per option.

Each option's phrase is read from where the option is declared, never written a second time: a
``#:`` comment above a config field or a ``# comment`` after it (problem, executor and budget
schemas), an ``Args:``/``Options:`` entry in the searcher's docstring, a ``# name: phrase`` line above
``XConfig = searcher_config(X)``, a ``# comment`` after the constructor parameter; failing those, the
option's annotation says what it takes. A value too long for one line is shortened to a pointer into
the docs, and no line is longer than :data:`WIDTH`: a longer entry wraps, so no phrase is cut short.
"""

from __future__ import annotations

import dataclasses
import inspect
import io
import re
import textwrap
import tokenize
from pathlib import Path
from typing import Any, get_type_hints

from searchlab.core.groups import NAMES
from searchlab.core.schema import built_from

WIDTH = 160
VALUE_CHARS = 32  # a longer default is shown as a pointer into the docs
GROUPS = NAMES  # searchlab.core.groups
_DOCS = (("measure", "docs/measurement.md"), ("model", "docs/knobs.md"), ("limits", "docs/knobs.md"),
         ("adapters.futhark", "docs/futhark.md"), ("adapters.knobs", "docs/knobs.md"), ("adapters.user", "docs/byo.md"),
         ("adapters.grammar", "docs/grammar.md"), ("tables", "docs/measurement.md"), ("searchers", "docs/baselines.md"))


def _comments(source: str) -> dict[str, str]:
    """``name -> phrase`` from ``name: T = v  # phrase`` lines and ``#: phrase`` lines above a field."""
    out: dict[str, str] = {}
    above = ""
    lines: dict[int, str] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                lines[tok.start[0]] = tok.string
    except (tokenize.TokenError, IndentationError):
        return out
    for number, line in enumerate(source.splitlines(), start=1):
        comment = lines.get(number, "")
        names = re.findall(r"(?:^|[(,*]\s*)(\w+)\s*:\s*[^,=]+?(?:=|,|\)|$)", line.split("#")[0].strip())
        if comment.startswith("#:"):
            above = comment[2:].strip()
            continue
        if len(names) == 1 and not line.lstrip().startswith(("def ", "class ", "@", "return")):
            phrase = comment.lstrip("#").strip() if comment else above
            if phrase and names[0] not in out:
                out[names[0]] = phrase
        above = ""
    return out


def _docstring_args(doc: str | None) -> dict[str, str]:
    """``name: phrase`` entries of an ``Args:`` or ``Options:`` section."""
    out: dict[str, str] = {}
    inside = False
    for line in inspect.cleandoc(doc or "").splitlines():
        if line.strip() in ("Args:", "Options:", "Parameters:"):
            inside = True
        elif inside and (m := re.match(r"\s+(\w+)(?: \([^)]*\))?:\s*(.+)", line)):
            out[m.group(1)] = m.group(2).strip()
        elif inside and line and not line.startswith(" "):
            inside = False
    return out


def _source(obj: Any) -> str:
    try:
        return textwrap.dedent(inspect.getsource(obj))
    except (OSError, TypeError):
        return ""


def _config_comments(cls: type) -> dict[str, str]:
    """``# name: phrase`` lines right above ``XConfig = searcher_config(Class)`` in the class's module
    (where the built-in searchers document their options)."""
    import sys

    lines = _source(sys.modules.get(cls.__module__)).splitlines()
    out: dict[str, str] = {}
    for i, line in enumerate(lines):
        if re.match(rf"\w+\s*=\s*searcher_config\(\s*{re.escape(cls.__name__)}\b", line):
            j = i - 1
            while j >= 0 and (m := re.match(r"#\s*(\w+):\s*(.+)", lines[j])):
                out.setdefault(m.group(1), m.group(2).strip())
                j -= 1
    return out


def phrases(schema: type) -> dict[str, str]:
    """Each option's phrase, from its one declaration (see the module docstring)."""
    cls = getattr(schema, "__searcher__", None) or built_from(schema)
    found: dict[str, str] = {}
    for klass in (cls.__mro__ if cls is not None else ()):
        init = klass.__dict__.get("__init__")
        found = {**_comments(_source(init)), **_docstring_args(getattr(init, "__doc__", None)), **found}
        found = {**_docstring_args(klass.__doc__), **_config_comments(klass), **found}
    for klass in schema.__mro__:
        if dataclasses.is_dataclass(klass):
            found = {**_comments(_source(klass)), **found}
    return found


def _type_phrase(annotation: Any) -> str:
    """What an option takes, in words, from its annotation (when nothing else describes it)."""
    import types
    import typing

    args = typing.get_args(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        return " or ".join([_type_phrase(a) for a in rest] + (["null"] if len(rest) < len(args) else []))
    if typing.get_origin(annotation) is typing.Literal:
        return "one of " + ", ".join(str(a) for a in args)
    text = getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")
    words = {"int": "an integer", "float": "a number", "str": "a string", "bool": "true or false",
             "dict": "a mapping", "list": "a list", "Any": "any value"}
    return words.get(text, text)


def _value(value: Any, where: str) -> str:
    text = "true" if value is True else "false" if value is False else "null" if value is None else str(value)
    if len(text) <= VALUE_CHARS:
        return text
    return f"<{type(value).__name__}: see {_doc_for(where)}>"  # e.g. a sensor model: documented, not dumped


def _doc_for(where: str) -> str:
    return next((doc for key, doc in _DOCS if key in where), "README.md")


def _bytes(text: str) -> int:
    return len(text.encode())


def _fit(line: str) -> str:
    """``line`` within WIDTH, counted in UTF-8 bytes (what ``awk length`` and most terminals'
    column checks count for "§"); see :func:`_entry` for a phrase that does not fit."""
    return "\n".join(_entry(line))


def _entry(line: str) -> list[str]:
    """``line`` as lines of at most WIDTH bytes, never cut mid-sentence (issue 46, item 4: help entries
    stopped at "capped by plays per arm,"). What does not fit wraps at word boundaries onto lines
    indented to where the entry's phrase starts (after the first run of spaces that follows its name)."""
    if _bytes(line) <= WIDTH:
        return [line]
    lead = len(line) - len(line.lstrip())
    gap = line.find("  ", lead)
    if 0 < gap < WIDTH // 2:
        indent = len(line) - len(line[gap:].lstrip())
        head, words = line[:indent], line[indent:].split()
    else:
        indent, head, words = lead + 4, line[:lead], line[lead:].split()
    lines = [head]
    for word in words:
        current = lines[-1]
        joined = current + word if not current or current.endswith(" ") else f"{current} {word}"
        if _bytes(joined) > WIDTH and len(current) > indent:
            lines.append(" " * indent + word)
        else:
            lines[-1] = joined
    return [x.rstrip() for x in lines]


def describe(path: Path) -> str:
    """The first comment line of a config file."""
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            return line.lstrip("# ").strip()
    return ""


def names(conf: Path, group: str) -> list[str]:
    """Registered names (plugins included) and the YAML files of the group."""
    from searchlab import registry

    found = {p.stem for p in (conf / group).glob("*.yaml")}
    if group in registry.KINDS:
        found |= set(registry.entries(group))
    return sorted(found)


def _schema(group: str, name: str) -> type | None:
    from searchlab import registry

    if group not in registry.KINDS:
        return None
    entry = registry.entries(group).get(name)
    return entry.schema if entry is not None else None


def options(conf: Path, group: str, name: str) -> dict[str, Any]:
    """Each option's default: the schema's, then the config file's."""
    import yaml

    from searchlab.searchers._schema import schema_defaults

    schema = _schema(group, name)
    out = schema_defaults(schema) if schema is not None else {}
    path = conf / group / f"{name}.yaml"
    if path.is_file():
        try:
            data = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError:
            data = {}
        out.update({k: v for k, v in data.items() if k not in ("defaults", "_target_")})
    return out


def description(conf: Path, group: str, name: str) -> str:
    from searchlab import registry

    path = conf / group / f"{name}.yaml"
    return describe(path) if path.is_file() else registry.describe(group, name) if group in registry.KINDS else ""


def space_kind(name: str) -> str:
    """The kind of space a problem has, read from its ``space`` property's annotation (nothing is built)."""
    import types
    import typing

    from searchlab import registry
    from searchlab.errors import ConfigError

    try:
        fget = getattr(getattr(registry.load_class("problem", name), "space", None), "fget", None)
        hint = get_type_hints(fget).get("return") if fget is not None else None
    except (ConfigError, NameError, TypeError, AttributeError):
        return "?"
    members = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    kinds = [str(getattr(m, "kind", "?")) for m in members]
    return " or ".join("as recorded (any kind)" if k == "space" else k for k in kinds)


def _where(group: str, name: str) -> str:
    schema = _schema(group, name)
    return getattr(schema, "__module__", "") if schema is not None else group


def _compact(conf: Path, group: str, name: str) -> list[str]:
    """The options of an executor or budget on the overview, packed into lines of at most WIDTH."""
    where = _where(group, name)
    lines = [" " * 25]
    for item in (f"{k}={_value(v, k + ' ' + where)}" for k, v in options(conf, group, name).items()):
        if len(lines[-1]) + len(item) + 2 > WIDTH:
            lines.append(" " * 25)
        lines[-1] += ("" if lines[-1].isspace() else ", ") + item
    return [_fit(line) for line in lines if not line.isspace()]


# searcher families listed on one entry of the overview (each member still has its own --help)
FAMILIES = {"kt_": "Kernel Tuner 1.5's strategies, run in searchlab's loop (needs the bench extra; knobs):"}


def _family(conf: Path, prefix: str) -> list[str]:
    """One overview entry for a family of searchers: its description, then its members packed into lines."""
    members = [n for n in names(conf, "searcher") if n.startswith(prefix)]
    lines = [_fit(f"  {prefix + '*':<22} {FAMILIES[prefix]}"), " " * 25]
    for name in members:
        if len(lines[-1]) + len(name) + 2 > WIDTH:
            lines.append(" " * 25)
        lines[-1] += ("" if lines[-1].isspace() else ", ") + name
    return lines


def overview(conf: Path, usage: str) -> str:
    """Every problem (with its space kind), searcher, executor and budget, one line each (a family: one entry)."""
    parts = [usage]
    for group in GROUPS:
        focus = f"; {group}=NAME --help: its options" if group in ("problem", "searcher") else ""
        parts.append(f"{group}s ({group}=NAME{focus}):")
        for name in names(conf, group):
            family = next((f for f in FAMILIES if group == "searcher" and name.startswith(f)), None)
            if family is not None:
                if name == next(n for n in names(conf, group) if n.startswith(family)):
                    parts.extend(_family(conf, family))
                continue
            kind = f"[{space_kind(name)}] " if group == "problem" else ""
            parts.append(_fit(f"  {name:<22} {kind}{description(conf, group, name)}"))
            if group in ("executor", "budget"):
                parts.extend(_compact(conf, group, name))
        parts.append("")
    parts.extend(entry_points())
    return "\n".join(parts)


def entry_points() -> list[str]:
    """The overview's last section: the other doors, as commands to paste (issue 46, item 4)."""
    from searchlab.core.commands import spelled

    run, study, export = spelled("searchlab"), spelled("searchlab.study"), spelled("searchlab.export")
    shell = [(f"{study} RUN_DIR ...", "compare a sweep's runs: tables, curves, report (docs/study.md)"),
             (f"{study} study=NAME", "run a study grid of conf/study/ (--help: its options)"),
             (f"{export} t4 RUN_DIR -o t4.json", "a run as T4, Kernel Tuner cache, CSV (--help: formats)"),
             (f"{run} reproduce EXPERIMENT.json", "run a recorded experiment again"),
             (f"{run} problem=opencl_kernel problem.spec=FILE", "tune your own kernel or program (docs/byo.md)")]
    python = [("from searchlab.integrations.kernel_tuner import Strategy", 'tune_kernel(..., strategy=Strategy("auto"))'),
              ("from searchlab.integrations.optuna import Sampler", 'optuna.create_study(sampler=Sampler("auto"))'),
              ("from searchlab.integrations.tune import Searcher", 'tune.TuneConfig(search_alg=Searcher("auto"))')]
    lines = ["other entry points (paste into a shell):"]
    width = max(len(c) for c, _ in shell) + 2
    lines += [_fit(f"  {c:<{width}}{p}") for c, p in shell]
    lines.append("searchlab where you already tune: Kernel Tuner, Optuna, Ray Tune (paste into Python; docs/integrations.md):")
    width = max(len(c) for c, _ in python) + 2
    lines += [_fit(f"  {c:<{width}}# then {p}") for c, p in python]
    lines.append("docs: docs/byo.md (your kernel), docs/measurement.md (confirm phase, verdict), docs/study.md, "
                 "docs/cluster.md, docs/integrations.md")
    return lines


def focused(conf: Path, group: str, name: str) -> str:
    """One problem or searcher: what it is, its space kind, and each option with its phrase."""
    from searchlab.errors import ConfigError, did_you_mean

    known = names(conf, group)
    if name not in known:
        raise ConfigError(f"{group}={name}: no such {group}{did_you_mean(name, known)} (available: {', '.join(known)})")
    schema = _schema(group, name)
    said = phrases(schema) if schema is not None else {}
    hints = get_type_hints(schema) if schema is not None and dataclasses.is_dataclass(schema) else {}
    lines = [_fit(f"{group}={name}: {description(conf, group, name)}")]
    if group == "problem":
        lines.append(f"  space: {space_kind(name)}")
    values = options(conf, group, name)
    if not values:
        lines.append("  (no options)")
    where = _where(group, name)
    ranges = _ranges(group, name)
    for key, value in values.items():
        shown = "(required)" if value == "???" else _value(value, key + " " + where)
        phrase = said.get(key) or _type_phrase(hints.get(key, type(value)))
        if key in ranges:  # the range problem=searcher_settings tunes (searchlab/searchers/_tunable.py)
            phrase += f"; tunable {ranges[key].describe()}"
        lines.append(_fit(f"{f'  {group}.{key}={shown}':<36}  {phrase}"))
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            lines.extend(_nested(f"{group}.{key}", value, where))
    return "\n".join(lines) + "\n"


def _nested(prefix: str, value: Any, where: str) -> list[str]:
    """The fields of a nested option group (``problem.measure``: a MeasurementProtocol), each with
    this problem's default and the phrase its declaration gives (issue 46, item 4)."""
    said: dict[str, str] = {}
    for klass in type(value).__mro__:
        if dataclasses.is_dataclass(klass):
            said = {**_comments(_source(klass)), **said}
    hints = get_type_hints(type(value))
    out = []
    for f in dataclasses.fields(value):
        item = getattr(value, f.name)
        phrase = said.get(f.name) or _type_phrase(hints.get(f.name, type(item)))
        option = f"    {prefix}.{f.name}={_value(item, f'{f.name} {where}')}"
        out.append(_fit(f"{option:<36}  {phrase}"))
    return out


def _ranges(group: str, name: str) -> dict[str, Any]:
    """A searcher's tunable ranges, declared once in its constructor signature (``Annotated``)."""
    if group != "searcher":
        return {}
    from searchlab.errors import ConfigError
    from searchlab.searchers import searcher_class
    from searchlab.searchers._tunable import tunable_ranges

    try:
        return dict(tunable_ranges(searcher_class(name)))
    except ConfigError:
        return {}
