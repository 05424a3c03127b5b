/* check_model: recorderd/core/rd_model's frame labels. Two distinct functions
 * (fids) whose labels NAME@SRC:LINE would be equal are told apart: the
 * second is NAME#2, the third NAME#3, in fid order, in every writer. And
 * the coroutine tracks and shares: a thread id keeps its track until it
 * dies, then gets a new one; a share is one per (track, node), its index
 * stable while thousands more are made; ended coroutines past the kept
 * ones fold into one track per function with every count kept. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rd_callgrind.h"
#include "rd_report.h"
#include "rd_speedscope.h"
#include "ut_events.h"
#include "ut_main.h"

enum { S_APP = 1, S_C, S_A, S_B, S_MAIN };

static void ev_func(uint32_t fid, unsigned what, uint32_t src, uint32_t name, uint32_t line)
{
    EV(FUNC, fid, what, src, name, line, line + 2, 0);
}

/* fids: 1 main, 2 a@app.lua:10, 3 a@app.lua:10 (another function on that
 * line), 4 b@app.lua:10, 5 a@app.lua:10 again, 6 a@app.lua:11, 7 a@[C],
 * 8 a@[C] (another C function of that name). */
static void define_functions(void)
{
    ev_str(S_APP, "app.lua");
    ev_str(S_C, "[C]");
    ev_str(S_A, "a");
    ev_str(S_B, "b");
    ev_str(S_MAIN, "main chunk");
    ev_func(1, LT_WHAT_MAIN, S_APP, S_MAIN, 0);
    ev_func(2, LT_WHAT_LUA, S_APP, S_A, 10);
    ev_func(3, LT_WHAT_LUA, S_APP, S_A, 10);
    ev_func(4, LT_WHAT_LUA, S_APP, S_B, 10);
    ev_func(5, LT_WHAT_LUA, S_APP, S_A, 10);
    ev_func(6, LT_WHAT_LUA, S_APP, S_A, 11);
    ev_func(7, LT_WHAT_C, S_C, S_A, 0);
    ev_func(8, LT_WHAT_C, S_C, S_A, 0);
}

static const char *label(uint32_t fid)
{
    static char buf[256];
    rd_model_label(&M, fid, buf, sizeof buf);
    return buf;
}

START_TEST(test_model_label_numbered)
{
    define_functions();
    ck_assert_str_eq(label(1), "main chunk@app.lua:0");
    ck_assert_str_eq(label(2), "a@app.lua:10");
    ck_assert_str_eq(label(3), "a#2@app.lua:10");
    ck_assert_str_eq(label(4), "b@app.lua:10");
    ck_assert_str_eq(label(5), "a#3@app.lua:10");
    ck_assert_str_eq(label(6), "a@app.lua:11");
    ck_assert_str_eq(label(7), "a@[C]");
    ck_assert_str_eq(label(8), "a#2@[C]");
    ck_assert_str_eq(label(99), "?@?");
    char name[64];
    rd_model_name(&M, 5, name, sizeof name);
    ck_assert_str_eq(name, "a#3");
    rd_model_name(&M, 2, name, sizeof name);
    ck_assert_str_eq(name, "a");
}
END_TEST

/* A FUNC record for a fid already defined (only a forged trace sends one)
 * keeps its number and takes none from the functions after it. */
START_TEST(test_model_label_redefined)
{
    define_functions();
    ev_func(3, LT_WHAT_LUA, S_APP, S_A, 10);
    ev_func(9, LT_WHAT_LUA, S_APP, S_A, 10);
    ck_assert_str_eq(label(3), "a#2@app.lua:10");
    ck_assert_str_eq(label(9), "a#4@app.lua:10");
}
END_TEST

/* Many functions: the label table grows and keeps its counts. */
START_TEST(test_model_label_many)
{
    ev_str(S_APP, "app.lua");
    ev_str(S_A, "a");
    for (uint32_t fid = 1; fid <= 3000; fid++)
        ev_func(fid, LT_WHAT_LUA, S_APP, S_A, fid <= 1000 ? fid : 7);
    ck_assert_str_eq(label(7), "a@app.lua:7");
    ck_assert_str_eq(label(1001), "a#2@app.lua:7");
    ck_assert_str_eq(label(3000), "a#2001@app.lua:7");
    ck_assert_str_eq(label(1000), "a@app.lua:1000");
}
END_TEST

static char *render(int (*fn)(FILE *))
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(fn(f), 0);
    fclose(f);
    return buf;
}

static int do_folded(FILE *f)
{
    return rd_report_folded(&M, RD_W_CALLS, f, NULL);
}

