/* rd_pprof: profile.pb.gz from the call tree (rd_pprof.h).
 *
 * Design. The wire format is written by hand (rd_pb) rather than through
 * protobuf-c: the writer needs six message types, only varint and
 * length-delimited fields, and never reads a profile back, so a generated
 * codec would add a build-time compiler and a library for ~60 lines.
 *
 * A pprof Function is a traced function (fid; id fid + 1), named like
 * profile.txt ("name (src:linedefined)", "name [C]") because `pprof -top`
 * merges functions by name alone; the plain Lua name goes in system_name.
 * Time outside any frame (the root node) is the pseudo function
 * "(no frame)", so the samples add up to the traced time of profile.txt.
 * A Location is a (function, line) pair: a caller frame sits at the line
 * it called from (the child node's call_line), a leaf at its linedefined,
 * since a node's self time is not split by line in the model.
 *
 * Samples are node by node, and within a node coroutine by coroutine (the
 * model's rd_tnode shares): each carries the label coroutine=NAME, named
 * as rd_timeline names its tracks ("main", "coroutine K (LABEL)"). What a
 * node holds beyond its shares (none is lost unless memory ran out) is a
 * sample without a label. Nanoseconds are rounded cumulatively, as in
 * rd_callgrind: the sample values add up exactly to round(ticks * ns/tick).
 * A node deeper than RD_PATH_MAX frames has the stack rd_path prints
 * (its middle is the pseudo function "[...]"); its samples are added to
 * those of the deep nodes that print alike, per coroutine, and come after
 * the others.
 * heap.pb.gz (rd_pprof_write_heap) is the same stacks with the memory of
 * each node (rd_mem.h) as Go's heap profiles give it: alloc_objects,
 * alloc_space, inuse_objects, inuse_space (inuse_space the default), one
 * sample per node with any, no coroutine label; a deep node's sample has
 * its printed stack, which pprof adds up with its likes.
 * Strings are interned as they are first used and written to the
 * string_table as they come, after the empty string 0. Fields of a
 * message may come in any order on the wire; readers keep the order of a
 * repeated field only, so the string table can be a buffer of its own,
 * appended at the end.
 */
#include "rd_pprof.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "lt_ring.h" /* lt_ring_name_of_args */
#include "rd_label.h"
#include "rd_path.h"
#include "rd_util.h" /* rd_utf8_seq */

/* profile.proto field numbers */
enum {
    P_SAMPLE_TYPE = 1,
    P_SAMPLE,
    P_MAPPING,
    P_LOCATION,
    P_FUNCTION,
    P_STRING_TABLE,
    P_TIME_NANOS = 9,
    P_DURATION_NANOS,
    P_PERIOD_TYPE,
    P_PERIOD,
    P_COMMENT,
    P_DEFAULT_SAMPLE_TYPE
};
enum { VT_TYPE = 1, VT_UNIT };
enum { S_LOCATION_ID = 1, S_VALUE, S_LABEL };
enum { LB_KEY = 1, LB_STR };
enum { M_ID = 1, M_FILENAME = 5, M_HAS_FUNCTIONS = 7, M_HAS_FILENAMES, M_HAS_LINE_NUMBERS };
enum { L_ID = 1, L_MAPPING_ID, L_LINE = 4 };
enum { LN_FUNCTION_ID = 1, LN_LINE };
enum { F_ID = 1, F_NAME, F_SYSTEM_NAME, F_FILENAME, F_START_LINE };

typedef struct loc_key {
    uint32_t fid, line; /* fid + 1: 0 marks a free slot */
} loc_key;

typedef struct pp {
    const rd_model *m;
    const rd_pprof_info *info;
    int heap; /* heap.pb.gz: memory, not time */
    rd_pb *out, strs, msg, sub, ids;
    uint32_t root;                /* pseudo fid of the root node: m->nfunc */
    size_t *soff;                 /* string index -> offset of its bytes in strs */
    uint32_t *slen, nstr, capstr; /* string index -> length */
    uint32_t *shash, capshash;    /* hash -> string index + 1 */
    loc_key *lkey;                /* open addressing, (fid + 1, line) */
    uint32_t *lid, nloc, caploc;  /* location id per slot */
    uint8_t *used;                /* per fid: a location names it */
    uint32_t *first_tn, *next_tn; /* per node its first tnode + 1, per tnode the next */
    uint32_t cut;                 /* pseudo fid of the cut of deep stacks: m->nfunc + 1 */
    rd_paths paths;
    uint32_t *fids, *nodes;   /* a deep stack (RD_PATH_MAX each) */
    struct deep_sample *deep; /* samples of deep nodes, added up per (path, coroutine) */
    uint32_t ndeep, capdeep, *deep_ix, capdeep_ix;
    int err;
} pp;

