"""The Futhark programs searchlab ships (``programs/*.fut``): ``problem=lud``, ``matmul``, ``loopmm``.

Each is :class:`~searchlab.adapters.futhark.program.FutharkServerProblem` with its program and
validation datasets as defaults (paper 003 Listing 4.1: the rest of the ``-- ==`` datasets train).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from searchlab.adapters.futhark.program import FutharkServerProblem

PROGRAMS = Path(__file__).parent / "programs"


class BundledProgram(FutharkServerProblem):
    """A program searchlab ships: ``problem.program`` may be left out (for ``problem=futhark`` it is required)."""

    default_program: ClassVar[Path]

    def __init__(
        self,
        program: str = "",  # the .fut file; empty: the bundled program (programs/NAME.fut)
        **options: Any,  # those of FutharkServerProblem
    ) -> None:
        super().__init__(program or str(self.default_program), **options)


class FutharkLud(BundledProgram):
    """``problem=lud``: our Rodinia-style blocked LUD (programs/lud.fut), paper 003 §4.3."""

    name = "lud"
    default_program = PROGRAMS / "lud.fut"
    default_validation = ("[64][64]f32", "[96][96]f32")


class FutharkMatmul(BundledProgram):
    """``problem=matmul``: batched matrix multiplication (programs/matmul.fut), Fig. 1.6."""

    name = "matmul"
    default_program = PROGRAMS / "matmul.fut"
    default_validation = ("[8][64][64]f32 [8][64][64]f32", "[512][8][8]f32 [512][8][8]f32")


class FutharkLoopmm(BundledProgram):
    """``problem=loopmm``: products in a shrinking loop (programs/loopmm.fut), Listing 1.6."""

    name = "loopmm"
    default_program = PROGRAMS / "loopmm.fut"
    default_validation = ("[128][128]f32", "[192][192]f32")
