// c = a + b, each work-item adding ITEMS consecutive elements (ITEMS is a tuned parameter).
__kernel void vector_add(__global const float* a, __global const float* b, __global float* c) {
    const int first = get_global_id(0) * ITEMS;
    for (int k = 0; k < ITEMS; k++) c[first + k] = a[first + k] + b[first + k];
}
