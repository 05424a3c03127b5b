/* co_out: the slow paths of writing records: a full ring, a lost consumer,
 * clock calibration records. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

#include "co_clock.h"
#include "co_state.h"

void co_out_lost(co_state *s, const char *why)
{
    if (s->lost)
        return;
    s->lost = 1;
    co_set_active(s, 0);
    if (s->attached)
        return; /* a host traced on demand says nothing: it is untraced again */
    fprintf(stderr, "luatrace: tracing stopped: %s; the program continues untraced\n", why);
}

static void pause_a_little(unsigned round)
{
    if (round < 64) {
        sched_yield();
        return;
    }
    struct timespec ts = {0, round < 1024 ? 20000 : 200000};
    nanosleep(&ts, NULL);
}

uint8_t *co_out_wait(co_state *s, size_t n)
{
    co_hook_slow(s); /* a wait is not the program's time: measure this hook's end */
    if (s->lost)
        return NULL;
    if (s->discard) {
        s->ring.peer_seen = s->ring.pos; /* pretend everything was read */
        return lt_ring_reserve(&s->ring, n);
    }
    lt_ring_publish(&s->ring); /* the consumer may be waiting for these */
    if (s->drop_mode) {
        co_out_drop(s); /* the next hot record writes the GAP first */
        return NULL;
    }
    for (unsigned round = 0;; round++) {
        uint8_t *p = lt_ring_reserve(&s->ring, n);
        if (p)
            return p;
        /* acquire: pairs with the consumer's release when it leaves */
        if (atomic_load_explicit(&s->ring.hdr->cons_state, memory_order_acquire) ==
                LT_CONS_GONE ||
            ((round & 63) == 63 && co_conn_gone(s))) {
            co_out_lost(s, "recorderd went away");
            return NULL;
        }
        pause_a_little(round);
    }
}

/* The GAP record of the events dropped so far. */
static void write_gap(co_state *s, uint8_t *p)
{
    uint8_t *q = lt_put_head(p, LT_EV_GAP, 1);
    q = lt_put_uint(q, s->dropped);
    s->dropped = 0;
    lt_ring_commit(&s->ring, (uint64_t)(q - p));
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
    if (r->pos - r->published >= LT_RING_BATCH)
        lt_ring_publish(r);
    uint8_t *p = co_out_reserve(s, LT_EVENT_HOT_MAX);
    if (p && s->dropped) {
        if (!s->gap_ok) { /* drop until the resync (co_out_drop) */
            co_out_drop(s);
            return NULL;
        }
        write_gap(s, p);
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
    uint64_t ticks, ns;
    co_clock_pair(s->use_tsc, &ticks, &ns);
    uint8_t *p = co_out_reserve(s, LT_EVENT_HOT_MAX);
    if (!p)
        return;
    uint8_t *q = lt_put_head(p, LT_EV_CLOCK, 3);
    q = lt_put_uint(q, ticks);
    q = lt_put_uint(q, ns);
    q = lt_put_uint(q, (uint64_t)s->use_tsc);
    lt_ring_commit(&s->ring, (uint64_t)(q - p));
}
