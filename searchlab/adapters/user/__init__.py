"""Bring your own kernel or program (issue 13): problems from the user's files and the field's formats.

- ``opencl_kernel``: an OpenCL kernel described by a T1 spec (JSON or YAML);
- ``command``: any executable, knobs rendered into arguments, environment or a template file;
- ``python_kernel``: a kernel given to ``searchlab.tune(...)`` from Python (Kernel Tuner's ``tune_kernel``
  arguments, recorded in the run directory);
- ``t4``: a T4 results file replayed as a table (and :mod:`searchlab.export` writes T4 and
  Kernel Tuner cache files).
"""

from searchlab.adapters.user.command import Command
from searchlab.adapters.user.opencl_kernel import OpenCLKernel
from searchlab.adapters.user.python_kernel import PythonKernel
from searchlab.adapters.user.t4 import T4Replay

SCHEMAS: dict[str, type] = {
    "opencl_kernel": OpenCLKernel,
    "python_kernel": PythonKernel,
    "command": Command,
    "t4": T4Replay,
}

__all__ = ["SCHEMAS", "Command", "OpenCLKernel", "PythonKernel", "T4Replay"]
