/* check_stack: the stack rebuilder of recorderd/core/rd_stack, fed hand-written
 * event sequences (the shapes doc/design.md describes for Lua 5.1's hooks)
 * and judged by the call tree it builds, rendered as sorted folded stacks.
 *
 * Every case starts from the same program: the functions and strings of
 * define() below, a main thread T_MAIN and coroutines T_CO... . Events carry
 * dt 0 unless a case is about time.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rd_replay.h"
#include "rd_annotate.h"
#include "rd_report.h"
#include "rd_stack.h"
#include "ut_events.h"
#include "ut_main.h"

enum fid {
    F_MAIN = 1, F_F, F_G, F_H, F_PCALL, F_ERROR, F_RESUME, F_YIELD, F_CO, F_WRAP, F_A, F_B,
    F_COUNT
};

#define L_MAIN "main@app.lua:0"
#define L_F "f@app.lua:10"
#define L_G "g@app.lua:20"
#define L_H "h@app.lua:30"
#define L_PCALL "pcall@[C]"
#define L_ERROR "error@[C]"
#define L_RESUME "resume@[C]"
#define L_YIELD "yield@[C]"
#define L_CO "co@app.lua:40"
#define L_WRAP "wrap@[C]"
#define L_UNK "?@?"

enum { T_MAIN = 0x1000, T_CO = 0x2000, T_CO2 = 0x3000, T_LATE = 0x4000 };


/* ---- feeding events ---- */

static void ev_func(uint32_t fid, unsigned what, uint32_t name_sid, uint32_t line,
                    unsigned flags)
{
    EV(FUNC, fid, what, what == LT_WHAT_C ? 2 : 1, name_sid, line, line ? line + 9 : 0, flags);
}

static void ev_start(uint64_t th, unsigned why) { EV(START, th, why); }
static void ev_frame(uint32_t d, uint32_t fid, uint32_t line) { EV(FRAME, d, fid, line); }
static void ev_call(uint32_t d, uint32_t fid) { EV(CALL, d, 0, fid); }
static void ev_ret(uint32_t d) { EV(RET, d, 0); }
static void ev_line(uint32_t d, uint32_t line) { EV(LINE, d, 0, line); }
static void ev_resume(uint64_t th) { EV(RESUME, 0, th, 0); }
static void ev_yield(uint64_t th, int dead) { EV(YIELD, 0, th, 0, (uint64_t)dead); }

/* sid 1 "app.lua", 2 "[C]", fid+2 the name of fid */
static void define(void)
{
    static const char *const names[F_COUNT] = {NULL,     "main",  "f",     "g",
                                               "h",      "pcall", "error", "resume",
                                               "yield",  "co",    "wrap",  "a",
                                               "b"};
    ev_str(1, "app.lua");
    ev_str(2, "[C]");
    for (uint32_t f = 1; f < F_COUNT; f++)
        ev_str(f + 2, names[f]);
    ev_func(F_MAIN, LT_WHAT_MAIN, F_MAIN + 2, 0, 0);
    ev_func(F_F, LT_WHAT_LUA, F_F + 2, 10, 0);
    ev_func(F_G, LT_WHAT_LUA, F_G + 2, 20, 0);
    ev_func(F_H, LT_WHAT_LUA, F_H + 2, 30, 0);
    ev_func(F_PCALL, LT_WHAT_C, F_PCALL + 2, 0, LT_FF_PCALL);
    ev_func(F_ERROR, LT_WHAT_C, F_ERROR + 2, 0, 0);
    ev_func(F_RESUME, LT_WHAT_C, F_RESUME + 2, 0, LT_FF_RESUME);
    ev_func(F_YIELD, LT_WHAT_C, F_YIELD + 2, 0, LT_FF_YIELD);
    ev_func(F_CO, LT_WHAT_LUA, F_CO + 2, 40, 0);
    ev_func(F_WRAP, LT_WHAT_C, F_WRAP + 2, 0, LT_FF_WRAP);
    ev_func(F_A, LT_WHAT_LUA, F_A + 2, 50, 0);
    ev_func(F_B, LT_WHAT_LUA, F_B + 2, 60, 0);
}

static void setup(void)
{
    ck_assert_int_eq(rd_model_init(&M), 0);
    ck_assert_int_eq(rd_stack_init(&S, &M), 0);
    define();
}

static void teardown(void)
{
    rd_stack_free(&S);
    rd_model_free(&M);
}

/* ---- the listener, checked by mirroring ----
 * Every case also runs with a listener that rebuilds each thread's stack
 * from enter/leave alone; it must always agree with the rebuilder's own
 * stacks, and its times must never go back. */

typedef struct mthread {
    uint64_t id;
    uint32_t *fid, n, cap;
} mthread;

static mthread *MT;
static uint32_t NMT;
static uint64_t LAST_T;
static unsigned NENTER, NLEAVE, NLINE, NTHREAD;

static mthread *mthread_get(uint64_t id)
{
    for (uint32_t i = 0; i < NMT; i++)
        if (MT[i].id == id)
            return &MT[i];
    MT = realloc(MT, (NMT + 1) * sizeof *MT);
    ck_assert_ptr_nonnull(MT);
    MT[NMT] = (mthread){.id = id};
    return &MT[NMT++];
}

static void check_time(uint64_t t)
{
    ck_assert_uint_ge(t, LAST_T);
    LAST_T = t;
}

static void m_enter(void *ud, uint64_t th, const rd_frame *f, uint32_t level, enum rd_how how,
                    uint64_t t)
{
    (void)ud;
    (void)how;
    mthread *m = mthread_get(th);
    ck_assert_uint_eq(level, m->n);
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 16;
        m->fid = realloc(m->fid, m->cap * sizeof *m->fid);
        ck_assert_ptr_nonnull(m->fid);
    }
    m->fid[m->n++] = f->fid;
    check_time(t);
    NENTER++;
}

static void m_leave(void *ud, uint64_t th, const rd_frame *f, uint32_t level, enum rd_how how,
                    uint64_t t)
{
    (void)ud;
    (void)how;
    mthread *m = mthread_get(th);
    ck_assert_uint_eq(level + 1, m->n);
    ck_assert_uint_eq(f->fid, m->fid[--m->n]);
    check_time(t);
    NLEAVE++;
}

/* The mirror of thread th equals the rebuilder's stack t (a fresh top frame
 * is not entered yet). */
static void mirror_check(const mthread *m, const rd_thread *t)
{
    uint32_t n = t ? t->n : 0;
    if (n && t->f[n - 1].fresh)
        n--;
    ck_assert_uint_eq(m->n, n);
    for (uint32_t i = 0; i < n; i++)
        ck_assert_uint_eq(m->fid[i], t->f[i].fid);
}

/* The listener's name of the rebuilder's thread t: its track's serial. */
static uint64_t serial_of(const rd_thread *t)
{
    return t->track ? S.m->track[t->track - 1].serial : RD_LS_NO_TRACK;
}

/* The rebuilder's thread that the listener calls th. */
static const rd_thread *stack_thread(uint64_t th)
{
    for (uint32_t i = 0; i < S.capth; i++)
        if (S.th[i].id && S.th[i].track && serial_of(&S.th[i]) == th)
            return &S.th[i];
    return NULL;
}

static void m_line(void *ud, uint64_t th, const rd_frame *f, uint32_t level, uint64_t t)
{
    (void)ud;
    const rd_thread *st = rd_stack_current(&S);
    ck_assert_ptr_nonnull(st);
    ck_assert_uint_eq(serial_of(st), th);
    ck_assert_ptr_eq(f, &st->f[level]);
    mirror_check(mthread_get(th), st);
    check_time(t);
    NLINE++;
}

static void m_thread(void *ud, uint64_t th, uint64_t t)
{
    (void)ud;
    const rd_thread *st = rd_stack_current(&S);
    ck_assert_ptr_nonnull(st);
    ck_assert_uint_eq(serial_of(st), th);
    check_time(t);
    NTHREAD++;
}

static const rd_listener MIRROR = {NULL, m_enter, m_leave, m_line, m_thread, NULL};

static void setup_mirror(void)
{
    setup();
    S.ls = &MIRROR;
}

static void teardown_mirror(void)
{
    rd_stack_finish(&S);
    for (uint32_t i = 0; i < NMT; i++)
        mirror_check(&MT[i], stack_thread(MT[i].id)); /* ended tracks: empty */
    for (uint32_t i = 0; i < NMT; i++)
        free(MT[i].fid);
    free(MT);
    MT = NULL;
    NMT = 0;
    LAST_T = 0;
    teardown();
}

/* Tracing starts in the main chunk at depth 1, line `line`. */
static void begin_main(uint32_t line)
{
    ev_start(T_MAIN, LT_R_BEGIN);
    ev_frame(1, F_MAIN, line);
}

/* ---- judging ---- */

static char *folded(enum rd_weight w)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(rd_report_folded(&M, w, f, NULL), 0);
    fclose(f);
    char *s = sorted_lines(buf);
    free(buf);
    return s;
}

static const char *const wname[] = {"time", "lines", "calls"};

#define expect_folded(w, text) expect_folded_at(__LINE__, w, text)
static void expect_folded_at(int at, enum rd_weight w, const char *expected)
{
    char *got = folded(w), *want = sorted_lines(expected);
    ck_assert_msg(strcmp(got, want) == 0, "line %d, folded %s:\n--- got\n%s--- want\n%s", at,
                  wname[w], got, want);
    free(got);
    free(want);
}

/* The current thread is th and its frames, bottom first, are fids. */
#define expect_stack(th, ...)                                                                      \
    expect_stack_at(__LINE__, th, (const uint32_t[]){__VA_ARGS__},                                 \
                    sizeof((const uint32_t[]){__VA_ARGS__}) / sizeof(uint32_t))
static void expect_stack_at(int at, uint64_t th, const uint32_t *fids, uint32_t n)
{
    const rd_thread *t = rd_stack_current(&S);
    ck_assert_msg(t != NULL, "line %d: no current thread", at);
    ck_assert_msg(t->id == th, "line %d: thread %#llx, want %#llx", at,
                  (unsigned long long)t->id, (unsigned long long)th);
    ck_assert_msg(t->n == n, "line %d: %u frames, want %u", at, t->n, n);
    for (uint32_t i = 0; i < n; i++)
        ck_assert_msg(t->f[i].fid == fids[i], "line %d: frame %u is fid %u, want %u", at, i,
                      t->f[i].fid, fids[i]);
}

