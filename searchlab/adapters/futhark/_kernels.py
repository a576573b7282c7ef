"""OpenCL sources of the code versions incremental flattening would generate.

LUD follows Rodinia's blocked LU decomposition without pivoting (Futhark's
``lud-clean.fut``, paper 003 §4.3): a diagonal-block factorisation, the upper and lower
perimeter solves, and the internal update, the last two in several versions. Matrix
multiplication follows Fig. 1.6's five versions. ``B`` (block size) and ``T`` (element
type) are compile-time definitions. Like Futhark's kernels, the thread-per-item versions
run on a 1-D grid rounded up to a fixed group size and guard the excess threads.
"""

LUD_SOURCE = r"""
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

/* Upper perimeter U_sj = L_ss^-1 A_sj: forward substitution down each column. */
__kernel void upper_block(__global float *m, int n, int o, int count) {
  if (get_global_id(0) >= count) return;
  int c0 = o + B * (get_global_id(0) + 1);
  for (int c = 0; c < B; c++)
    for (int i = 1; i < B; i++) {
      float s = m[IDX(o + i, c0 + c)];
      for (int k = 0; k < i; k++) s -= m[IDX(o + i, o + k)] * m[IDX(o + k, c0 + c)];
      m[IDX(o + i, c0 + c)] = s;
    }
}

__kernel void upper_group(__global float *m, int n, int o) {
  __local float dia[B][B];
  __local float blk[B][B];
  int tx = get_local_id(0);
  int c0 = o + B * (get_group_id(0) + 1);
  for (int i = 0; i < B; i++) {
    dia[i][tx] = m[IDX(o + i, o + tx)];
    blk[i][tx] = m[IDX(o + i, c0 + tx)];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int i = 1; i < B; i++) {
    float s = blk[i][tx];
    for (int k = 0; k < i; k++) s -= dia[i][k] * blk[k][tx];
    blk[i][tx] = s;
  }
  for (int i = 1; i < B; i++) m[IDX(o + i, c0 + tx)] = blk[i][tx];
}

__kernel void upper_flat(__global float *m, int n, int o, int count) {
  int gid = get_global_id(0);
  if (gid >= count) return;
  int col = o + B * (gid / B + 1) + gid % B;
  for (int i = 1; i < B; i++) {
    float s = m[IDX(o + i, col)];
    for (int k = 0; k < i; k++) s -= m[IDX(o + i, o + k)] * m[IDX(o + k, col)];
    m[IDX(o + i, col)] = s;
  }
}

/* Lower perimeter L_is = A_is U_ss^-1: substitution along each row. */
__kernel void lower_block(__global float *m, int n, int o, int count) {
  if (get_global_id(0) >= count) return;
  int r0 = o + B * (get_global_id(0) + 1);
  for (int rr = 0; rr < B; rr++)
    for (int j = 0; j < B; j++) {
      float s = m[IDX(r0 + rr, o + j)];
      for (int k = 0; k < j; k++) s -= m[IDX(r0 + rr, o + k)] * m[IDX(o + k, o + j)];
      m[IDX(r0 + rr, o + j)] = s / m[IDX(o + j, o + j)];
    }
}

__kernel void lower_group(__global float *m, int n, int o) {
  __local float dia[B][B];
  __local float blk[B][B];
  int tx = get_local_id(0);
  int r0 = o + B * (get_group_id(0) + 1);
  for (int i = 0; i < B; i++) {
    dia[i][tx] = m[IDX(o + i, o + tx)];
    blk[tx][i] = m[IDX(r0 + tx, o + i)];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int j = 0; j < B; j++) {
    float s = blk[tx][j];
    for (int k = 0; k < j; k++) s -= blk[tx][k] * dia[k][j];
    blk[tx][j] = s / dia[j][j];
  }
  for (int j = 0; j < B; j++) m[IDX(r0 + tx, o + j)] = blk[tx][j];
}

__kernel void lower_flat(__global float *m, int n, int o, int count) {
  int gid = get_global_id(0);
  if (gid >= count) return;
  int row = o + B * (gid / B + 1) + gid % B;
  for (int j = 0; j < B; j++) {
    float s = m[IDX(row, o + j)];
    for (int k = 0; k < j; k++) s -= m[IDX(row, o + k)] * m[IDX(o + k, o + j)];
    m[IDX(row, o + j)] = s / m[IDX(o + j, o + j)];
  }
}

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

MATMUL_SOURCE = r"""
/* Fig. 1.6: z[N][P] = x[N][M] y[M][P], five semantically equal versions. */
__kernel void mm_row(__global const T *x, __global const T *y, __global T *z, int N, int M, int P) {
  int i = get_global_id(0);
  if (i >= N) return;
  for (int j = 0; j < P; j++) {
    T s = 0;
    for (int k = 0; k < M; k++) s += x[i * M + k] * y[k * P + j];
    z[i * P + j] = s;
  }
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
  int i = e / P, j = e % P;
  T s = 0;
  for (int k = 0; k < M; k++) s += x[i * M + k] * y[k * P + j];
  z[i * P + j] = s;
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
