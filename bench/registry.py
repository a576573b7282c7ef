"""Every benchmark ``python -m bench`` knows: its name and the module (under bench/) that defines it.

A module defines ``BENCHMARK`` (a :class:`bench.harness.Benchmark`, or a list of them); it is imported only when
its benchmark runs, so listing them is instant. tests/bench/test_bench_rules.py checks that every module of
bench/ but the harness is registered here or is a helper a registered one imports.
"""

from bench.harness import register

# DFT: searchers on the C library's grammar, and the library against FFTW (docs/grammar.md, docs/measurement.md)
register("dag_search", "dag_search")
register("dag_heldout", "dag_heldout")
register("bluestein_lengths", "bluestein_lengths")
register("dft_scalar_rules", "dft_scalar_rules")
register("tag_study", "tag_study")
register("dft_fftw", "dft_fftw")
register("dft_paired", "dft_paired")
register("dft_fixed", "dft_fixed")
register("dft_ab", "dft_ab")
register("dft_measure", "dft_measure")

# measurement: the protocol, the confirm phase and the run-end decision (docs/measurement.md)
register("protocol", "protocol")
register("confirm", "confirm")
register("confirm_flips", "confirm_flips")
register("demo_repeat", "demo_repeat")
register("front_door", "front_door")

# Futhark threshold tuning (docs/futhark.md)
register("futhark", "futhark")
register("futhark_sizes", "futhark")
register("futhark_check", "futhark_check")
register("thresholds", "thresholds")

# searchers on recorded tables (docs/knobs.md, docs/baselines.md, docs/transfer.md, docs/tuning.md)
register("baselines", "baselines")
register("probabilistic", "probabilistic")
register("probabilistic_record", "probabilistic")
register("kt_bridge", "kt_bridge")
register("transfer", "transfer")
register("transfer_select", "transfer_select")
register("tuner_folds", "tuner_folds")
register("tuned_peers", "tuned_peers")

# the platform: driver overhead, clusters, studies, sweeps (docs/cluster.md, docs/study.md, docs/integrations.md)
register("overhead", "overhead")
register("cluster", "cluster")
register("study_replay", "study_replay")
register("replay_throughput", "replay_throughput")
register("joblib_sweep", "joblib_sweep")

# auto: its thinking time and traps beside Kernel Tuner's strategies, its choices and held-out checks (issues 16, 22, 47, 53)
register("auto_kt", "auto_kt")
register("auto_spaces", "auto_spaces")
register("auto_heldout", "auto_heldout")
register("auto_loto", "auto_loto")
register("auto_surrogates", "auto_surrogates")
register("auto_milo", "auto_milo")
register("peers", "peers")
register("proposal_time", "proposal_time")
register("integration_speed", "integration_speed")

# the field's own files: searchlab reproduce against autotuning_experiment (docs/study.md, issue 51)
register("reproduce_field", "reproduce_field")

# what a user sees: every printed command pasted, the longest silence of each (issues 46 and 54)
register("walk", "walk")
