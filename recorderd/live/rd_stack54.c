/* rd_stack54: a Lua 5.4 thread's stack read from outside (rd_peek54.h):
 * its CallInfo chain from L->ci down to base_ci, each frame's function and
 * the line it is on (luaG_getfuncline's rule), then the functions' names
 * from the globals and package.loaded, and the dump's records. Every read
 * is bounded and may fail: a frame that does not read as one ends the
 * thread's walk. */
#include <stdlib.h>
#include <string.h>

#include "lt_event.h"
#include "rd_lua54.h"
#include "rd_peek54.h"

enum {
    CALLS_MAX = 200000,   /* CallInfos walked per thread (LUAI_MAXCCALLS: 200) */
    LINES_MAX = 1 << 24,
    SCAN_NODES = 1 << 16 /* nodes read per table when naming */
};

/* {====== lines */

/* The base of pc's line: the last absolute line at or before pc, or
 * linedefined from pc -1 (getbaseline, with a search instead of its
 * estimate: the same entry). */
static int base_line(r54 *d, const uint8_t *pr, int pc, int *basepc)
{
    int nabs = r54_int_at(pr, PR4_SIZEABS), lo = 0, hi = nabs - 1, found = -1;
    uintptr_t abs = r54_ptr_at(pr, PR4_ABS);
    *basepc = -1;
    while (lo <= hi && nabs > 0 && nabs < LINES_MAX) {
        int mid = lo + (hi - lo) / 2, e[2];
        if (r54_peek(d, abs + 8 * (uintptr_t)mid, e, sizeof e))
            return -1;
        if (e[0] <= pc)
            found = mid, *basepc = e[0], lo = mid + 1;
        else
            hi = mid - 1;
    }
    if (found < 0)
        return r54_int_at(pr, PR4_LINEDEF);
    int e[2];
    return r54_peek(d, abs + 8 * (uintptr_t)found, e, sizeof e) ? -1 : e[1];
}

/* The line instruction pc of prototype pr (copied) is on: the base line
 * plus lineinfo's signed deltas after it, as luaG_getfuncline adds them. */
static int func_line(r54 *d, const uint8_t *pr, int pc)
{
    uintptr_t li = r54_ptr_at(pr, PR4_LINEINFO);
    int n = r54_int_at(pr, PR4_SIZELINE), basepc;
    if (!li || pc < 0 || pc >= n || n > LINES_MAX)
        return -1;
    int line = base_line(d, pr, pc, &basepc);
    int8_t delta[256];
    for (int at = basepc + 1; at <= pc && line >= 0;) {
        int k = pc + 1 - at < (int)sizeof delta ? pc + 1 - at : (int)sizeof delta;
        if (r54_peek(d, li + (uintptr_t)at, delta, (size_t)k))
            return -1;
        for (int j = 0; j < k; j++)
            line += delta[j] == LINE4_ABS ? 0 : delta[j]; /* a mark only at a base */
        at += k;
    }
    return line;
}

/* }====== */

/* {====== frames */

/* Whether d->fn[i] is the Lua function of Proto pr (copied): a Proto
 * freed leaves its address to the next one made (a chunk loaded later),
 * so an address alone names it only while it lives. */
static int same_proto(const r54 *d, uint32_t i, const uint8_t *pr)
{
    const r54_fn *f = &d->fn[i];
    return !f->isC && f->src == r54_ptr_at(pr, PR4_SOURCE) && f->linedef == r54_int_at(pr, PR4_LINEDEF) &&
           f->lastline == r54_int_at(pr, PR4_LASTLINE);
}

