/* rd_stack: stack reconstruction (rules in rd_stack.h). */
#include "rd_stack.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The per-record paths are short; rare work kept out of them keeps them
 * from saving registers for it. */
#define HOT static inline __attribute__((always_inline))
#define COLD static __attribute__((noinline))

int rd_stack_init(rd_stack *s, rd_model *m)
{
    memset(s, 0, sizeof *s);
    s->m = m;
    s->capth = 64;
    s->th = calloc(s->capth, sizeof *s->th);
    return s->th ? 0 : -ENOMEM;
}

void rd_stack_free(rd_stack *s)
{
    for (uint32_t i = 0; s->th && i < s->capth; i++)
        free(s->th[i].f);
    free(s->th);
    free(s->chain);
    free(s->snap);
    free(s->spare);
    memset(s, 0, sizeof *s);
}

static void pop_all(rd_stack *s, rd_thread *t, enum rd_how how);

/* ---- threads ---- */

/* Folds the ended coroutines marked to fold (rd_share.c): the shares
 * move, and the frames that cache theirs follow. */
static void fold(rd_stack *s)
{
    uint32_t *re, n;
    if (rd_model_fold(s->m, &re, &n))
        return;
    for (uint32_t i = 0; i < s->capth; i++) {
        rd_thread *t = &s->th[i];
        if (!t->id)
            continue;
        t->base_tix = t->base_tix < n ? re[t->base_tix] : 0;
        for (uint32_t j = 0; j < t->n; j++)
            t->f[j].tix = t->f[j].tix < n ? re[t->f[j].tix] : 0;
    }
    free(re);
}

static uint64_t note_time(rd_stack *s, uint64_t at);

/* Thread id is gone: its track ends, and the listener is told. */
static void end_track(rd_stack *s, uint64_t id)
{
    uint64_t serial = rd_model_track_end(s->m, id);
    if (serial != RD_LS_NO_TRACK && s->ls && s->ls->end)
        s->ls->end(s->ls->ud, serial, note_time(s, s->m->ticks_total));
    if (rd_model_fold_due(s->m))
        fold(s);
}

static rd_thread *find_thread(rd_stack *s, uint64_t id)
{
    uint32_t mask = s->capth - 1;
    for (uint32_t i = rd_model_hash_id(id) & mask; s->th[i].id; i = (i + 1) & mask)
        if (s->th[i].id == id)
            return &s->th[i];
    return NULL;
}

static int grow_threads(rd_stack *s)
{
    uint32_t cap = s->capth * 2;
    rd_thread *t = calloc(cap, sizeof *t);
    if (!t)
        return -ENOMEM;
    for (uint32_t j = 0; j < s->capth; j++) {
        if (!s->th[j].id)
            continue;
        uint32_t i = rd_model_hash_id(s->th[j].id) & (cap - 1);
        while (t[i].id)
            i = (i + 1) & (cap - 1);
        t[i] = s->th[j];
    }
    free(s->th);
    s->th = t;
    s->capth = cap;
    return 0;
}

