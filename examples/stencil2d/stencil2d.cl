// 2-D five-point Jacobi step on a periodic NX x NY grid (row-major, x fastest).
// Tuned: block_size_x, block_size_y (the work-group), tile_size_y (rows per work-item).
// NX and NY come from Searchlab.Defines; the tunable parameters arrive as #defines.
__kernel void stencil(__global const float* u, __global float* out) {
    const int x = get_global_id(0);
    const int y0 = get_global_id(1) * tile_size_y;
    if (x >= NX) return;
    const int xm = (x + NX - 1) % NX, xp = (x + 1) % NX;
    for (int t = 0; t < tile_size_y; t++) {
        const int y = y0 + t;
        if (y < NY) {
            const int ym = (y + NY - 1) % NY, yp = (y + 1) % NY;
            out[y * NX + x] = 0.2f * (u[y * NX + x] + u[y * NX + xm] + u[y * NX + xp] + u[ym * NX + x] + u[yp * NX + x]);
        }
    }
}
