"""OpenCL sources of the code versions incremental flattening would generate.

LUD follows Rodinia's blocked LU decomposition without pivoting (Futhark's
``lud-clean.fut``, paper 003 §4.3): a diagonal-block factorisation, the upper and lower
perimeter solves, and the internal update, the last two in several versions. Matrix
multiplication follows Fig. 1.6's five versions. ``B`` (block size) and ``T`` (element
type) are compile-time definitions. Like Futhark's kernels, the thread-per-item versions
run on a 1-D grid rounded up to a fixed group size and guard the excess threads.
"""

from string import Template

_LUD_DIAGONAL = r"""
#define IDX(i, j) ((i) * n + (j))

/* One work-group of B threads factorises the diagonal block in local memory (Rodinia). */
__kernel void lud_diagonal(__global float *m, int n, int o) {
  __local float sh[B][B];
  int tx = get_local_id(0);
  for (int i = 0; i < B; i++) sh[i][tx] = m[IDX(o + i, o + tx)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int i = 0; i < B - 1; i++) {
    if (tx > i) {
      float s = sh[tx][i];
      for (int j = 0; j < i; j++) s -= sh[tx][j] * sh[j][i];
      sh[tx][i] = s / sh[i][i];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (tx > i) {
      float s = sh[i + 1][tx];
      for (int j = 0; j < i + 1; j++) s -= sh[i + 1][j] * sh[j][tx];
      sh[i + 1][tx] = s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int i = 0; i < B; i++) m[IDX(o + i, o + tx)] = sh[i][tx];
}

"""

# The perimeter solves, one template for both panels (paper 003 §4.3, Rodinia's perimeter kernel).
# Upper, U_sj = L_ss^-1 A_sj: forward substitution down each column q of the panel, unit diagonal
# (row 0 is already final). Lower, L_is = A_is U_ss^-1: substitution along each row q, divided by
# the diagonal. PANEL(i, q) is the panel's element at solve position i of line q, DIAG(i, k) the
# diagonal block's coefficient of position k in the solve of position i, LOC(i) the panel line in
# local memory (each thread's own line, laid out as Rodinia's kernels lay it).
_PERIMETER = Template(r"""
#define PANEL(i, q) $panel
#define DIAG(i, k) $diag
#define LOC(i) $local
__kernel void ${side}_block(__global float *m, int n, int o, int count) {
  if (get_global_id(0) >= count) return;
  int p0 = o + B * (get_global_id(0) + 1);
  for (int c = 0; c < B; c++)
    for (int i = $first; i < B; i++) {
      float s = m[PANEL(i, p0 + c)];
      for (int k = 0; k < i; k++) s -= m[DIAG(i, k)] * m[PANEL(k, p0 + c)];
      m[PANEL(i, p0 + c)] = s$divide;
    }
}

__kernel void ${side}_group(__global float *m, int n, int o) {
  __local float dia[B][B];
  __local float blk[B][B];
  int tx = get_local_id(0);
  int p0 = o + B * (get_group_id(0) + 1);
  for (int i = 0; i < B; i++) {
    dia[i][tx] = m[IDX(o + i, o + tx)];
    LOC(i) = m[PANEL(i, p0 + tx)];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int i = $first; i < B; i++) {
    float s = LOC(i);
    for (int k = 0; k < i; k++) s -= $local_diag * LOC(k);
    LOC(i) = s$local_divide;
  }
  for (int i = $first; i < B; i++) m[PANEL(i, p0 + tx)] = LOC(i);
}

__kernel void ${side}_flat(__global float *m, int n, int o, int count) {
  int gid = get_global_id(0);
  if (gid >= count) return;
  int q = o + B * (gid / B + 1) + gid % B;
  for (int i = $first; i < B; i++) {
    float s = m[PANEL(i, q)];
    for (int k = 0; k < i; k++) s -= m[DIAG(i, k)] * m[PANEL(k, q)];
    m[PANEL(i, q)] = s$divide;
  }
}
#undef PANEL
#undef DIAG
#undef LOC
""")
_UPPER = _PERIMETER.substitute(side="upper", panel="IDX(o + (i), (q))", diag="IDX(o + (i), o + (k))", first=1,
                               divide="", local="blk[(i)][tx]", local_diag="dia[i][k]", local_divide="")
_LOWER = _PERIMETER.substitute(side="lower", panel="IDX((q), o + (i))", diag="IDX(o + (k), o + (i))", first=0,
                               divide=" / m[IDX(o + i, o + i)]", local="blk[tx][(i)]", local_diag="dia[k][i]",
                               local_divide=" / dia[i][i]")