static uint64_t line_ticks(uint32_t fid, uint32_t line)
{
    for (uint32_t i = 0; i < M.capline; i++)
        if (M.line[i].fid == fid && M.line[i].line == line)
            return M.line[i].ticks;
    return 0;
}

static uint64_t line_hits(uint32_t fid, uint32_t line)
{
    for (uint32_t i = 0; i < M.capline; i++)
        if (M.line[i].fid == fid && M.line[i].line == line)
            return M.line[i].hits;
    return 0;
}

/* ==== snapshot, calls, lines, returns ==== */

START_TEST(test_stack_snapshot)
{
    ev_start(T_MAIN, LT_R_BEGIN);
    ev_frame(2, F_F, 11); /* top first */
    ev_frame(1, F_MAIN, 5);
    ev_line(2, 12);
    expect_stack(T_MAIN, F_MAIN, F_F);
    ck_assert_uint_eq(rd_stack_current(&S)->f[1].line, 12);
    ev_call(3, F_G);
    ev_line(3, 21);
    ev_line(3, 22);
    expect_stack(T_MAIN, F_MAIN, F_F, F_G);
    ev_ret(3);
    ev_line(2, 13);
    ev_ret(2);
    ev_line(1, 6);
    expect_stack(T_MAIN, F_MAIN);
    expect_folded(RD_W_LINES, L_MAIN " 1\n" L_MAIN ";" L_F " 2\n" L_MAIN ";" L_F ";" L_G " 2\n");
    /* frames of the snapshot were entered before tracing: not calls */
    expect_folded(RD_W_CALLS, L_MAIN ";" L_F ";" L_G " 1\n");
    ck_assert_uint_eq(M.func[F_G].calls, 1);
    ck_assert_uint_eq(M.func[F_F].calls, 0);
    ck_assert_uint_eq(line_hits(F_G, 22), 1);
    ck_assert_uint_eq(S.bad, 0);
    ck_assert_uint_eq(S.unwinds, 0);
}
END_TEST

/* A snapshot with nothing after it is installed by rd_stack_finish. */
START_TEST(test_stack_snapshot_finish)
{
    ev_start(T_MAIN, LT_R_BEGIN);
    ev_frame(3, F_G, 21);
    ev_str(40, "late string"); /* may come between frames */
    ev_frame(2, F_F, 11);
    ev_frame(1, F_MAIN, 5);
    ck_assert_ptr_null(rd_stack_current(&S));
    rd_stack_finish(&S);
    expect_stack(T_MAIN, F_MAIN, F_F, F_G);
    ck_assert_uint_eq(rd_stack_current(&S)->f[2].line, 21);
    ck_assert_uint_eq(S.bad, 0);
}
END_TEST

/* A thread's stack read while its hook at a call resumed a coroutine (the
 * collector's untraced_resumer): the call on top, not settled yet, is in
 * the snapshot where it was called: it counts as a call; the hook's frames
 * above it count none and go when the thread's records resume. */
START_TEST(test_stack_snapshot_fresh_call)
{
    begin_main(5);
    ev_call(2, F_F); /* its hook runs g, which resumes co */
    ev_start(T_MAIN, LT_R_HOOKED);
    ev_frame(4, F_RESUME, 0);
    ev_frame(3, F_G, 21);
    ev_frame(2, F_F, 0);
    ev_frame(1, F_MAIN, 5);
    ev_resume(T_CO);
    ev_call(1, F_CO);
    ev_line(1, 41);
    ev_yield(T_MAIN, 0);
    ev_line(2, 11); /* f's first line, after the hook */
    expect_stack(T_MAIN, F_MAIN, F_F);
    ck_assert_uint_eq(M.func[F_F].calls, 1);
    expect_folded(RD_W_CALLS,
                  L_MAIN ";" L_F " 1\n" L_MAIN ";" L_F ";" L_G ";" L_RESUME ";" L_CO " 1\n");
    expect_folded(RD_W_LINES, L_MAIN ";" L_F " 1\n" L_MAIN ";" L_F ";" L_G ";" L_RESUME ";" L_CO
                  " 1\n");
    ck_assert_uint_eq(S.bad, 0);
}
END_TEST

/* An error unwinds frames without return events: the next record arrives
 * at a smaller depth and the frames above it are gone. */
START_TEST(test_stack_error_unwind)
{
    begin_main(5);
    ev_line(1, 6);
    ev_call(2, F_F);
    ev_line(2, 11);
    ev_call(3, F_G);
    ev_line(3, 21);
    ev_call(4, F_ERROR);
    ev_line(1, 7);
    expect_stack(T_MAIN, F_MAIN);
    ck_assert_uint_eq(S.unwinds, 1);
    ev_call(2, F_H);
    ev_line(2, 31);
    ev_ret(2);
    ev_line(1, 8);
    expect_folded(RD_W_CALLS, L_MAIN ";" L_F " 1\n" L_MAIN ";" L_F ";" L_G " 1\n"
                  L_MAIN ";" L_F ";" L_G ";" L_ERROR " 1\n" L_MAIN ";" L_H " 1\n");
    expect_folded(RD_W_LINES, L_MAIN " 3\n" L_MAIN ";" L_F " 1\n" L_MAIN ";" L_F ";" L_G " 1\n"
                  L_MAIN ";" L_H " 1\n");
}
END_TEST

/* pcall catches an error raised three frames up: its own return arrives
 * next and pops everything above it too. */
START_TEST(test_stack_pcall_unwind)
{
    begin_main(5);
    ev_line(1, 6);
    ev_call(2, F_PCALL);
    ev_call(3, F_F);
    ev_line(3, 11);
    ev_call(4, F_G);
    ev_line(4, 21);
    ev_call(5, F_ERROR);
    ev_ret(2); /* pcall returns false, msg */
    expect_stack(T_MAIN, F_MAIN);
    ck_assert_uint_eq(S.unwinds, 1);
    ev_line(1, 7);
    ev_call(2, F_H);
    ev_line(2, 31);
    ev_ret(2);
    expect_folded(RD_W_CALLS, L_MAIN ";" L_PCALL " 1\n" L_MAIN ";" L_PCALL ";" L_F " 1\n"
                  L_MAIN ";" L_PCALL ";" L_F ";" L_G " 1\n"
                  L_MAIN ";" L_PCALL ";" L_F ";" L_G ";" L_ERROR " 1\n" L_MAIN ";" L_H " 1\n");
    expect_folded(RD_W_LINES, L_MAIN " 2\n" L_MAIN ";" L_PCALL ";" L_F " 1\n"
                  L_MAIN ";" L_PCALL ";" L_F ";" L_G " 1\n" L_MAIN ";" L_H " 1\n");
}
END_TEST

/* main calls f at line 6; f's line 11 is `return g()`: g, called at depth
 * 3, runs its line 21 at depth 2. */
static void f_returns_g(void)
{
    ev_line(1, 6);
    ev_call(2, F_F);
    ev_line(2, 11);
    ev_call(3, F_G);
    ev_line(2, 21);
}

/* f does `return g()`: g is called at depth 3, then runs at depth 2 in
 * f's place. */
START_TEST(test_stack_tail_call)
{
    begin_main(5);
    f_returns_g();
    expect_stack(T_MAIN, F_MAIN, F_G);
    ck_assert_uint_eq(rd_stack_current(&S)->f[1].depth, 2);
    ev_line(2, 22);
    ev_ret(2);
    ev_line(1, 7);
    expect_stack(T_MAIN, F_MAIN);
    ck_assert_uint_eq(S.tails, 1);
    ck_assert_uint_eq(S.unwinds, 0);
    expect_folded(RD_W_CALLS, L_MAIN ";" L_F " 1\n" L_MAIN ";" L_G " 1\n");
    expect_folded(RD_W_LINES, L_MAIN " 2\n" L_MAIN ";" L_F " 1\n" L_MAIN ";" L_G " 2\n");
    ck_assert_uint_eq(M.func[F_G].calls, 1);
    ck_assert_uint_eq(rd_model_stacks(&M), 3); /* main, main;f, main;g */
}
END_TEST

/* The same tail call made again and again (the leaf paths, with the call
 * tree's caches warm): still three stacks, never f;g, where g stands for
 * an instant before its first line shows that it replaced f. */
START_TEST(test_stack_tail_call_stacks)
{
    begin_main(5);
    for (int i = 0; i < 3; i++) {
        f_returns_g();
        ev_ret(2);
    }
    ev_line(1, 7);
    expect_folded(RD_W_CALLS, L_MAIN ";" L_F " 3\n" L_MAIN ";" L_G " 3\n");
    ck_assert_uint_eq(rd_model_stacks(&M), 3);
}
END_TEST

/* f -> return g() -> return h(): each callee replaces the last. */
START_TEST(test_stack_tail_chain)
{
    begin_main(5);
    f_returns_g();
    ev_call(3, F_H);
    ev_line(2, 31);
    expect_stack(T_MAIN, F_MAIN, F_H);
    ev_ret(2);
    ev_line(1, 7);
    ck_assert_uint_eq(S.tails, 2);
    expect_folded(RD_W_CALLS,
                  L_MAIN ";" L_F " 1\n" L_MAIN ";" L_G " 1\n" L_MAIN ";" L_H " 1\n");
    expect_folded(RD_W_LINES, L_MAIN " 2\n" L_MAIN ";" L_F " 1\n" L_MAIN ";" L_G " 1\n"
                  L_MAIN ";" L_H " 1\n");
}
END_TEST

/* A tail call below a normal call, and one whose callee calls before its
 * first line: the call at depth d+1 reveals the callee sits at d. */