/* The function d->fn of key, added if new: its index, or -1. */
static int fn_of(r54 *d, uintptr_t key, uintptr_t cl, const uint8_t *pr)
{
    for (uint32_t i = 0; i < d->nfn; i++)
        if (d->fn[i].key == key && (!pr || same_proto(d, i, pr)))
            return (int)i;
    if (d->nfn == R54_FUNCS)
        return d->truncated = 1, -1;
    r54_fn *f = &d->fn[d->nfn];
    *f = (r54_fn){.key = key, .cl = cl, .isC = !pr};
    if (pr) {
        f->src = r54_ptr_at(pr, PR4_SOURCE);
        f->linedef = r54_int_at(pr, PR4_LINEDEF);
        f->lastline = r54_int_at(pr, PR4_LASTLINE);
        f->code = r54_ptr_at(pr, PR4_CODE);
        f->ncode = 4 * (uintptr_t)(unsigned)r54_int_at(pr, PR4_SIZECODE);
    }
    return (int)d->nfn++;
}

/* A call of require (C closure v, of C function cf; its frame's function
 * slot at func) told by its argument, the module's name, as the
 * collector tells them (co_func_arg_id: require "a.b"): its index, or -1
 * if the argument is no string of 1 to R54_ARG bytes. ll_require keeps
 * the name in its first slot (lua_settop(L, 1)) while it runs. */
static int require_fn(r54 *d, uintptr_t cf, uintptr_t v, uintptr_t func, int searcher)
{
    uint8_t tv[TV4_SIZE];
    char arg[R54_ARG + 2];
    int n;
    if (r54_peek(d, func + TV4_SIZE, tv, sizeof tv) ||
        (tv[TV4_TT] != T4_SHRSTR && tv[TV4_TT] != T4_LNGSTR) ||
        (n = r54_tstring(d, r54_ptr_at(tv, 0), arg, sizeof arg)) <= 0 || n > R54_ARG ||
        memchr(arg, 0, (size_t)n))
        return -1;
    for (uint32_t i = 0; i < d->nfn; i++)
        if (d->fn[i].argfn == cf && !strcmp(d->fn[i].arg, arg))
            return (int)i;
    if (d->nfn == R54_FUNCS)
        return d->truncated = 1, -1;
    r54_fn *f = &d->fn[d->nfn];
    *f = (r54_fn){.key = R54_ARGKEY + d->nfn, .cl = v, .isC = 1, .argfn = cf,
                  .searcher = (uint8_t)searcher};
    memcpy(f->arg, arg, (size_t)n + 1);
    return (int)d->nfn++;
}

/* A coroutine.wrap function (C closure cl, copied, whose one upvalue is a
 * thread) is told by its body, the function at the bottom of the thread's
 * stack, as the collector tells it: its index, or -1 if not one. */
static int wrap_fn(r54 *d, const uint8_t *cl, uintptr_t v)
{
    uint8_t ls[L4_SIZE], tv[TV4_SIZE], body[CL4_READ], pr[PR4_READ];
    if (cl[CL4_NUPVALUES] < 1 || cl[CL4_UPV0 + TV4_TT] != T4_THREAD ||
        r54_peek(d, r54_ptr_at(cl, CL4_UPV0), ls, sizeof ls) || ls[8] != O4_THREAD ||
        r54_peek(d, r54_ptr_at(ls, L4_STACK) + TV4_SIZE, tv, sizeof tv) || tv[TV4_TT] != T4_LCL ||
        r54_peek(d, r54_ptr_at(tv, 0), body, sizeof body) ||
        r54_peek(d, r54_ptr_at(body, CL4_FP), pr, sizeof pr) || pr[8] != O4_PROTO)
        return -1;
    int f = fn_of(d, r54_ptr_at(body, CL4_FP) + 1, v, NULL);
    if (f >= 0 && !d->fn[f].body_src) {
        d->fn[f].body_src = r54_ptr_at(pr, PR4_SOURCE);
        d->fn[f].body_line = r54_int_at(pr, PR4_LINEDEF);
    }
    return f;
}

/* The Lua function of a frame whose slot no longer holds it, told by
 * the code its pc is in (savedpc, of the CallInfo ci), among those seen:
 * its index, or -1. A sample's copy is a few microseconds long, and a
 * recursion as fast as fib's calls and returns in it: the stack may be
 * copied a moment before or after a CallInfo, and a caller's slot then
 * holds a callee's result or its argument (a third of fib's samples were
 * dropped so). A caller's savedpc is the call it made, in its own code;
 * the Proto, found again where it was, must still be that function's. */
