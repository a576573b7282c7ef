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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from searchlab.adapters.futhark._chains import Chain, Level
from searchlab.adapters.futhark._kernels import LUD_SOURCE
from searchlab.adapters.futhark._program import DatasetSpec, FutharkProgram
from searchlab.adapters.futhark._runtime import Execution, Group
from searchlab.errors import ConfigError

SIDES = (("upper", "column"), ("lower", "row"))  # perimeter panel, and what its flat version gives a thread


def perimeter_chain(side: str, line: str) -> Chain:
    """A perimeter solve: thread per block | work-group per block | thread per column (row)."""
    return Chain(f"perimeter_{side}", (Level("outer", f"{side}.thread_per_block"),
                                       Level("intra", f"{side}.group_per_block")), f"{side}.thread_per_{line}")


LUD_CHAINS = (
    *(perimeter_chain(side, line) for side, line in SIDES),
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

    def __init__(
        self,
        block: int = 0,  # block size B, a power of two in [2, 64]; 0: the preset's (8 on cpu, 16 on gpu)
        **options: Any,  # those of FutharkProgram
    ) -> None:
        preset = options.get("preset", "cpu")
        self.block = block or (PRESET_SIZES[preset][0] if preset in PRESET_SIZES else 8)
        if self.block < 2 or self.block & (self.block - 1) or self.block > 64:
            raise ConfigError(f"problem.block={block}: must be a power of two in [2, 64] (0: preset default)")
        super().__init__(**options)

    def fingerprint_params(self) -> Mapping[str, Any]:
        """The block size used (``block=0`` and the preset's own size are the same program)."""
        return {**super().fingerprint_params(), "block": self.block}

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
        for step in range(nb):
            o = step * b
            rt.launch("lud_diagonal", (b,), (b,), m, i32(n), i32(o))
            r = nb - 1 - step
            if r == 0:
                break
            for side, _ in SIDES:
                self._perimeter(rt, side, step, r, (m, i32(n), i32(o)))
            self._internal(rt, step, r, data)

    def _perimeter(self, rt: Execution, side: str, step: int, r: int, args: tuple[Any, ...]) -> None:
        b = self.block
        with rt.construct(f"perimeter_{side}", step, (r, b), (None, Group(b, 2 * 4 * b * b))) as v:
            if v == f"{side}.thread_per_block":
                rt.launch_grid(f"{side}_block", r, *args, np.int32(r))
            elif v == f"{side}.group_per_block":
                rt.launch(f"{side}_group", (r * b,), (b,), *args)
            else:
                rt.launch_grid(f"{side}_flat", r * b, *args, np.int32(r * b))

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
