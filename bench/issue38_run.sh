#!/bin/bash
# The one exclusive benchmark run of issue 38 (TAG), in priority order; see docs/grammar.md.
# Run as: cpuslot --exclusive bash bench/issue38_run.sh
set -x
R=bench/results
python bench/dft_fftw.py --sizes 65536 --seeds 0 1 2 3 4 --searcher tag_scaled --out $R/dft_fftw_65536_tag_scaled.json
python bench/dag_heldout.py --sizes 1024 3000 10007 65536 100000 --seeds 20 --budget 150 --searchers tag_scaled mc random --out $R/dag_heldout.json
python bench/tag_study.py --sizes 4096 32768 --seeds 5 --out $R/tag_study.json
python bench/dag_heldout.py --sizes 1048576 --big-seeds 5 --big-budget 60 --big-searchers tag_scaled mc --out $R/dag_heldout_2p20.json
python bench/dft_fftw.py --sizes 65536 --seeds 0 1 2 3 4 --searcher mc --out $R/dft_fftw_65536_mc.json
python bench/dft_fftw.py --sizes 65536 --seeds 0 1 2 3 4 --searcher tag --budget 400 --out $R/dft_fftw_65536_tag_400.json
python bench/dft_fftw.py --sizes 65536 --seeds 0 1 2 3 4 --searcher mc --budget 400 --out $R/dft_fftw_65536_mc_400.json
python bench/dft_fftw.py --sizes 65536 --seeds 0 1 2 3 4 --searcher tag_scaled --budget 400 --out $R/dft_fftw_65536_tag_scaled_400.json
python bench/dft_fftw.py --sizes 65536 --seeds 0 1 2 3 4 --searcher tag_scaled --rounds 15 --out $R/dft_fftw_65536_tag_scaled_rerun.json