START_TEST(test_stack_tail_nested)
{
    begin_main(5);
    ev_call(2, F_F);
    ev_line(2, 11);
    ev_call(3, F_G); /* plain call */
    ev_line(3, 21);
    ev_call(4, F_H); /* g: return h() */
    ev_call(4, F_ERROR); /* h calls error before any line of its own */
    expect_stack(T_MAIN, F_MAIN, F_F, F_H, F_ERROR);
    ev_line(2, 12);
    ck_assert_uint_eq(S.tails, 1);
    expect_folded(RD_W_CALLS, L_MAIN ";" L_F " 1\n" L_MAIN ";" L_F ";" L_G " 1\n"
                  L_MAIN ";" L_F ";" L_H " 1\n" L_MAIN ";" L_F ";" L_H ";" L_ERROR " 1\n");
}
END_TEST

/* Tail recursion: `return f(n-1)` three times is one frame, four calls. */
START_TEST(test_stack_tail_recursion)
{
    begin_main(5);
    ev_call(2, F_F);
    for (int i = 0; i < 3; i++) {
        ev_line(2, 11);
        ev_call(3, F_F);
    }
    ev_line(2, 11);
    ev_line(2, 12);
    expect_stack(T_MAIN, F_MAIN, F_F);
    ev_ret(2);
    ck_assert_uint_eq(S.tails, 3);
    expect_folded(RD_W_CALLS, L_MAIN ";" L_F " 4\n");
    expect_folded(RD_W_LINES, L_MAIN ";" L_F " 5\n");
}
END_TEST

/* A callee whose first record is one level deeper is a plain call. */
START_TEST(test_stack_call_same_depth)
{
    begin_main(5);
    ev_call(2, F_F);
    ev_line(2, 11);
    ev_call(3, F_G);
    ev_line(3, 21);
    expect_stack(T_MAIN, F_MAIN, F_F, F_G);
    ev_ret(3);
    ev_ret(2);
    ck_assert_uint_eq(S.tails, 0);
    expect_folded(RD_W_CALLS, L_MAIN ";" L_F " 1\n" L_MAIN ";" L_F ";" L_G " 1\n");
}
END_TEST

/* C functions cannot be tail-called into place: their call counts at once.
 * A Lua call counts once its first record says where it runs. */
START_TEST(test_stack_c_call)
{
    begin_main(5);
    ev_line(1, 6);
    ev_call(2, F_PCALL);
    expect_folded(RD_W_CALLS, L_MAIN ";" L_PCALL " 1\n");
    ck_assert_uint_eq(M.func[F_PCALL].calls, 1);
    ev_call(3, F_F);
    expect_folded(RD_W_CALLS, L_MAIN ";" L_PCALL " 1\n");
    ev_line(3, 11);
    expect_folded(RD_W_CALLS, L_MAIN ";" L_PCALL " 1\n" L_MAIN ";" L_PCALL ";" L_F " 1\n");
    ev_ret(3);
    ev_ret(2);
    /* a Lua call that ends before its first line still counts */
    ev_call(2, F_G);
    ev_ret(2);
    expect_folded(RD_W_CALLS,
                  L_MAIN ";" L_PCALL " 1\n" L_MAIN ";" L_PCALL ";" L_F " 1\n" L_MAIN ";" L_G " 1\n");
}
END_TEST

/* ==== coroutines ==== */

/* main resumes co at line 6; co runs line 41 and calls yield. */
static void co_first_resume(void)
{
    begin_main(5);
    ev_line(1, 6);
    ev_call(2, F_RESUME);
    ev_resume(T_CO);
    ev_call(1, F_CO); /* depths restart at 1 in the coroutine */
    ev_line(1, 41);
}

static void co_yield_back(void)
{
    ev_call(2, F_YIELD);
    ev_yield(T_MAIN, 0);
    ev_ret(2); /* resume returns in main */
    ev_line(1, 7);
}

START_TEST(test_stack_coroutine_resume)
{
    co_first_resume();
    expect_stack(T_CO, F_CO);
    expect_folded(RD_W_LINES, L_MAIN " 1\n" L_MAIN ";" L_RESUME ";" L_CO " 1\n");
    expect_folded(RD_W_CALLS, L_MAIN ";" L_RESUME " 1\n" L_MAIN ";" L_RESUME ";" L_CO " 1\n");
}
END_TEST

START_TEST(test_stack_coroutine_yield)
{
    co_first_resume();
    ev_call(2, F_YIELD);
    ev_yield(T_MAIN, 0);
    expect_stack(T_MAIN, F_MAIN, F_RESUME);
    ev_ret(2);
    ev_line(1, 7);
    expect_stack(T_MAIN, F_MAIN);
    ck_assert_uint_eq(S.nth, 2); /* the suspended coroutine is remembered */
    expect_folded(RD_W_CALLS, L_MAIN ";" L_RESUME " 1\n" L_MAIN ";" L_RESUME ";" L_CO " 1\n"
                  L_MAIN ";" L_RESUME ";" L_CO ";" L_YIELD " 1\n");
    expect_folded(RD_W_LINES, L_MAIN " 2\n" L_MAIN ";" L_RESUME ";" L_CO " 1\n");
}
END_TEST

/* Resumed again from inside f: co's frames now hang under main;f;resume. */
START_TEST(test_stack_coroutine_resume_elsewhere)
{
    co_first_resume();
    co_yield_back();
    ev_call(2, F_F);
    ev_line(2, 11);
    ev_call(3, F_RESUME);
    ev_resume(T_CO);
    expect_stack(T_CO, F_CO, F_YIELD);
    ev_ret(2); /* yield returns in co */
    ev_line(1, 42);
    expect_stack(T_CO, F_CO);
    expect_folded(RD_W_LINES, L_MAIN " 2\n" L_MAIN ";" L_RESUME ";" L_CO " 1\n"
                  L_MAIN ";" L_F " 1\n" L_MAIN ";" L_F ";" L_RESUME ";" L_CO " 1\n");
    expect_folded(RD_W_CALLS, L_MAIN ";" L_RESUME " 1\n" L_MAIN ";" L_RESUME ";" L_CO " 1\n"
                  L_MAIN ";" L_RESUME ";" L_CO ";" L_YIELD " 1\n" L_MAIN ";" L_F " 1\n"
                  L_MAIN ";" L_F ";" L_RESUME " 1\n");
}
END_TEST

/* C runs Lua on the main thread while a coroutine two deep still runs
 * (luv's callbacks under a uv.run called in co2): the collector sends a
 * RESUME of main, on the chain below, then one of co2 when that run ends.
 * main runs with its own frames and the chain above it kept: back in co2,
 * its frames still hang under co's resume, not under main's frames (they
 * did once: the RESUME of main cut the chain back to it). */
START_TEST(test_stack_coroutine_nested_run)
{
    co_first_resume();
    ev_call(2, F_RESUME);
    ev_resume(T_CO2);
    ev_call(1, F_A);
    ev_line(1, 51);
    ev_call(2, F_PCALL); /* uv.run */
    ev_resume(T_MAIN);   /* its callback, on the main thread */
    ev_call(3, F_G);
    ev_line(3, 21);
    expect_stack(T_MAIN, F_MAIN, F_RESUME, F_G);
    ev_ret(3);
    ev_resume(T_CO2); /* the callback's run is over */
    ev_ret(2);
    ev_line(1, 52);
    expect_stack(T_CO2, F_A);
    ev_call(2, F_YIELD);
    ev_yield(T_CO, 0);
    ev_ret(2); /* co's resume returns */
    ev_line(1, 42);
    expect_stack(T_CO, F_CO);
    expect_folded(RD_W_LINES, L_MAIN " 1\n" L_MAIN ";" L_RESUME ";" L_CO " 2\n"
                  L_MAIN ";" L_RESUME ";" L_CO ";" L_RESUME ";a@app.lua:50 2\n"
                  L_MAIN ";" L_RESUME ";" L_G " 1\n");
}
END_TEST

/* co returns: the YIELD that follows says it is dead, and it is forgotten. */
START_TEST(test_stack_coroutine_death)
{
    co_first_resume();
    co_yield_back();
    ev_call(2, F_F);
    ev_line(2, 11);
    ev_call(3, F_RESUME);
    ev_resume(T_CO);
    ev_ret(2);
    ev_line(1, 42);
    ev_ret(1);
    ev_yield(T_MAIN, 1);
    expect_stack(T_MAIN, F_MAIN, F_F, F_RESUME);
    ck_assert_uint_eq(S.nth, 1);
    ev_ret(3);
    ev_line(2, 12);
    ev_ret(2);
    ev_line(1, 8);
    expect_stack(T_MAIN, F_MAIN);
    expect_folded(RD_W_LINES, L_MAIN " 3\n" L_MAIN ";" L_RESUME ";" L_CO " 1\n"
                  L_MAIN ";" L_F " 2\n" L_MAIN ";" L_F ";" L_RESUME ";" L_CO " 1\n");
    /* a new coroutine that reuses the dead one's id starts empty */
    ev_call(2, F_RESUME);
    ev_resume(T_CO);
    ev_call(1, F_G);
    ev_line(1, 21);
    expect_stack(T_CO, F_G);
    ck_assert_uint_eq(S.unwinds, 0);
}
END_TEST

/* Many suspended coroutines, half of them dying in between: every
 * survivor resumes with its own stack. */
START_TEST(test_stack_many_coroutines)
{
    enum { N = 400 };
    begin_main(5);
    for (uint64_t i = 0; i < N; i++) {
        ev_call(2, F_RESUME);
        ev_resume(0x10000 + i);
        ev_call(1, F_CO);
        ev_line(1, 41);
        ev_call(2, F_YIELD);
        ev_yield(T_MAIN, 0);
        ev_ret(2);
    }
    ck_assert_uint_eq(S.nth, N + 1);
    for (uint64_t i = 0; i < N; i += 2) { /* resume to the end */
        ev_call(2, F_RESUME);
        ev_resume(0x10000 + i);
        expect_stack(0x10000 + i, F_CO, F_YIELD);
        ev_ret(2);
        ev_ret(1);
        ev_yield(T_MAIN, 1);
        ev_ret(2);
    }
    ck_assert_uint_eq(S.nth, N / 2 + 1);
    for (uint64_t i = N; i-- > 0;) {
        ev_call(2, F_RESUME);
        ev_resume(0x10000 + i);
        if (i % 2)
            expect_stack(0x10000 + i, F_CO, F_YIELD);
        else /* a dead one's id, reused by a new coroutine */
            ck_assert(rd_stack_current(&S)->id == 0x10000 + i && rd_stack_current(&S)->n == 0);
        ev_yield(T_MAIN, 0);
        ev_ret(2);
    }
    expect_stack(T_MAIN, F_MAIN);
    ck_assert_uint_eq(S.bad, 0);
    ck_assert_uint_eq(S.unwinds, 0);
}
END_TEST