static int fn_by_code(r54 *d, const uint8_t *ci, uint8_t *pr)
{
    uintptr_t pc = r54_ptr_at(ci, CI4_SAVEDPC);
    for (uint32_t i = 0; i < d->nfn; i++) {
        const r54_fn *f = &d->fn[i];
        if (f->isC || f->body_src || pc < f->code || pc - f->code >= f->ncode)
            continue;
        return !r54_peek(d, f->key, pr, PR4_READ) && pr[8] == O4_PROTO &&
                       r54_ptr_at(pr, PR4_CODE) == f->code && same_proto(d, i, pr)
                   ? (int)i
                   : -1;
    }
    return -1;
}

/* The frame of CallInfo ci (copied): its function and line into *fr.
 * 0, or -1 if its function does not read as one. by_code: a Lua frame
 * whose slot no longer holds its function is told by its pc (fn_by_code);
 * not a thread's top one, which may be a call half made (its savedpc
 * still its CallInfo's last occupant's). */
static int frame_of(r54 *d, const uint8_t *ci, r54_frame *fr, int by_code)
{
    uint8_t tv[TV4_SIZE], cl[CL4_READ], pr[PR4_READ];
    uintptr_t func = r54_ptr_at(ci, CI4_FUNC);
    int f;
    if (r54_peek(d, func, tv, sizeof tv))
        return -1;
    fr->pr = 0;
    fr->cs = (uint16_t)(ci[CI4_CALLSTATUS] | ci[CI4_CALLSTATUS + 1] << 8);
    uintptr_t v = r54_ptr_at(tv, 0);
    fr->slot = func;
    fr->val = v;
    fr->tt = tv[TV4_TT];
    fr->call_ok = 0;
    if (tv[TV4_TT] == T4_LCF) {
        f = fn_of(d, v, 0, NULL);
    } else if (tv[TV4_TT] == T4_CCL && !r54_peek(d, v, cl, sizeof cl) && cl[8] == O4_CCL) {
        if (!d->require_looked)
            r54_find_loaders(d);
        uintptr_t cf = r54_ptr_at(cl, CL4_FP);
        int by_arg = cf && cf == d->cf_require ? 0 : -1;
        for (int i = 0; i < R54_SEARCHERS && by_arg < 0; i++)
            by_arg = cf && cf == d->cf_searcher[i] ? i + 1 : -1;
        if ((by_arg < 0 || (f = require_fn(d, cf, v, func, by_arg)) < 0) &&
            (f = wrap_fn(d, cl, v)) < 0)
            f = fn_of(d, cf, v, NULL);
    } else if (tv[TV4_TT] == T4_LCL && !r54_peek(d, v, cl, sizeof cl) && cl[8] == O4_LCL &&
               !r54_peek(d, r54_ptr_at(cl, CL4_FP), pr, sizeof pr) && pr[8] == O4_PROTO) {
        int pc = (int)((r54_ptr_at(ci, CI4_SAVEDPC) - r54_ptr_at(pr, PR4_CODE)) / 4) - 1; /* pcRel */
        f = fn_of(d, r54_ptr_at(cl, CL4_FP), v, pr);
        fr->line = func_line(d, pr, pc < 0 ? 0 : pc);
        fr->pr = r54_ptr_at(cl, CL4_FP);
        fr->pc = pc;
    } else if (by_code && !(fr->cs & CI4_C) && (f = fn_by_code(d, ci, pr)) >= 0) {
        int pc = (int)((r54_ptr_at(ci, CI4_SAVEDPC) - d->fn[f].code) / 4) - 1;
        fr->line = func_line(d, pr, pc < 0 ? 0 : pc);
        fr->pr = d->fn[f].key;
        fr->pc = pc;
        fr->val = d->fn[f].cl; /* not the slot's: its callee's call is not named by it */
        fr->tt = T4_LCL;
    } else {
        return -1;
    }
    if (f < 0)
        return -1;
    fr->fn = (uint32_t)f;
    if (d->fn[f].isC)
        fr->line = 0;
    return 0;
}