static int do_profile(FILE *f)
{
    return rd_report_profile(&M, "t", "lua5.1 app.lua", 20, 0, f);
}

static int do_speedscope(FILE *f)
{
    return rd_speedscope_write(&M, "t", f);
}

static int do_callgrind(FILE *f)
{
    return rd_callgrind_write(&M, "lua5.1 app.lua", NULL, f);
}

/* main calls fid 2, then fid 3 (same base label), then C fids 7 and 8. */
static void run_calls(void)
{
    define_functions();
    EV(CLOCK, 0, 0, 0);
    EV(START, 0x1000, LT_R_BEGIN);
    EV(FRAME, 1, 1, 5);
    uint32_t fids[] = {2, 3, 7, 8};
    for (int i = 0; i < 4; i++) {
        EV(CALL, 2, 1000, fids[i]);
        EV(LINE, 2, 1000, 11);
        EV(RET, 2, 1000);
    }
}

START_TEST(test_model_label_writers)
{
    run_calls();
    char *folded = render(do_folded), *profile = render(do_profile);
    char *speedscope = render(do_speedscope), *callgrind = render(do_callgrind);
    ck_assert_ptr_nonnull(strstr(folded, "main chunk@app.lua:0;a@app.lua:10 1\n"));
    ck_assert_ptr_nonnull(strstr(folded, "main chunk@app.lua:0;a#2@app.lua:10 1\n"));
    ck_assert_ptr_nonnull(strstr(folded, "main chunk@app.lua:0;a@[C] 1\n"));
    ck_assert_ptr_nonnull(strstr(folded, "main chunk@app.lua:0;a#2@[C] 1\n"));
    ck_assert_ptr_nonnull(strstr(profile, " a#2 (app.lua:10)\n"));
    ck_assert_ptr_nonnull(strstr(profile, " a#2 [C]\n"));
    ck_assert_ptr_nonnull(strstr(speedscope, "{\"name\":\"a#2\",\"file\":\"app.lua\",\"line\":10}"));
    ck_assert_ptr_nonnull(strstr(speedscope, "{\"name\":\"a#2 [C]\"}"));
    ck_assert_ptr_nonnull(strstr(callgrind, "a#2 (app.lua:10)"));
    ck_assert_ptr_nonnull(strstr(callgrind, "a#2 [C]"));
    free(folded);
    free(profile);
    free(speedscope);
    free(callgrind);
}
END_TEST

START_TEST(test_model_tracks)
{
    define_functions();
    ck_assert_uint_eq(rd_model_track(&M, 0x1000), 1);
    ck_assert_uint_eq(rd_model_track(&M, 0x2000), 2);
    ck_assert_uint_eq(rd_model_track(&M, 0x1000), 1);
    rd_model_track_end(&M, 0x2000);
    rd_model_track_end(&M, 0x3000); /* never seen: nothing */
    ck_assert_uint_eq(rd_model_track(&M, 0x2000), 3); /* its address reused */
    ck_assert_uint_eq(rd_model_track(&M, 0x2000), 3);
    for (uint64_t id = 1; id <= 1000; id++) /* the index grows */
        ck_assert_uint_eq(rd_model_track(&M, 0x10000 + id * 16), 3 + id);
    ck_assert_uint_eq(rd_model_track(&M, 0x1000), 1);
    M.track[2].first_fid = 2;
    M.track[2].named = 1;
    char buf[128];
    rd_model_track_name(&M, 0, buf, sizeof buf);
    ck_assert_str_eq(buf, "main");
    rd_model_track_name(&M, 2, buf, sizeof buf);
    ck_assert_str_eq(buf, "coroutine 2 (a@app.lua:10)");
    rd_model_track_name(&M, 1, buf, sizeof buf); /* no frame yet */
    ck_assert_str_eq(buf, "coroutine 1 (?@?)");
}
END_TEST

START_TEST(test_model_shares)
{
    define_functions();
    for (uint32_t t = 0; t < 5000; t++)
        ck_assert_uint_eq(rd_model_track(&M, 0x100 + t * 16), t + 1);
    uint32_t n = rd_model_child(&M, 0, 2);
    uint32_t a = rd_model_tnode(&M, 0, n), b = rd_model_tnode(&M, 1, n);
    ck_assert_uint_ne(a, 0);
    ck_assert_uint_ne(b, 0);
    ck_assert_uint_ne(a, b);
    ck_assert_uint_eq(rd_model_tnode(&M, 0, n), a); /* past its node's last-used cache */
    M.tnode[a - 1].self = 7;
    for (uint32_t t = 2; t < 5000; t++)
        ck_assert_uint_ne(rd_model_tnode(&M, t, n), 0);
    ck_assert_uint_eq(rd_model_tnode(&M, 1, n), b);
    ck_assert_uint_eq(rd_model_tnode(&M, 0, n), a);
    ck_assert_uint_eq(M.tnode[a - 1].self, 7);
    ck_assert_uint_eq(M.tnode[a - 1].node, n);
    ck_assert_uint_eq(M.ntnode, 5000); /* tracks 0 to 4999 */
}
END_TEST