/* The GC collected a suspended coroutine and its id went to a new one
 * (THREAD): the new one starts empty, on a track of its own; the old
 * frames leave as unwound, never as the new one's. */
START_TEST(test_stack_thread_reused)
{
    EV(THREAD, T_MAIN, 0x5000);
    co_first_resume();
    co_yield_back();
    ck_assert_uint_eq(M.ntrack, 2);
    EV(THREAD, T_CO, 0x6000);
    ev_call(2, F_RESUME);
    ev_resume(T_CO);
    ck_assert_uint_eq(rd_stack_current(&S)->n, 0);
    ck_assert_uint_eq(rd_stack_current(&S)->addr, 0x6000);
    ev_call(1, F_G);
    ev_line(1, 21);
    expect_stack(T_CO, F_G);
    ck_assert_uint_eq(M.ntrack, 3);
    if (S.ls) /* the listener never sees the two coroutines as one */
        ck_assert_uint_eq(NMT, 3);
    ev_call(2, F_YIELD);
    ev_yield(T_MAIN, 0);
    ev_ret(2);
    expect_stack(T_MAIN, F_MAIN);
    ck_assert_uint_eq(S.bad, 0);
    ck_assert_uint_eq(S.unwinds, 0);
    expect_folded(RD_W_LINES, L_MAIN " 2\n" L_MAIN ";" L_RESUME ";" L_CO " 1\n"
                  L_MAIN ";" L_RESUME ";" L_G " 1\n");
    /* a THREAD after a STOP ends the id's track too: its stack went with the STOP */
    EV(STOP, 0, LT_R_TROFF);
    begin_main(7);
    EV(THREAD, T_CO, 0x7000);
    ev_call(2, F_RESUME);
    ev_resume(T_CO);
    ev_call(1, F_H);
    ev_line(1, 31);
    ck_assert_uint_eq(M.ntrack, 4);
    if (S.ls)
        ck_assert_uint_eq(NMT, 4);
}
END_TEST

/* An error in a coroutine.wrap function propagates into the resumer: the
 * coroutine dies and the resumer unwinds to its pcall without a return
 * from wrap. */
START_TEST(test_stack_wrap_error)
{
    begin_main(5);
    ev_line(1, 6);
    ev_call(2, F_PCALL);
    ev_call(3, F_WRAP);
    ev_resume(T_CO);
    ev_call(1, F_CO);
    ev_line(1, 41);
    ev_call(2, F_ERROR);
    ev_yield(T_MAIN, 1);
    ck_assert_uint_eq(S.nth, 1);
    ev_ret(2); /* pcall returns false, msg */
    expect_stack(T_MAIN, F_MAIN);
    ck_assert_uint_eq(S.unwinds, 1);
    ev_line(1, 7);
    expect_folded(RD_W_CALLS, L_MAIN ";" L_PCALL " 1\n" L_MAIN ";" L_PCALL ";" L_WRAP " 1\n"
                  L_MAIN ";" L_PCALL ";" L_WRAP ";" L_CO " 1\n"
                  L_MAIN ";" L_PCALL ";" L_WRAP ";" L_CO ";" L_ERROR " 1\n");
    expect_folded(RD_W_LINES, L_MAIN " 2\n" L_MAIN ";" L_PCALL ";" L_WRAP ";" L_CO " 1\n");
}
END_TEST

/* main -> wrap -> co (T_CO) -> wrap -> co (T_CO2) raises: the error goes
 * through both wrap frames and both coroutines die. The YIELD only names
 * the thread that raised; the one between had no event of its own. */
START_TEST(test_stack_wrap_nested_error)
{
    begin_main(5);
    ev_call(2, F_PCALL);
    ev_call(3, F_WRAP);
    ev_resume(T_CO);
    ev_call(1, F_CO);
    ev_line(1, 41);
    ev_call(2, F_WRAP);
    ev_resume(T_CO2);
    ev_call(1, F_G);
    ev_line(1, 21);
    ev_call(2, F_ERROR);
    ev_yield(T_MAIN, 1);
    ev_ret(2);
    expect_stack(T_MAIN, F_MAIN);
    ck_assert_msg(S.nth == 1, "%u threads kept: the coroutine between the error and the "
                  "resumer died too", S.nth);
}
END_TEST

/* A coroutine that existed before tracing gets its hook (and a snapshot)
 * when it is next resumed; its frames then hang under the resumer. */
START_TEST(test_stack_late_hooked)
{
    begin_main(5);
    ev_line(1, 6);
    ev_start(T_LATE, LT_R_HOOKED);
    ev_frame(2, F_YIELD, 0);
    ev_frame(1, F_CO, 43);
    ev_call(2, F_RESUME); /* main's call of resume, after the snapshot */
    expect_stack(T_MAIN, F_MAIN, F_RESUME);
    ev_resume(T_LATE);
    expect_stack(T_LATE, F_CO, F_YIELD);
    ev_ret(2); /* yield returns */
    ev_line(1, 44);
    expect_stack(T_LATE, F_CO);
    ev_ret(1);
    ev_yield(T_MAIN, 1);
    ev_ret(2);
    ev_line(1, 7);
    expect_stack(T_MAIN, F_MAIN);
    ck_assert_uint_eq(S.nth, 1);
    ck_assert_uint_eq(S.bad, 0);
    expect_folded(RD_W_LINES, L_MAIN " 2\n" L_MAIN ";" L_RESUME ";" L_CO " 1\n");
    expect_folded(RD_W_CALLS, L_MAIN ";" L_RESUME " 1\n");
}
END_TEST

/* troff then tron: what comes between is not traced; the new START's
 * snapshot is the truth again. */
START_TEST(test_stack_stop_start)
{
    begin_main(5);
    ev_line(1, 6);
    ev_call(2, F_F);
    ev_line(2, 11);
    EV(STOP, 0, LT_R_TROFF);
    ck_assert_ptr_null(rd_stack_current(&S));
    EV(LINE, 2, 1000, 12);
    ev_call(3, F_G);
    ev_ret(3);
    ev_ret(2);
    ev_start(T_MAIN, LT_R_BEGIN);
    ev_frame(2, F_G, 21);
    ev_frame(1, F_MAIN, 9);
    ev_line(2, 22);
    expect_stack(T_MAIN, F_MAIN, F_G);
    ev_ret(2);
    ev_line(1, 10);
    expect_folded(RD_W_LINES, L_MAIN " 2\n" L_MAIN ";" L_F " 1\n" L_MAIN ";" L_G " 1\n");
    expect_folded(RD_W_CALLS, L_MAIN ";" L_F " 1\n");
    ck_assert_uint_eq(M.ticks_total, 0);
    ck_assert_uint_eq(S.bad, 0);
}
END_TEST

/* Records were dropped: counted, and the depths resynchronise the stack. */
START_TEST(test_stack_gap)
{
    begin_main(5);
    ev_line(1, 6);
    ev_call(2, F_F);
    ev_line(2, 11);
    EV(GAP, 17); /* lost: f calls g (3), g calls h (4) */
    ev_line(4, 31);
    expect_stack(T_MAIN, F_MAIN, F_F, 0);
    ev_ret(4);
    ev_line(2, 12);
    EV(GAP, 3);
    ck_assert_uint_eq(S.gaps, 2);
    ck_assert_uint_eq(S.dropped, 20);
    expect_folded(RD_W_LINES,
                  L_MAIN " 1\n" L_MAIN ";" L_F " 2\n" L_MAIN ";" L_F ";" L_UNK " 1\n");
}
END_TEST

/* dt on a record is the time of the frame and line on top before it. With
 * a CLOCK without TSC a tick is a nanosecond. */
START_TEST(test_stack_time)
{
    EV(CLOCK, 0, 0, 0);
    begin_main(5);
    EV(LINE, 1, 7, 6);          /* main:5 */
    EV(CALL, 2, 11, F_F);       /* main:6 */
    EV(LINE, 2, 13, 11);        /* f, before its first line */
    EV(RET, 2, 17);             /* f:11 */
    EV(LINE, 1, 19, 7);         /* main:6, after f returned */
    EV(CALL, 2, 23, F_RESUME);  /* main:7 */
    EV(RESUME, 29, T_CO, 0);    /* resume */
    EV(CALL, 1, 0, F_CO);       /* the switch took the dt */
    EV(LINE, 1, 31, 41);        /* co, before its first line */
    EV(YIELD, 37, T_MAIN, 2, 0); /* co:41 */
    EV(RET, 2, 41);             /* resume */
    EV(LINE, 1, 43, 8);         /* main:7 */
    ck_assert(rd_model_ns_per_tick(&M) == 1.0);
    expect_folded(RD_W_TIME, L_MAIN " 103\n" L_MAIN ";" L_F " 30\n" L_MAIN ";" L_RESUME " 70\n"
                  L_MAIN ";" L_RESUME ";" L_CO " 68\n");
    ck_assert_uint_eq(line_ticks(F_MAIN, 5), 7);
    ck_assert_uint_eq(line_ticks(F_MAIN, 6), 30);
    ck_assert_uint_eq(line_ticks(F_MAIN, 7), 66);
    ck_assert_uint_eq(line_ticks(F_F, 11), 17);
    ck_assert_uint_eq(line_ticks(F_CO, 41), 37);
    ck_assert_uint_eq(M.ticks_total, 271);
}
END_TEST

/* Sampled time: a TICK charges its ticks where the record before left the
 * stack (the frame on top and its line; a C function on it since its
 * call), in the trace's unit, 1/16 ns; its hook ticks are counted apart,
 * charged to nobody. */