typedef struct deep_sample {
    uint32_t rep, track; /* the node standing for the path; UINT32_MAX: no label */
    uint64_t self, lines;
} deep_sample;

static uint32_t hash_bytes(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 16777619u;
    return h;
}

/* ---- the string table ---- */

static int grow_strings(pp *p)
{
    uint32_t cap = p->capshash ? p->capshash * 2 : 1024;
    uint32_t *h = calloc(cap, sizeof *h);
    size_t *off = realloc(p->soff, cap / 2 * sizeof *off);
    uint32_t *len = realloc(p->slen, cap / 2 * sizeof *len);
    if (off) p->soff = off;
    if (len) p->slen = len;
    if (!h || !off || !len) {
        free(h);
        return p->err = -ENOMEM;
    }
    for (uint32_t i = 0; i < p->nstr; i++) {
        uint32_t j = hash_bytes((char *)p->strs.p + p->soff[i], p->slen[i]) & (cap - 1);
        while (h[j])
            j = (j + 1) & (cap - 1);
        h[j] = i + 1;
    }
    free(p->shash);
    p->shash = h;
    p->capshash = cap;
    p->capstr = cap / 2;
    return 0;
}

/* Index of s in the string table, added on first use. Control characters
 * become spaces: a loadstring chunk name may hold newlines, and pprof's
 * text reports are one line per function. profile.proto's strings are
 * UTF-8 (proto3: readers may refuse others): a byte that is not becomes
 * U+FFFD, and a cut never splits a character. */
static uint64_t str(pp *p, const char *s)
{
    char clean[1024];
    size_t n = 0;
    for (int l; *s; s += l ? l : 1) {
        l = rd_utf8_seq(s);
        const char *put = l ? s : "\xEF\xBF\xBD";
        size_t k = l ? (size_t)l : 3;
        if (n + k > sizeof clean - 1)
            break;
        memcpy(clean + n, put, k);
        if ((unsigned char)clean[n] < 32)
            clean[n] = ' ';
        n += k;
    }
    if (p->nstr + 1 > p->capstr && grow_strings(p)) return 0;
    uint32_t mask = p->capshash - 1, j = hash_bytes(clean, n) & mask;
    for (; p->shash[j]; j = (j + 1) & mask) {
        uint32_t i = p->shash[j] - 1;
        if (p->slen[i] == n && !memcmp(p->strs.p + p->soff[i], clean, n)) return i;
    }
    rd_pb_raw_varint(&p->strs, (uint64_t)P_STRING_TABLE << 3 | 2);
    rd_pb_raw_varint(&p->strs, n);
    p->soff[p->nstr] = p->strs.n;
    p->slen[p->nstr] = (uint32_t)n;
    rd_pb_append(&p->strs, clean, n);
    if (p->strs.err) return p->err = p->strs.err, 0;
    p->shash[j] = p->nstr + 1;
    return p->nstr++;
}

/* ---- functions and locations ---- */

static const rd_func *func_of(const pp *p, uint32_t fid)
{
    return rd_model_func(p->m, fid == p->root || fid == p->cut ? 0 : fid);
}

static uint32_t leaf_line(const pp *p, uint32_t fid)
{
    const rd_func *f = func_of(p, fid);
    return fid != p->root && fid != p->cut && f->known && f->what != LT_WHAT_C ? f->linedefined : 0;
}

static int grow_locations(pp *p)
{
    uint32_t cap = p->caploc ? p->caploc * 2 : 1024;
    loc_key *k = calloc(cap, sizeof *k);
    uint32_t *id = calloc(cap, sizeof *id);
    if (!k || !id) {
        free(k);
        free(id);
        return p->err = -ENOMEM;
    }
    for (uint32_t i = 0; i < p->caploc; i++) {
        if (!p->lkey[i].fid) continue;
        uint32_t j = hash_bytes((const char *)&p->lkey[i], sizeof *k) & (cap - 1);
        while (k[j].fid)
            j = (j + 1) & (cap - 1);
        k[j] = p->lkey[i];
        id[j] = p->lid[i];
    }
    free(p->lkey);
    free(p->lid);
    p->lkey = k;
    p->lid = id;
    p->caploc = cap;
    return 0;
}

