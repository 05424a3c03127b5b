/* co_preempt.h: the arithmetic of taking a wait for a CPU off an interval,
 * apart from co_preempt.c's reads so that its unit test needs no kernel. */
#ifndef CO_PREEMPT_H
#define CO_PREEMPT_H

#include <stdint.h>

/* What is left of an interval of ticks once waited comes off: never less
 * than keep (a nanosecond's ticks). Code ran in the interval, and a call
 * left with no time is a slice of no length, which a timeline's reader
 * (DevTools) nests outside its parent when it ends with it. The wait is
 * the kernel's clock and may hold waits that fell between reads: it can
 * exceed the interval the TSC measured. */
static inline uint64_t co_preempt_left(uint64_t ticks, uint64_t waited, uint64_t keep)
{
    if (ticks <= keep)
        return ticks;
    return waited < ticks - keep ? ticks - waited : keep;
}

#endif
