/* co_out: the slow paths of writing records: a full ring, a lost consumer,
 * clock calibration records. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

#include "co_clock.h"
#include "co_state.h"

/* Gives up tracing: one message on stderr, hooks become no-ops. */
static void co_out_lost(co_state *s, const char *why)
{
    if (s->lost)
        return;
    s->lost = 1;
    co_set_active(s, 0);
    if (s->attached)
        return; /* a host traced on demand says nothing: it is untraced again */
    fprintf(stderr, "luatrace: tracing stopped: %s; the program continues untraced\n", why);
}

void co_out_gone(co_state *s)
{
    co_out_lost(s, "recorderd went away");
}

/* Returns the ns it asked to sleep. */
static uint64_t pause_a_little(unsigned round)
{
    if (round < 64) {
        sched_yield();
        return 0;
    }
    struct timespec ts = {0, round < 1024 ? 20000 : 200000};
    nanosleep(&ts, NULL);
    return (uint64_t)ts.tv_nsec;
}

/* A wait on a full ring that recorderd does not read (stopped, hung, or a
 * peer that acks and never drains) must not hang the program forever:
 * said once after CO_WAIT_WARN_NS (or half the bound), and at wait_max_ns
 * the program stops waiting for good: drop mode, said too (the end of the
 * trace keeps it). Should a wait come after all, CO_WAIT_STALLED_NS bounds it. */
#define CO_WAIT_WARN_NS 5000000000ull
#define CO_WAIT_STALLED_NS 1000000000ull

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* 1 if this wait, begun at t0 (having slept for slept ns), is to end
 * with the event dropped. LUATRACE_TIMING=none reads no clock: the sleeps
 * asked for stand for the time (at least that long). */
static int waited_too_long(co_state *s, uint64_t t0, uint64_t slept)
{
    uint64_t waited = s->no_clock ? slept : mono_ns() - t0;
    uint64_t max = s->stalled ? CO_WAIT_STALLED_NS : s->wait_max_ns;
    uint64_t warn = max / 2 < CO_WAIT_WARN_NS ? max / 2 : CO_WAIT_WARN_NS;
    if (!s->stall_warned && waited >= warn) {
        s->stall_warned = 1;
        fprintf(stderr, "luatrace: recorderd is not draining the ring (nothing read for %llu s); "
                        "the program waits up to %llu s, then drops events\n",
                (unsigned long long)(waited / 1000000000ull),
                (unsigned long long)(max / 1000000000ull));
    }
    if (waited < max)
        return 0;
    if (!s->stalled)
        fprintf(stderr, "luatrace: recorderd read nothing for %llu s (LUATRACE_WAIT_MAX): from now "
                        "on events that do not fit are dropped and counted, never waited for\n",
                (unsigned long long)(max / 1000000000ull));
    s->stalled = s->drop_mode = 1;
    return 1;
}

/* The wait begun at t0 (slept: the sleeps asked for, what a run that
 * reads no clock counts) into the ring's count, for recorderd's summary:
 * a program that waited long on its recorder is told why it was slow. */
static void count_wait(co_state *s, uint64_t t0, uint64_t slept)
{
    uint64_t waited = s->no_clock ? slept : mono_ns() - t0;
    atomic_fetch_add_explicit(&s->ring.hdr->waited_ns, waited, memory_order_relaxed);
}

static uint8_t *wait_room(co_state *s, size_t n)
{
    co_hook_slow(s); /* a wait is not the program's time: measure this hook's end */
    if (s->lost)
        return NULL;
    if (s->discard) { /* pretend everything was read, the header's tail
                         * too: lt_ring_fill_ahead reads it again */
        atomic_store_explicit(&s->ring.hdr->tail, s->ring.pos, memory_order_release);
        s->ring.peer_seen = s->ring.pos;
        return lt_ring_reserve(&s->ring, n);
    }
    lt_ring_publish(&s->ring); /* the consumer may be waiting for these */
    if (s->drop_mode) {
        co_out_drop(s); /* the next hot record writes the GAP first */
        return NULL;
    }
    uint64_t t0 = 0, slept = 0;
    for (unsigned round = 0;; round++) {
        uint8_t *p = lt_ring_reserve(&s->ring, n);
        if (p && round > 63)
            count_wait(s, t0, slept);
        if (p)
            return p;
        if (round == 63) /* a short wait reads no clock */
            t0 = s->no_clock ? 0 : mono_ns();
        else if ((round & 63) == 63 && waited_too_long(s, t0, slept)) {
            count_wait(s, t0, slept);
            co_out_drop(s);
            return NULL;
        }
        /* acquire: pairs with the consumer's release when it leaves */
        if (atomic_load_explicit(&s->ring.hdr->cons_state, memory_order_acquire) ==
                LT_CONS_GONE ||
            ((round & 63) == 63 && co_conn_gone(s))) {
            co_out_lost(s, "recorderd went away");
            return NULL;
        }
        slept += pause_a_little(round);
    }
}