static void put_location(pp *p, uint32_t id, uint32_t fid, uint32_t line)
{
    rd_pb_reset(&p->sub);
    rd_pb_varint(&p->sub, LN_FUNCTION_ID, (uint64_t)fid + 1);
    if (line) rd_pb_varint(&p->sub, LN_LINE, line);
    rd_pb_reset(&p->msg);
    rd_pb_varint(&p->msg, L_ID, id);
    rd_pb_varint(&p->msg, L_MAPPING_ID, 1);
    rd_pb_bytes(&p->msg, L_LINE, p->sub.p, p->sub.n);
    rd_pb_bytes(p->out, P_LOCATION, p->msg.p, p->msg.n);
}

/* Id of the location (fid, line), written on first use. */
static uint32_t location(pp *p, uint32_t fid, uint32_t line)
{
    if ((p->nloc + 1) * 2 > p->caploc && grow_locations(p)) return 0;
    loc_key key = {fid + 1, line};
    uint32_t mask = p->caploc - 1;
    uint32_t j = hash_bytes((const char *)&key, sizeof key) & mask;
    for (; p->lkey[j].fid; j = (j + 1) & mask)
        if (p->lkey[j].fid == key.fid && p->lkey[j].line == line) return p->lid[j];
    p->lkey[j] = key;
    p->lid[j] = ++p->nloc;
    p->used[fid] = 1;
    put_location(p, p->nloc, fid, line);
    return p->nloc;
}

/* The source of a Lua function, absolute when it resolves against srcdir
 * (as in callgrind.out, so that pprof -list finds it). */
static uint64_t file_str(pp *p, const rd_func *f)
{
    if (!f->known) return str(p, "");
    if (f->what == LT_WHAT_C) return str(p, "[C]");
    const char *src = rd_model_string(p->m, f->src_sid);
    char joined[PATH_MAX + 1], real[PATH_MAX];
    if (src[0] != '/' && p->info->srcdir)
        snprintf(joined, sizeof joined, "%s/%s", p->info->srcdir, src);
    else
        snprintf(joined, sizeof joined, "%s", src);
    return str(p, src[0] && realpath(joined, real) ? real : src);
}

static void put_function(pp *p, uint32_t fid)
{
    const rd_func *f = func_of(p, fid);
    char name[LT_STR_MAX + 16], label[LT_STR_MAX + 1200];
    rd_model_name(p->m, fid, name, sizeof name); /* with its #N: never merged with another */
    if (fid == p->root)
        snprintf(label, sizeof label, "(no frame)");
    else if (fid == p->cut)
        snprintf(label, sizeof label, "%s", RD_PATH_CUT_LABEL);
    else
        rd_label_human(p->m, fid, 0, label, sizeof label);
    rd_pb_reset(&p->msg);
    rd_pb_varint(&p->msg, F_ID, (uint64_t)fid + 1);
    rd_pb_varint(&p->msg, F_NAME, str(p, label));
    rd_pb_varint(&p->msg, F_SYSTEM_NAME, fid == p->cut ? str(p, label) : str(p, name));
    rd_pb_varint(&p->msg, F_FILENAME, fid >= p->root ? str(p, "") : file_str(p, f));
    if (leaf_line(p, fid)) rd_pb_varint(&p->msg, F_START_LINE, leaf_line(p, fid));
    rd_pb_bytes(p->out, P_FUNCTION, p->msg.p, p->msg.n);
}

/* ---- samples ---- */

static uint64_t to_ns(double ticks, double k)
{
    double ns = ticks * k + 0.5;
    return ns < 0x1p63 ? (uint64_t)ns : (uint64_t)INT64_MAX; /* a corrupt clock */
}

