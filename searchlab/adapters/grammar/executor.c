/* The recursive DFT executor (paper 002 §4.1, Fig. 6(b)/(c)); appended to the generated codelets.
 *
 * A plan is a tree of nodes, built by the planner in adapters/grammar/_clib.py from a
 * ruletree. Two mutually recursive functions execute it, as in an FFTW 2.x library:
 *
 *   dft(node, x, y, is, os, v, ivs, ovs)  -- v out-of-place DFT_n, x stride is -> y stride os
 *   tws(node, y, W, wstride, stride, count, dist)
 *                                        -- in place: (DFT_k ⊗ I_count) T, twiddles fused
 *
 * DFT_n = (DFT_k ⊗ I_m) T^n_m (I_k ⊗ DFT_m) L^n_k (equation 1) runs as
 *   dft(right = DFT_m, x, y, is*k, os, k, is, m*os)   L^n_k folded into the input stride
 *   tws(left = TW_k, y, W, m, m*os, m, os)           T^n_m fused into the DFT_k stage
 * so no pass permutes or scales the data on its own. TW_k is a twiddle codelet (scalar or
 * vector) or, beyond the codelets, "buffered": each strided vector is gathered and scaled
 * into a contiguous buffer and a DFT_k plan writes it back at the vector's stride.
 * The top split may run both stages over 2 OpenMP threads (split loops, one barrier).
 * For large sizes (issue 26): neighbouring transforms travel down the recursion in chunks
 * (whole-vector loads at every leaf), large twiddle tables are compact (see stage), buffered
 * stages gather groups of neighbouring columns, and a small split's stage over such a group
 * runs column by column with replicated twiddles (see REP). Stages and leaves whose rows, at a
 * power-of-two stride, would evict each other from L1 run on a copy of one cache line of
 * columns (see conflicts). Bluestein's pointwise products run two complex per vector.
 */
#include <stdlib.h>
#include <time.h>
#include <omp.h>
#include <sched.h>

enum { K_N1 = 0, K_N1V = 1, K_CT = 2, K_PFA = 3, K_RADER = 4, K_BLUE = 5, K_T1 = 10, K_T1V = 11, K_BUF = 12 };

typedef struct node node;
struct node {
    int kind;
    int parallel;          /* K_CT: OpenMP over the two stages */
    long n;                /* transform size */
    long k, m;             /* K_CT: n = k * m */
    n1_fn n1;              /* K_N1 / K_N1V */
    t1_fn t1;              /* K_T1 / K_T1V */
    node *left, *right;    /* K_CT: TW_k, DFT_m; K_BUF: left = DFT_k */
    const double *tw;      /* K_CT: twiddles W[(i-1)*m + j] = w_n^{ij}, or compact (block > 0); owned by Python */
    long block;            /* K_CT: 0, or B: compact twiddles, blocks of B columns (see stage) */
    double *rep;           /* K_CT, small tables: rep[(j*(k-1) + i-1)*REP + l] = W[(i-1)*m + j], l < REP */
    long group;            /* K_BUF: columns gathered at once (1, 2, 4 or 8: the buffer stays <= 64 kB) */
    double *buf;           /* K_BUF: 2 threads x group x k complex; K_CT with block: 2 threads x (k-1)*B */
    long len;              /* K_PFA: n; K_RADER: p - 1; K_BLUE: M (the convolution length) */
    const long *map_in, *map_out;  /* K_PFA: Ruritanian / CRT maps; K_RADER: g^r, g^-q (owned by Python) */
    const double *table;   /* K_RADER: DFT(b)/(p-1); K_BLUE: DFT_M(b)/M (owned by Python) */
    const double *chirp;   /* K_BLUE: exp(-i pi j^2 / n) */
    double *work[2];       /* K_PFA / K_RADER / K_BLUE: per thread, 2 x len complex, allocated on first use */
};

static int cpu_for_thread[2] = {-1, -1};
/* REP transforms whose outputs are neighbours (a buffered stage's group) run a small split's
 * stage column by column over all REP of them at once, each column's twiddles replicated
 * REP times (rep), so the twiddle codelet sees REP neighbouring vectors (whole-vector loads)
 * instead of REP calls over a few strided ones. */
