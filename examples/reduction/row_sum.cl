// Row sums of an R x N matrix: one work-group per row, each work-item sums a strided
// slice (UNROLL loads per iteration), then a tree reduction in local memory.
// Tuned: block_size_x (power of two) and UNROLL; N comes from Searchlab.Defines.
__kernel void row_sum(__global const float* x, __global float* sums, __local float* partial) {
    const int row = get_group_id(0);
    const int lid = get_local_id(0);
    __global const float* r = x + (long)row * N;
    float acc = 0.0f;
    int i = lid;
    for (; i + (UNROLL - 1) * block_size_x < N; i += UNROLL * block_size_x) {
#pragma unroll
        for (int u = 0; u < UNROLL; u++) acc += r[i + u * block_size_x];
    }
    for (; i < N; i += block_size_x) acc += r[i];
    partial[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = block_size_x / 2; s > 0; s >>= 1) {
        if (lid < s) partial[lid] += partial[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) sums[row] = partial[0];
}