/* The stack rd_path prints for deep node n, leaf first, into p->ids. */
static void deep_ids(pp *p, uint32_t n)
{
    const rd_node *nd = p->m->node;
    uint32_t k = rd_paths_get(&p->paths, p->m, n, p->fids, p->nodes);
    rd_pb_raw_varint(&p->ids, location(p, p->fids[k - 1], leaf_line(p, p->fids[k - 1])));
    for (uint32_t i = k - 1; i-- > 0;) {
        uint32_t fid = p->fids[i] == RD_PATH_CUT ? p->cut : p->fids[i];
        uint32_t child = p->nodes[i + 1], line = child && fid != p->cut ? nd[child].call_line : 0;
        rd_pb_raw_varint(&p->ids, location(p, fid, line));
    }
}

/* The stack of node n, leaf first, as packed location ids into p->ids. */
static void stack_ids(pp *p, uint32_t n)
{
    const rd_node *nd = p->m->node;
    rd_pb_reset(&p->ids);
    if (n && p->paths.depth[n] > RD_PATH_MAX) {
        deep_ids(p, n);
        return;
    }
    if (n == 0) {
        rd_pb_raw_varint(&p->ids, location(p, p->root, 0));
        return;
    }
    rd_pb_raw_varint(&p->ids, location(p, nd[n].fid, leaf_line(p, nd[n].fid)));
    for (uint32_t c = n; nd[c].parent; c = nd[c].parent)
        rd_pb_raw_varint(&p->ids, location(p, nd[nd[c].parent].fid, nd[c].call_line));
}

/* The tnodes of each node, in the order they were made. */
static int link_shares(pp *p)
{
    const rd_model *m = p->m;
    p->first_tn = calloc(m->nnode ? m->nnode : 1, sizeof *p->first_tn);
    p->next_tn = calloc(m->ntnode ? m->ntnode : 1, sizeof *p->next_tn);
    if (!p->first_tn || !p->next_tn) return p->err = -ENOMEM;
    for (uint32_t k = m->ntnode; k-- > 0;) {
        p->next_tn[k] = p->first_tn[m->tnode[k].node];
        p->first_tn[m->tnode[k].node] = k + 1;
    }
    return 0;
}

typedef struct sampler {
    double k;                /* ns per tick */
    uint64_t ticks, printed; /* so far, for the cumulative rounding */
} sampler;

/* One sample: node n's stack, its values, and a coroutine label when
 * track is not UINT32_MAX. */
static void put_sample(pp *p, sampler *sp, uint32_t n, uint32_t track, uint64_t self,
                       uint64_t lines)
{
    char name[600];
    sp->ticks += self;
    uint64_t want = to_ns((double)sp->ticks, sp->k), ns = want - sp->printed;
    sp->printed = want;
    stack_ids(p, n);
    rd_pb_reset(&p->msg);
    rd_pb_bytes(&p->msg, S_LOCATION_ID, p->ids.p, p->ids.n);
    rd_pb_reset(&p->sub);
    rd_pb_raw_varint(&p->sub, ns);
    rd_pb_raw_varint(&p->sub, lines);
    rd_pb_bytes(&p->msg, S_VALUE, p->sub.p, p->sub.n);
    if (track != UINT32_MAX) {
        rd_model_track_name(p->m, track, name, sizeof name);
        rd_pb_reset(&p->sub);
        rd_pb_varint(&p->sub, LB_KEY, str(p, "coroutine"));
        rd_pb_varint(&p->sub, LB_STR, str(p, name));
        rd_pb_bytes(&p->msg, S_LABEL, p->sub.p, p->sub.n);
    }
    rd_pb_bytes(p->out, P_SAMPLE, p->msg.p, p->msg.n);
}

/* The self and lines of node n's share k (its first one: implied, the
 * node's less the others', see rd_tnode). */
static void share_counts(const pp *p, uint32_t n, uint32_t k, uint64_t *self, uint64_t *lines)
{
    const rd_node *nd = &p->m->node[n];
    if (!n || k != nd->first_tn) {
        *self = p->m->tnode[k - 1].self;
        *lines = p->m->tnode[k - 1].lines;
        return;
    }
    *self = nd->self;
    *lines = nd->lines;
    for (uint32_t j = p->first_tn[n]; j; j = p->next_tn[j - 1])
        if (j != k) {
            *self -= p->m->tnode[j - 1].self; /* the others never exceed the node */
            *lines -= p->m->tnode[j - 1].lines;
        }
}