#define REP 8
static long chunk = 8, buf_group = 0;
static int use_rep = 1, use_copy = 1, use_copy_leaves = 1;  /* use_copy: see conflicts */
/* The executor's settings (defaults chosen by bench/dft_fixed.py on the 2^16 / 2^20 plans):
 * chunk (transforms per chunk of the loop interchange), buffered columns per group (0: 8),
 * replicated twiddles on or off. Settings 1, 1, 0 (with no compact twiddles) run as before. */
void fl_set_options(long c, long g, int rep) { chunk = c; buf_group = g; use_rep = rep & 1; use_copy = !(rep & 2); use_copy_leaves = !(rep & 4); }
static int cpu_generation = 0;

static n1_fn find_n1(int vector, long size) {
    for (int i = 0; (vector ? TABLE_n1v : TABLE_n1)[i].size; ++i)
        if ((vector ? TABLE_n1v : TABLE_n1)[i].size == size) return (vector ? TABLE_n1v : TABLE_n1)[i].f;
    return 0;
}

static t1_fn find_t1(int vector, long size) {
    for (int i = 0; (vector ? TABLE_t1v : TABLE_t1)[i].size; ++i)
        if ((vector ? TABLE_t1v : TABLE_t1)[i].size == size) return (vector ? TABLE_t1v : TABLE_t1)[i].f;
    return 0;
}

static void dft(const node *p, const double *x, double *y, long is, long os, long v, long ivs, long ovs, int t);

/* A stage's k rows at a stride of 16·stride bytes fall into 4096 / gcd(16·stride, 4096) sets of
 * the L1 cache (8 ways, 4 kB per way): more rows than that many lines evict each other within
 * one codelet call, and each line, which holds 4 columns, comes from L2 once per column pair
 * for its loads and again for its stores. Such a stage (a twiddle codelet over neighbouring
 * columns) runs on copies instead: COLS columns (one cache line) of every row copied to a
 * contiguous scratch, the codelet run there, copied back. */
#define L1_WAYS 8
#define COLS 4
static int conflicts(long k, long stride) {
    long a = 16 * stride, b = 4096;
    while (b) { long r = a % b; a = b; b = r; }
    return use_copy && k > L1_WAYS * (4096 / a);
}

static void tws(const node *p, double *y, const double *W, long wstride, long stride, long count, long dist, int t) {
    if (p->kind != K_BUF) {
        long j = 0;
        if (dist == 1 && count >= COLS && conflicts(p->n, stride)) {
            static __thread double scratch[2 * 64 * COLS] __attribute__((aligned(64)));
            long k = p->n;
            for (; j + COLS <= count; j += COLS) {
                double *a = y + 2 * j;
                for (long i = 0; i < k; ++i) {
                    ST4(scratch + 2 * i * COLS, LD4(a + 2 * i * stride));
                    ST4(scratch + 2 * i * COLS + 4, LD4(a + 2 * i * stride + 4));
                }
                p->t1(scratch, W + 2 * j, wstride, COLS, COLS, 1);
                for (long i = 0; i < k; ++i) {
                    ST4(a + 2 * i * stride, LD4(scratch + 2 * i * COLS));
                    ST4(a + 2 * i * stride + 4, LD4(scratch + 2 * i * COLS + 4));
                }
            }
        }
        if (j < count) p->t1(y + 2 * j * dist, W + 2 * j, wstride, stride, count - j, dist);
        return;
    }
    long k = p->n, g = p->group, j = 0;
    double *b = p->buf + 2 * k * g * t;
    for (; g > 1 && j + g <= count; j += g) {
        /* g neighbouring columns at once: gathered (fused with T) into b[i*g + c], so the
         * DFT_k plan runs over g transforms whose inputs are neighbours (whole-vector loads
         * down to its leaves) and writes g columns per row back at the stride. */
        double *src = y + 2 * j * dist;
        for (long c = 0; c < g; ++c) { b[2 * c] = src[2 * c * dist]; b[2 * c + 1] = src[2 * c * dist + 1]; }
        for (long i = 1; i < k; ++i) {
            const double *a = src + 2 * i * stride, *w = W + 2 * ((i - 1) * wstride + j);
            double *d = b + 2 * i * g;
            if (dist == 1)
                for (long c = 0; c < g; c += 2) {
                    v4d x = LD4(a + 2 * c), ww = LD4(w + 2 * c);
                    ST4(d + 2 * c, FMAS(x, DUPRE(ww), SWAP(x) * DUPIM(ww)));
                }
            else
                for (long c = 0; c < g; ++c) {
                    const double *e = a + 2 * c * dist;
                    d[2 * c] = e[0] * w[2 * c] - e[1] * w[2 * c + 1];
                    d[2 * c + 1] = e[0] * w[2 * c + 1] + e[1] * w[2 * c];
                }
        }
        dft(p->left, b, src, g, stride, g, 1, dist, t);
    }
    for (; j < count; ++j) {
        const double *src = y + 2 * j * dist;
        b[0] = src[0]; b[1] = src[1];
        for (long i = 1; i < k; ++i) {   /* gather the strided vector, fused with T */
            const double *a = src + 2 * i * stride, *w = W + 2 * ((i - 1) * wstride + j);
            b[2 * i] = a[0] * w[0] - a[1] * w[1];
            b[2 * i + 1] = a[0] * w[1] + a[1] * w[0];
        }
        dft(p->left, b, y + 2 * j * dist, 1, stride, 1, 0, 0, t);
    }
}

