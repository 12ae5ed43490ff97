/*
 * blas_internal.h — the pieces of the BLAS loader (blas.c) and vforge's own sgemm (blas_own.c)
 * that sys.c and the unit tests reach; the public API is the BLAS section of vforge/util.h.
 */
#ifndef VF_UTIL_BLAS_INTERNAL_H
#define VF_UTIL_BLAS_INTERNAL_H

#include "vforge/util.h"

/* The widest vector instruction set a CPU runs (OS support included) or an OpenBLAS core is
 * written for; ordered, so a core below the CPU's is a fallback. */
typedef enum blas_isa {
  BLAS_ISA_UNKNOWN = -1, /* a core name this table does not know (newer OpenBLAS, ARM, ...) */
  BLAS_ISA_SSE = 0,      /* Prescott, Core2, Nehalem, Atom, Barcelona, "generic" ... */
  BLAS_ISA_AVX,          /* Sandybridge, Bulldozer, Piledriver, Steamroller */
  BLAS_ISA_AVX2,         /* Haswell, Zen, Excavator (AVX2 + FMA) */
  BLAS_ISA_AVX512        /* SkylakeX, Cooperlake, SapphireRapids (F, BW, DQ, VL) */
} blas_isa;

typedef struct blas_cpu {
  blas_isa isa;
  bool amd;  /* AuthenticAMD or HygonGenuine: OpenBLAS's AVX2 kernels for it are "Zen" */
  bool bf16; /* AVX512_BF16 (CPUID 7.1 EAX bit 5) */
  bool amx;  /* AMX-TILE (CPUID 7.0 EDX bit 24) */
} blas_cpu;

/*! blas_cpu_detect() : this CPU's features (x86 CPUID, OS-enabled state); BLAS_ISA_SSE
 *  elsewhere. */
void blas_cpu_detect(blas_cpu *out);
/*! blas_isa_name() : "sse", "avx", "avx2", "avx512", "unknown". */
const char *blas_isa_name(blas_isa isa);
/*! blas_core_isa() : the instruction set of an OpenBLAS core name (case-insensitive).
 *  @return : BLAS_ISA_UNKNOWN for a name not in the table. */
blas_isa blas_core_isa(const char *core);
/*! blas_core_targets() : OpenBLAS core names whose kernels match `cpu`, best first (at most
 *  `cap`), e.g. Cooperlake, SkylakeX, Haswell for an AVX-512 CPU with BF16.
 *  @return : how many were written (0 for a CPU below AVX2: nothing to switch to). */
size_t blas_core_targets(const blas_cpu *cpu, const char **out, size_t cap);

/*! blas_cap_threads() : lower the loaded BLAS's thread count to n (vf_set_threads); no-op
 *  before the BLAS is loaded. */
void blas_cap_threads(int n);

/* vforge's own sgemm (blas_own.c): C = A . B^T as vf_sgemm_nt, single-threaded, blocked for
 * the caches; the fallback when no BLAS can be trusted. */
typedef enum blas_own_variant { BLAS_OWN_SCALAR = 0, BLAS_OWN_AVX2 = 1 } blas_own_variant;

/*! blas_own_best() : the best variant this CPU runs (VFORGE_SIMD=scalar forces scalar). */
blas_own_variant blas_own_best(void);
const char *blas_own_name(blas_own_variant v); /* "builtin-scalar", "builtin-avx2" */
void blas_own_sgemm_nt(blas_own_variant v, size_t m, size_t n, size_t k, const float *a,
                       size_t lda, const float *b, size_t ldb, float *c, size_t ldc);

/* the self-check: one product against a double-precision reference */
typedef void (*blas_nt_fn)(void *ctx, size_t m, size_t n, size_t k, const float *a, size_t lda,
                           const float *b, size_t ldb, float *c, size_t ldc);
/*! blas_self_check() : run `fn` on two fixed products (odd shapes, padded leading dimensions)
 *  and compare every element with a double-precision reference, within a float dot product's
 *  error bound; the padding of C must stay untouched.
 *  @return : true when it agrees; else false with what disagreed in why[0..whylen). */
bool blas_self_check(blas_nt_fn fn, void *ctx, char *why, size_t whylen);

#endif
