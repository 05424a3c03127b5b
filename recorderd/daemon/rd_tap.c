/* rd_tap: windows onto served sessions (rd_tap.h). The window's profile
 * is the model at its end less the model at its start: the call tree only
 * grows (a node never moves), so each node's self time and lines over the
 * window are their growth. Coroutine labels are kept when no coroutine was
 * folded meanwhile (folding moves shares between tracks); otherwise the
 * window's samples go without them. */
#include "rd_tap.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rd_guard.h"
#include "rd_pprof.h"

/* Guards every session's list of taps and each tap's s. */
static pthread_mutex_t tap_mu = PTHREAD_MUTEX_INITIALIZER;

typedef struct head_read {
    const lt_ring *ring;
    uint64_t head;
} head_read;

static int read_head(void *ud)
{
    head_read *h = ud;
    h->head = atomic_load_explicit(&h->ring->hdr->head, memory_order_acquire);
    return 0;
}

/* The producer's head of s's ring: the bytes it wrote so far (the shm may
 * vanish: read under the guard; 0 then, which waits for nothing). */
static uint64_t ring_head(const rd_session *s)
{
    head_read h = {&s->ring, 0};
    return s->ring_lost || rd_guard_call(read_head, &h) ? 0 : h.head;
}

void rd_tap_add(rd_session *s, rd_tap *t)
{
    pthread_mutex_lock(&tap_mu);
    t->head0 = ring_head(s);
    t->s = s;
    atomic_store(&t->state, RD_TAP_NEW);
    t->next = s->taps;
    s->taps = t;
    atomic_fetch_add(&s->ntaps, 1);
    pthread_mutex_unlock(&tap_mu);
}

void rd_tap_end(rd_tap *t)
{
    pthread_mutex_lock(&tap_mu); /* t->s: the drainer may let go of it */
    t->head1 = t->s ? ring_head(t->s) : 0;
    pthread_mutex_unlock(&tap_mu);
    int want = RD_TAP_STARTED;
    /* a tap the drainer has not started yet ends empty all the same */
    if (!atomic_compare_exchange_strong(&t->state, &want, RD_TAP_WANT_END)) {
        want = RD_TAP_NEW;
        atomic_compare_exchange_strong(&t->state, &want, RD_TAP_WANT_END);
    }
}

/* Takes t off its session's list (tap_mu held). */
static void unlink_tap(rd_tap *t)
{
    rd_session *s = t->s;
    if (!s)
        return;
    for (rd_tap **pp = &s->taps; *pp; pp = &(*pp)->next)
        if (*pp == t) {
            *pp = t->next;
            atomic_fetch_sub(&s->ntaps, 1);
            break;
        }
    t->s = NULL;
}

void rd_tap_cancel(rd_tap *t)
{
    pthread_mutex_lock(&tap_mu);
    unlink_tap(t);
    pthread_mutex_unlock(&tap_mu);
}

void rd_tap_free(rd_tap *t)
{
    if (!t)
        return;
    free(t->self);
    free(t->lines);
    rd_pb_free(&t->gz);
    free(t);
}

/* {====== the drainer's side */

static int snapshot(rd_tap *t, const rd_model *m)
{
    size_t n = (size_t)m->nnode + m->ntnode;
    t->self = malloc((n ? n : 1) * sizeof *t->self);
    t->lines = malloc((n ? n : 1) * sizeof *t->lines);
    if (!t->self || !t->lines)
        return -ENOMEM;
    for (uint32_t i = 0; i < m->nnode; i++) {
        t->self[i] = m->node[i].self;
        t->lines[i] = m->node[i].lines;
    }
    for (uint32_t i = 0; i < m->ntnode; i++) {
        t->self[m->nnode + i] = m->tnode[i].self;
        t->lines[m->nnode + i] = m->tnode[i].lines;
    }
    t->nnode = m->nnode;
    t->ntnode = m->ntnode;
    t->events = m->events;
    t->dropped = m->dropped;
    t->folded = m->folded;
    return 0;
}

static uint64_t less(uint64_t now, uint64_t then)
{
    return now > then ? now - then : 0;
}