/* The thread the C function of CallInfo ci resumes, if it is
 * coroutine.resume (the thread its first argument) or a wrap function (the
 * thread its one upvalue): 0 if neither. */
static uintptr_t resumes(r54 *d, const uint8_t *ci)
{
    uint8_t tv[2 * TV4_SIZE], cl[CL4_READ];
    if (r54_peek(d, r54_ptr_at(ci, CI4_FUNC), tv, sizeof tv))
        return 0;
    if (tv[TV4_SIZE + TV4_TT] == T4_THREAD)
        return r54_ptr_at(tv, TV4_SIZE);
    if (tv[TV4_TT] == T4_CCL && !r54_peek(d, r54_ptr_at(tv, 0), cl, sizeof cl) &&
        cl[CL4_NUPVALUES] >= 1 && cl[CL4_UPV0 + TV4_TT] == T4_THREAD)
        return r54_ptr_at(cl, CL4_UPV0);
    return 0;
}

/* A thread read running is not read at one instant: its callee may have
 * returned, and its caller made another call, between the two reads (a
 * loop calling hot() and then io.open() had hot named "open"). So the
 * callee's function slot is read again just after its caller: the same
 * function there still, its caller's pc is the call that made it. */
static void still_running(r54 *d, r54_frame *callee)
{
    uint8_t tv[TV4_SIZE];
    callee->call_ok = !r54_peek(d, callee->slot, tv, sizeof tv) && tv[TV4_TT] == callee->tt &&
                      r54_ptr_at(tv, 0) == callee->val;
}

/* A C function's slot is read after its callee's frame: between the two
 * reads the callee may have returned and another call taken the slot
 * (string.rep where work had called fib, a wrap function where gsub had
 * called its callback), and the sample joined two moments. So, after the
 * C function's read, the callee must still be above it: the thread's top
 * is not the C function's CallInfo (c), the callee's CallInfo (callee_ci)
 * still follows it on the same slot, with the same function there; and a
 * Lua callee of C was called from C (CIST_FRESH), not by a Lua caller. */
static int callee_above(r54 *d, uintptr_t L, uintptr_t c, uintptr_t callee_ci, r54_frame *callee)
{
    uint8_t ci[CI4_SIZE];
    uintptr_t top;
    if (callee->pr && !(callee->cs & CI4_FRESH))
        return 0;
    if (r54_peek(d, L + L4_CI, &top, sizeof top) || top == c ||
        r54_peek(d, callee_ci, ci, sizeof ci) || r54_ptr_at(ci, CI4_PREVIOUS) != c ||
        r54_ptr_at(ci, CI4_FUNC) != callee->slot)
        return 0;
    return callee->call_ok; /* its slot read again after the C function's */
}

/* Names each function of t's frames with no call name yet by the call
 * its caller made, where that caller is a Lua function and the call no
 * tail call or hook (5.4's funcnamefromcall gives none); a finalizer, "__gc",
 * whatever its caller, as Lua names it. A read that failed is tried again
 * at the next sample: one that ran out of time on a loaded machine had
 * left a busy function "function" for the rest of a top. */
static void name_calls(r54 *d, const r54_thread *t)
{
    for (uint32_t i = 0; i + 1 < t->n; i++) {
        if (t->gap && i + 1 == t->gap)
            continue; /* frames left out between them: not caller and callee */
        const r54_frame *callee = &d->fr[t->first + i], *caller = callee + 1;
        r54_fn *f = &d->fn[callee->fn];
        if (f->call_read || !callee->call_ok || (callee->cs & (CI4_TAIL | CI4_HOOKED)) ||
            (caller->cs & CI4_HOOKED))
            continue;
        if (caller->cs & CI4_FIN) {
            memcpy(f->call, "__gc", 5);
            f->call_read = 1;
        } else if (caller->pr) {
            f->call_read = r54_call_name(d, caller->pr, caller->pc, f->call, sizeof f->call) >= 0;
            uint8_t tv[TV4_SIZE]; /* OP_TFORCALL's copy: the for's state is its first argument */
            if (f->isC && !strcmp(f->call, "for iterator") &&
                !r54_peek(d, callee->slot + TV4_SIZE, tv, sizeof tv))
                f->for_state = (uint8_t)(tv[TV4_TT] + 1);
        }
    }
}