_INTERNAL = r"""
/* Internal update A_ij -= L_is U_sj over the r x r trailing blocks. */
__kernel void internal_block(__global float *m, int n, int o, int r) {
  int gid = get_global_id(0);
  if (gid >= r * r) return;
  int r0 = o + B * (gid / r + 1), c0 = o + B * (gid % r + 1);
  for (int i = 0; i < B; i++)
    for (int j = 0; j < B; j++) {
      float s = 0.0f;
      for (int k = 0; k < B; k++) s += m[IDX(r0 + i, o + k)] * m[IDX(o + k, c0 + j)];
      m[IDX(r0 + i, c0 + j)] -= s;
    }
}

__kernel void internal_group(__global float *m, int n, int o) {
  __local float lt[B][B];
  __local float ut[B][B];
  int tx = get_local_id(0), ty = get_local_id(1);
  int r0 = o + B * (get_group_id(1) + 1), c0 = o + B * (get_group_id(0) + 1);
  lt[ty][tx] = m[IDX(r0 + ty, o + tx)];
  ut[ty][tx] = m[IDX(o + ty, c0 + tx)];
  barrier(CLK_LOCAL_MEM_FENCE);
  float s = 0.0f;
  for (int k = 0; k < B; k++) s += lt[ty][k] * ut[k][tx];
  m[IDX(r0 + ty, c0 + tx)] -= s;
}

__kernel void internal_elem(__global float *m, int n, int o, int w) {
  int e = get_global_id(0);
  if (e >= w * w) return;
  int row = o + B + e / w, col = o + B + e % w;
  float s = 0.0f;
  for (int k = 0; k < B; k++) s += m[IDX(row, o + k)] * m[IDX(o + k, col)];
  m[IDX(row, col)] -= s;
}

__kernel void internal_elem_group(__global float *m, int n, int o, int w) {
  __local float p[B];
  int e = get_group_id(0), k = get_local_id(0);
  int row = o + B + e / w, col = o + B + e % w;
  p[k] = m[IDX(row, o + k)] * m[IDX(o + k, col)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = B / 2; s > 0; s >>= 1) {
    if (k < s) p[k] += p[k + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (k == 0) m[IDX(row, col)] -= p[0];
}

__kernel void internal_products(__global const float *m, __global float *tmp, int n, int o, int w) {
  int gid = get_global_id(0);
  if (gid >= w * w * B) return;
  int e = gid / B, k = gid % B;
  int row = o + B + e / w, col = o + B + e % w;
  tmp[gid] = m[IDX(row, o + k)] * m[IDX(o + k, col)];
}

__kernel void internal_segred(__global float *m, __global const float *tmp, int n, int o, int w) {
  int e = get_global_id(0);
  if (e >= w * w) return;
  int row = o + B + e / w, col = o + B + e % w;
  float s = 0.0f;
  for (int k = 0; k < B; k++) s += tmp[e * B + k];
  m[IDX(row, col)] -= s;
}
"""

LUD_SOURCE = _LUD_DIAGONAL + _UPPER + _LOWER + _INTERNAL

MATMUL_SOURCE = r"""
/* Fig. 1.6: z[N][P] = x[N][M] y[M][P], five semantically equal versions. */
T dot(__global const T *x, __global const T *y, int i, int j, int M, int P) {
  T s = 0;
  for (int k = 0; k < M; k++) s += x[i * M + k] * y[k * P + j];
  return s;
}

__kernel void mm_row(__global const T *x, __global const T *y, __global T *z, int N, int M, int P) {
  int i = get_global_id(0);
  if (i >= N) return;
  for (int j = 0; j < P; j++) z[i * P + j] = dot(x, y, i, j, M, P);
}

__kernel void mm_row_group(__global const T *x, __global const T *y, __global T *z, int N, int M, int P,
                           __local T *xr) {
  int i = get_group_id(0), j = get_local_id(0);
  for (int k = j; k < M; k += P) xr[k] = x[i * M + k];
  barrier(CLK_LOCAL_MEM_FENCE);
  T s = 0;
  for (int k = 0; k < M; k++) s += xr[k] * y[k * P + j];
  z[i * P + j] = s;
}

__kernel void mm_elem(__global const T *x, __global const T *y, __global T *z, int N, int M, int P) {
  int e = get_global_id(0);
  if (e >= N * P) return;
  z[e] = dot(x, y, e / P, e % P, M, P);
}

__kernel void mm_elem_group(__global const T *x, __global const T *y, __global T *z, int N, int M, int P,
                            __local T *p) {
  int e = get_group_id(0), k = get_local_id(0);
  int i = e / P, j = e % P;
  p[k] = x[i * M + k] * y[k * P + j];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = 1; s < M; s <<= 1) {
    if (k % (2 * s) == 0 && k + s < M) p[k] += p[k + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (k == 0) z[e] = p[0];
}

__kernel void mm_products(__global const T *x, __global const T *y, __global T *tmp, int N, int M, int P) {
  long gid = get_global_id(0);
  if (gid >= (long)N * P * M) return;
  int k = (int)(gid % M);
  long e = gid / M;
  int i = (int)(e / P), j = (int)(e % P);
  tmp[gid] = x[i * M + k] * y[k * P + j];
}

__kernel void mm_segred(__global const T *tmp, __global T *z, int N, int M, int P) {
  long e = get_global_id(0);
  if (e >= (long)N * P) return;
  T s = 0;
  for (int k = 0; k < M; k++) s += tmp[e * M + k];
  z[e] = s;
}

/* Listing 1.6's A'' = A' with M added to its first P columns (not a threshold construct). */
__kernel void loop_update(__global T *a, __global const T *mres, int N, int M, int P) {
  int e = get_global_id(0);
  if (e >= N * P) return;
  int i = e / P, j = e % P;
  a[i * M + j] += mres[i * P + j];
}
"""
