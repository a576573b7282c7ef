/* Blocked matrix multiplication C = A B (n x n doubles), for tuning compiler flags and a
 * block-size define with problem=command. BLOCK comes from -DBLOCK=...; n from argv[1].
 * Prints the checksum and the achieved GFLOP/s (an objective that stdout parsing can read). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef BLOCK
#define BLOCK 32
#endif

int main(int argc, char** argv) {
    const int n = argc > 1 ? atoi(argv[1]) : 256;
    double* a = malloc(sizeof(double) * n * n);
    double* b = malloc(sizeof(double) * n * n);
    double* c = calloc((size_t)n * n, sizeof(double));
    if (!a || !b || !c) return 3;
    for (int i = 0; i < n * n; i++) { a[i] = (i % 7) * 0.5; b[i] = (i % 5) * 0.25; }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int ii = 0; ii < n; ii += BLOCK)
        for (int kk = 0; kk < n; kk += BLOCK)
            for (int jj = 0; jj < n; jj += BLOCK)
                for (int i = ii; i < ii + BLOCK && i < n; i++)
                    for (int k = kk; k < kk + BLOCK && k < n; k++) {
                        const double aik = a[i * n + k];
                        for (int j = jj; j < jj + BLOCK && j < n; j++) c[i * n + j] += aik * b[k * n + j];
                    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
    double sum = 0.0;
    for (int i = 0; i < n * n; i++) sum += c[i];
    printf("checksum %.6e\ngflops %.4f\n", sum, 2.0 * n * n * n / s * 1e-9);
    free(a); free(b); free(c);
    return 0;
}