/* Adds a deep node's sample to that of its path and coroutine. */
static void add_deep(pp *p, uint32_t n, uint32_t track, uint64_t self, uint64_t lines)
{
    if ((p->ndeep + 1) * 2 > p->capdeep_ix) {
        uint32_t cap = p->capdeep_ix ? p->capdeep_ix * 2 : 256, *ix = calloc(cap, sizeof *ix);
        if (!ix) {
            p->err = -ENOMEM;
            return;
        }
        for (uint32_t i = 0; i < p->ndeep; i++) {
            uint32_t j = rd_model_hash2(p->deep[i].rep, p->deep[i].track) & (cap - 1);
            while (ix[j])
                j = (j + 1) & (cap - 1);
            ix[j] = i + 1;
        }
        free(p->deep_ix);
        p->deep_ix = ix;
        p->capdeep_ix = cap;
    }
    uint32_t rep = p->paths.rep[n], mask = p->capdeep_ix - 1;
    uint32_t j = rd_model_hash2(rep, track) & mask;
    for (; p->deep_ix[j]; j = (j + 1) & mask) {
        deep_sample *d = &p->deep[p->deep_ix[j] - 1];
        if (d->rep == rep && d->track == track) {
            d->self += self;
            d->lines += lines;
            return;
        }
    }
    if (rd_grow((void **)&p->deep, &p->capdeep, p->ndeep, sizeof *p->deep)) {
        p->err = -ENOMEM;
        return;
    }
    p->deep[p->ndeep] = (deep_sample){rep, track, self, lines};
    p->deep_ix[j] = ++p->ndeep;
}

/* Node n's sample of coroutine track (UINT32_MAX: none), now or added up
 * with those of its path when it is deep. */
static void node_sample(pp *p, sampler *sp, uint32_t n, uint32_t track, uint64_t self,
                        uint64_t lines)
{
    if (n && p->paths.depth[n] > RD_PATH_MAX)
        add_deep(p, n, track, self, lines);
    else
        put_sample(p, sp, n, track, self, lines);
}

/* heap.pb.gz: node n's memory, if any. */
static void heap_sample(pp *p, uint32_t n)
{
    const rd_memrow *r = rd_mem_row(&p->m->mem, n);
    if (!r->alloc_n && !r->alloc_b && !r->live_n && !r->live_b)
        return;
    stack_ids(p, n);
    rd_pb_reset(&p->msg);
    rd_pb_bytes(&p->msg, S_LOCATION_ID, p->ids.p, p->ids.n);
    rd_pb_reset(&p->sub);
    rd_pb_raw_varint(&p->sub, r->alloc_n);
    rd_pb_raw_varint(&p->sub, r->alloc_b);
    rd_pb_raw_varint(&p->sub, r->live_n);
    rd_pb_raw_varint(&p->sub, r->live_b);
    rd_pb_bytes(&p->msg, S_VALUE, p->sub.p, p->sub.n);
    rd_pb_bytes(p->out, P_SAMPLE, p->msg.p, p->msg.n);
}

static void put_samples(pp *p, uint64_t *ns_total)
{
    if (p->heap) {
        for (uint32_t n = 0; n < p->m->nnode && !p->err; n++)
            heap_sample(p, n);
        *ns_total = to_ns((double)p->m->ticks_total, rd_model_ns_per_tick(p->m));
        return;
    }
    sampler sp = {rd_model_ns_per_tick(p->m), 0, 0};
    if (link_shares(p)) return;
    for (uint32_t n = 0; n < p->m->nnode && !p->err; n++) {
        const rd_node *nd = &p->m->node[n];
        uint64_t self = nd->self, lines = nd->lines, ts, tl;
        for (uint32_t k = p->first_tn[n]; k && !p->err; k = p->next_tn[k - 1]) {
            share_counts(p, n, k, &ts, &tl);
            if (!ts && !tl) continue;
            node_sample(p, &sp, n, p->m->tnode[k - 1].track, ts, tl);
            self -= ts;
            lines -= tl;
        }
        if ((self || lines) && !p->err) node_sample(p, &sp, n, UINT32_MAX, self, lines);
    }
    for (uint32_t i = 0; i < p->ndeep && !p->err; i++)
        put_sample(p, &sp, p->deep[i].rep, p->deep[i].track, p->deep[i].self, p->deep[i].lines);
    *ns_total = sp.printed;
}