/* Columns j0 <= j < j1 of a split's stage (DFT_k ⊗ I_m)·T on y (column j at y + j*os).
 * Compact twiddles (block B > 0): w^{ij} = w^{i*h*B} * w^{i*l}, j = h*B + l, from a table of
 * (k-1)*B low and (k-1)*m/B high roots; each block's (k-1) x B twiddles are formed in a
 * scratch buffer that stays in L1 (one complex product per twiddle) instead of streaming the
 * full (k-1) x m table, which at 2^20 is as large as the data. */
static void stage(const node *p, double *y, long os, long j0, long j1, int t) {
    long k = p->k, m = p->m, B = p->block;
    if (!B) { tws(p->left, y + 2 * j0 * os, p->tw + 2 * j0, m, m * os, j1 - j0, os, t); return; }
    long nb = m / B;
    const double *lo = p->tw, *hi = p->tw + 2 * (k - 1) * B;
    double *s = p->buf + 2 * (k - 1) * B * t;
    for (long h = j0 / B; h * B < j1; ++h) {
        long a = h * B > j0 ? h * B : j0, e = (h + 1) * B < j1 ? (h + 1) * B : j1;
        for (long i = 0; i < k - 1; ++i) {
            const double *w = hi + 2 * (i * nb + h), *l = lo + 2 * i * B;
            double *d = s + 2 * i * B;
            v4d wr = {w[0], w[0], w[0], w[0]}, wi = {w[1], w[1], w[1], w[1]};
            long q = a - h * B, end = e - h * B;
            for (; q + 1 < end; q += 2) { v4d x = LD4(l + 2 * q); ST4(d + 2 * q, FMAS(x, wr, SWAP(x) * wi)); }
            if (q < end) { d[2 * q] = l[2 * q] * w[0] - l[2 * q + 1] * w[1]; d[2 * q + 1] = l[2 * q] * w[1] + l[2 * q + 1] * w[0]; }
        }
        tws(p->left, y + 2 * a * os, s + 2 * (a - h * B), B, m * os, e - a, os, t);
    }
}

static void pin_thread(int t) {
    static __thread int applied = 0;
    if (applied == cpu_generation || cpu_for_thread[t] < 0) return;
    cpu_set_t set; CPU_ZERO(&set); CPU_SET(cpu_for_thread[t], &set);
    sched_setaffinity(0, sizeof set, &set);
    applied = cpu_generation;
}

static void ct_parallel(const node *p, const double *x, double *y, long is, long os) {
    long k = p->k, m = p->m;
    #pragma omp parallel num_threads(2)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        pin_thread(t);
        long i0 = k * t / nt, i1 = k * (t + 1) / nt;
        dft(p->right, x + 2 * i0 * is, y + 2 * i0 * m * os, is * k, os, i1 - i0, is, m * os, t);
        #pragma omp barrier
        long j0 = m * t / nt, j1 = m * (t + 1) / nt;
        stage(p, y, os, j0, j1, t);
    }
}

static double *work(const node *p, int t) {
    node *q = (node *)p;
    if (!q->work[t]) q->work[t] = aligned_alloc(64, (size_t)(4 * q->len * sizeof(double) + 63) / 64 * 64);
    return q->work[t];
}

/* Good-Thomas: gather through the Ruritanian map, a rows of DFT_b, b columns of DFT_a,
 * scatter through the CRT map. No twiddles. */
