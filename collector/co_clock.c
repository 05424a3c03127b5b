/* co_clock: TSC detection and paired readings for calibration. */
#include "co_clock.h"

#include <stdlib.h>
#include <string.h>
#if CO_HAVE_TSC
#include <cpuid.h>
#endif

int co_clock_tsc_ok(void)
{
    const char *force = getenv("LUATRACE_CLOCK");
    if (force && !strcmp(force, "mono"))
        return 0;
#if CO_HAVE_TSC
    unsigned a, b, c, d;
    if (__get_cpuid(0x80000007, &a, &b, &c, &d))
        return (d >> 8) & 1;
#endif
    return 0;
}

void co_clock_pair(int use_tsc, uint64_t *ticks, uint64_t *ns)
{
    /* Bracket the clock_gettime between two tick reads and keep the
     * tightest of a few tries: the midpoint then matches ns closely. */
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t t0 = co_clock_ticks(use_tsc);
        uint64_t n = co_clock_mono_ns();
        uint64_t t1 = co_clock_ticks(use_tsc);
        if (t1 - t0 < best) {
            best = t1 - t0;
            *ticks = t0 + (t1 - t0) / 2;
            *ns = n;
        }
    }
}
