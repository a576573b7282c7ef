"""One door for every table format (issue 45, item 4): ``searchlab.interchange.open_table``.

Every reader (priors, the settings problem's training tables, the table problem, export, a study's
split) goes through it, so a file is one format whoever asks, parsed once per process.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from searchlab.errors import ConfigError
from searchlab.export import load_source
from searchlab.interchange import open_table
from searchlab.interchange._open import table_kind
from searchlab.interchange.table import save_table
from searchlab.run.priors import read_prior
from searchlab.tuning._train import train_table

DATA = Path(__file__).resolve().parents[1] / "data"
KT = DATA / "kt_convolution_A100_small.json.gz"


def test_every_format_opens_through_the_one_door(tmp_path: Path) -> None:
    kt = open_table(KT)
    assert table_kind(KT) == "a Kernel Tuner cache"
    ours = save_table(kt, tmp_path / "ours.json.gz")
    assert table_kind(ours) == "a searchlab table"
    assert open_table(ours).rows.keys() == kt.rows.keys()
    from searchlab.export import export, from_table

    t4 = tmp_path / "t4.json"
    t4.write_text(json.dumps(export("t4", from_table(kt))))
    assert table_kind(t4) == "a T4 results file"
    assert {c.key for c in open_table(t4).space.enumerate()} <= {c.key for c in kt.space.enumerate()}


def test_a_file_is_parsed_once_and_again_when_it_changes(tmp_path: Path) -> None:
    copy = tmp_path / "kt.json.gz"
    shutil.copy(KT, copy)
    first = open_table(copy)
    assert open_table(copy) is first  # cached: the priors, training tables and the table problem share it
    assert read_prior(copy).rows.keys() == first.rows.keys()
    assert train_table(copy) is first
    doc = json.loads(gzip.decompress(copy.read_bytes()))
    doc["device_name"] = "changed"
    copy.write_bytes(gzip.compress(json.dumps(doc).encode()))
    again = open_table(copy)
    assert again is not first and again.device == "changed"


def test_export_reads_a_kernel_tuner_cache_too() -> None:
    source = load_source(KT)  # export decided formats on its own before and refused these
    assert source.records and source.objective.startswith("time")


@pytest.mark.parametrize("content, needle", [
    ('{"something": 1}', "not a run directory, a Kernel Tuner cache"),
    ('[1, 2]', "its top level is a list"),
    ('{"tune_params": {"a": [1]}, "cache": {}}', "holds no entry"),
])
def test_bad_files_are_one_line(tmp_path: Path, content: str, needle: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    with pytest.raises(ConfigError) as err:
        open_table(bad, "prior")
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_missing_and_directory_without_records(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        open_table(tmp_path / "absent.json")
    with pytest.raises(ConfigError, match="without results.db"):
        open_table(tmp_path)
    with pytest.raises(ConfigError, match="takes no option"):
        open_table(save_table(open_table(KT), tmp_path / "t.json.gz"), missing="invalid")
