/* check_timeline: recorderd/out/rd_timeline, fed through its listener with
 * made-up frames (only fid matters to it) and read back. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rd_timeline.h"
#include "ut_main.h"

static rd_model M;
static rd_timeline TL;
static rd_listener LS;
static rd_backend_info INFO;
static const rd_backend_info *INFOP = &INFO;
static char DIRBUF[64];

/* What was read back. */
static rd_tl_event *GOT;
static size_t NGOT, CAPGOT;

static void setup(void)
{
    snprintf(DIRBUF, sizeof DIRBUF, "/tmp/check_timeline.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(DIRBUF));
    INFO = (rd_backend_info){"s", "cmd", 1, DIRBUF, -1};
    ck_assert_int_eq(rd_model_init(&M), 0);
    ck_assert_int_eq(rd_timeline_init(&TL, &INFOP), 0);
    LS = rd_timeline_listener(&TL);
    NGOT = 0;
}

static void teardown(void)
{
    rd_timeline_free(&TL);
    rd_model_free(&M);
    free(GOT);
    GOT = NULL;
    CAPGOT = 0;
    ck_assert_int_eq(rmdir(DIRBUF), 0); /* nothing was left in it */
}

static void enter(uint64_t th, uint32_t fid, uint32_t level, enum rd_how how, uint64_t t)
{
    rd_frame f = {.fid = fid};
    LS.enter(LS.ud, th, &f, level, how, t);
}

static void leave(uint64_t th, uint32_t fid, uint32_t level, enum rd_how how, uint64_t t)
{
    rd_frame f = {.fid = fid};
    LS.leave(LS.ud, th, &f, level, how, t);
}

static int collect(void *ud, const rd_tl_event *ev)
{
    (void)ud;
    if (NGOT == CAPGOT) {
        CAPGOT = CAPGOT ? CAPGOT * 2 : 64;
        GOT = realloc(GOT, CAPGOT * sizeof *GOT);
        ck_assert_ptr_nonnull(GOT);
    }
    GOT[NGOT++] = *ev;
    return 0;
}

static void read_track(uint32_t k)
{
    NGOT = 0;
    ck_assert_int_eq(rd_timeline_each(&TL, k, collect, NULL), 0);
}

static void expect(size_t i, uint32_t fid, int leave, enum rd_how how, uint64_t t)
{
    ck_assert_uint_lt(i, NGOT);
    ck_assert_uint_eq(GOT[i].fid, fid);
    ck_assert_int_eq(GOT[i].leave, leave);
    ck_assert_int_eq(GOT[i].how, how);
    ck_assert_uint_eq(GOT[i].t, t);
}

static int dir_empty(void)
{
    DIR *d = opendir(DIRBUF);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n == 0;
}

/* Many records (many blocks, growing buffers) come back as they went in;
 * the temporary file is in info->dir and already unlinked. */
START_TEST(test_timeline_roundtrip)
{
    uint64_t t = 5;
    enter(7, 1, 0, RD_SNAP, t);
    for (uint32_t i = 0; i < 100000; i++) {
        enter(7, 2 + i % 1000, 1, i % 3 ? RD_CALL : RD_TAIL, t += i % 7);
        leave(7, 2 + i % 1000, 1, RD_CALL, t += (uint64_t)i << 20);
    }
    ck_assert_int_ge(TL.fd, 0);
    ck_assert(dir_empty());
    ck_assert_int_eq(rd_timeline_end(&TL, 0), 0); /* earlier than seen: the last time */
    ck_assert_uint_eq(TL.ntr, 1);
    read_track(0);
    ck_assert_uint_eq(NGOT, 200002);
    t = 5;
    expect(0, 1, 0, RD_SNAP, t);
    for (uint32_t i = 0; i < 100000; i++) {
        expect(1 + 2 * i, 2 + i % 1000, 0, i % 3 ? RD_CALL : RD_TAIL, t += i % 7);
        expect(2 + 2 * i, 2 + i % 1000, 1, RD_CALL, t += (uint64_t)i << 20);
    }
    expect(200001, 1, 1, RD_STOP, t);
}
END_TEST

/* Frames open at the end leave then, innermost first. */
START_TEST(test_timeline_end_closes)
{
    enter(7, 1, 0, RD_CALL, 10);
    enter(7, 2, 1, RD_CALL, 20);
    enter(7, 3, 2, RD_CALL, 30);
    ck_assert_int_eq(rd_timeline_end(&TL, 100), 0);
    read_track(0);
    ck_assert_uint_eq(NGOT, 6);
    expect(3, 3, 1, RD_STOP, 100);
    expect(4, 2, 1, RD_STOP, 100);
    expect(5, 1, 1, RD_STOP, 100);
}
END_TEST

/* Interleaved threads: each track reads back only its own records. */
START_TEST(test_timeline_interleaved)
{
    enter(1, 1, 0, RD_SNAP, 0);
    for (uint64_t i = 0; i < 5000; i++) {
        uint64_t th = 2 + i % 3;
        if (i < 3)
            enter(th, 10 + (uint32_t)th, 0, RD_CALL, i);
        enter(th, 20 + (uint32_t)th, 1, RD_CALL, 10 + 2 * i);
        leave(th, 20 + (uint32_t)th, 1, RD_CALL, 11 + 2 * i);
    }
    ck_assert_int_eq(rd_timeline_end(&TL, 20000), 0);
    ck_assert_uint_eq(TL.ntr, 4);
    for (uint32_t k = 1; k < 4; k++) {
        read_track(k);
        ck_assert_uint_eq(TL.tr[k].first_fid, 11 + k);
        uint64_t n = 0;
        for (uint64_t i = k - 1; i < 5000; i += 3, n++) {
            expect(1 + 2 * n, 21 + k, 0, RD_CALL, 10 + 2 * i);
            expect(2 + 2 * n, 21 + k, 1, RD_CALL, 11 + 2 * i);
        }
        ck_assert_uint_eq(NGOT, 2 + 2 * n);
        expect(NGOT - 1, 11 + k, 1, RD_STOP, 20000);
    }
}
END_TEST

/* A track ends when the stack layer says its thread is gone (end), not
 * when its stack empties: the main thread of a host that calls into Lua
 * from C runs call after call on an empty stack, in one track. A tail call
 * at the outermost level is no end either. An end for a thread without a
 * track is harmless; a thread seen after its end gets a new track. */
START_TEST(test_timeline_tracks)
{
    char name[256];
    enter(1, 1, 0, RD_SNAP, 0);
    enter(9, 5, 0, RD_CALL, 1);
    leave(9, 5, 0, RD_TAIL, 2);
    enter(9, 6, 0, RD_TAIL, 2);
    leave(9, 6, 0, RD_CALL, 3);
    LS.end(LS.ud, 9, 3);
    enter(10, 7, 0, RD_CALL, 4);
    leave(10, 7, 0, RD_UNWIND, 5);
    LS.end(LS.ud, 10, 5);
    LS.end(LS.ud, 77, 5);
    enter(11, 8, 0, RD_CALL, 6);
    leave(11, 8, 0, RD_CALL, 7);
    enter(11, 4, 0, RD_CALL, 8);
    enter(9, 3, 0, RD_CALL, 9);
    ck_assert_int_eq(rd_timeline_end(&TL, 10), 0);
    ck_assert_uint_eq(TL.ntr, 5);
    ck_assert_uint_eq(TL.tr[1].first_fid, 5);
    ck_assert_uint_eq(TL.tr[2].first_fid, 7);
    ck_assert_uint_eq(TL.tr[3].first_fid, 8);
    ck_assert_uint_eq(TL.tr[4].first_fid, 3);
    read_track(1);
    ck_assert_uint_eq(NGOT, 4);
    read_track(3);
    ck_assert_uint_eq(NGOT, 4);
    expect(1, 8, 1, RD_CALL, 7);
    expect(2, 4, 0, RD_CALL, 8);
    expect(3, 4, 1, RD_STOP, 10);
    rd_timeline_track_name(&TL, &M, 0, name, sizeof name);
    ck_assert_str_eq(name, "main");
    rd_timeline_track_name(&TL, &M, 2, name, sizeof name);
    ck_assert_msg(!strncmp(name, "coroutine 2 (", 13), "%s", name);
}
END_TEST

/* Ticks to ns: rounded, monotonic. */
START_TEST(test_timeline_ns)
{
    ck_assert_uint_eq(rd_timeline_ns(1.0 / 3.0, 3), 1);
    ck_assert_uint_eq(rd_timeline_ns(1.0 / 3.0, 5), 2);
    uint64_t last = 0;
    for (uint64_t t = 0; t < 100000; t += 7) {
        uint64_t n = rd_timeline_ns(0.3846, t * 1000003);
        ck_assert_uint_ge(n, last);
        last = n;
    }
}
END_TEST

UT_MAIN("timeline", setup, teardown, test_timeline_roundtrip, test_timeline_end_closes,
        test_timeline_interleaved, test_timeline_tracks, test_timeline_ns)