/* Shares of track k at nodes x (the node's first share, run by main
 * first, so its counts are implied) and y (at the root: counted). */
static void run_on(uint32_t k, uint32_t x, uint32_t y, uint64_t self)
{
    uint32_t a = rd_model_tnode(&M, k, x), b = rd_model_tnode(&M, k, y);
    ck_assert(a && b);
    M.node[x].self += self;
    M.tnode[a - 1].self += self;
    M.tnode[b - 1].lines += 1;
}

/* Ended coroutines past RD_TRACKS_KEPT fold into "coroutine * (LABEL)" of
 * the function they started in; the kept, live and main tracks stay, with
 * their shares (remapped); every node's sum over shares is unchanged. */
START_TEST(test_model_fold)
{
    define_functions();
    uint32_t x = rd_model_child(&M, 0, 2), y = 0, total = 2 * RD_TRACKS_KEPT + 9000;
    ck_assert_uint_eq(rd_model_tnode(&M, rd_model_track(&M, 0x10) - 1, x), 1); /* main: first */
    uint32_t live = rd_model_track(&M, 0x20) - 1;
    run_on(live, x, y, 5);
    for (uint32_t i = 0; i < total && !rd_model_fold_due(&M); i++) {
        uint32_t k = rd_model_track(&M, 0x1000 + i * 16) - 1;
        M.track[k].first_fid = i % 2 ? 2 : 4;
        M.track[k].named = 1;
        run_on(k, x, y, 1);
        rd_model_track_end(&M, 0x1000 + i * 16);
    }
    ck_assert(rd_model_fold_due(&M));
    uint32_t ended = (uint32_t)M.nserial - 2, livetn = rd_model_tnode(&M, live, x), *re, n;
    ck_assert_int_eq(rd_model_fold(&M, &re, &n), 0);
    ck_assert_uint_eq(M.folded, ended - RD_TRACKS_KEPT);
    ck_assert_uint_eq(M.tnode[re[livetn] - 1].track, live); /* moved, kept */
    ck_assert_uint_eq(M.tnode[re[livetn] - 1].self, 5);
    ck_assert_uint_eq(rd_model_tnode(&M, live, x), re[livetn]);
    free(re);
    /* main + live + kept + 2 aggregates at x; the same at the root */
    ck_assert_uint_eq(M.ntnode, 2 * (2 + RD_TRACKS_KEPT + 2) - 1);
    uint64_t self = 0, lines = 0, agg_self = 0;
    char name[256];
    for (uint32_t k = 0; k < M.ntnode; k++) {
        const rd_tnode *t = &M.tnode[k];
        lines += t->node == y ? t->lines : 0;
        if (t->node != x || M.node[x].first_tn == k + 1)
            continue;
        self += t->self;
        if (!M.track[t->track].agg)
            continue;
        agg_self += t->self;
        rd_model_track_name(&M, t->track, name, sizeof name);
        ck_assert_str_eq(name, M.track[t->track].first_fid == 2 ? "coroutine * (a@app.lua:10)"
                                                                 : "coroutine * (b@app.lua:10)");
    }
    ck_assert_uint_eq(self, M.node[x].self); /* main ran none of it */
    ck_assert_uint_eq(agg_self, ended - RD_TRACKS_KEPT);
    ck_assert_uint_eq(lines, ended + 1);
    /* a folded coroutine's slot is reused; the serial is new */
    uint32_t k = rd_model_track(&M, 0x999990) - 1;
    ck_assert_uint_lt(k, M.ntrack);
    ck_assert_uint_eq(M.track[k].serial, ended + 2);
    char want[64];
    snprintf(want, sizeof want, "coroutine %u (?@?)", ended + 2);
    rd_model_track_name(&M, k, name, sizeof name);
    ck_assert_str_eq(name, want);
}
END_TEST

UT_MAIN("model", model_setup, model_teardown, test_model_label_numbered, test_model_label_redefined,
        test_model_label_many, test_model_label_writers, test_model_tracks, test_model_shares,
        test_model_fold)
