/* check_site54: recorderd/live/rd_site54's names of Lua 5.4 calls, read
 * from a Proto laid out in this process's own memory as 5.4.4 lays it out
 * (rd_lua54.h) and read back through process_vm_readv as a live process's
 * is. A local called by way of OP_MOVE is named by the local, a field by
 * its key; a pc that is no call and runs no metamethod gives no name
 * (0), one that runs one its event ("index"); a read out of time
 * gives -1, so that a sampler tries again rather than keep "function". */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rd_lua54.h"
#include "rd_peek54.h"
#include "ut_main.h"

enum { OP_MOVE = 0, OP_LOADK = 3, OP_GETTABUP = 11, OP_GETFIELD = 14, OP_CALL = 68 };

static uint32_t iabc(int op, int a, int b, int c)
{
    return (uint32_t)op | (uint32_t)a << 7 | (uint32_t)b << 16 | (uint32_t)c << 24;
}

static uint32_t iabx(int op, int a, int bx)
{
    return (uint32_t)op | (uint32_t)a << 7 | (uint32_t)bx << 15;
}

/* A short string as 5.4 keeps it: header, then its bytes. */
typedef struct ts54 {
    uint8_t h[TS4_CONTENTS];
    char s[32];
} ts54;

static void put_ptr(uint8_t *b, int off, const void *p)
{
    uintptr_t v = (uintptr_t)p;
    memcpy(b + off, &v, sizeof v);
}

static void put_int(uint8_t *b, int off, int v)
{
    memcpy(b + off, &v, sizeof v);
}

static void mkstr(ts54 *t, const char *s)
{
    memset(t, 0, sizeof *t);
    t->h[8] = O4_SHRSTR;
    t->h[TS4_SHRLEN] = (uint8_t)strlen(s);
    strcpy(t->s, s);
}

static ts54 S_hot, S_io, S_open, S_stop;
static uint8_t K[3][TV4_SIZE], LOC[16], PR[PR4_READ];
static uint32_t CODE[8];
static r54 *D;

/* main: `local hot = ...; hot("stop"); io.open("stop")` with hot in R0:
 * MOVE R3 R0; LOADK R4 K2; CALL R3; GETTABUP R3 _ENV K0; GETFIELD R3 R3
 * K1; LOADK R4 K2; CALL R3. */
static void setup(void)
{
    mkstr(&S_hot, "hot"), mkstr(&S_io, "io"), mkstr(&S_open, "open"), mkstr(&S_stop, "stop");
    const ts54 *k[3] = {&S_io, &S_open, &S_stop};
    for (int i = 0; i < 3; i++)
        put_ptr(K[i], 0, k[i]), K[i][TV4_TT] = T4_SHRSTR;
    put_ptr(LOC, 0, &S_hot), put_int(LOC, 8, 0), put_int(LOC, 12, 8);
    uint32_t code[] = {iabc(OP_MOVE, 3, 0, 0),     iabx(OP_LOADK, 4, 2),
                       iabc(OP_CALL, 3, 2, 1),     iabc(OP_GETTABUP, 3, 0, 0),
                       iabc(OP_GETFIELD, 3, 3, 1), iabx(OP_LOADK, 4, 2),
                       iabc(OP_CALL, 3, 2, 2)};
    memcpy(CODE, code, sizeof code);
    memset(PR, 0, sizeof PR);
    PR[8] = O4_PROTO;
    put_int(PR, PR4_SIZECODE, 7), put_ptr(PR, PR4_CODE, CODE);
    put_int(PR, PR4_SIZEK, 3), put_ptr(PR, PR4_K, K);
    put_int(PR, PR4_SIZELOC, 1), put_ptr(PR, PR4_LOCVARS, LOC);
    ck_assert_ptr_nonnull(D = calloc(1, sizeof *D));
    D->pid = getpid();
}

static void teardown(void)
{
    free(D);
}

START_TEST(test_site54_local)
{
    char out[64];
    ck_assert_int_eq(r54_call_name(D, (uintptr_t)PR, 2, out, sizeof out), 1);
    ck_assert_str_eq(out, "hot");
}
END_TEST

START_TEST(test_site54_field)
{
    char out[64];
    ck_assert_int_eq(r54_call_name(D, (uintptr_t)PR, 6, out, sizeof out), 1);
    ck_assert_str_eq(out, "open");
}
END_TEST

START_TEST(test_site54_nocall)
{
    char out[64] = "x";
    ck_assert_int_eq(r54_call_name(D, (uintptr_t)PR, 1, out, sizeof out), 0); /* LOADK */
    ck_assert_str_eq(out, "");
    ck_assert_int_eq(r54_call_name(D, (uintptr_t)PR, 7, out, sizeof out), 0); /* past the code */
    ck_assert_int_eq(r54_call_name(D, (uintptr_t)PR, -1, out, sizeof out), 0);
}
END_TEST

/* An instruction that runs a metamethod names the function it calls by
 * its event, as 5.4's funcnamefromcode: GETFIELD's __index is "index"
 * (debug.getinfo's name inside it). */
START_TEST(test_site54_metamethod)
{
    char out[64] = "x";
    ck_assert_int_eq(r54_call_name(D, (uintptr_t)PR, 4, out, sizeof out), 1);
    ck_assert_str_eq(out, "index");
}
END_TEST

/* A sample's reads past its deadline fail: no name, but not "none". */
START_TEST(test_site54_late)
{
    char out[64] = "x";
    D->deadline_us = 1;
    ck_assert_int_eq(r54_call_name(D, (uintptr_t)PR, 2, out, sizeof out), -1);
    ck_assert_str_eq(out, "");
    D->deadline_us = 0, D->late = 0;
    ck_assert_int_eq(r54_call_name(D, 8, 2, out, sizeof out), -1); /* unmapped */
}
END_TEST

UT_MAIN("site54", setup, teardown, test_site54_local, test_site54_field, test_site54_nocall,
        test_site54_metamethod, test_site54_late)
