/* co_clock: the collector's time source. The TSC where it is invariant
 * (constant rate, runs in every C-state), else CLOCK_MONOTONIC. Ticks are
 * converted to ns by recorderd from CLOCK records (pairs of readings). */
#ifndef CO_CLOCK_H
#define CO_CLOCK_H

#include <stdint.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define CO_HAVE_TSC 1
#else
#define CO_HAVE_TSC 0
#endif

static inline uint64_t co_clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The TSC, where CO_HAVE_TSC (else never called). */
static inline uint64_t co_clock_tsc(void)
{
#ifdef CO_FAKE_CLOCK
    static uint64_t fake;
    return fake += 100;
#endif
#if CO_HAVE_TSC
    return __rdtsc();
#else
    return 0;
#endif
}

/* use_tsc comes from co_clock_tsc_ok(); a plain branch, well predicted. */
static inline uint64_t co_clock_ticks(int use_tsc)
{
#ifdef CO_FAKE_CLOCK
    static uint64_t fake;
    (void)use_tsc;
    return fake += 100;
#endif
#if CO_HAVE_TSC
    if (use_tsc)
        return __rdtsc();
#endif
    (void)use_tsc;
    return co_clock_mono_ns();
}

/* 1 when the CPU reports an invariant TSC (CPUID 0x80000007 EDX bit 8) and
 * LUATRACE_CLOCK is not "mono". */
int co_clock_tsc_ok(void);

/* Takes a (ticks, ns) pair read as close together as possible. */
void co_clock_pair(int use_tsc, uint64_t *ticks, uint64_t *ns);

#endif
