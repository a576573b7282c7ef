"""Every benchmark ``python -m bench`` knows: its name and the module (under bench/) that defines it.

A module defines ``BENCHMARK`` (a :class:`bench.harness.Benchmark`, or a list of them); it is imported only when
its benchmark runs, so listing them is instant.
"""

from bench.harness import register

# register("name", "module")  -- one line per benchmark, grouped by what it measures
register("reproduce_field", "reproduce_field")  # searchlab reproduce vs autotuning_experiment, the field's files

# what a user sees: every printed command pasted, the longest silence of each (issues 46 and 54)
register("walk", "walk")
