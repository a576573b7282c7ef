"""The C DFT library and the FFTW reference, as the DFT benchmarks measure them (a deliberate public door).

``problem=dft`` uses these inside; the benchmarks of docs/grammar.md need them directly: FFTW's plan timed
under the problem's own protocol beside ours (:func:`versus_fftw`, :func:`problem_reference`,
:class:`FftwPlan`), the library's build and its run-time settings (:func:`load`, :func:`build`,
:func:`open_library`, :data:`COMPACT_BYTES`, :data:`FLAGS`, :data:`EXECUTOR`, :func:`library_source`), a
plan and aligned arrays to time fixed plans in C (:class:`Plan`, :func:`aligned`), and which lengths the
codelets cover (:func:`smooth`). Names only: nothing here is new code.
"""

from searchlab.adapters.grammar._clib import COMPACT_BYTES, EXECUTOR, FLAGS, Plan, aligned, build, load, open_library
from searchlab.adapters.grammar._codegen import library_source, smooth
from searchlab.adapters.grammar._fftw import FftwPlan, problem_reference, versus_fftw

__all__ = ["COMPACT_BYTES", "EXECUTOR", "FLAGS", "FftwPlan", "Plan", "aligned", "build", "library_source", "load",
           "open_library", "problem_reference", "smooth", "versus_fftw"]