static void pfa(const node *p, const double *x, double *y, long is, long os, int t) {
    long n = p->n, a = p->left->n, b = p->right->n;
    double *b0 = work(p, t), *b1 = b0 + 2 * n;
    for (long i = 0; i < n; ++i) { const double *s = x + 2 * p->map_in[i] * is; b0[2 * i] = s[0]; b0[2 * i + 1] = s[1]; }
    dft(p->right, b0, b1, 1, 1, a, b, b, t);
    dft(p->left, b1, b0, b, b, b, 1, 1, t);
    for (long i = 0; i < n; ++i) { double *d = y + 2 * p->map_out[i] * os; d[0] = b0[2 * i]; d[1] = b0[2 * i + 1]; }
}

/* c[j] <- conj(c[j] * w[j]): the pointwise product of a convolution, conjugated so that
 * a forward DFT_len computes the inverse one (the 1/len is folded into w). */
static void conj_product(double *c, const double *w, long len) {
    long j = 0;
    for (; j + 1 < len; j += 2) {  /* two complex per vector: conj(c*w) = (c*w) with the imaginary lanes negated */
        v4d x = LD4(c + 2 * j), ww = LD4(w + 2 * j);
        ST4(c + 2 * j, FMAS(x, DUPRE(ww), SWAP(x) * DUPIM(ww)) * PN);
    }
    for (; j < len; ++j) {
        double re = c[2 * j] * w[2 * j] - c[2 * j + 1] * w[2 * j + 1];
        double im = c[2 * j] * w[2 * j + 1] + c[2 * j + 1] * w[2 * j];
        c[2 * j] = re; c[2 * j + 1] = -im;
    }
}

/* Rader: X_0 = sum x; X_{g^-q} = x_0 + (a * b)_q, a_r = x_{g^r}, b_m = w_p^{g^-m}. */
static void rader(const node *p, const double *x, double *y, long is, long os, int t) {
    long len = p->len;
    double *b0 = work(p, t), *b1 = b0 + 2 * len;
    double x0r = x[0], x0i = x[1];
    for (long r = 0; r < len; ++r) { const double *s = x + 2 * p->map_in[r] * is; b0[2 * r] = s[0]; b0[2 * r + 1] = s[1]; }
    dft(p->left, b0, b1, 1, 1, 1, 0, 0, t);
    double sr = b1[0], si = b1[1];
    conj_product(b1, p->table, len);
    dft(p->left, b1, b0, 1, 1, 1, 0, 0, t);
    y[0] = x0r + sr; y[1] = x0i + si;
    for (long q = 0; q < len; ++q) { double *d = y + 2 * p->map_out[q] * os; d[0] = x0r + b0[2 * q]; d[1] = x0i - b0[2 * q + 1]; }
}

/* Bluestein: X_k = c_k sum_j (x_j c_j) conj(c_{k-j}), c_j = exp(-i pi j^2 / n), a
 * convolution of length M >= 2n - 1. */
static void bluestein(const node *p, const double *x, double *y, long is, long os, int t) {
    long n = p->n, len = p->len;
    double *b0 = work(p, t), *b1 = b0 + 2 * len;
    const double *c = p->chirp;
    long j = 0;
    if (is == 1)  /* contiguous input: the chirp product two complex per vector */
        for (; j + 1 < n; j += 2) {
            v4d a = LD4(x + 2 * j), w = LD4(c + 2 * j);
            ST4(b0 + 2 * j, FMAS(a, DUPRE(w), SWAP(a) * DUPIM(w)));
        }
    for (; j < n; ++j) {
        const double *s = x + 2 * j * is;
        b0[2 * j] = s[0] * c[2 * j] - s[1] * c[2 * j + 1];
        b0[2 * j + 1] = s[0] * c[2 * j + 1] + s[1] * c[2 * j];
    }
    memset(b0 + 2 * n, 0, (size_t)(len - n) * 2 * sizeof(double));
    dft(p->left, b0, b1, 1, 1, 1, 0, 0, t);
    conj_product(b1, p->table, len);
    dft(p->left, b1, b0, 1, 1, 1, 0, 0, t);
    long k = 0;
    if (os == 1)  /* contiguous output: c_k * conj(b0_k) two complex per vector */
        for (; k + 1 < n; k += 2) {
            v4d a = LD4(b0 + 2 * k) * PN, w = LD4(c + 2 * k);
            ST4(y + 2 * k, FMAS(a, DUPRE(w), SWAP(a) * DUPIM(w)));
        }
    for (; k < n; ++k) {  /* c_k * conj(b0_k) */
        double re = b0[2 * k], im = -b0[2 * k + 1];
        double *d = y + 2 * k * os;
        d[0] = re * c[2 * k] - im * c[2 * k + 1];
        d[1] = re * c[2 * k + 1] + im * c[2 * k];
    }
}

