"""tools/install_futhark.sh's last line (issue 46, item 6: it printed "Futhark 0.25.27. in ...")."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "tools" / "install_futhark.sh"


def test_the_installed_version_is_said_without_a_double_period(tmp_path: Path) -> None:
    line = next(x for x in SCRIPT.read_text().splitlines() if x.startswith('echo "install_futhark: $("$BIN" --version'))
    fake = tmp_path / "futhark"
    fake.write_text("#!/bin/sh\necho 'Futhark 0.25.27.'\necho 'Compiled with GHC 9.6.6.'\n")
    fake.chmod(0o755)
    out = subprocess.run(["bash", "-c", line], env={**os.environ, "BIN": str(fake)}, capture_output=True, text=True,
                         check=True)
    assert out.stdout == f"install_futhark: Futhark 0.25.27 installed in {fake}\n"