START_TEST(test_stack_ticks)
{
    EV(CLOCK, 0, 0, LT_CLOCK_CPU);
    begin_main(5);
    EV(LINE, 1, 0, 6);
    EV(TICK, 3, 0, 1000); /* main:6 */
    EV(CALL, 2, 0, F_F);
    EV(LINE, 2, 0, 11);
    EV(TICK, 2, 5, 1000); /* f:11 */
    EV(RET, 2, 0);
    EV(TICK, 1, 0, 1000); /* main:6 */
    EV(CALL, 2, 0, F_ERROR);
    EV(TICK, 4, 0, 1000); /* error, a C function */
    EV(RET, 2, 0);
    ck_assert(rd_model_ns_per_tick(&M) == 1.0 / 16);
    expect_folded(RD_W_TIME, L_MAIN " 4000\n" L_MAIN ";" L_F " 2000\n" L_MAIN ";" L_ERROR
                  " 4000\n");
    ck_assert_uint_eq(line_ticks(F_MAIN, 6), 4000 * 16);
    ck_assert_uint_eq(line_ticks(F_F, 11), 2000 * 16);
    ck_assert_uint_eq(M.ticks_n, 10);
    ck_assert_uint_eq(M.ticks_hook, 5);
    ck_assert_uint_eq(M.tick_clock, LT_CLOCK_CPU);
    ck_assert_str_eq(rd_model_time_name(&M), "sample");
}
END_TEST

/* Memory: a MEM is charged where the record before left the stack (as a
 * TICK); a new block is an object and its bytes allocated and live at its
 * maker; a growth is bytes allocated where it happens, the block staying
 * its maker's (moved to its new address); a free is bytes freed where it
 * happens, the live bytes leaving the maker; a free of a block never seen
 * made takes no live bytes from anyone; impossible records are bad. */
START_TEST(test_stack_memory)
{
    begin_main(5);
    EV(CALL, 2, 0, F_F);
    EV(LINE, 2, 0, 11);
    EV(MEM, 100, 0, 0x1000, 0);     /* f makes a block of 100 */
    EV(MEM, 40, 0, 0x2000, 0);      /* and one of 40 */
    EV(RET, 2, 0);
    EV(CALL, 2, 0, F_G);
    EV(LINE, 2, 0, 21);
    EV(MEM, 160, 100, 0x3000, 0x1000); /* g grows f's block by 60, moving it */
    EV(MEM, 0, 40, 0, 0x2000);      /* g frees f's other block */
    EV(MEM, 0, 64, 0, 0x9000);      /* and one it never saw made */
    EV(RET, 2, 0);
    EV(MEM, 0, 1, 0, 0);            /* bad: no address at all */
    EV(MEM, 8, 0, 0, 0);            /* bad: a size without an address */
    EV(MEM, 1ull << 32, 8, 0x4000, 0x5000); /* bad: a reallocation past 2^32 */
    ck_assert_uint_eq(S.bad, 3);
    ck_assert(M.has_mem);
    uint32_t nf = rd_model_child_find(&M, rd_model_child_find(&M, 0, F_MAIN), F_F);
    uint32_t ng = rd_model_child_find(&M, rd_model_child_find(&M, 0, F_MAIN), F_G);
    const rd_memrow *f = rd_mem_row(&M.mem, nf), *g = rd_mem_row(&M.mem, ng);
    ck_assert_uint_eq(f->alloc_n, 2);
    ck_assert_uint_eq(f->alloc_b, 140);
    ck_assert_uint_eq(f->freed_b, 0);
    ck_assert_uint_eq(f->live_n, 1);
    ck_assert_uint_eq(f->live_b, 160);
    ck_assert_uint_eq(g->alloc_n, 0);
    ck_assert_uint_eq(g->alloc_b, 60);
    ck_assert_uint_eq(g->freed_b, 104);
    ck_assert_uint_eq(g->live_b, 0);
    ck_assert_uint_eq(M.mem.nblk, 1);
    ck_assert_uint_eq(M.mem.unknown_free, 1);
    expect_folded(RD_W_LIVE, L_MAIN ";" L_F " 160\n");
    expect_folded(RD_W_BYTES, L_MAIN ";" L_F " 140\n" L_MAIN ";" L_G " 60\n");
}
END_TEST

/* After a STOP (troff) the collector sends frees and reallocations: none
 * is counted, and live stays as at the STOP (a trace that ends so); at
 * the next START the blocks freed meanwhile leave their maker's live
 * bytes, one reallocated stays its maker's, charged at most its new
 * size; a new block or an unknown one is nothing. Before, they were
 * ignored: what the program freed between troff and tron stayed live. */
START_TEST(test_stack_memory_off)
{
    begin_main(5);
    ev_call(2, F_F);
    ev_line(2, 11);
    EV(MEM, 100, 0, 0x1000, 0);
    EV(MEM, 40, 0, 0x2000, 0);
    EV(MEM, 24, 0, 0x3000, 0);
    ev_ret(2);
    EV(STOP, 0, LT_R_TROFF);
    EV(MEM, 0, 100, 0, 0x1000);        /* freed while off */
    EV(MEM, 16, 40, 0x6000, 0x2000);   /* shrunk and moved */
    EV(MEM, 0, 24, 0, 0x3000);         /* freed, */
    EV(MEM, 24, 0, 0x3000, 0);         /* its address taken by a block made while off */
    EV(MEM, 0, 8, 0, 0x9000);          /* none of the trace's */
    uint32_t nf = rd_model_child_find(&M, rd_model_child_find(&M, 0, F_MAIN), F_F);
    const rd_memrow *f = rd_mem_row(&M.mem, nf);
    ck_assert_uint_eq(f->live_b, 164); /* as at the STOP, until tracing restarts */
    ck_assert_uint_eq(f->live_n, 3);
    ck_assert_uint_eq(M.mem.records, 3);
    begin_main(6);
    ev_line(1, 7); /* the START's snapshot ends */
    f = rd_mem_row(&M.mem, nf);
    ck_assert_uint_eq(f->alloc_n, 3);
    ck_assert_uint_eq(f->alloc_b, 164);
    ck_assert_uint_eq(f->freed_b, 0);
    ck_assert_uint_eq(f->live_b, 16);
    ck_assert_uint_eq(f->live_n, 1);
    ck_assert_uint_eq(M.mem.nblk, 1);
    ck_assert_uint_eq(M.mem.unknown_free, 0);
    ev_call(2, F_G);
    ev_line(2, 21);
    EV(MEM, 0, 16, 0, 0x6000); /* g frees f's block */
    EV(MEM, 0, 24, 0, 0x3000); /* and the one made while off */
    ev_ret(2);
    uint32_t ng = rd_model_child_find(&M, rd_model_child_find(&M, 0, F_MAIN), F_G);
    ck_assert_uint_eq(rd_mem_row(&M.mem, nf)->live_b, 0);
    ck_assert_uint_eq(rd_mem_row(&M.mem, nf)->live_n, 0);
    ck_assert_uint_eq(rd_mem_row(&M.mem, ng)->freed_b, 40);
    ck_assert_uint_eq(M.mem.unknown_free, 1);
    ck_assert_uint_eq(S.bad, 0);
}
END_TEST

/* Blocks of 4 GiB or more (the collector sends a reallocation of one as
 * a free and a new block): allocated, live and freed whole, as any other;
 * before, every record of one was bad and the block went uncounted. */
START_TEST(test_stack_memory_big)
{
    const uint64_t G = 1ull << 30;
    begin_main(5);
    EV(CALL, 2, 0, F_F);
    EV(LINE, 2, 0, 11);
    EV(MEM, 5 * G, 0, 0x10000, 0);   /* f makes a block of 5 GiB */
    EV(MEM, 6 * G, 0, 0x20000, 0);   /* one of 6 */
    EV(MEM, 4 * G - 1, 0, 0x30000, 0); /* one of the 32-bit mark exactly */
    EV(MEM, 100, 0, 0x40000, 0);     /* and a small one */
    EV(RET, 2, 0);
    EV(CALL, 2, 0, F_G);
    EV(LINE, 2, 0, 21);
    EV(MEM, 0, 5 * G, 0, 0x10000);   /* g frees the first */
    EV(MEM, 7 * G, 0, 0x20000, 0);   /* makes one where the second was (its free lost) */
    EV(MEM, 0, 4 * G - 1, 0, 0x30000); /* frees the third */
    EV(RET, 2, 0);
    ck_assert_uint_eq(S.bad, 0);
    uint32_t nf = rd_model_child_find(&M, rd_model_child_find(&M, 0, F_MAIN), F_F);
    uint32_t ng = rd_model_child_find(&M, rd_model_child_find(&M, 0, F_MAIN), F_G);
    const rd_memrow *f = rd_mem_row(&M.mem, nf), *g = rd_mem_row(&M.mem, ng);
    ck_assert_uint_eq(f->alloc_n, 4);
    ck_assert_uint_eq(f->alloc_b, 15 * G - 1 + 100);
    ck_assert_uint_eq(f->live_n, 1);
    ck_assert_uint_eq(f->live_b, 100);
    ck_assert_uint_eq(g->alloc_n, 1);
    ck_assert_uint_eq(g->alloc_b, 7 * G);
    ck_assert_uint_eq(g->freed_b, 9 * G - 1);
    ck_assert_uint_eq(g->live_n, 1);
    ck_assert_uint_eq(g->live_b, 7 * G);
    ck_assert_uint_eq(M.mem.nblk, 2);
    ck_assert_uint_eq(M.mem.nbig, 1);
    ck_assert_uint_eq(M.mem.unknown_free, 0);
    EV(CALL, 2, 0, F_F);
    EV(MEM, 0, 7 * G, 0, 0x20000);   /* f frees g's */
    ck_assert_uint_eq(rd_mem_row(&M.mem, ng)->live_b, 0);
    ck_assert_uint_eq(M.mem.nbig, 0);
}
END_TEST

/* Many blocks made and freed: the table of live blocks stays as large as
 * the blocks live at once, and every free finds its block (the backward
 * shift of a deletion keeps each probe chain whole). */
START_TEST(test_stack_memory_table)
{
    begin_main(5);
    for (uint64_t r = 0; r < 50; r++) {
        for (uint64_t i = 1; i <= 1000; i++)
            EV(MEM, 16, 0, (r * 1000 + i) * 48, 0);
        for (uint64_t i = 1; i <= 1000; i++)
            EV(MEM, 0, 16, 0, (r * 1000 + i) * 48);
    }
    EV(MEM, 16, 0, 0x10, 0);
    ck_assert_uint_eq(S.bad, 0);
    ck_assert_uint_eq(M.mem.unknown_free, 0);
    ck_assert_uint_eq(M.mem.nblk, 1);
    ck_assert_uint_le(M.mem.capblk, 4096);
    const rd_memrow *r = rd_mem_row(&M.mem, rd_model_child_find(&M, 0, F_MAIN));
    ck_assert_uint_eq(r->alloc_n, 50001);
    ck_assert_uint_eq(r->live_n, 1);
    ck_assert_uint_eq(r->live_b, 16);
}
END_TEST