static void dft(const node *p, const double *x, double *y, long is, long os, long v, long ivs, long ovs, int t) {
    if (p->kind == K_PFA || p->kind == K_RADER || p->kind == K_BLUE) {
        for (long l = 0; l < v; ++l) {
            const double *xl = x + 2 * l * ivs;
            double *yl = y + 2 * l * ovs;
            if (p->kind == K_PFA) pfa(p, xl, yl, is, os, t);
            else if (p->kind == K_RADER) rader(p, xl, yl, is, os, t);
            else bluestein(p, xl, yl, is, os, t);
        }
        return;
    }
    if (p->kind != K_CT) {
        long l = 0;
        if (ivs == 1 && v >= COLS && conflicts(p->n, is) && use_copy_leaves) {
            /* the leaf's rows conflict in L1 likewise (see conflicts): copy one cache line
             * of neighbouring transforms per row to a contiguous scratch first */
            static __thread double scratch[2 * 64 * COLS] __attribute__((aligned(64)));
            for (; l + COLS <= v; l += COLS) {
                const double *a = x + 2 * l;
                for (long i = 0; i < p->n; ++i) {
                    ST4(scratch + 2 * i * COLS, LD4(a + 2 * i * is));
                    ST4(scratch + 2 * i * COLS + 4, LD4(a + 2 * i * is + 4));
                }
                p->n1(scratch, y + 2 * l * ovs, COLS, os, COLS, 1, ovs);
            }
        }
        if (l < v) p->n1(x + 2 * l * ivs, y + 2 * l * ovs, is, os, v - l, ivs, ovs);
        return;
    }
    long k = p->k, m = p->m;
    if (v > 1 && ivs == 1 && !p->parallel) {
        /* Loop interchange: the v transforms' inputs are neighbours (ivs = 1), so run the
         * inner DFT_m over a chunk of them at once (down to the leaves, whole-vector loads),
         * once per inner index, then the chunk's stages. */
        int leaf = p->right->kind == K_N1 || p->right->kind == K_N1V;
        long b = leaf ? v : chunk;
        for (long l0 = 0; l0 < v; l0 += b) {
            long c = v - l0 < b ? v - l0 : b;
            for (long i = 0; i < k; ++i)
                dft(p->right, x + 2 * (l0 + i * is), y + 2 * (l0 * ovs + i * m * os), is * k, os, c, 1, ovs, t);
            for (long l = l0; l < l0 + c;) {
                if (ovs == 1 && p->rep && l + REP <= l0 + c) {  /* neighbouring outputs: see rep */
                    for (long j = 0; j < m; ++j)
                        tws(p->left, y + 2 * (l + j * os), p->rep + 2 * j * (k - 1) * REP, REP, m * os, REP, 1, t);
                    l += REP;
                } else {
                    stage(p, y + 2 * l * ovs, os, 0, m, t);
                    ++l;
                }
            }
        }
        return;
    }
    for (long l = 0; l < v; ++l) {
        const double *xl = x + 2 * l * ivs;
        double *yl = y + 2 * l * ovs;
        if (p->parallel) { ct_parallel(p, xl, yl, is, os); continue; }
        dft(p->right, xl, yl, is * k, os, k, is, m * os, t);
        stage(p, yl, os, 0, m, t);
    }
}

/* -- the planner's constructors (called through ctypes) ------------------------------ */
node *fl_leaf(int kind, long n) {
    n1_fn f = find_n1(kind == K_N1V, n);
    t1_fn g = find_t1(kind == K_T1V, n);
    if ((kind == K_N1 || kind == K_N1V) ? !f : !g) return 0;
    node *p = calloc(1, sizeof *p);
    p->kind = kind; p->n = n; p->n1 = f; p->t1 = g;
    return p;
}