/* Makes m hold the window's growth (swap 0), or puts back what it held
 * (swap 1), keeping the values now in keep. */
static void window(rd_tap *t, rd_model *m, uint64_t *keep, int back)
{
    for (uint32_t i = 0; i < t->nnode; i++) {
        uint64_t *self = &m->node[i].self, *lines = &m->node[i].lines;
        if (back) {
            *self = keep[2 * i], *lines = keep[2 * i + 1];
            continue;
        }
        keep[2 * i] = *self, keep[2 * i + 1] = *lines;
        *self = less(*self, t->self[i]), *lines = less(*lines, t->lines[i]);
    }
    uint64_t *kt = keep + 2 * (size_t)t->nnode;
    for (uint32_t i = 0; i < t->ntnode && i < m->ntnode; i++) {
        rd_tnode *tn = &m->tnode[i];
        if (back) {
            tn->self = kt[2 * i], tn->lines = kt[2 * i + 1];
            continue;
        }
        kt[2 * i] = tn->self, kt[2 * i + 1] = tn->lines;
        tn->self = less(tn->self, t->self[t->nnode + i]);
        tn->lines = less(tn->lines, t->lines[t->nnode + i]);
    }
}

static int gzip_profile(rd_tap *t, const rd_model *m, const rd_session *s)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        return -ENOMEM;
    rd_pprof_info info = {s->cmd, s->cwd[0] ? s->cwd : NULL, t->wall0};
    int e = rd_pprof_write(m, &info, f);
    if (fclose(f) && !e)
        e = -ENOMEM;
    if (!e)
        rd_pb_append(&t->gz, buf, n);
    free(buf);
    return e ? e : t->gz.err;
}

/* The window's profile of s into t->gz. */
static int encode(rd_tap *t, rd_session *s)
{
    rd_model *m = &s->m;
    uint32_t ntn = m->ntnode;
    int labels = m->folded == t->folded && ntn >= t->ntnode;
    uint64_t *keep = malloc(2 * ((size_t)t->nnode + t->ntnode + 1) * sizeof *keep);
    if (!keep)
        return -ENOMEM;
    uint64_t events = m->events, dropped = m->dropped;
    window(t, m, keep, 0);
    m->events = less(events, t->events);
    m->dropped = less(dropped, t->dropped);
    if (!labels)
        m->ntnode = 0; /* every node's time as one sample, no coroutine */
    int e = gzip_profile(t, m, s);
    m->ntnode = ntn;
    m->events = events;
    m->dropped = dropped;
    window(t, m, keep, 1);
    free(keep);
    return e;
}

/* One tap's turn; returns 1 when it is done. */
static int serve(rd_tap *t, rd_session *s, int last)
{
    int st = atomic_load(&t->state);
    if (!last && s->ring.pos < t->head0)
        return 0; /* the drainer is still on records made before the window */
    if (st == RD_TAP_NEW) {
        t->err = snapshot(t, &s->m);
        int want = RD_TAP_NEW; /* unless the loop ended it meanwhile */
        atomic_compare_exchange_strong(&t->state, &want, RD_TAP_STARTED);
        st = atomic_load(&t->state);
    }
    if ((st != RD_TAP_WANT_END || s->ring.pos < t->head1) && !last)
        return 0; /* open, or the window's last records not drained yet */
    if (!t->err)
        t->err = encode(t, s);
    atomic_store(&t->state, RD_TAP_DONE);
    uv_async_send(t->wake);
    return 1;
}

void rd_tap_poll(rd_session *s, int last)
{
    if (!atomic_load_explicit(&s->ntaps, memory_order_relaxed))
        return;
    pthread_mutex_lock(&tap_mu);
    for (rd_tap **pp = &s->taps; *pp;) {
        rd_tap *t = *pp;
        if (serve(t, s, last)) {
            *pp = t->next;
            atomic_fetch_sub(&s->ntaps, 1);
            t->s = NULL;
        } else {
            pp = &t->next;
        }
    }
    pthread_mutex_unlock(&tap_mu);
}

/* }====== */