/* With sampled time, BIAS's costs (in 1/16 ns) are debits where each
 * event ran, settled at the end: a line whose debits passed its ticks
 * shows 0; a frame's node passes its excess to its caller's (f's 48 to
 * main), so the total is the ticks less every debit. */
START_TEST(test_stack_tick_debits)
{
    EV(CLOCK, 0, 0, LT_CLOCK_CPU);
    EV(BIAS, 16, 32, 0, 0, 0); /* a line 1 ns, a Lua call or return 2 ns */
    begin_main(5);
    EV(LINE, 1, 0, 6);    /* -16 on main:5 */
    EV(TICK, 1, 0, 1000); /* main:6 */
    EV(CALL, 2, 0, F_F);  /* -32 on main:6 */
    EV(LINE, 2, 0, 11);   /* -16 on f */
    EV(RET, 2, 0);        /* -32 on f:11 */
    rd_stack_finish(&S);
    ck_assert_uint_eq(line_ticks(F_MAIN, 5), 0);
    ck_assert_uint_eq(line_ticks(F_MAIN, 6), 16000 - 32);
    ck_assert_uint_eq(line_ticks(F_F, 11), 0);
    ck_assert_uint_eq(M.ticks_total, 16000 - 16 - 32 - 16 - 32);
    expect_folded(RD_W_TIME, L_MAIN " 994\n");
}
END_TEST

/* LuaJIT's sampled time (LT_CLOCK_BIAS_AFTER): an event's cost comes off
 * after it, where it lands: a Lua function's call and return (twice
 * BIAS's lua) off its caller at the return, a C function's call (twice
 * BIAS's c: LuaJIT reports no C return) off the C function; nothing off
 * a Lua call, a C frame's return or a switch. */
START_TEST(test_stack_tick_debits_after)
{
    EV(CLOCK, 0, 0, LT_CLOCK_CPU | LT_CLOCK_LINES_SAMPLED | LT_CLOCK_BIAS_AFTER);
    EV(BIAS, 0, 32, 48, 0, 0); /* lines by sample: no line's cost */
    begin_main(5);
    EV(LINE, 1, 0, 6);
    EV(TICK, 1, 0, 1000);   /* main:6 16000 */
    EV(CALL, 2, 0, F_F);    /* nothing */
    EV(LINE, 2, 0, 11);
    EV(TICK, 1, 0, 1000);   /* f:11 16000 */
    EV(RET, 2, 0);          /* -64 on main:6 */
    EV(CALL, 2, 0, F_ERROR); /* -96 on error */
    EV(TICK, 1, 0, 1000);   /* error 16000 */
    EV(RET, 2, 0);          /* a C frame's: nothing */
    rd_stack_finish(&S);
    ck_assert(M.bias_after);
    ck_assert_uint_eq(line_ticks(F_MAIN, 6), 16000 - 64);
    ck_assert_uint_eq(line_ticks(F_F, 11), 16000);
    ck_assert_uint_eq(M.ticks_total, 3 * 16000 - 64 - 96);
    expect_folded(RD_W_TIME, L_MAIN " 996\n" L_MAIN ";" L_F " 1000\n" L_MAIN ";" L_ERROR " 994\n");
}
END_TEST

/* With SBIAS (LuaJIT's switch cost), a RESUME's and a YIELD's cost comes
 * off the frame on top of the thread switched to, after the switch: the
 * coroutine's yield after it is resumed again, main's resume after the
 * yield; with no SBIAS, nothing (test_stack_tick_debits_after). */
START_TEST(test_stack_tick_debits_switch)
{
    EV(CLOCK, 0, 0, LT_CLOCK_CPU | LT_CLOCK_LINES_SAMPLED | LT_CLOCK_BIAS_AFTER);
    EV(BIAS, 0, 32, 48, 0, 0);
    EV(SBIAS, 8);
    co_first_resume();       /* -96 on resume, then -8 on co's base: resume */
    EV(TICK, 1, 0, 1000);    /* co:41 16000 */
    ev_call(2, F_YIELD);     /* -96 on yield */
    ev_yield(T_MAIN, 0);     /* -8 on main's resume */
    EV(TICK, 1, 0, 1000);    /* resume 16000 */
    ev_resume(T_CO);         /* -8 on co's yield */
    EV(TICK, 1, 0, 1000);    /* yield 16000 */
    rd_stack_finish(&S);
    ck_assert_uint_eq(M.bias_switch, 8);
    ck_assert_uint_eq(M.ticks_total, 3 * 16000 - 2 * 96 - 3 * 8);
    /* resume 16000 - 96 - 8 - 8, yield 16000 - 96 - 8, in 1/16 */
    expect_folded(RD_W_TIME, L_MAIN ";" L_RESUME " 993\n" L_MAIN ";" L_RESUME ";" L_CO " 1000\n"
                  L_MAIN ";" L_RESUME ";" L_CO ";" L_YIELD " 994\n");
}
END_TEST

/* The same where f does return g() (under LuaJIT a call one deeper, then
 * with lines by sample g's RET at f's depth is its first record): g's
 * return is a Lua return, its cost off main after it. */
START_TEST(test_stack_tick_debits_after_tail)
{
    EV(CLOCK, 0, 0, LT_CLOCK_CPU | LT_CLOCK_LINES_SAMPLED | LT_CLOCK_BIAS_AFTER);
    EV(BIAS, 0, 32, 48, 0, 0);
    begin_main(5);
    EV(LINE, 1, 0, 6);
    EV(TICK, 1, 0, 1000); /* main:6 16000 */
    EV(CALL, 2, 0, F_F);
    EV(LINE, 2, 0, 11);
    EV(CALL, 3, 0, F_G);  /* f:11 does return g() */
    EV(TICK, 1, 0, 1000); /* g 16000 */
    EV(RET, 2, 0);        /* g's, at f's depth: -64 on main */
    rd_stack_finish(&S);
    ck_assert_uint_eq(line_ticks(F_MAIN, 6), 16000 - 64);
    ck_assert_uint_eq(M.ticks_total, 2 * 16000 - 64);
    expect_folded(RD_W_TIME, L_MAIN " 996\n" L_MAIN ";" L_G " 1000\n");
}
END_TEST

/* A debit before the first tick takes the total below 0 for a while: the
 * listener's times stay those of the ticks, not 2^64 less the debit. */
START_TEST(test_stack_tick_debit_first)
{
    EV(CLOCK, 0, 0, LT_CLOCK_CPU | LT_CLOCK_LINES_SAMPLED | LT_CLOCK_BIAS_AFTER);
    EV(BIAS, 0, 32, 48, 0, 0);
    begin_main(5);
    EV(CALL, 2, 0, F_ERROR); /* -96 */
    EV(RET, 2, 0);
    EV(CALL, 2, 0, F_F);     /* noted at the total, below 0 */
    EV(LINE, 2, 0, 11);
    EV(TICK, 1, 0, 1000);
    EV(RET, 2, 0);           /* -64 */
    rd_stack_finish(&S);
    ck_assert_uint_eq(M.ticks_total, 16000); /* main's debits past its 0: dropped at the root */
    if (S.ls)
        ck_assert_uint_le(LAST_T, 16000);
}
END_TEST

/* Debits passed up to the root: its shares (each held, the first too)
 * never add up to more than its self. */
START_TEST(test_stack_tick_debit_root_shares)
{
    EV(CLOCK, 0, 0, LT_CLOCK_CPU | LT_CLOCK_LINES_SAMPLED | LT_CLOCK_BIAS_AFTER);
    EV(BIAS, 0, 32, 48, 0, 0);
    ev_start(T_MAIN, LT_R_BEGIN);
    EV(TICK, 1, 0, 1000);    /* before any frame: the root's, main's share */
    ev_frame(1, F_MAIN, 5);
    EV(CALL, 2, 0, F_ERROR); /* -96, with no tick under main */
    rd_stack_finish(&S);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < M.ntnode; i++)
        sum += M.tnode[i].node == 0 ? M.tnode[i].self : 0;
    ck_assert_uint_eq(M.node[0].self, 16000 - 96);
    ck_assert_uint_le(sum, M.node[0].self);
}
END_TEST

/* A BIAS record takes the hook's unmeasured cost off every later event's
 * dt: a line's off a LINE, a Lua function's off a CALL of one and the RET
 * of one, a C function's likewise and off a switch (RESUME, YIELD: the
 * dt of the event it came with, mostly a C function's return); never
 * below a nanosecond (1 tick here) that was there. The same records as
 * test_stack_time. */
START_TEST(test_stack_bias)
{
    EV(CLOCK, 0, 0, 0);
    EV(BIAS, 5, 10, 3, 0, 0); /* no hook cost: never scaled */
    begin_main(5);
    EV(LINE, 1, 7, 6);          /* main:5 gets 2 */
    EV(CALL, 2, 11, F_F);       /* main:6 1, a Lua callee */
    EV(LINE, 2, 13, 11);        /* f 8 */
    EV(RET, 2, 17);             /* f:11 7, a Lua frame returns */
    EV(LINE, 1, 19, 7);         /* main:6 14 */
    EV(CALL, 2, 23, F_RESUME);  /* main:7 20, a C callee */
    EV(RESUME, 29, T_CO, 0);    /* resume 26: a C return's 3 */
    EV(CALL, 1, 0, F_CO);
    EV(LINE, 1, 31, 41);        /* co 26 */
    EV(YIELD, 37, T_MAIN, 2, 0); /* co:41 34 */
    EV(RET, 2, 41);             /* resume 38, a C frame returns */
    EV(LINE, 1, 43, 8);         /* main:7 38 */
    EV(LINE, 1, 3, 9);          /* main:8 1: 3 less 5, a tick kept */
    expect_folded(RD_W_TIME, L_MAIN " 76\n" L_MAIN ";" L_F " 15\n" L_MAIN ";" L_RESUME " 64\n"
                  L_MAIN ";" L_RESUME ";" L_CO " 60\n");
    ck_assert_uint_eq(line_ticks(F_MAIN, 5), 2);
    ck_assert_uint_eq(line_ticks(F_MAIN, 6), 15);
    ck_assert_uint_eq(line_ticks(F_MAIN, 7), 58);
    ck_assert_uint_eq(line_ticks(F_F, 11), 7);
    ck_assert_uint_eq(line_ticks(F_CO, 41), 34);
    ck_assert_uint_eq(M.ticks_total, 215);
}
END_TEST