node *fl_buffered(node *child) {
    node *p = calloc(1, sizeof *p);
    p->kind = K_BUF; p->n = child->n; p->left = child;
    p->group = buf_group ? buf_group : 8;
    while (p->group > 1 && p->group * child->n > 4096) p->group /= 2;
    p->buf = aligned_alloc(64, (size_t)(2 * 2 * p->group * child->n * sizeof(double) + 63) / 64 * 64);
    return p;
}

node *fl_split(node *tw, node *right, const double *W, int parallel, long block) {
    node *p = calloc(1, sizeof *p);
    p->kind = K_CT; p->parallel = parallel; p->k = tw->n; p->m = right->n; p->n = tw->n * right->n;
    p->left = tw; p->right = right; p->tw = W; p->block = block;
    if (block) p->buf = aligned_alloc(64, (size_t)(2 * 2 * (p->k - 1) * block * sizeof(double) + 63) / 64 * 64);
    if (!block && (p->k - 1) * p->m <= 512 && use_rep) {
        long k = p->k, m = p->m;
        p->rep = aligned_alloc(64, (size_t)(2 * (k - 1) * m * REP * sizeof(double) + 63) / 64 * 64);
        for (long j = 0; j < m; ++j)
            for (long i = 1; i < k; ++i)
                for (long l = 0; l < REP; ++l) {
                    p->rep[2 * ((j * (k - 1) + i - 1) * REP + l)] = W[2 * ((i - 1) * m + j)];
                    p->rep[2 * ((j * (k - 1) + i - 1) * REP + l) + 1] = W[2 * ((i - 1) * m + j) + 1];
                }
    }
    return p;
}

node *fl_pfa(node *a, node *b, const long *map_in, const long *map_out) {
    node *p = calloc(1, sizeof *p);
    p->kind = K_PFA; p->n = p->len = a->n * b->n; p->left = a; p->right = b;
    p->map_in = map_in; p->map_out = map_out;
    return p;
}

node *fl_rader(node *child, long prime, const long *map_in, const long *map_out, const double *table) {
    node *p = calloc(1, sizeof *p);
    p->kind = K_RADER; p->n = prime; p->len = child->n; p->left = child;
    p->map_in = map_in; p->map_out = map_out; p->table = table;
    return p;
}

node *fl_bluestein(node *child, long n, const double *chirp, const double *table) {
    node *p = calloc(1, sizeof *p);
    p->kind = K_BLUE; p->n = n; p->len = child->n; p->left = child; p->chirp = chirp; p->table = table;
    return p;
}

void fl_destroy(node *p) {
    if (!p) return;
    fl_destroy(p->left);
    fl_destroy(p->right);
    free(p->buf);
    free(p->rep);
    free(p->work[0]);
    free(p->work[1]);
    free(p);
}

void fl_set_cpus(int cpu0, int cpu1) {
    cpu_for_thread[0] = cpu0; cpu_for_thread[1] = cpu1; ++cpu_generation;
}

/* -- timing: the loop is here, not in Python ------------------------------------------- */
static int cpu_clock = 1;  /* 1: this thread's CPU time (robust to time-slicing), 0: wall clock */

void fl_set_clock(int cpu) { cpu_clock = cpu; }

static double now(void) {
    struct timespec ts;
    clock_gettime(cpu_clock ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* reps runs of v transforms DFT_n (x stride is, y stride os); seconds in all. */
double fl_run_dft(const node *p, const double *x, double *y, long is, long os, long v, long ivs, long ovs, long reps) {
    double start = now();
    for (long r = 0; r < reps; ++r) dft(p, x, y, is, os, v, ivs, ovs, 0);
    return now() - start;
}

/* reps runs of the in-place stage TW_k on y (reset from src first, outside the timing). */
double fl_run_tws(const node *p, double *y, const double *src, long doubles, const double *W, long wstride,
                  long stride, long count, long dist, long reps) {
    memcpy(y, src, doubles * sizeof(double));
    double start = now();
    for (long r = 0; r < reps; ++r) tws(p, y, W, wstride, stride, count, dist, 0);
    return now() - start;
}

/* reps calls of an outside routine (FFTW's fftw_execute) timed by the same clock. */
double fl_run_fn(void (*fn)(void *), void *arg, long reps) {
    double start = now();
    for (long r = 0; r < reps; ++r) fn(arg);
    return now() - start;
}
