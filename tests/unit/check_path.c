/* check_path: recorderd/core/rd_path's bounded stacks. A stack up to 1000
 * frames prints whole; a deeper one as its 100 root-most frames, the cut,
 * and its 899 leaf-most; deep nodes print alike, and so stand for one
 * another, exactly when those frames (and, for pprof, their call lines)
 * and the root-side node are the same. stacks.folded of a 3000-deep
 * recursion holds every weight in stacks of at most 1000 frames. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rd_path.h"
#include "rd_report.h"
#include "ut_main.h"

static rd_model M;

static void setup(void)
{
    ck_assert_int_eq(rd_model_init(&M), 0);
}

static void teardown(void)
{
    rd_model_free(&M);
}

/* A chain of n nodes under parent, each of fid (or fid + i % 2 when alt),
 * each with call line `line`: returns the deepest. */
static uint32_t chain(uint32_t parent, uint32_t n, uint32_t fid, int alt, uint32_t line)
{
    for (uint32_t i = 0; i < n; i++) {
        parent = rd_model_child(&M, parent, fid + (alt ? i % 2 : 0));
        ck_assert_uint_ne(parent, 0);
        M.node[parent].call_line = line;
        M.node[parent].self = 1;
    }
    return parent;
}

START_TEST(test_path_shallow_whole)
{
    uint32_t n = chain(0, RD_PATH_MAX, 1, 1, 0), fids[RD_PATH_MAX], nodes[RD_PATH_MAX];
    rd_paths p;
    ck_assert_int_eq(rd_paths_init(&p, &M, 0), 0);
    ck_assert_uint_eq(p.ndeep, 0);
    ck_assert_uint_eq(p.depth[n], RD_PATH_MAX);
    ck_assert_uint_eq(p.rep[n], n);
    ck_assert_uint_eq(rd_paths_get(&p, &M, n, fids, nodes), RD_PATH_MAX);
    for (uint32_t i = 0, c = n; i < RD_PATH_MAX; i++, c = M.node[c].parent) {
        ck_assert_uint_eq(nodes[RD_PATH_MAX - 1 - i], c);
        ck_assert_uint_eq(fids[RD_PATH_MAX - 1 - i], M.node[c].fid);
    }
    rd_paths_free(&p);
}
END_TEST

START_TEST(test_path_deep_cut)
{
    uint32_t top = chain(0, 3, 1, 0, 0), n = chain(top, 2997, 2, 1, 0);
    uint32_t fids[RD_PATH_MAX], nodes[RD_PATH_MAX], path[3001], d = 0;
    for (uint32_t c = n; c; c = M.node[c].parent)
        path[d++] = c; /* leaf first */
    rd_paths p;
    ck_assert_int_eq(rd_paths_init(&p, &M, 0), 0);
    ck_assert_uint_eq(p.ndeep, 3000 - RD_PATH_MAX);
    ck_assert_uint_eq(p.depth[n], 3000);
    ck_assert_uint_eq(rd_paths_get(&p, &M, n, fids, nodes), RD_PATH_MAX);
    for (uint32_t i = 0; i < RD_PATH_ROOT; i++) /* depths 1..100 */
        ck_assert_uint_eq(nodes[i], path[3000 - 1 - i]);
    ck_assert_uint_eq(fids[RD_PATH_ROOT], RD_PATH_CUT);
    ck_assert_uint_eq(nodes[RD_PATH_ROOT], 0);
    for (uint32_t i = 0; i < RD_PATH_LEAF; i++) /* the 899 at the leaf */
        ck_assert_uint_eq(nodes[RD_PATH_MAX - 1 - i], path[i]);
    /* alternating frames: nodes two levels apart print alike */
    uint32_t a = path[0], b = path[2], c = path[1];
    ck_assert_uint_eq(p.rep[a], p.rep[b]);
    ck_assert_uint_ne(p.rep[a], p.rep[c]);
    ck_assert_uint_eq(p.rep[path[3000 - RD_PATH_MAX]], path[3000 - RD_PATH_MAX]); /* 1000 deep */
    rd_paths_free(&p);
}
END_TEST

START_TEST(test_path_alike)
{
    /* two chains that differ at depth 50 (in the kept root part) */
    uint32_t x = chain(chain(0, 49, 1, 0, 0), 1, 3, 0, 0),
             y = chain(chain(0, 49, 1, 0, 0), 1, 4, 0, 0);
    uint32_t xs = chain(x, 1500, 2, 0, 7), ys = chain(y, 1500, 2, 0, 7);
    /* under x, chains that differ in the cut part only: by a call line at the leaf */
    uint32_t mid = chain(x, 200, 2, 0, 7);
    uint32_t a = chain(chain(mid, 1, 5, 0, 7), 1500, 2, 0, 7);
    uint32_t b = chain(chain(mid, 1, 6, 0, 7), 1500, 2, 0, 8);
    rd_paths p, q;
    ck_assert_int_eq(rd_paths_init(&p, &M, 0), 0);
    ck_assert_int_eq(rd_paths_init(&q, &M, 1), 0);
    ck_assert_uint_ne(p.rep[xs], p.rep[ys]);                /* the root-side frames differ */
    ck_assert_uint_eq(p.rep[xs], p.rep[M.node[xs].parent]); /* a recursion prints alike */
    ck_assert_uint_eq(p.rep[a], p.rep[xs]);
    ck_assert_uint_eq(q.rep[a], q.rep[xs]);
    ck_assert_uint_eq(p.rep[b], p.rep[a]); /* frames alike, lines apart */
    ck_assert_uint_ne(q.rep[b], q.rep[a]);
    rd_paths_free(&p);
    rd_paths_free(&q);
}
END_TEST

START_TEST(test_path_folded)
{
    chain(chain(0, 1, 1, 0, 0), 2999, 2, 0, 0); /* fids 1 and 2 unknown: labelled ?@? */
    for (uint32_t n = 1; n < M.nnode; n++)
        M.node[n].lines = 1;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(rd_report_folded(&M, RD_W_LINES, f, NULL), 0);
    fclose(f);
    uint64_t total = 0, rows = 0, cut = 0;
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"), rows++) {
        uint32_t frames = 1;
        for (char *c = line; *c; c++)
            frames += *c == ';';
        ck_assert_uint_le(frames, RD_PATH_MAX);
        cut += strstr(line, ";" RD_PATH_CUT_LABEL ";") != NULL;
        total += strtoull(strrchr(line, ' ') + 1, NULL, 10);
    }
    ck_assert_uint_eq(total, 3000);
    ck_assert_uint_eq(cut, 1); /* 2000 deep nodes, one path */
    ck_assert_uint_eq(rows, RD_PATH_MAX + 1);
    free(buf);
}
END_TEST

UT_MAIN("path", setup, teardown, test_path_shallow_whole, test_path_deep_cut, test_path_alike,
        test_path_folded)