/* A wait while an allocation's record is sent (no hook running, whose
 * end would be measured) comes off the program's time here. */
uint8_t *co_out_wait(co_state *s, size_t n)
{
    uint64_t t0 = co_alloc_sending && co_alloc_timed ? co_clock_tsc() : 0;
    uint8_t *p = wait_room(s, n);
    if (t0)
        s->last += co_clock_tsc() - t0;
    return p;
}

/* The GAP record of the events dropped so far. */
static void write_gap(co_state *s, uint8_t *p)
{
    uint8_t *q = lt_put_head(p, LT_EV_GAP, 1);
    q = lt_put_uint(q, s->dropped);
    s->dropped = 0;
    lt_ring_commit(&s->ring, (uint64_t)(q - p));
}

static void write_hook(co_state *s, uint8_t *p)
{
    uint8_t *q = lt_put_head(p, LT_EV_HOOK, 1);
    q = lt_put_uint(q, s->hook_sum);
    s->hook_sum = 0;
    lt_ring_commit(&s->ring, (uint64_t)(q - p));
}

static void write_line_hooks(co_state *s, uint8_t *p)
{
    uint8_t *q = lt_put_head(p, LT_EV_LHOOK, 2);
    q = lt_put_uint(q, s->hook_line);
    q = lt_put_uint(q, s->hook_nline);
    s->hook_line = s->hook_nline = 0;
    lt_ring_commit(&s->ring, (uint64_t)(q - p));
}

/* What was taken off dts and hooks as waits for a CPU (co_preempt.c)
 * since the last WAIT: recorderd shows it beside the traced time. */
static void write_waited(co_state *s, uint8_t *p)
{
    uint8_t *q = lt_put_head(p, LT_EV_WAIT, 1);
    q = lt_put_uint(q, s->pre_sum);
    s->pre_sum = 0;
    lt_ring_commit(&s->ring, (uint64_t)(q - p));
}

void co_out_waited(co_state *s)
{
    uint8_t *p = s->pre_sum ? co_out_reserve(s, LT_EVENT_HOT_MAX) : NULL;
    if (p)
        write_waited(s, p);
}

/* While records were dropped and no GAP says so yet, only co_out_gap
 * writes: it does at the start of the next hook, which then sends the
 * stacks again (co_hook.c resync). A record before that would be applied
 * to stacks that may be wrong: it is dropped too. */
void co_out_drop(co_state *s)
{
    s->dropped++;
    s->slow_at = 0;
    /* relaxed: a statistic, read by the consumer at leisure */
    atomic_fetch_add_explicit(&s->ring.hdr->drops, 1, memory_order_relaxed);
}

int co_out_gap(co_state *s)
{
    s->gap_ok = 1;
    (void)co_out_hot(s);
    s->gap_ok = 0;
    return s->dropped == 0;
}

uint8_t *co_out_hot_slow(co_state *s)
{
    lt_ring *r = &s->ring;
    if (__builtin_expect(s->sig_check, 0)) /* after a module's C function */
        co_sigwatch_check(s);
    if (r->pos - r->published >= LT_RING_BATCH) {
        lt_ring_publish(r);
        if (s->pre_min != CO_PREEMPT_NEVER)
            co_preempt_batch(s);
    }
    uint8_t *p = co_out_reserve(s, LT_EVENT_HOT_MAX);
    if (p && s->dropped) {
        if (!s->gap_ok) { /* drop until the resync (co_out_drop) */
            co_out_drop(s);
            return NULL;
        }
        write_gap(s, p);
        p = co_out_reserve(s, LT_EVENT_HOT_MAX);
    }
    if (p && s->hook_sum) { /* once per batch: the hooks' cost meanwhile */
        write_hook(s, p);
        p = co_out_reserve(s, LT_EVENT_HOT_MAX);
    }
    if (p && s->hook_nline) {
        write_line_hooks(s, p);
        p = co_out_reserve(s, LT_EVENT_HOT_MAX);
    }
    if (p && s->pre_sum) {
        write_waited(s, p);
        p = co_out_reserve(s, LT_EVENT_HOT_MAX);
    }
    if (!p)
        return NULL;
    /* both bounds only move forward, so slow_at stays safe if another
     * writer reads the tail or publishes meanwhile */
    uint64_t room = r->peer_seen + r->size - LT_EVENT_HOT_MAX;
    uint64_t publish = r->published + LT_RING_BATCH;
    s->slow_at = room < publish ? room : publish;
    if (s->nuntraced) /* every event takes any_event (co_untraced.c) */
        s->slow_at = 0;
    return p;
}

