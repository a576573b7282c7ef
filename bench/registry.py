"""Every benchmark ``python -m bench`` knows: its name and the module (under bench/) that defines it.

A module defines ``BENCHMARK`` (a :class:`bench.harness.Benchmark`, or a list of them); it is imported only when
its benchmark runs, so listing them is instant.
"""

from bench.harness import register

# register("name", "module")  -- one line per benchmark, grouped by what it measures

# auto's thinking time and traps beside Kernel Tuner's strategies (issue 53)
register("auto_kt", "auto_kt")
register("auto_spaces", "auto_spaces")