/* A HOOK record scales BIAS by the hook's measured ticks a hook since
 * the last scaling over the calibration's (BIAS's last field, x16):
 * twice as much, twice the bias; at most 3 times. */
START_TEST(test_stack_bias_scaled)
{
    EV(CLOCK, 0, 0, 0);
    EV(BIAS, 5, 10, 3, 0, 160); /* the calibration's hooks: 10 ticks an event */
    begin_main(5);
    for (int i = 0; i < 300; i++)
        EV(LINE, 1, 100, 6); /* 95 each: main:5 once, then main:6 */
    EV(HOOK, 20 * 300);      /* 20 a hook (START, FRAME had none): twice */
    ck_assert_uint_eq(M.bias[0], 10);
    ck_assert_uint_eq(M.bias[1], 20);
    ck_assert_uint_eq(M.bias[2], 6);
    EV(LINE, 1, 100, 7); /* main:6 gets 90 */
    ck_assert_uint_eq(line_ticks(F_MAIN, 5), 95);
    ck_assert_uint_eq(line_ticks(F_MAIN, 6), 299 * 95 + 90);
    EV(HOOK, 7); /* too few events since: kept for the next one */
    ck_assert_uint_eq(M.bias[0], 10);
    for (int i = 0; i < 300; i++)
        EV(LINE, 1, 100, 7);
    EV(HOOK, 1000 * 301); /* 100 times the calibration's: 3 at most */
    ck_assert_uint_eq(M.bias[0], 15);
}
END_TEST

/* Lua 5.4 (WBIAS, WALK): a LINE's cost adds the steps that found its
 * line, WBIAS's cost a step (x16, as BIAS's instr) times its function's
 * mean steps (WALK, x16), with its instructions' (CODE); a CALL and a RET
 * take half a line's instructions and no steps. HOOK scales the steps'
 * cost with the other figures. */
START_TEST(test_stack_bias_walk)
{
    EV(CLOCK, 0, 0, 0);
    EV(BIAS, 5, 10, 3, 32, 160); /* an instruction 2 ticks; hooks 10 */
    EV(WBIAS, 8);                /* a step half a tick */
    EV(CODE, F_MAIN, 48);        /* 3 instructions a line: 6 ticks */
    EV(WALK, F_MAIN, 160);       /* 10 steps a line: 5 ticks */
    begin_main(5);
    EV(LINE, 1, 100, 6);  /* main:5 gets 100 - 5 - 6 - 5 */
    EV(CALL, 2, 100, F_F); /* main:6 100 - 10 - 3: no steps */
    EV(RET, 2, 100);       /* f: 90, no CODE of its own */
    ck_assert_uint_eq(line_ticks(F_MAIN, 5), 84);
    ck_assert_uint_eq(line_ticks(F_MAIN, 6), 87);
    for (int i = 0; i < 300; i++)
        EV(LINE, 1, 100, 7); /* 84 each: main:6 once, then main:7 */
    EV(HOOK, 20 * 303);      /* twice the calibration's: every cost twice */
    ck_assert_uint_eq(M.bias_step, 16);
    EV(LINE, 1, 100, 8); /* main:7 gets 100 - 10 - 12 - 10 */
    ck_assert_uint_eq(line_ticks(F_MAIN, 7), 299 * 84 + 68);
}
END_TEST

/* A CLOCK with LT_CLOCK_LINE_INSTR (Lua 5.1, 5.4): a LINE takes its
 * line's instructions off, a CALL and a RET none (without it, half a
 * line's: test_stack_bias_walk). */
START_TEST(test_stack_bias_line_instr)
{
    EV(CLOCK, 0, 0, LT_CLOCK_MONO | LT_CLOCK_LINE_INSTR);
    EV(BIAS, 5, 10, 3, 32, 0); /* an instruction 2 ticks */
    EV(CODE, F_MAIN, 48);      /* 3 instructions a line: 6 ticks */
    EV(CODE, F_F, 32);
    begin_main(5);
    EV(LINE, 1, 100, 6);   /* main:5 gets 100 - 5 - 6 */
    EV(CALL, 2, 100, F_F); /* main:6 100 - 10 */
    EV(RET, 2, 100);       /* f 100 - 10 */
    ck_assert_uint_eq(line_ticks(F_MAIN, 5), 89);
    ck_assert_uint_eq(line_ticks(F_MAIN, 6), 90);
    expect_folded(RD_W_TIME, L_MAIN " 179\n" L_MAIN ";" L_F " 90\n");
}
END_TEST

/* With LBIAS, LHOOK records scale the calibration's figures by the line
 * hooks' measured cost alone, and HOOK records (every hook's) no longer
 * do: line hooks at twice the calibration's double the figures, whatever
 * the other hooks cost; fewer than 256 add up until there are more. */
START_TEST(test_stack_bias_lines)
{
    EV(CLOCK, 0, 0, 0);
    EV(BIAS, 5, 10, 3, 0, 160); /* every hook: 10 ticks */
    EV(LBIAS, 128);             /* a line's hook: 8 ticks */
    begin_main(5);
    for (int i = 0; i < 300; i++)
        EV(LINE, 1, 100, 6);
    EV(HOOK, 100 * 300); /* ten times the calibration's: not used */
    ck_assert_uint_eq(M.bias[0], 5);
    EV(LHOOK, 16 * 300, 300); /* 16 a line hook: twice */
    ck_assert_uint_eq(M.bias[0], 10);
    ck_assert_uint_eq(M.bias[1], 20);
    ck_assert_uint_eq(M.bias[2], 6);
    EV(LHOOK, 8 * 100, 100); /* too few: kept for the next one */
    ck_assert_uint_eq(M.bias[0], 10);
    EV(LHOOK, 8 * 200, 200); /* 300 at 8: the calibration's */
    ck_assert_uint_eq(M.bias[0], 5);
    ck_assert_uint_eq(M.bias[1], 10);
    EV(LINE, 1, 100, 7); /* main:6 gets 95 */
    ck_assert_uint_eq(line_ticks(F_MAIN, 6), 299 * 95 + 95);
}
END_TEST

/* The scaling counts hooks, not records: a switch's RESUME or YIELD comes
 * in the hook of the event after it (a yield's return in the coroutine, a
 * resume's in its resumer), which has a record of its own. A ping-pong
 * whose hooks cost what the calibration's did keeps its bias as it is
 * (counting the records, 6 hooks for 8 took it a quarter lower: 3, 7,
 * 2). */
START_TEST(test_stack_bias_switches)
{
    EV(CLOCK, 0, 0, 0);
    EV(BIAS, 5, 10, 3, 0, 160); /* the calibration's hooks: 10 ticks each */
    begin_main(5);
    EV(LINE, 1, 100, 6);
    uint64_t hooks = 1;
    for (int i = 0; i < 100; i++) {
        EV(CALL, 2, 100, F_RESUME); /* main:6 */
        EV(RESUME, 100, T_CO, i ? 2 : 0);
        if (i)
            EV(RET, 2, 0); /* yield returns in co */
        else
            EV(CALL, 1, 0, F_CO); /* co begins */
        EV(LINE, 1, 100, 41);
        EV(CALL, 2, 100, F_YIELD);
        EV(YIELD, 100, T_MAIN, 2, 0);
        EV(RET, 2, 0); /* resume returns in main */
        EV(LINE, 1, 100, 6);
        hooks += 6;
    }
    EV(HOOK, 10 * hooks);
    ck_assert_uint_eq(M.bias[0], 5);
    ck_assert_uint_eq(M.bias[1], 10);
    ck_assert_uint_eq(M.bias[2], 3);
    expect_stack(T_MAIN, F_MAIN);
}
END_TEST

/* WAIT says what the collector took off as waits for a CPU: summed, not
 * an event of the program's, and nothing of any frame's time. */
START_TEST(test_stack_wait)
{
    EV(CLOCK, 0, 0, 0);
    begin_main(5);
    EV(LINE, 1, 100, 6);
    uint64_t events = M.events, ticks = M.ticks_total;
    EV(WAIT, 3000);
    EV(WAIT, 500);
    ck_assert_uint_eq(M.waited_ticks, 3500);
    ck_assert_uint_eq(M.events, events);
    ck_assert_uint_eq(M.ticks_total, ticks);
    EV(LINE, 1, 100, 7);
    ck_assert_uint_eq(line_ticks(F_MAIN, 6), 100);
}
END_TEST

/* Time is charged where the frame turns out to be: a tail-called function
 * never ran on top of its caller, so no time lands on caller;callee. */
START_TEST(test_stack_tail_call_time)
{
    EV(CLOCK, 0, 0, 0);
    begin_main(5);
    EV(CALL, 2, 1, F_F);
    EV(LINE, 2, 2, 11);
    EV(CALL, 3, 4, F_G); /* f:11 does return g() */
    EV(LINE, 2, 8, 21);  /* g, placed at depth 2 by this record */
    EV(RET, 2, 16);
    expect_folded(RD_W_TIME, L_MAIN " 1\n" L_MAIN ";" L_F " 6\n" L_MAIN ";" L_G " 24\n");
}
END_TEST

/* A RET has two arguments: whatever lies in a[2] (a decoder reusing its
 * lt_event leaves the previous record's there) is not part of it. */
START_TEST(test_stack_ret_ignores_unused_args)
{
    begin_main(5);
    ev_call(2, F_F);
    ev_line(2, 11);
    lt_event ret = {.kind = LT_EV_RET, .nargs = 2, .a = {2, 0, 1ull << 40, 7, 7, 7, 7, 7}};
    ck_assert_int_eq(rd_stack_event(&S, &ret), 0);
    expect_stack(T_MAIN, F_MAIN);
    ck_assert_uint_eq(S.bad, 0);
}
END_TEST