void co_out_clock(co_state *s)
{
    uint64_t ticks = 0, ns = 0;
    if (!s->no_clock)
        co_clock_pair(s->use_tsc, &ticks, &ns);
    uint8_t *p = co_out_reserve(s, LT_EVENT_HOT_MAX);
    if (!p)
        return;
    uint8_t *q = lt_put_head(p, LT_EV_CLOCK, 3);
    q = lt_put_uint(q, ticks);
    q = lt_put_uint(q, ns);
    /* LuaJIT keeps half a line's instructions on each call and return: its
     * tiny calls came out 6 points light with it, 13 heavy without */
    unsigned instr = co_jit_is() ? 0 : LT_CLOCK_LINE_INSTR;
    unsigned lines = (s->lines_sampled ? LT_CLOCK_LINES_SAMPLED : 0) |
                     (s->tick_mode && co_jit_is() ? LT_CLOCK_BIAS_AFTER : 0) | instr;
    q = lt_put_uint(q, s->tick_mode == CO_TICK_CPU    ? LT_CLOCK_CPU | lines
                       : s->tick_mode == CO_TICK_WALL ? LT_CLOCK_WALL | lines
                       : s->no_clock                  ? LT_CLOCK_NONE
                       : s->use_tsc                   ? LT_CLOCK_TSC | instr
                                                      : LT_CLOCK_MONO | instr);
    lt_ring_commit(&s->ring, (uint64_t)(q - p));
}

void co_out_bias(co_state *s)
{
    const co_bias *b = co_calib_bias();
    /* sampled time takes the dispatch calibration's figures (in16) and no
     * other: the exact timing's (a listening process calibrated before
     * the ack asked for sampled time) hold the hook's own cost, whose
     * ticks are left out already; debited again, they took the whole
     * time of call-dense code. Lines by sample under Lua 5.1 and 5.4 need
     * none (co_calib.c). */
    int ok = b->ok && (!s->tick_mode || b->in16) && !(s->lines_sampled && !s->jit);
    uint8_t *p = ok ? co_out_reserve(s, LT_EVENT_HOT_MAX) : NULL;
    if (!p)
        return;
    /* sampled time: in 1/16 ns, the trace's unit, and no scaling (no hook
     * is timed): recorderd takes each event's cost off where it ran */
    uint8_t *q = lt_put_head(p, LT_EV_BIAS, 5);
    for (int k = 0; k < 4; k++)
        q = lt_put_uint(q, (uint64_t)((double)b->tick[k] + 0.5));
    q = lt_put_uint(q, s->tick_mode ? 0 : b->hook16);
    lt_ring_commit(&s->ring, (uint64_t)(q - p));
    p = b->switch16 && s->tick_mode ? co_out_reserve(s, LT_EVENT_HOT_MAX) : NULL;
    if (p) { /* LuaJIT's: taken off after each switch */
        q = lt_put_head(p, LT_EV_SBIAS, 1);
        q = lt_put_uint(q, b->switch16);
        lt_ring_commit(&s->ring, (uint64_t)(q - p));
    }
    p = b->step16 ? co_out_reserve(s, LT_EVENT_HOT_MAX) : NULL;
    if (p) { /* Lua 5.4's: a step of a line's lookup (WALK) */
        q = lt_put_head(p, LT_EV_WBIAS, 1);
        q = lt_put_uint(q, b->step16);
        lt_ring_commit(&s->ring, (uint64_t)(q - p));
    }
    p = b->hook16_line && !s->tick_mode ? co_out_reserve(s, LT_EVENT_HOT_MAX) : NULL;
    if (!p)
        return;
    q = lt_put_head(p, LT_EV_LBIAS, 1);
    q = lt_put_uint(q, b->hook16_line);
    lt_ring_commit(&s->ring, (uint64_t)(q - p));
}
