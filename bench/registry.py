"""Every benchmark ``python -m bench`` knows: its name and the module (under bench/) that defines it.

A module defines ``BENCHMARK`` (a :class:`bench.harness.Benchmark`, or a list of them); it is imported only when
its benchmark runs, so listing them is instant.
"""

from bench.harness import register

# register("name", "module")  -- one line per benchmark, grouped by what it measures

# auto: its thinking time and traps beside Kernel Tuner's strategies, its choices and held-out checks (issues 16, 22, 47, 53)
register("auto_kt", "auto_kt")
register("auto_spaces", "auto_spaces")
register("auto_heldout", "auto_heldout")
register("auto_loto", "auto_loto")
register("peers", "peers")
register("proposal_time", "proposal_time")
register("integration_speed", "integration_speed")

# what a user sees: every printed command pasted, the longest silence of each (issues 46 and 54)
register("walk", "walk")