/* ---- the profile ---- */

static void put_value_type(pp *p, uint32_t field, const char *type, const char *unit)
{
    rd_pb_reset(&p->msg);
    rd_pb_varint(&p->msg, VT_TYPE, str(p, type));
    rd_pb_varint(&p->msg, VT_UNIT, str(p, unit));
    rd_pb_bytes(p->out, field, p->msg.p, p->msg.n);
}

/* The mapping's file: the script, named as its session is (app for
 * lua5.1 -lluatrace app.lua). go tool pprof prints it as File: and names
 * the profiles it saves after it (pprof.app.time.lines.001.pb.gz): the
 * whole command put its spaces in that file name. */
static void mapping_name(const char *cmd, char *buf, size_t cap)
{
    char words[1024], *argv[64], *save = NULL;
    int argc = 0;
    snprintf(words, sizeof words, "%s", cmd ? cmd : "");
    for (char *w = strtok_r(words, " ", &save); w && argc < 64; w = strtok_r(NULL, " ", &save))
        argv[argc++] = w;
    lt_ring_name_of_args(argc, argv, buf, cap);
}

static void put_mapping(pp *p)
{
    char name[64];
    mapping_name(p->info->cmd, name, sizeof name);
    rd_pb_reset(&p->msg);
    rd_pb_varint(&p->msg, M_ID, 1);
    rd_pb_varint(&p->msg, M_FILENAME, str(p, name));
    rd_pb_varint(&p->msg, M_HAS_FUNCTIONS, 1);
    rd_pb_varint(&p->msg, M_HAS_FILENAMES, 1);
    rd_pb_varint(&p->msg, M_HAS_LINE_NUMBERS, 1);
    rd_pb_bytes(p->out, P_MAPPING, p->msg.p, p->msg.n);
}

/* heap.pb.gz's sample types, Go's heap profile's. */
static void put_heap_types(pp *p)
{
    put_value_type(p, P_SAMPLE_TYPE, "alloc_objects", "count");
    put_value_type(p, P_SAMPLE_TYPE, "alloc_space", "bytes");
    put_value_type(p, P_SAMPLE_TYPE, "inuse_objects", "count");
    put_value_type(p, P_SAMPLE_TYPE, "inuse_space", "bytes");
    rd_pb_varint(p->out, P_DEFAULT_SAMPLE_TYPE, str(p, "inuse_space"));
    put_value_type(p, P_PERIOD_TYPE, "space", "bytes");
}

static void put_header(pp *p, uint64_t ns_total)
{
    char note[128];
    if (p->heap) {
        put_heap_types(p);
        goto common;
    }
    put_value_type(p, P_SAMPLE_TYPE, "time", "nanoseconds");
    put_value_type(p, P_SAMPLE_TYPE, "lines", "count");
    rd_pb_varint(p->out, P_DEFAULT_SAMPLE_TYPE, str(p, "time"));
    put_value_type(p, P_PERIOD_TYPE, "time", "nanoseconds");
common:
    rd_pb_varint(p->out, P_PERIOD, 1);
    if (p->info->time_nanos > 0) rd_pb_varint(p->out, P_TIME_NANOS, (uint64_t)p->info->time_nanos);
    rd_pb_varint(p->out, P_DURATION_NANOS, ns_total);
    if (p->info->cmd) rd_pb_varint(p->out, P_COMMENT, str(p, p->info->cmd));
    if (p->m->sampled_hz) /* record, or the pprof endpoint from outside */
        snprintf(note, sizeof note, "luatrace: sampled from outside at %u Hz (times are "
                 "%s, calls the entries they saw)", p->m->sampled_hz,
                 p->m->sampled_cpu ? "CPU time" : "samples");
    else if (p->heap)
        snprintf(note, sizeof note, "luatrace: %llu allocator calls, every one traced (not "
                 "sampled); inuse: live at the end (doc/memory.md)",
                 (unsigned long long)p->m->mem.records);
    else
        snprintf(note, sizeof note, "luatrace: %llu events, every call traced (not sampled)",
                 (unsigned long long)p->m->events);
    rd_pb_varint(p->out, P_COMMENT, str(p, note));
    if (p->m->dropped) {
        snprintf(note, sizeof note, "DROPPED EVENTS: %llu: times and counts are incomplete",
                 (unsigned long long)p->m->dropped);
        rd_pb_varint(p->out, P_COMMENT, str(p, note));
    }
    if (p->m->rehooked) {
        snprintf(note, sizeof note, "HOOK TAKEN OFF %llu times by C code: calls and lines "
                 "until the next tick are missing", (unsigned long long)p->m->rehooked);
        rd_pb_varint(p->out, P_COMMENT, str(p, note));
    }
}