/* May move other threads: do not hold rd_thread pointers across it. */
static rd_thread *get_thread(rd_stack *s, uint64_t id)
{
    rd_thread *t = find_thread(s, id);
    if (t || id == 0)
        return t;
    s->cur = NULL;
    if ((s->nth + 1) * 2 > s->capth && grow_threads(s))
        return NULL;
    uint32_t i = rd_model_hash_id(id) & (s->capth - 1);
    while (s->th[i].id)
        i = (i + 1) & (s->capth - 1);
    s->nth++;
    s->th[i] = (rd_thread){.id = id};
    return &s->th[i];
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
static void drop_thread(rd_stack *s, uint64_t id)
{
    rd_thread *t = find_thread(s, id);
    if (!t)
        return;
    /* a coroutine that died with frames left died of an error: they leave
     * as unwound, and a Lua call with no record of its own yet (lines by
     * sample: it raised before calling anything) is counted as it leaves */
    pop_all(s, t, RD_UNWIND);
    s->cur = NULL;
    uint32_t mask = s->capth - 1, i = (uint32_t)(t - s->th);
    if (!s->spare) { /* a coroutine per request: no malloc, memset, free each */
        s->spare = t->f;
        s->capspare = t->cap;
    } else {
        free(t->f);
    }
    s->th[i] = (rd_thread){0};
    s->nth--;
    for (uint32_t j = (i + 1) & mask; s->th[j].id; j = (j + 1) & mask) {
        uint32_t home = rd_model_hash_id(s->th[j].id) & mask;
        if (((j - home) & mask) >= ((j - i) & mask)) {
            s->th[i] = s->th[j];
            s->th[j] = (rd_thread){0};
            i = j;
        }
    }
    end_track(s, id); /* its frames are gone: none holds a share of it */
}

/* The current thread, cached: only records that switch threads or change
 * the thread table (which may move entries) reset the cache. */
HOT rd_thread *current(rd_stack *s)
{
    if (!s->cur)
        s->cur = s->nchain ? find_thread(s, s->chain[s->nchain - 1]) : NULL;
    return s->cur;
}

const rd_thread *rd_stack_current(const rd_stack *s)
{
    return current((rd_stack *)s);
}

static int chain_push(rd_stack *s, uint64_t id)
{
    if (s->nchain >= s->capchain &&
        rd_grow((void **)&s->chain, &s->capchain, s->nchain, sizeof *s->chain))
        return -ENOMEM;
    s->chain[s->nchain++] = id;
    return 0;
}

static int chain_find(const rd_stack *s, uint64_t id)
{
    for (int i = (int)s->nchain - 1; i >= 0; i--)
        if (s->chain[i] == id)
            return i;
    return -1;
}

/* ---- frames ---- */

static uint32_t top_node(const rd_thread *t)
{
    return t->n ? t->f[t->n - 1].node : t->base;
}

/* Listeners see times that never go back: a delayed enter (a Lua call
 * settled late) is moved after anything already reported. Sampled time's
 * debits (unbias, debit_after) can take ticks_total below 0 before the
 * ticks that pay for them come (a C call before the first tick): read as
 * 0, not as a time past all the others that every later one would wait
 * for. */
static uint64_t note_time(rd_stack *s, uint64_t at)
{
    if ((int64_t)at < 0 || at < s->ls_t)
        at = s->ls_t;
    return s->ls_t = at;
}

/* t's rd_model track + 1, looked up on first use; 0 if memory ran out. */
static uint32_t track_of(rd_stack *s, rd_thread *t)
{
    if (!t->track)
        t->track = rd_model_track(s->m, t->id);
    return t->track;
}

/* What the listener calls t's coroutine: its track's serial (collector
 * ids are reused, and so are folded tracks' slots; a serial is not). */
static uint64_t ls_thread(rd_stack *s, rd_thread *t)
{
    uint32_t k = track_of(s, t);
    return k ? s->m->track[k - 1].serial : RD_LS_NO_TRACK;
}

static void note_enter(rd_stack *s, rd_thread *t, enum rd_how how, uint64_t at)
{
    if (s->ls && s->ls->enter)
        s->ls->enter(s->ls->ud, ls_thread(s, t), &t->f[t->n - 1], t->n - 1, how,
                     note_time(s, at));
}

/* Call before the top frame is removed. */
static void note_leave(rd_stack *s, rd_thread *t, enum rd_how how, uint64_t at)
{
    if (s->ls && s->ls->leave)
        s->ls->leave(s->ls->ud, ls_thread(s, t), &t->f[t->n - 1], t->n - 1, how,
                     note_time(s, at));
}

/* The share of t's coroutine in node (tnode + 1; 0 if memory ran out). */
static uint32_t share(rd_stack *s, rd_thread *t, uint32_t node)
{
    const rd_node *nd = &s->m->node[node];
    if (t->track && nd->hot_tn && nd->hot_track == t->track - 1) /* rd_model_tnode's fast path */
        return nd->hot_tn;
    return track_of(s, t) ? rd_model_tnode(s->m, t->track - 1, node) : 0;
}

/* What a frame charges for share tn of node: nothing for the node's first
 * share (the model counts it as the node's counts less the other shares':
 * a program of one coroutine never touches its shares), else tn. */
static inline uint32_t frame_tix(const rd_model *m, uint32_t node, uint32_t tn)
{
    return node && m->node[node].first_tn == tn ? 0 : tn;
}

/* A new thread's first frame array: 8 frames, not rd_grow's 64 (100 000
 * suspended coroutines took 290 MB of recorderd, 2.5 KB each in frames). */
#define RD_THREAD_FRAMES0 8

/* Room for one more frame on t: the spare array for a thread that has
 * none. */
static int frame_room(rd_stack *s, rd_thread *t)
{
    if (t->n < t->cap)
        return 0;
    if (t->n >= RD_DEPTH_MAX) { /* caps double from 8 or 64: one is RD_DEPTH_MAX */
        s->too_deep = 1;
        return -E2BIG;
    }
    if (!t->cap && s->spare) {
        t->f = s->spare;
        t->cap = s->capspare;
        s->spare = NULL;
        return 0;
    }
    if (!t->cap) { /* most coroutines stay shallow, and many may be alive */
        t->f = malloc(RD_THREAD_FRAMES0 * sizeof *t->f);
        t->cap = t->f ? RD_THREAD_FRAMES0 : 0;
        return t->f ? 0 : -ENOMEM;
    }
    return rd_grow((void **)&t->f, &t->cap, t->n, sizeof *t->f);
}

/* A new top frame, filled in place (no struct copies on the hot path). */
static rd_frame *push_frame(rd_stack *s, rd_thread *t, uint32_t depth, uint32_t fid, int lua)
{
    if (frame_room(s, t))
        return NULL;
    rd_model *m = s->m;
    uint32_t n = t->n;
    rd_frame *f = t->f + n;
    uint32_t node = rd_model_child(m, n ? f[-1].node : t->base, fid);
    *f = (rd_frame){.depth = depth, .fid = fid, .node = node, .is_lua = (uint8_t)lua,
                    .t_call = m->ticks_total};
    t->n = n + 1;
    if (n && !m->node[node].call_line && !m->lines_sampled) /* the call site (rd_node.call_line) */
        m->node[node].call_line = f[-1].line;
    uint32_t tn = share(s, t, node);
    f->tix = frame_tix(m, node, tn);
    rd_track *tr = n == 0 && tn ? &m->track[t->track - 1] : NULL;
    if (tr && !tr->named) { /* its name: the function it started in (a track's first frame is
                               pushed on an empty stack) */
        tr->first_fid = fid;
        tr->named = 1;
    }
    return f;
}

static void count_call(rd_stack *s, const rd_frame *f)
{
    s->m->node[f->node].calls++;
    if (f->fid < s->m->nfunc)
        s->m->func[f->fid].calls++;
}

/* Time that ran while the top frame was a fresh Lua call goes to the node
 * where the frame settled (after a tail call, not its caller's child). */
static void settle_ticks(rd_stack *s, rd_thread *t, const rd_frame *f)
{
    s->m->node[f->node].self += t->fresh_ticks;
    if (f->tix)
        s->m->tnode[f->tix - 1].self += t->fresh_ticks;
    t->fresh_ticks = 0;
}

/* A Lua call that ended before its first line: counted as it leaves. */
COLD void pop_fresh(rd_stack *s, rd_thread *t, rd_frame *f)
{
    count_call(s, f);
    settle_ticks(s, t, f);
    note_enter(s, t, RD_CALL, f->t_call);
}

HOT void pop(rd_stack *s, rd_thread *t, enum rd_how how, uint64_t at)
{
    rd_frame *f = &t->f[t->n - 1];
    if (f->fresh)
        pop_fresh(s, t, f);
    note_leave(s, t, how, at);
    t->n--;
}

/* Empties t's stack, top first. */
static void pop_all(rd_stack *s, rd_thread *t, enum rd_how how)
{
    while (t->n)
        pop(s, t, how, s->m->ticks_total);
}

/* Whether t's stack holds a Lua function's frame. */
static int has_lua(const rd_thread *t)
{
    for (uint32_t i = t->n; i > 0; i--)
        if (t->f[i - 1].is_lua)
            return 1;
    return 0;
}

/* Pops frames deeper than depth: unwinding by an error (E). One that
 * leaves no Lua frame, no coroutine resumed, came from an error the
 * program did not catch: the allocator calls just before this record
 * may be the interpreter's collection after it (rd_mem_seal). */
COLD void unwind_deeper(rd_stack *s, rd_thread *t, uint32_t depth)
{
    int lua = has_lua(t);
    s->unwinds++;
    while (t->n && t->f[t->n - 1].depth > depth)
        pop(s, t, RD_UNWIND, s->m->ticks_total);
    if (lua && s->nchain <= 1 && !has_lua(t))
        rd_mem_seal(&s->m->mem, s->m->hooked, s->m->lines_run);
}

/* Nearly every record finds nothing to unwind: the test inline. */
HOT void unwind_to(rd_stack *s, rd_thread *t, uint32_t depth)
{
    if (t->n && t->f[t->n - 1].depth > depth)
        unwind_deeper(s, t, depth);
}

/* The top frame g, a fresh Lua call, got its first own record at its own
 * depth: it was called, not tail-called. */
HOT void settle_call(rd_stack *s, rd_thread *t, rd_frame *g)
{
    g->fresh = 0;
    note_enter(s, t, RD_CALL, g->t_call);
    count_call(s, g);
    settle_ticks(s, t, g);
}

/* The top frame (a fresh Lua call) got its first own record, which says
 * it belongs at `depth`. Only a Lua function tail-calls: under a C caller
 * (pcall) a record at the caller's depth is the caller's, after the call
 * raised before any record of its own (lines by sample: no first line). */
COLD int settle(rd_stack *s, rd_thread *t, uint32_t depth)
{
    rd_frame *g = &t->f[t->n - 1];
    if (depth + 1 != g->depth || (t->n > 1 && !t->f[t->n - 2].is_lua)) {
        settle_call(s, t, g);
        return 0;
    }
    /* T: g replaces its caller */
    uint64_t at = g->t_call;
    uint32_t fid = g->fid;
    t->n--;
    if (t->n && t->f[t->n - 1].depth == depth)
        pop(s, t, RD_TAIL, at);
    s->tails++;
    if (!(g = push_frame(s, t, depth, fid, 1)))
        return -ENOMEM;
    g->t_call = at;
    note_enter(s, t, RD_TAIL, at);
    count_call(s, g);
    settle_ticks(s, t, g);
    return 0;
}

/* A record of the frame at `depth`: settles a fresh top (the test inline). */
HOT int settle_fresh(rd_stack *s, rd_thread *t, uint32_t depth)
{
    return t->n && t->f[t->n - 1].fresh ? settle(s, t, depth) : 0;
}

/* Hangs t's stack under node base, rebuilding its path in the tree. */
static void rebase(rd_stack *s, rd_thread *t, uint32_t base)
{
    if (t->base == base)
        return;
    t->base = base;
    t->base_tix = 0;
    for (uint32_t i = 0; i < t->n; i++) {
        t->f[i].node = rd_model_child(s->m, i ? t->f[i - 1].node : base, t->f[i].fid);
        t->f[i].tix = frame_tix(s->m, t->f[i].node, share(s, t, t->f[i].node));
    }
}

/* dt to the top frame f, settled, and its line. */
HOT void charge_top(rd_model *m, const rd_frame *f, uint64_t dt)
{
    m->node[f->node].self += dt;
    if (f->tix)
        m->tnode[f->tix - 1].self += dt;
    if (f->lix) {
        m->line[f->lix - 1].ticks += dt;
    } else if (f->line) {
        rd_line *l = rd_model_line(m, f->fid, f->line);
        if (l)
            l->ticks += dt;
    }
}

/* dt with no frame on the stack: to the node it hangs under. */
static void charge_base(rd_stack *s, rd_thread *t, uint64_t dt)
{
    rd_model *m = s->m;
    m->node[t ? t->base : 0].self += dt;
    if (t && !t->base_tix)
        t->base_tix = share(s, t, t->base);
    if (t && t->base_tix)
        m->tnode[t->base_tix - 1].self += dt;
}

HOT void charge(rd_stack *s, rd_thread *t, uint64_t dt)
{
    rd_model *m = s->m;
    m->ticks_total += dt;
    if (!t || !t->n)
        charge_base(s, t, dt);
    else if (t->f[t->n - 1].fresh)
        t->fresh_ticks += dt;
    else
        charge_top(m, &t->f[t->n - 1], dt);
}

/* ---- records ---- */

static int on_call(rd_stack *s, rd_thread *t, uint32_t depth, uint32_t fid)
{
    if (depth == 0)
        return s->bad++, 0;
    int e = settle_fresh(s, t, depth - 1);
    if (e)
        return e;
    unwind_to(s, t, depth - 1);
    const rd_func *fn = rd_model_func(s->m, fid);
    int lua = fn->known && fn->what != LT_WHAT_C;
    rd_frame *f = push_frame(s, t, depth, fn->known ? fid : 0, lua);
    if (!f)
        return -ENOMEM;
    f->fresh = (uint8_t)lua;
    if (!lua) {
        count_call(s, f);
        note_enter(s, t, RD_CALL, f->t_call);
    }
    return 0;
}

static int on_ret(rd_stack *s, rd_thread *t, uint32_t depth)
{
    int e = settle_fresh(s, t, depth);
    unwind_to(s, t, depth);
    if (t->n && t->f[t->n - 1].depth == depth)
        pop(s, t, RD_CALL, s->m->ticks_total);
    return e;
}

/* The top frame f runs line. Line 0: a function without line
 * information (compiled by luac -s, LuaJIT's stripped dump): Lua fires its
 * line events at its start and at each backward jump, but no line is
 * known, so the event is no line hit anywhere (lines weight, coverage,
 * backends); its time stays the frame's, on no line. */
HOT void line_hit(rd_stack *s, rd_thread *t, rd_frame *f, uint32_t line)
{
    rd_model *m = s->m;
    if (!line) {
        f->line = 0;
        f->lix = 0;
        return;
    }
    m->node[f->node].lines++;
    m->lines_run++;
    if (f->tix)
        m->tnode[f->tix - 1].lines++;
    if (f->line != line || !f->lix)
        f->lix = rd_model_line_slot(m, f->fid, line);
    f->line = line;
    if (f->lix)
        m->line[f->lix - 1].hits++;
    if (s->ls && s->ls->line)
        s->ls->line(s->ls->ud, ls_thread(s, t), f, t->n - 1, note_time(s, m->ticks_total));
}

COLD int on_line(rd_stack *s, rd_thread *t, uint32_t depth, uint32_t line)
{
    int e = settle_fresh(s, t, depth);
    unwind_to(s, t, depth);
    if (!e && (!t->n || t->f[t->n - 1].depth < depth)) { /* a frame we never saw */
        e = push_frame(s, t, depth, 0, 0) ? 0 : -ENOMEM;
        if (!e)
            note_enter(s, t, RD_SNAP, s->m->ticks_total);
    }
    if (e)
        return e;
    line_hit(s, t, &t->f[t->n - 1], line);
    return 0;
}

/* Thread id resumes (or is returned to): it becomes current. */
static int switch_to(rd_stack *s, uint64_t id, uint32_t base, int resumed)
{
    int at = chain_find(s, id);
    if (at >= 0) {
        s->nchain = (uint32_t)at + 1;
        return 0;
    }
    rd_thread *t = get_thread(s, id);
    if (!t || chain_push(s, id))
        return -ENOMEM;
    rebase(s, t, resumed ? base : 0);
    return 0;
}

/* A RESUME of a thread on the chain below its top is no resume (a thread
 * there is running or normal): C runs Lua on that thread while the top
 * still runs (luv calls its callbacks on the main thread, also under a
 * uv.run called in a coroutine). The thread is pushed again, the chain
 * above it kept: the RESUME of the thread just below such a repeated
 * entry is that run ending, back to the thread it ran on top of. Cutting
 * the chain back to the thread instead lost the coroutines above it, and
 * the one on top, resumed again, hung under the main thread's frames,
 * not its resumer's. */
static int on_resume(rd_stack *s, rd_thread *t, uint64_t id)
{
    int at = chain_find(s, id);
    if (at >= 0 && (uint32_t)at + 1 < s->nchain) {
        uint32_t top = s->nchain - 1;
        int nested = 0;
        for (uint32_t i = 0; i < top && !nested; i++)
            nested = s->chain[i] == s->chain[top];
        if (nested && (uint32_t)at + 1 == top) {
            s->nchain = top;
            return 0;
        }
        return get_thread(s, id) && !chain_push(s, id) ? 0 : -ENOMEM;
    }
    return switch_to(s, id, t ? top_node(t) : 0, 1);
}

static int on_yield(rd_stack *s, rd_thread *t, uint64_t id, int dead)
{
    if (t && s->nchain) {
        uint64_t old = s->chain[--s->nchain];
        if (dead && old != id)
            drop_thread(s, old);
        /* An error that skips resumers (nested wraps) killed them too: a
         * resumer that caught it would have run in between. */
        int at = dead ? chain_find(s, id) : -1;
        while (at >= 0 && s->nchain > (uint32_t)at + 1)
            drop_thread(s, s->chain[--s->nchain]);
    }
    if (s->nchain && s->chain[s->nchain - 1] == id)
        return 0;
    /* resumed from C (lua_resume in a C function of the thread now on top
     * of the chain, which ran no Lua in between): nested in its top frame */
    rd_thread *top = s->nchain ? find_thread(s, s->chain[s->nchain - 1]) : NULL;
    return switch_to(s, id, top ? top_node(top) : 0, top != NULL);
}

/* Tells the listener which thread runs now. */
static void note_thread(rd_stack *s)
{
    rd_thread *t = s->ls && s->ls->thread && s->nchain ? find_thread(s, s->chain[s->nchain - 1])
                                                      : NULL;
    if (t)
        s->ls->thread(s->ls->ud, ls_thread(s, t), note_time(s, s->m->ticks_total));
}

static int note_thread_e(rd_stack *s, int e)
{
    if (!e)
        note_thread(s);
    return e;
}

static void begin_snapshot(rd_stack *s, uint64_t id, int begin)
{
    s->in_snap = 1;
    s->snap_thread = id;
    s->snap_begin = begin;
    s->nsnap = 0;
}

static int add_snap_frame(rd_stack *s, const lt_event *ev)
{
    if (!s->in_snap || ev->a[0] == 0 || ev->a[0] > UINT32_MAX)
        return s->bad++, 0;
    if (rd_grow((void **)&s->snap, &s->capsnap, s->nsnap, sizeof *s->snap))
        return -ENOMEM;
    const rd_func *fn = rd_model_func(s->m, (uint32_t)ev->a[1]);
    s->snap[s->nsnap++] = (rd_frame){.depth = (uint32_t)ev->a[0],
                                     .fid = fn->known ? (uint32_t)ev->a[1] : 0,
                                     .line = (uint32_t)ev->a[2],
                                     .is_lua = fn->known && fn->what != LT_WHAT_C};
    return 0;
}

/* A snapshot replaces t's stack. A call on top not settled yet (drop mode
 * lost its first line) may have been a tail call: where it stood is not
 * known, so it is counted nowhere rather than somewhere it never was; its
 * time goes to its caller. Unless the snapshot has it where it was called. */
static void drop_fresh_top(rd_stack *s, rd_thread *t)
{
    if (!t->n || !t->f[t->n - 1].fresh)
        return;
    rd_frame *g = &t->f[t->n - 1];
    for (uint32_t i = 0; i < s->nsnap; i++) {
        /* the snapshot has it at the depth it was called at, with frames
         * above it or none (a thread's stack read inside its hook at that
         * call, or while it resumed another from there): it was called */
        if (s->snap[i].depth == g->depth && s->snap[i].fid == g->fid) {
            settle_call(s, t, g);
            return;
        }
    }
    t->n--;
    if (t->n)
        settle_ticks(s, t, &t->f[t->n - 1]);
    else
        t->fresh_ticks = 0;
}

/* The snapshot came top first: install it bottom first as the thread's
 * stack. Frames out of depth order are dropped. */
static int end_snapshot(rd_stack *s)
{
    if (!s->in_snap)
        return 0;
    s->in_snap = 0;
    s->cur = NULL;
    if (s->snap_begin) {
        s->nchain = 0;
        if (s->stopped) /* tron after troff */
            rd_mem_resume(&s->m->mem);
        s->stopped = 0;
        if (chain_push(s, s->snap_thread))
            return -ENOMEM;
    }
    rd_thread *t = get_thread(s, s->snap_thread);
    if (!t)
        return -ENOMEM;
    if (s->snap_begin)
        (void)track_of(s, t); /* the first thread is `main`, even with no frame yet */
    drop_fresh_top(s, t);
    pop_all(s, t, RD_STOP);
    for (uint32_t i = s->nsnap; i-- > 0;) {
        if (t->n && s->snap[i].depth <= t->f[t->n - 1].depth) {
            s->bad++;
            continue;
        }
        rd_frame *f = push_frame(s, t, s->snap[i].depth, s->snap[i].fid, s->snap[i].is_lua);
        if (!f)
            return -ENOMEM;
        f->line = s->snap[i].line;
        note_enter(s, t, RD_SNAP, s->m->ticks_total);
    }
    note_thread(s);
    return 0;
}

/* THREAD: id names a new thread; the thread that had it (if any) is gone:
 * its frames leave as unwound, its track ends. */
static int new_thread(rd_stack *s, uint64_t id, uint64_t addr)
{
    if (!id)
        return s->bad++, 0;
    drop_thread(s, id);
    end_track(s, id); /* also when the stack went with a STOP */
    rd_thread *t = get_thread(s, id);
    if (!t)
        return -ENOMEM;
    t->addr = addr;
    return 0;
}

/* The trace ends (a STOP, or no more records): a Lua frame still open
 * means the program's Lua code ended there, by an error, Ctrl-C (which
 * takes the hook away: no hook follows the collection) or os.exit. */
static void end_lua(rd_stack *s)
{
    rd_thread *t = current(s);
    if (t && has_lua(t))
        rd_mem_seal(&s->m->mem, s->m->hooked + 1, s->m->lines_run);
}

static void stop_all(rd_stack *s)
{
    end_lua(s);
    for (uint32_t i = 0; s->ls && i < s->capth; i++)
        pop_all(s, &s->th[i], RD_STOP);
    for (uint32_t i = 0; i < s->capth; i++) {
        free(s->th[i].f);
        s->th[i] = (rd_thread){0};
    }
    s->nth = 0;
    s->nchain = 0;
    s->cur = NULL; /* end_lua may have cached one */
    s->stopped = 1;
}

/* {======================================================================
 * Dispatch. CALL, RET and LINE are nearly every record, and nearly all of
 * them have one shape: the frame on top is the record's frame (or its
 * caller), settled, its lines and children already in the model's caches,
 * and no listener. frame_line, frame_call and frame_ret do that shape as
 * leaf functions (no call, so no registers saved: a tenth of a record's
 * cost) and hand every other shape to line_top / call_other / ret_other,
 * which apply the rules through on_line / on_call / on_ret. A leaf does
 * exactly what the general path would do for its shape: a rule changed
 * there must be changed in the leaf too (check_stack runs every case both
 * ways: without a listener through the leaves, with one without them). */

/* LINE in any other shape. */
COLD int line_other(rd_stack *s, rd_thread *t, uint64_t depth, uint64_t dt, uint64_t line)
{
    charge(s, t, dt);
    if (!t || depth > UINT32_MAX || line > UINT32_MAX)
        return s->bad++, 0;
    return on_line(s, t, (uint32_t)depth, (uint32_t)line);
}

/* LINE of the frame on top, settled or called. */
COLD int line_top(rd_stack *s, uint64_t depth, uint64_t dt, uint64_t line)
{
    rd_thread *t = current(s);
    rd_frame *f = t && t->n ? &t->f[t->n - 1] : NULL;
    if (!f || f->depth != depth || line > UINT32_MAX)
        return line_other(s, t, depth, dt, line);
    s->m->ticks_total += dt;
    if (f->fresh) { /* the first line of a call */
        t->fresh_ticks += dt;
        settle_call(s, t, f);
    } else {
        charge_top(s->m, f, dt);
    }
    line_hit(s, t, f, (uint32_t)line);
    return 0;
}

/* dt less the hook's unmeasured cost b (the BIAS record), but never below
 * a nanosecond (bias_floor) that it had: some code ran between the two
 * events, and a slice of no length would nest in the one before it for
 * a timeline's reader (DevTools) */
static inline uint64_t unbias(const rd_model *m, uint64_t dt, uint64_t b)
{
    uint64_t f = m->bias_floor;
    if (m->tick_clock) /* sampled time: a debit on the ticks there (rd_stack_finish) */
        return dt - b;
    return dt > b + f ? dt - b : dt < f ? dt : f;
}

/* What traceexec cost the instructions before a CALL or a RET in frame f
 * (the top one): half a line's (CODE), unless a LINE's cost stands for its
 * line's every instruction, calls in it or not (line_instr: Lua 5.1 and
 * 5.4; counted at calls too, tiny calls came out 10 to 15 points light). */
HOT uint64_t frame_instr_cost(const rd_model *m, const rd_frame *f)
{
    return f->fid < m->nfunc && !m->line_instr ? m->bias[3] * m->func[f->fid].ipl16 >> 9 : 0;
}

/* What a LINE costs in frame f beyond the event: its line's instructions
 * (CODE) and, under Lua 5.4, the steps that found its number (WBIAS,
 * WALK). */
static inline uint64_t frame_line_cost(const rd_model *m, const rd_frame *f)
{
    const rd_func *fn = f->fid < m->nfunc ? &m->func[f->fid] : NULL;
    return fn ? (m->bias[3] * fn->ipl16 + m->bias_step * fn->walk16) >> 8 : 0;
}

/* frame_instr_cost of t's top frame; 0 without one. */
static inline uint64_t instr_cost(const rd_model *m, const rd_thread *t)
{
    return t && t->n ? frame_instr_cost(m, &t->f[t->n - 1]) : 0;
}

/* frame_line_cost of t's top frame; 0 without one. */
static inline uint64_t line_cost(const rd_model *m, const rd_thread *t)
{
    return t && t->n ? frame_line_cost(m, &t->f[t->n - 1]) : 0;
}

/* The leaves below take the hook's cost off dt once they have the top
 * frame in hand (it says what the cost is); the other shapes take it off
 * here, from the current thread, before the general path. */
COLD int line_slow(rd_stack *s, uint64_t depth, uint64_t dt, uint64_t line)
{
    const rd_model *m = s->m;
    if (m->has_bias)
        dt = unbias(m, dt, m->bias[0] + line_cost(m, current(s)));
    return line_top(s, depth, dt, line);
}

/* LINE of the frame on top, settled with its line in the line cache or
 * fresh (its first line), its new line in the line cache, no listener:
 * most records. Nothing on this path calls, so it saves no registers;
 * the other shapes go to line_top. */
HOT int frame_line(rd_stack *s, uint64_t depth, uint64_t dt, uint64_t line)
{
    rd_thread *t = s->cur;
    if (!t || !t->n || s->ls)
        return line_slow(s, depth, dt, line);
    rd_model *m = s->m;
    rd_frame *f = &t->f[t->n - 1];
    uint32_t lix;
    int lok = f->lix != 0;
    if (f->depth != depth || !(lok || f->fresh) || line - 1 >= UINT32_MAX || /* 0: no line */
        !(lix = rd_model_line_cached(m, f->fid, (uint32_t)line)))
        return line_slow(s, depth, dt, line);
    if (m->has_bias)
        dt = unbias(m, dt, m->bias[0] + frame_line_cost(m, f));
    rd_node *node = &m->node[f->node];
    rd_tnode *tn = f->tix ? &m->tnode[f->tix - 1] : NULL;
    m->ticks_total += dt;
    if (f->fresh) { /* settled: called, not tail-called (as settle_call) */
        f->fresh = 0;
        node->calls++;
        if (f->fid < m->nfunc)
            m->func[f->fid].calls++;
        node->self += t->fresh_ticks + dt;
        if (tn)
            tn->self += t->fresh_ticks + dt;
        t->fresh_ticks = 0;
    } else {
        node->self += dt;
        if (tn)
            tn->self += dt;
        m->line[f->lix - 1].ticks += dt;
    }
    node->lines++;
    m->lines_run++;
    if (tn)
        tn->lines++;
    m->line[lix - 1].hits++;
    f->lix = lix;
    f->line = (uint32_t)line;
    return 0;
}

COLD int call_other(rd_stack *s, uint64_t depth, uint64_t dt, uint64_t fid)
{
    rd_thread *t = current(s);
    charge(s, t, dt);
    if (!t || depth > UINT32_MAX || fid > UINT32_MAX)
        return s->bad++, 0;
    return on_call(s, t, (uint32_t)depth, (uint32_t)fid);
}

/* The hook's cost of a call of fn, before the instructions of the
 * caller's: the callee's kind. */
static inline uint64_t call_bias(const rd_model *m, const rd_func *fn)
{
    return m->bias[fn->known && fn->what == LT_WHAT_C ? 2 : 1];
}

/* Sampled time whose costs land after their event (bias_after, LuaJIT;
 * a BIAS came, else nothing to take off):
 * the event goes as with no BIAS, then its cost comes off the frame it
 * left on top (a debit, as unbias makes): the Lua function's call and
 * return off the caller at the return, a C function's call (the only
 * event it has, as LuaJIT reports no C return) off the C function. */
static inline int after(const rd_model *m)
{
    return m->bias_after && m->has_bias;
}

static void debit_after(rd_stack *s, uint64_t b)
{
    rd_thread *t = current(s);
    if (t && b)
        charge(s, t, (uint64_t)0 - b);
}

static int call_after(rd_stack *s, uint64_t depth, uint64_t dt, uint64_t fid)
{
    int e = call_other(s, depth, dt, fid);
    const rd_func *fn = fid <= UINT32_MAX ? rd_model_func(s->m, (uint32_t)fid) : NULL;
    if (!e && s->m->has_bias && fn && fn->known && fn->what == LT_WHAT_C)
        debit_after(s, 2 * s->m->bias[2]);
    return e;
}

/* CALL in a shape frame_call does not take: dt less the hook's cost, then
 * call_other. */
COLD int call_slow(rd_stack *s, uint64_t depth, uint64_t dt, uint64_t fid)
{
    const rd_model *m = s->m;
    if (after(m))
        return call_after(s, depth, dt, fid);
    if (m->has_bias && fid <= UINT32_MAX)
        dt = unbias(m, dt, call_bias(m, rd_model_func(m, (uint32_t)fid)) +
                               instr_cost(m, current(s)));
    return call_other(s, depth, dt, fid);
}

/* CALL from the settled frame on top (one level below it), whose line is
 * in the line cache (or none) and whose child is in a cache, no listener,
 * room on the stack: a leaf like frame_line; call_slow takes the rest. */
HOT int frame_call(rd_stack *s, uint64_t depth, uint64_t dt, uint64_t fid)
{
    rd_thread *t = s->cur;
    if (!t || !t->n || s->ls || t->n >= t->cap || after(s->m))
        return call_slow(s, depth, dt, fid);
    rd_model *m = s->m;
    rd_frame *f = &t->f[t->n - 1];
    int lok = f->lix != 0;
    if ((uint64_t)f->depth + 1 != depth || depth > UINT32_MAX || f->fresh || (!lok && f->line) ||
        fid > UINT32_MAX)
        return call_slow(s, depth, dt, fid);
    const rd_func *fn = rd_model_func(m, (uint32_t)fid);
    uint32_t cfid = fn->known ? (uint32_t)fid : 0;
    uint32_t node = rd_model_child_cached(m, f->node, cfid);
    const rd_node *cn = &m->node[node];
    /* the child's share: its hot one, as share() finds it first */
    if (!node || !t->track || !cn->hot_tn || cn->hot_track != t->track - 1)
        return call_slow(s, depth, dt, fid);
    if (m->has_bias) /* before the call */
        dt = unbias(m, dt, call_bias(m, fn) + frame_instr_cost(m, f));
    uint8_t lua = fn->known && fn->what != LT_WHAT_C;
    m->ticks_total += dt;
    charge_top(m, f, dt); /* its line cached or none: the checks above */
    f[1] = (rd_frame){.depth = (uint32_t)depth, .fid = cfid, .node = node, .fresh = lua,
                      .is_lua = lua, .t_call = m->ticks_total,
                      .tix = cn->hot_tn == cn->first_tn ? 0 : cn->hot_tn}; /* frame_tix */
    t->n++;
    rd_node *child = &m->node[node];
    if (!child->call_line && !m->lines_sampled) /* the call site (rd_node.call_line) */
        child->call_line = f->line;
    if (!lua) { /* counted now; a Lua call once settled */
        child->calls++;
        if (cfid < m->nfunc)
            m->func[cfid].calls++;
    }
    return 0;
}

COLD int ret_other(rd_stack *s, uint64_t depth, uint64_t dt)
{
    rd_thread *t = current(s);
    charge(s, t, dt);
    if (!t || depth > UINT32_MAX)
        return s->bad++, 0;
    return on_ret(s, t, (uint32_t)depth);
}

/* Whether a RET at depth returns the Lua frame on top: its own, or one a
 * Lua tail call made a level deeper whose first record this RET is (it
 * replaces its caller at depth, as settle() finds). */
static int returns_lua(const rd_thread *t, uint64_t depth)
{
    const rd_frame *f = t && t->n ? &t->f[t->n - 1] : NULL;
    return f && f->is_lua &&
           (f->depth == depth ||
            (f->fresh && f->depth == depth + 1 && (t->n == 1 || t->f[t->n - 2].is_lua)));
}

static int ret_after(rd_stack *s, uint64_t depth, uint64_t dt)
{
    int lua = returns_lua(current(s), depth);
    int e = ret_other(s, depth, dt);
    if (!e && s->m->has_bias && lua)
        debit_after(s, 2 * s->m->bias[1]);
    return e;
}

/* The hook's cost before a return from frame f: the returning frame's
 * kind. */
HOT uint64_t ret_bias(const rd_model *m, const rd_frame *f)
{
    return f->is_lua ? m->bias[1] + frame_instr_cost(m, f) : m->bias[2];
}

/* RET in a shape frame_ret does not take: dt less the hook's cost, then
 * ret_other. */
COLD int ret_slow(rd_stack *s, uint64_t depth, uint64_t dt)
{
    const rd_model *m = s->m;
    const rd_thread *t = current(s);
    if (after(m))
        return ret_after(s, depth, dt);
    if (m->has_bias)
        dt = unbias(m, dt, t && t->n ? ret_bias(m, &t->f[t->n - 1]) : m->bias[1]);
    return ret_other(s, depth, dt);
}

/* RET of the settled frame on top, its line in the line cache (or none),
 * no listener: a leaf like frame_line; ret_slow takes the rest. */
HOT int frame_ret(rd_stack *s, uint64_t depth, uint64_t dt)
{
    rd_thread *t = s->cur;
    if (!t || !t->n || s->ls || after(s->m))
        return ret_slow(s, depth, dt);
    rd_model *m = s->m;
    rd_frame *f = &t->f[t->n - 1];
    int lok = f->lix != 0;
    if (f->depth != depth || f->fresh || (!lok && f->line))
        return ret_slow(s, depth, dt);
    if (m->has_bias)
        dt = unbias(m, dt, ret_bias(m, f));
    m->ticks_total += dt;
    charge_top(m, f, dt); /* its line cached or none: the checks above */
    t->n--;
    return 0;
}

/* RESUME, YIELD, STOP: dt first, then the thread changes. A switch
 * carries the dt of the event it came with (that event's record has 0):
 * mostly a C function's return (yield's in the coroutine, resume's in
 * its resumer), whose hook cost BIAS gives; under bias_after (LuaJIT),
 * SBIAS's cost comes off the thread switched to, where it ran. */
static int thread_event(rd_stack *s, const lt_event *ev)
{
    rd_thread *t = current(s);
    uint64_t dt = ev->a[0];
    if (s->m->has_bias && !after(s->m) && ev->kind != LT_EV_STOP)
        dt = unbias(s->m, dt, s->m->bias[2]);
    charge(s, t, dt);
    s->cur = NULL;
    int e;
    switch (ev->kind) {
    case LT_EV_RESUME:
        e = ev->a[1] ? note_thread_e(s, on_resume(s, t, ev->a[1])) : (s->bad++, 0);
        break;
    case LT_EV_YIELD:
        e = ev->a[1] ? note_thread_e(s, on_yield(s, t, ev->a[1], ev->a[3] != 0)) : (s->bad++, 0);
        break;
    default: /* STOP */
        stop_all(s);
        return 0;
    }
    if (!e && after(s->m))
        debit_after(s, s->m->bias_switch);
    return e;
}

static inline int frame_event(rd_stack *s, const lt_event *ev)
{
    switch (ev->kind) {
    case LT_EV_LINE:
        return frame_line(s, ev->a[0], ev->a[1], ev->a[2]);
    case LT_EV_CALL:
        return frame_call(s, ev->a[0], ev->a[1], ev->a[2]);
    case LT_EV_RET:
        return frame_ret(s, ev->a[0], ev->a[1]);
    default:
        return thread_event(s, ev);
    }
}

/* Ticks of a nanosecond, rounded up. BIAS follows the trace's first CLOCK
 * only, so a TSC trace's rate is rd_model_ns_per_tick's guess (1/3 ns a
 * tick): the floor is 4 ticks, a nanosecond or more below 4 GHz. */
static uint64_t bias_floor(const rd_model *m)
{
    double npt = rd_model_ns_per_tick(m);
    return npt > 0 && npt < 1 ? (uint64_t)(1 / npt) + 1 : 1;
}

/* A HOOK record: the hooks' measured ticks since the last one, over the
 * hooks meanwhile (not the records: a thread switch's RESUME or YIELD
 * comes in the hook of the event it precedes; counted, they took the
 * measured cost a hook a quarter lower on a resume/yield ping-pong, and
 * the compensation with it). Fewer than 256 hooks say too little to scale
 * by: they add up until there are more. */
/* The calibration's figures times r, within [1/2, 3]. */
static void set_bias_scale(rd_model *m, double r)
{
    r = r < 0.5 ? 0.5 : r > 3 ? 3 : r;
    for (int k = 0; k < 4; k++)
        m->bias[k] = (uint64_t)((double)m->bias_base[k] * r);
    m->bias_step = (uint64_t)((double)m->bias_step_base * r);
}

static void scale_bias(rd_model *m, uint64_t ticks)
{
    uint64_t n = m->hooked - m->hook_events;
    if (!m->has_bias || !m->bias_hook16 || ticks > (UINT64_MAX >> 20))
        return;
    m->hook_ticks += ticks;
    if (n < 256)
        return;
    double r = (double)m->hook_ticks * 16 / ((double)n * (double)m->bias_hook16);
    m->hook_events = m->hooked;
    m->hook_ticks = 0;
    set_bias_scale(m, r);
}

/* An LHOOK record: the line hooks' measured ticks and count since the
 * last one, over the calibration's (LBIAS). A line's hook does the same
 * work in every program, where a call's does more in a larger one and a
 * switch's more than either: the mean of every kind's hooks moved with
 * the mix of kinds (a resume/yield ping-pong took too much off, most
 * under AddressSanitizer, whose hooks are many times slower and a
 * switch's most), the line hooks' with the machine and its caches
 * only. Fewer than 256 add up until there are more. */
static void scale_bias_lines(rd_model *m, uint64_t ticks, uint64_t hooks)
{
    if (!m->has_bias || !m->bias_hook16_line || ticks > (UINT64_MAX >> 20) ||
        hooks > (UINT64_MAX >> 20))
        return;
    m->line_ticks += ticks;
    m->line_hooks += hooks;
    if (m->line_hooks < 256)
        return;
    double r = (double)m->line_ticks * 16 / ((double)m->line_hooks * (double)m->bias_hook16_line);
    m->line_ticks = m->line_hooks = 0;
    set_bias_scale(m, r);
}

/* A TICK: n ticks of sampled time where the last record left the stack
 * of its thread (its top frame and line), as a dt would be. Not the
 * program's event. Ticks past 2^32 or periods past 2^32 ns: a bad record. */
static int on_tick(rd_stack *s, const lt_event *ev)
{
    rd_model *m = s->m;
    m->events--;
    if (ev->a[0] >> 32 || ev->a[1] >> 32 || ev->a[2] >> 32 || !ev->a[2])
        return s->bad++, 0;
    m->ticks_hook += ev->a[1];
    m->ticks_hook_ns += ev->a[1] * ev->a[2];
    m->tick_ns = ev->a[2]; /* the last period: the first ticks are shorter */
    if (s->stopped)
        return 0;
    m->ticks_n += ev->a[0];
    m->ticks_samples += ev->a[0] != 0;
    m->ticks_ns += ev->a[0] * ev->a[2];
    charge(s, current(s), ev->a[0] * ev->a[2] * 16); /* the trace's unit: ns/16 */
    return 0;
}

/* Bytes allocated on the line of t's top frame, a Lua frame's own (as its
 * time: a C callee's are the C function's): report.html's sources. */
static int mem_line(rd_stack *s, rd_thread *t, uint64_t bytes)
{
    rd_frame *f = t && t->n ? &t->f[t->n - 1] : NULL;
    if (!bytes || !f || !f->is_lua || !f->line)
        return 0;
    if (!f->lix)
        f->lix = rd_model_line_slot(s->m, f->fid, f->line);
    return rd_mem_line(&s->m->mem, f->lix, bytes);
}

/* A MEM: one call of the allocator where the last record left the stack
 * of its thread (its top frame; the node it hangs under if none), as a
 * TICK. Not the program's event. Fields that cannot be (a reallocation's
 * sizes past 2^32, which the collector sends as a free and a new block;
 * an address where the size says none, or none where it says one): a bad
 * record. After a STOP (troff), the collector sends frees and
 * reallocations only: rd_mem_off, none counted. */
static int on_mem(rd_stack *s, const lt_event *ev)
{
    rd_model *m = s->m;
    const uint64_t *a = ev->a;
    m->events--;
    if ((a[0] && a[1] && (a[0] >> 32 || a[1] >> 32)) || !a[0] != !a[2] || !a[1] != !a[3] ||
        (!a[2] && !a[3]))
        return s->bad++, 0;
    m->has_mem = 1;
    if (s->stopped) /* troff: a free of a block made while traced, maybe */
        return rd_mem_off(&m->mem, a[0], a[2], a[3]);
    rd_thread *t = current(s);
    int e = rd_mem_apply(&m->mem, t ? top_node(t) : 0, a[0], a[1], a[2], a[3], m->hooked);
    return e ? e : mem_line(s, t, rd_mem_grown(a[0], a[1]));
}

/* Everything but a frame record while tracing runs. */
COLD int other_event(rd_stack *s, const lt_event *ev)
{
    rd_model *m = s->m;
    if (ev->kind == LT_EV_LINE || ev->kind == LT_EV_CALL || ev->kind == LT_EV_RET) {
        int e = s->in_snap ? end_snapshot(s) : 0;
        return e ? e : s->stopped ? 0 : frame_event(s, ev);
    }
    switch (ev->kind) {
    case LT_EV_STR:
        return rd_model_add_str(m, ev->a[0], ev->str, ev->slen) == -ENOMEM ? -ENOMEM : 0;
    case LT_EV_FUNC:
        return rd_model_add_func(m, ev) == -ENOMEM ? -ENOMEM : 0;
    case LT_EV_CLOCK:
        rd_model_add_clock(m, ev->a[0], ev->a[1], ev->a[2]);
        return 0;
    case LT_EV_DIR:
        rd_model_add_dir(m, ev->a[0]);
        return 0;
    case LT_EV_BIAS:
        for (int k = 0; k < 4; k++)
            m->bias[k] = m->bias_base[k] = ev->a[k] < (1u << 20) ? ev->a[k] : 0; /* beyond: none */
        m->bias_hook16 = ev->nargs > 4 && ev->a[4] < (1u << 24) ? ev->a[4] : 0;
        m->bias_hook16_line = 0; /* until its LBIAS */
        m->has_bias = 1;
        m->bias_floor = bias_floor(m);
        m->events--; /* not the program's: a trace without a clock has none */
        m->hook_events = m->hooked;
        m->hook_ticks = 0;
        return 0;
    case LT_EV_HOOK:
        m->events--;
        if (!m->bias_hook16_line) /* a trace before LHOOK: every hook's mean */
            scale_bias(m, ev->a[0]);
        return 0;
    case LT_EV_WBIAS:
        m->events--;
        m->bias_step = m->bias_step_base = ev->a[0] < (1u << 20) ? ev->a[0] : 0; /* beyond: none */
        return 0;
    case LT_EV_WALK:
        if (ev->a[0] < m->nfunc && ev->a[1] < (1u << 16))
            m->func[ev->a[0]].walk16 = (uint32_t)ev->a[1];
        return 0;
    case LT_EV_SBIAS:
        m->events--;
        m->bias_switch = ev->a[0] < (1u << 20) ? ev->a[0] : 0; /* beyond: none */
        return 0;
    case LT_EV_LBIAS:
        m->events--;
        m->bias_hook16_line = ev->a[0] < (1u << 24) ? ev->a[0] : 0;
        m->line_ticks = m->line_hooks = 0;
        return 0;
    case LT_EV_LHOOK:
        m->events--;
        scale_bias_lines(m, ev->a[0], ev->a[1]);
        return 0;
    case LT_EV_WAIT:
        m->events--;
        m->waited_ticks += ev->a[0] < (1ull << 62) ? ev->a[0] : 0;
        return 0;
    case LT_EV_CODE:
        if (ev->a[0] < m->nfunc && ev->a[1] < (1u << 16))
            m->func[ev->a[0]].ipl16 = (uint32_t)ev->a[1];
        return 0;
    case LT_EV_LINES:
        return rd_model_add_lines(m, ev);
    case LT_EV_NEST:
        return rd_model_add_nest(m, ev);
    case LT_EV_FRAME:
        return add_snap_frame(s, ev);
    default:
        break;
    }
    int e = end_snapshot(s);
    if (e)
        return e;
    switch (ev->kind) {
    case LT_EV_START:
        if (!ev->a[0])
            return s->bad++, 0;
        m->rehooked += ev->a[1] == LT_R_REHOOKED;
        begin_snapshot(s, ev->a[0], ev->a[1] == LT_R_BEGIN);
        return 0;
    case LT_EV_THREAD:
        return new_thread(s, ev->a[0], ev->a[1]);
    case LT_EV_TICK:
        return on_tick(s, ev);
    case LT_EV_MEM:
        return on_mem(s, ev);
    case LT_EV_GAP:
        s->gaps++;
        s->dropped += ev->a[0];
        m->dropped += ev->a[0];
        return 0;
    default:
        return s->stopped && ev->kind != LT_EV_STOP ? 0 : frame_event(s, ev);
    }
}

int rd_stack_event(rd_stack *s, const lt_event *ev)
{
    s->m->events++;
    s->m->hooked += ev->kind == LT_EV_LINE || ev->kind == LT_EV_CALL || ev->kind == LT_EV_RET;
    if (!(s->in_snap | s->stopped)) {
        /* the frame and thread events: frame_event's dispatch, inlined */
        switch (ev->kind) {
        case LT_EV_LINE:
        case LT_EV_CALL:
        case LT_EV_RET:
        case LT_EV_RESUME:
        case LT_EV_YIELD:
            return frame_event(s, ev);
        default:
            break;
        }
    }
    return other_event(s, ev);
}

/* A short MEM at q (bytes up to end), applied: its bytes, 0 if it is
 * something else or cut short. Between hook records, as often as they in
 * an allocation-heavy program: its own way, not rd_stack_event's. */
static int feed_short_mem(rd_stack *s, const uint8_t *q, const uint8_t *end, int *e)
{
    lt_event ev;
    int k;
    if (*q < LT_SHORT_MNEW || *q > LT_SHORT_MRE ||
        (k = lt_dec_next(&s->dec, q, (size_t)(end - q), &ev)) <= 0)
        return 0;
    s->m->events++; /* on_mem takes it off: no event of the program */
    *e = on_mem(s, &ev);
    return k;
}

/* The hot records of p[0..n) up to the first other one (or one that
 * could be cut short): decoded inline, applied through the leaves; short
 * MEMs among them too. Sets *e to an error; returns the bytes used. */
static size_t feed_hot(rd_stack *s, const uint8_t *p, size_t n, int *e)
{
    const uint8_t *q = p, *end = p + n - (n < LT_HOT_SPAN ? n : LT_HOT_SPAN - 1);
    uint64_t events = 0;
    int now = 1; /* count the next event at once: it may follow a MEM (rd_mem_seal) */
    lt_hot h;
    int k;
    while (q < end && !*e) {
        if ((k = lt_dec_hot(&s->dec, q, &h)) <= 0) {
            s->m->events += events; /* a MEM's place among the hooks (rd_mem.h) */
            s->m->hooked += events;
            events = 0;
            now = 1;
            if (!(k = feed_short_mem(s, q, p + n, e)))
                break;
            q += *e ? 0 : k;
            continue;
        }
        if (now) {
            s->m->events++;
            s->m->hooked++;
            now = 0;
        } else {
            events++;
        }
        if (h.kind == LT_EV_LINE)
            *e = frame_line(s, h.depth, h.dt, h.x);
        else if (h.kind == LT_EV_CALL)
            *e = frame_call(s, h.depth, h.dt, h.x);
        else
            *e = frame_ret(s, h.depth, h.dt);
        q += *e ? 0 : k;
    }
    s->m->events += events;
    s->m->hooked += events; /* all LINE, CALL or RET */
    return (size_t)(q - p);
}

uint64_t rd_stack_bytes(const rd_stack *s)
{
    uint64_t frames = (uint64_t)s->capspare + s->capsnap;
    for (uint32_t i = 0; i < s->capth; i++)
        frames += s->th[i].id ? s->th[i].cap : 0;
    return frames * sizeof(rd_frame) + (uint64_t)s->capth * sizeof *s->th +
           (uint64_t)s->capchain * sizeof *s->chain;
}

int64_t rd_stack_feed(rd_stack *s, const uint8_t *p, size_t n, size_t *at)
{
    size_t off = 0;
    int e = 0;
    while (off < n) {
        if (!(s->in_snap | s->stopped)) {
            off += feed_hot(s, p + off, n - off, &e);
            if (e || off >= n)
                break;
        }
        lt_event ev;
        int k = lt_dec_next(&s->dec, p + off, n - off, &ev);
        if (k <= 0) {
            *at = off;
            return k < 0 ? k : (int64_t)off;
        }
        if ((e = rd_stack_event(s, &ev)))
            break;
        off += (size_t)k;
    }
    *at = off;
    return e ? (s->too_deep ? -E2BIG : -ENOMEM) : (int64_t)off;
}

/* Whether share i is held, not implied: every share of the root, the
 * others but each node's first (rd_tnode). */
static int share_held(const rd_model *m, uint32_t i)
{
    uint32_t n = m->tnode[i].node;
    return !n || m->node[n].first_tn != i + 1;
}

/* Each node's held shares scaled down to fit its self where their sum
 * passes it. Out of memory: all of them 0. */
static void fit_shares(rd_model *m)
{
    uint64_t *sum = m->ntnode ? calloc(m->nnode, sizeof *sum) : NULL;
    for (uint32_t i = 0; sum && i < m->ntnode; i++)
        if (share_held(m, i))
            sum[m->tnode[i].node] += m->tnode[i].self;
    for (uint32_t i = 0; i < m->ntnode; i++) {
        rd_tnode *tn = &m->tnode[i];
        uint64_t have = m->node[tn->node].self, s = sum ? sum[tn->node] : UINT64_MAX;
        if (share_held(m, i) && s > have)
            tn->self = sum ? (uint64_t)((double)tn->self * (double)have / (double)s) : 0;
    }
    free(sum);
}

/* Sampled time with BIAS: each event's cost to the program outside the
 * hook, which the ticks counted as the program's, came off where it ran
 * as a debit (unbias). A tick a millisecond is sparse where events are
 * dense: most call-tree nodes of a large program have none (luacheck's
 * 246 625 stacks), so a node whose debits passed its ticks passes the
 * rest to its caller's node (a child is made after its parent: a higher
 * index), and only the root's is dropped: a subtree's time loses its
 * debits in full, as a part of a program timed by itself would. Then each
 * node's coroutine shares are cut to fit its self (rd_tnode: the other
 * shares never exceed it); a line whose debits passed its ticks is 0. */
static void settle_debits(rd_model *m)
{
    uint64_t total = 0;
    for (uint32_t i = m->nnode; i-- > 1;)
        if ((int64_t)m->node[i].self < 0) {
            m->node[m->node[i].parent].self += m->node[i].self;
            m->node[i].self = 0;
        }
    if (m->nnode && (int64_t)m->node[0].self < 0)
        m->node[0].self = 0;
    for (uint32_t i = 0; i < m->nnode; i++)
        total += m->node[i].self;
    for (uint32_t i = 0; i < m->ntnode; i++)
        m->tnode[i].self = (int64_t)m->tnode[i].self < 0 ? 0 : m->tnode[i].self;
    fit_shares(m);
    for (uint32_t i = 0; i < m->nline; i++)
        m->line[i].ticks = (int64_t)m->line[i].ticks < 0 ? 0 : m->line[i].ticks;
    m->ticks_total = total;
}

void rd_stack_finish(rd_stack *s)
{
    end_snapshot(s);
    if (!s->stopped)
        end_lua(s);
    rd_mem_end(&s->m->mem, s->m->lines_run);
    if (s->m->tick_clock && s->m->has_bias)
        settle_debits(s->m);
    if (s->m->fold_shares) /* every coroutine past the kept ones alike */
        fold(s);
}

/* }====================================================================== */