/* A deep stack's bottom frames, after its top ones (stop: the frame the
 * walk from the top stopped at, not read): up to R54_ROOT from base_ci's
 * next, appended top first. Returns base when they were read (the gap
 * noted, or none where the two walks met), else stop (t torn). */
static uintptr_t read_root(r54 *d, r54_thread *t, uintptr_t base, uintptr_t stop)
{
    uint8_t ci[CI4_SIZE];
    r54_frame fr[R54_ROOT];
    uint32_t n = 0;
    int met = 0;
    if (r54_peek(d, base, ci, sizeof ci))
        return stop;
    for (uintptr_t c = r54_ptr_at(ci, CI4_NEXT); c && n < R54_ROOT; n++) {
        if (r54_peek(d, c, ci, sizeof ci) || frame_of(d, ci, &fr[n], 1))
            return stop;
        fr[n].call_ok = 1; /* a deep stack's bottom: callers read first, long lived */
        if (c == stop) {
            met = 1, n++;
            break;
        }
        c = r54_ptr_at(ci, CI4_NEXT);
    }
    if (!n || d->nfr + n > R54_FRAMES)
        return stop;
    t->gap = met ? 0 : t->n;
    for (uint32_t i = n; i-- > 0;)
        d->fr[d->nfr++] = fr[i];
    t->n += n;
    return base;
}

void r54_read_thread(r54 *d, uintptr_t L)
{
    uint8_t ls[L4_SIZE], ci[CI4_SIZE];
    if (d->nth == R54_THREADS) { /* said: a dump left 4000 coroutines out silently */
        d->truncated = 1;
        return;
    }
    r54_snap_take(d, L);
    if (r54_peek(d, L, ls, sizeof ls) || ls[8] != O4_THREAD || r54_ptr_at(ls, L4_G) != d->g) {
        r54_snap_end(d);
        return;
    }
    r54_thread *t = &d->th[d->nth++];
    *t = (r54_thread){.L = L, .first = d->nfr, .status = ls[L4_STATUS]};
    uintptr_t c = r54_ptr_at(ls, L4_CI), base = L + L4_BASE_CI, above = 0;
    for (unsigned k = 0; c && c != base && k < CALLS_MAX; k++) {
        if (d->nfr == R54_FRAMES) {
            d->truncated = 1;
            break;
        }
        if (d->leaf_max && k == d->leaf_max) {
            c = read_root(d, t, base, c);
            break;
        }
        r54_frame *fr = &d->fr[d->nfr];
        r54_snap_note(d, c);
        if (r54_peek(d, c, ci, sizeof ci))
            break;
        if (frame_of(d, ci, fr, k > 0)) {
            if (k)
                break;
            /* the top one only: a call caught half made (5.4 sets L->ci
             * before the CallInfo's func), its caller whole below it */
            c = r54_ptr_at(ci, CI4_PREVIOUS);
            continue;
        }
        if (!t->n && d->fn[fr->fn].isC)
            t->target = resumes(d, ci);
        if (t->n)
            still_running(d, &d->fr[d->nfr - 1]);
        if (t->n && d->fn[fr->fn].isC && !callee_above(d, L, c, above, &d->fr[d->nfr - 1]))
            break; /* torn: the sample is read again */
        d->nfr++;
        t->n++;
        above = c;
        c = r54_ptr_at(ci, CI4_PREVIOUS);
    }
    r54_snap_end(d); /* the names and lines below: code and strings, read live */
    t->torn = c != base && !d->truncated;
    for (uint32_t i = 0; i < t->n; i++) /* depth: counted from the bottom, 1 first */
        d->fr[t->first + i].depth = t->n - i;
    name_calls(d, t);
    t->active = t->status == 0 && t->n > 0;
}

/* }====== */