static void pp_free(pp *p)
{
    rd_pb_free(&p->strs);
    rd_pb_free(&p->msg);
    rd_pb_free(&p->sub);
    rd_pb_free(&p->ids);
    free(p->soff);
    free(p->slen);
    free(p->shash);
    free(p->lkey);
    free(p->lid);
    free(p->used);
    free(p->first_tn);
    free(p->next_tn);
    rd_paths_free(&p->paths);
    free(p->fids);
    free(p->nodes);
    free(p->deep);
    free(p->deep_ix);
}

static int encode(const rd_model *m, const rd_pprof_info *info, rd_pb *out, int heap)
{
    static const rd_pprof_info none = {0};
    pp p = {.m = m, .info = info ? info : &none, .out = out, .root = m->nfunc, .cut = m->nfunc + 1,
            .heap = heap};
    uint64_t ns_total = 0;
    p.used = calloc((size_t)m->nfunc + 2, 1);
    p.fids = malloc(RD_PATH_MAX * sizeof *p.fids);
    p.nodes = malloc(RD_PATH_MAX * sizeof *p.nodes);
    if (!p.used || !p.fids || !p.nodes || rd_paths_init(&p.paths, m, 1))
        p.err = -ENOMEM;
    else
        str(&p, ""); /* string 0 must be empty */
    if (!p.err) put_samples(&p, &ns_total);
    for (uint32_t fid = 0; fid <= p.cut && !p.err; fid++)
        if (p.used[fid]) put_function(&p, fid);
    if (!p.err) {
        put_mapping(&p);
        put_header(&p, ns_total);
        rd_pb_append(out, p.strs.p, p.strs.n); /* already tagged entries */
    }
    int e = p.err       ? p.err
            : p.msg.err ? p.msg.err
            : p.sub.err ? p.sub.err
            : p.ids.err ? p.ids.err
                        : out->err;
    pp_free(&p);
    return e;
}

/* gzip (deflate with a gzip header: windowBits 15 + 16) of n bytes to out. */
static int gzip_to(const uint8_t *data, size_t n, FILE *out)
{
    z_stream z = {0};
    uint8_t buf[1 << 16];
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY))
        return -ENOMEM;
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)n; /* a profile stays far below 4 GiB */
    int r, e = 0;
    do {
        z.next_out = buf;
        z.avail_out = sizeof buf;
        r = deflate(&z, Z_FINISH);
        if (r == Z_STREAM_ERROR)
            e = -ENOMEM;
        else if (fwrite(buf, 1, sizeof buf - z.avail_out, out) != sizeof buf - z.avail_out)
            e = -EIO;
    } while (!e && r != Z_STREAM_END);
    deflateEnd(&z);
    return e;
}

int rd_pprof_encode(const rd_model *m, const rd_pprof_info *info, rd_pb *out)
{
    return encode(m, info, out, 0);
}

int rd_pprof_encode_heap(const rd_model *m, const rd_pprof_info *info, rd_pb *out)
{
    return encode(m, info, out, 1);
}

static int write_gz(const rd_model *m, const rd_pprof_info *info, FILE *out, int heap)
{
    rd_pb b = {0};
    int e = encode(m, info, &b, heap);
    if (!e && b.n > UINT32_MAX) e = -EFBIG;
    if (!e) e = gzip_to(b.p, b.n, out);
    rd_pb_free(&b);
    return e ? e : ferror(out) ? -EIO : 0;
}

int rd_pprof_write(const rd_model *m, const rd_pprof_info *info, FILE *out)
{
    return write_gz(m, info, out, 0);
}

int rd_pprof_write_heap(const rd_model *m, const rd_pprof_info *info, FILE *out)
{
    return write_gz(m, info, out, 1);
}