/* Inconsistent records are skipped and counted, never fatal. */
START_TEST(test_stack_garbage)
{
    /* before any START */
    EV(LINE, 1, 5, 6);
    EV(CALL, 2, 0, F_F);
    EV(RET, 1, 0);
    ev_frame(1, F_MAIN, 5);
    EV(YIELD, 0, 0, 0, 0);
    EV(RESUME, 0, 0, 0);
    ev_start(0, LT_R_BEGIN);
    EV(THREAD, 0, 0x1234);
    ck_assert_uint_ge(S.bad, 8);
    ck_assert_ptr_null(rd_stack_current(&S));
    uint64_t bad = S.bad;

    begin_main(5);
    ev_frame(0, F_F, 1); /* depth 0 */
    EV(FRAME, 1ull << 40, F_F, 1);
    ev_line(1, 6);
    ck_assert_uint_eq(S.bad, bad + 2);
    expect_stack(T_MAIN, F_MAIN);
    ev_call(0, F_F);
    EV(LINE, 1ull << 40, 0, 1);
    EV(CALL, 2, 0, 1ull << 40);
    EV(LINE, 2, 0, 1ull << 33);
    ck_assert_uint_ge(S.bad, bad + 6);
    ev_call(2, 999); /* never defined */
    ev_line(2, 3);
    expect_stack(T_MAIN, F_MAIN, 0);
    ev_ret(7);   /* deeper than anything: nothing to pop */
    ev_ret(2);
    ev_ret(1);
    ev_ret(1);   /* no frames left */
    ev_line(1, 9); /* a frame never seen */
    EV(FUNC, 0, LT_WHAT_LUA, 1, 1, 1, 1, 0);
    EV(FUNC, 50, 7, 1, 1, 1, 1, 0);
    EV(FUNC, 1ull << 40, LT_WHAT_LUA, 1, 1, 1, 1, 0);
    ev_str(0, "zero");
    ev_str(1ull << 40, "huge");
    ev_yield(0x5555, 1); /* to a thread never seen */
    ev_resume(T_MAIN);   /* a thread resuming itself */
    ev_yield(T_MAIN, 1);
    ev_call(UINT32_MAX, F_F);
    ev_line(UINT32_MAX, 1);
    ev_ret(UINT32_MAX);
    ev_start(T_CO, LT_R_HOOKED);
    ev_frame(1, F_CO, 41); /* bottom first: out of order */
    ev_frame(2, F_YIELD, 0);
    rd_stack_finish(&S);
    /* still usable */
    begin_main(5);
    ev_line(1, 6);
    expect_stack(T_MAIN, F_MAIN);
    char *f = folded(RD_W_LINES);
    ck_assert_ptr_nonnull(strstr(f, L_MAIN " "));
    free(f);
}
END_TEST

static uint64_t rng_next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* Random records with small ids and depths (so they collide with real
 * frames, threads and functions) never crash the rebuilder or the reports. */
START_TEST(test_stack_random_records)
{
    uint64_t x = 88172645463325252ull;
    static const char text[] = "random string";
    for (int i = 0; i < 300000; i++) {
        lt_event ev = {.kind = (uint8_t)(rng_next(&x) % LT_EV_COUNT)};
        ev.nargs = lt_event_nargs[ev.kind];
        for (unsigned j = 0; j < ev.nargs; j++) {
            uint64_t r = rng_next(&x);
            ev.a[j] = (r & 0xff) == 0 ? r : (r >> 8) % 9; /* mostly 0..8 */
        }
        if (ev.kind == LT_EV_FUNC)
            ev.a[1] %= 4;
        if (ev.kind == LT_EV_STR) {
            ev.a[1] = 0;
            ev.str = text;
            ev.slen = (uint32_t)(rng_next(&x) % sizeof text);
        }
        ck_assert_int_eq(rd_stack_event(&S, &ev), 0);
    }
    rd_stack_finish(&S);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    for (int w = RD_W_TIME; w <= RD_W_CALLS; w++)
        ck_assert_int_eq(rd_report_folded(&M, (enum rd_weight)w, f, NULL), 0);
    ck_assert_int_eq(rd_report_profile(&M, "random", NULL, 0, 0, f), 0);
    ck_assert_int_eq(rd_report_annotate_stream(&M, NULL, "/nonexistent", f), 0);
    fclose(f);
    free(buf);
    free(rd_report_fstats(&M));
    ck_assert_uint_lt(M.nnode, 300000);
}
END_TEST

/* ==== replay: encoded bytes through the decoder ==== */

static size_t encode_case(uint8_t *b, size_t *last)
{
    uint8_t *q = b, *rec;
    q = lt_put_str(lt_put_uint(lt_put_head(q, LT_EV_STR, 2), 30), "k", 1);
    q = lt_put_head(q, LT_EV_FUNC, 7);
    const uint64_t fn[] = {20, LT_WHAT_LUA, 1, 30, 70, 75, 0};
    for (int i = 0; i < 7; i++)
        q = lt_put_uint(q, fn[i]);
    q = lt_put_uint(lt_put_uint(lt_put_head(q, LT_EV_START, 2), T_MAIN), LT_R_BEGIN);
    q = lt_put_uint(lt_put_uint(lt_put_uint(lt_put_head(q, LT_EV_FRAME, 3), 1), F_MAIN), 5);
    q = lt_put_uint(lt_put_uint(lt_put_uint(lt_put_head(q, LT_EV_LINE, 3), 1), 0), 6);
    q = lt_put_uint(lt_put_uint(lt_put_uint(lt_put_head(q, LT_EV_CALL, 3), 2), 0), 20);
    q = lt_put_uint(lt_put_uint(lt_put_uint(lt_put_head(q, LT_EV_LINE, 3), 2), 0), 71);
    q = lt_put_uint(lt_put_uint(lt_put_uint(lt_put_head(q, LT_EV_LINE, 3), 2), 300), 72);
    q = lt_put_uint(lt_put_uint(lt_put_head(q, LT_EV_RET, 2), 2), 0);
    rec = q;
    q = lt_put_uint(lt_put_uint(lt_put_uint(lt_put_head(q, LT_EV_LINE, 3), 1), 0), 700);
    *last = (size_t)(q - rec);
    return (size_t)(q - b);
}

START_TEST(test_stack_replay_feed)
{
    uint8_t b[256];
    size_t last, n = encode_case(b, &last);
    char err[128] = "";
    ck_assert_uint_gt(last, 3);
    int64_t used = rd_replay_feed(&S, b, n - 2, err, sizeof err);
    ck_assert_int_eq(used, (int64_t)(n - last)); /* the cut record waits */
    expect_folded(RD_W_LINES, L_MAIN " 1\n" L_MAIN ";k@app.lua:70 2\n");
    expect_stack(T_MAIN, F_MAIN);
    ck_assert_int_eq(rd_replay_feed(&S, b + used, n - (size_t)used, err, sizeof err),
                     (int64_t)last);
    expect_folded(RD_W_LINES, L_MAIN " 2\n" L_MAIN ";k@app.lua:70 2\n");
    ck_assert_uint_eq(line_hits(20, 72), 1);
    ck_assert_int_eq(rd_replay_feed(&S, b, 0, err, sizeof err), 0);
    ck_assert_int_eq(rd_replay_feed(&S, b, 1, err, sizeof err), 0);
    ck_assert_str_eq(err, "");

    /* a malformed record stops the feed with a message */
    static const uint8_t bad[] = {0x93, LT_EV_RET, 1, 0, 0x94, 0x0c, 1, 2, 3};
    ck_assert_int_eq(rd_replay_feed(&S, bad, sizeof bad, err, sizeof err), -EPROTO);
    ck_assert_str_ne(err, "");
    ck_assert_uint_eq(rd_stack_current(&S)->n, 0); /* the RET before it was applied */
}
END_TEST

/* Each test twice: on the rebuilder alone, and with a listener mirroring
 * every change (NAME_listener). */
static void add(Suite *s, const TTest *t)
{
    static const struct ut_fixture plain = {setup, teardown, NULL, NULL, 0};
    static const struct ut_fixture mirror = {setup_mirror, teardown_mirror, NULL, NULL, 0};
    ut_add(s, t->name, t, &plain);
    char mname[128];
    snprintf(mname, sizeof mname, "%s_listener", t->name);
    ut_add(s, strdup(mname), t, &mirror);
}

int main(void)
{
    const TTest *tests[] = {test_stack_snapshot, test_stack_snapshot_finish,
                            test_stack_snapshot_fresh_call, test_stack_error_unwind,
                            test_stack_pcall_unwind, test_stack_tail_call,
                            test_stack_tail_call_stacks, test_stack_tail_chain,
                            test_stack_tail_nested, test_stack_tail_recursion,
                            test_stack_call_same_depth, test_stack_c_call,
                            test_stack_coroutine_resume, test_stack_coroutine_yield,
                            test_stack_coroutine_resume_elsewhere, test_stack_coroutine_nested_run,
                            test_stack_coroutine_death,
                            test_stack_many_coroutines, test_stack_thread_reused,
                            test_stack_wrap_error, test_stack_wrap_nested_error,
                            test_stack_late_hooked, test_stack_stop_start, test_stack_gap,
                            test_stack_time, test_stack_ticks, test_stack_tick_debits,
                            test_stack_memory, test_stack_memory_big, test_stack_memory_off, test_stack_memory_table,
                            test_stack_bias, test_stack_bias_scaled, test_stack_bias_walk, test_stack_bias_line_instr, test_stack_tick_debits_after,
                            test_stack_tick_debits_switch, test_stack_tick_debits_after_tail, test_stack_tick_debit_first,
                            test_stack_tick_debit_root_shares,
                            test_stack_bias_switches, test_stack_bias_lines,
                            test_stack_wait, test_stack_tail_call_time,
                            test_stack_ret_ignores_unused_args, test_stack_garbage,
                            test_stack_random_records, test_stack_replay_feed};
    Suite *s = suite_create("stack");
    for (size_t i = 0; i < UT_N(tests); i++)
        add(s, tests[i]);
    return ut_run(s);
}
