"""``lud``: blocked LU decomposition without pivoting (Rodinia LUD, paper 003 §4.3).

A sequential loop over the diagonal blocks (``lud-clean.fut``): factorise the diagonal
block, solve the upper and lower perimeter panels, update the internal blocks. The loop
shrinks the parallelism every step (r = blocks left), so the ``suff_outer_par``
thresholds are loop-based (§2.2); the ``suff_intra_par`` ones compare with the fixed
intra-group parallelism (B or B²) and are simple, as in Fig. 4.3's chain with "regular
comparisons interspersed". Versions:

- perimeter (upper and lower, two constructs): thread per block | work-group per block
  with the diagonal and the panel block in local memory | thread per column (row);
- internal: thread per block | work-group per block with local-memory tiles (Rodinia's
  kernel) | thread per element | work-group per element (local reduction) | fully
  flattened (all products, then a segmented reduction).

Datasets are diagonally dominant random matrices; outputs are checked by L·U ≈ A.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from searchlab.adapters.futhark._chains import Chain, Level
from searchlab.adapters.futhark._kernels import LUD_SOURCE
from searchlab.adapters.futhark._program import DatasetSpec, FutharkProgram
from searchlab.adapters.futhark._runtime import Execution, Group
from searchlab.errors import ConfigError

LUD_CHAINS = (
    Chain("perimeter_upper", (Level("outer", "upper.thread_per_block"), Level("intra", "upper.group_per_block")),
          "upper.thread_per_column"),
    Chain("perimeter_lower", (Level("outer", "lower.thread_per_block"), Level("intra", "lower.group_per_block")),
          "lower.thread_per_row"),
    Chain("internal", (Level("outer", "internal.thread_per_block"), Level("intra", "internal.group_per_block"),
                       Level("outer", "internal.thread_per_element"), Level("intra", "internal.group_per_element")),
          "internal.flattened"),
)

# Listing 4.1: sizes alternate between training ("tune") and validation ("notune").
# preset -> (default block size, training sizes, validation sizes)
PRESET_SIZES = {
    "cpu": (8, (16, 48, 96), (32, 64)),
    "gpu": (16, (16, 64, 256, 1024, 4096), (32, 128, 512, 2048)),
}


@dataclass
class LudConfig:
    _target_: str = "searchlab.adapters.futhark.Lud"
    preset: str = "cpu"  # cpu (small, for CI on pocl) | gpu (16 ... 4096, Listing 4.1)
    block: int = 0  # block size B (power of two); 0: 8 on cpu, 16 on gpu
    repeats: int = 10  # profiled runs per dataset (median); all samples kept
    validation_repeats: int = 0  # profiled runs per validation dataset; 0: 3 x repeats
    check: str = "first"  # check outputs on the first run of each version/dataset, or always
    weighting: str = "none"  # none | baseline: objective relative to the untuned times (§2.1)
    log: bool = True  # keep the comparison log (Compared NAME <= VALUE: true.)
    reference_tuning: str | None = None  # .tuning file of the exhaustive best (validation report)
    seed: int = 0  # input data


@dataclass
class LudData:
    n: int
    pristine: Any
    work: Any
    a: np.ndarray
    tmp: Any = None


class Lud(FutharkProgram):
    name = "lud"
    chains = LUD_CHAINS
    source = LUD_SOURCE
    code_version = "1"

    def __init__(self, preset: str = "cpu", block: int = 0, repeats: int = 10, validation_repeats: int = 0,
                 check: str = "first", weighting: str = "none", log: bool = True,
                 reference_tuning: str | None = None, seed: int = 0) -> None:
        default_block = PRESET_SIZES[preset][0] if preset in PRESET_SIZES else 8
        self.block = block or default_block
        if self.block < 2 or self.block & (self.block - 1) or self.block > 64:
            raise ConfigError(f"problem.block={block}: must be a power of two in [2, 64] (0: preset default)")
        self.seed = seed
        super().__init__(preset, repeats, validation_repeats, check, weighting, log, reference_tuning,
                         block=self.block, seed=seed)

    def dataset_specs(self, preset: str) -> Sequence[DatasetSpec]:
        _, train, validation = PRESET_SIZES[preset]
        sizes = sorted([(n, True) for n in train] + [(n, False) for n in validation])
        bad = [n for n, _ in sizes if n % self.block]
        if bad:
            raise ConfigError(f"problem.block={self.block}: dataset sizes {bad} are not multiples of it")
        return [DatasetSpec(f"{n}.in", is_train, {"n": n}) for n, is_train in sizes]

    def build_options(self) -> list[str]:
        return [f"-DB={self.block}"]

    def prepare(self, spec: DatasetSpec) -> LudData:
        import pyopencl as cl

        n = spec.size["n"]
        rng = np.random.default_rng([self.seed, n])
        a = rng.uniform(0.0, 1.0, (n, n)).astype(np.float32)
        a += np.float32(n) * np.eye(n, dtype=np.float32)  # diagonally dominant: stable without pivoting
        ctx = self.cl.context
        pristine = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)
        work = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, a.nbytes)
        return LudData(n, pristine, work, a)

    def reset(self, data: LudData) -> None:
        import pyopencl as cl

        cl.enqueue_copy(self.cl.queue, data.work, data.pristine)

    def _temp(self, data: LudData, floats: int) -> Any:
        import pyopencl as cl

        if data.tmp is None:
            data.tmp = cl.Buffer(self.cl.context, cl.mem_flags.READ_WRITE, max(4, 4 * floats))
        return data.tmp

    def program(self, rt: Execution, spec: DatasetSpec, data: LudData | None) -> None:
        n, b = spec.size["n"], self.block
        nb = n // b
        m = data.work if data is not None else None
        i32 = np.int32
        tile = 4 * b * b
        for step in range(nb):
            o = step * b
            rt.launch("lud_diagonal", (b,), (b,), m, i32(n), i32(o))
            r = nb - 1 - step
            if r == 0:
                break
            args = (m, i32(n), i32(o))
            with rt.construct("perimeter_upper", step, (r, b), (None, Group(b, 2 * tile))) as v:
                if v == "upper.thread_per_block":
                    rt.launch_grid("upper_block", r, *args, i32(r))
                elif v == "upper.group_per_block":
                    rt.launch("upper_group", (r * b,), (b,), *args)
                else:
                    rt.launch_grid("upper_flat", r * b, *args, i32(r * b))
            with rt.construct("perimeter_lower", step, (r, b), (None, Group(b, 2 * tile))) as v:
                if v == "lower.thread_per_block":
                    rt.launch_grid("lower_block", r, *args, i32(r))
                elif v == "lower.group_per_block":
                    rt.launch("lower_group", (r * b,), (b,), *args)
                else:
                    rt.launch_grid("lower_flat", r * b, *args, i32(r * b))
            self._internal(rt, step, r, data)

    def _internal(self, rt: Execution, step: int, r: int, data: LudData | None) -> None:
        b, i32 = self.block, np.int32
        n = data.n if data is not None else 0
        m = data.work if data is not None else None
        o, w = step * b, r * b
        epar = (r * r, b * b, w * w, b)
        groups = (None, Group(b * b, 2 * 4 * b * b), None, Group(b, 4 * b))
        with rt.construct("internal", step, epar, groups) as v:
            args = (m, i32(n), i32(o))
            if v == "internal.thread_per_block":
                rt.launch_grid("internal_block", r * r, *args, i32(r))
            elif v == "internal.group_per_block":
                rt.launch("internal_group", (w, w), (b, b), *args)
            elif v == "internal.thread_per_element":
                rt.launch_grid("internal_elem", w * w, *args, i32(w))
            elif v == "internal.group_per_element":
                rt.launch("internal_elem_group", (w * w * b,), (b,), *args, i32(w))
            else:
                tmp = self._temp(data, (n // b) ** 2 * b**3) if data is not None else None
                rt.launch_grid("internal_products", w * w * b, m, tmp, i32(n), i32(o), i32(w))
                rt.launch_grid("internal_segred", w * w, m, tmp, i32(n), i32(o), i32(w))

    def verify(self, spec: DatasetSpec, data: LudData) -> str | None:
        import pyopencl as cl

        lu = np.empty_like(data.a)
        cl.enqueue_copy(self.cl.queue, lu, data.work)
        lower = np.tril(lu, -1).astype(np.float64) + np.eye(data.n)
        upper = np.triu(lu).astype(np.float64)
        err = np.linalg.norm(lower @ upper - data.a) / np.linalg.norm(data.a)
        if not np.isfinite(err) or err > 1e-4:
            return f"relative error of L·U vs A is {err:.3g} (> 1e-4)"
        return None
