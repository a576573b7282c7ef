// Reference: one work-item per grid point, no tuning (Searchlab.ReferenceKernel).
__kernel void stencil_naive(__global const float* u, __global float* out) {
    const int x = get_global_id(0), y = get_global_id(1);
    const int xm = (x + NX - 1) % NX, xp = (x + 1) % NX, ym = (y + NY - 1) % NY, yp = (y + 1) % NY;
    out[y * NX + x] = 0.2f * (u[y * NX + x] + u[y * NX + xm] + u[y * NX + xp] + u[ym * NX + x] + u[yp * NX + x]);
}
