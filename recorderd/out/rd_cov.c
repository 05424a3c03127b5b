/* rd_cov: coverage from models; LCOV, luacov stats and text writers.
 *
 * Design. rd_cov_add_model maps each source of a model to a file entry
 * (created on first sight: the file is compiled once and its executable
 * lines and prototypes recorded), then appends the model's line counts and
 * adds its functions' calls to the prototype with the same line range.
 * Appending is cheap and order-free, so several models (a merge) simply
 * add up; rd_cov_finish sorts and folds the duplicates once. */
#include "rd_cov.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rd_lines.h"
#include "rd_util.h"

#define SKIP UINT32_MAX            /* a source left out by the patterns */
#define LUACOV_MAX_LINE (1u << 24) /* a trace claiming more lines is corrupt */
#define WALK_MAX_DEPTH 64

static uint32_t hash_str(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

int rd_cov_init(rd_cov *c, const rd_cov_opts *opts)
{
    memset(c, 0, sizeof *c);
    if (opts)
        c->opts = *opts;
    c->capix = 64;
    c->ix = calloc(c->capix, sizeof *c->ix);
    return c->ix ? 0 : -ENOMEM;
}

static void file_free(rd_cov_file *f)
{
    for (uint32_t i = 0; i < f->nfn; i++)
        free(f->fn[i].name);
    free(f->fn);
    free(f->jit);
    free(f->ln);
    free(f->key);
    free(f->name);
    free(f->path);
    free(f->note);
}

void rd_cov_free(rd_cov *c)
{
    for (uint32_t i = 0; i < c->nf; i++)
        file_free(&c->f[i]);
    free(c->f);
    free(c->ix);
    free(c->basedir);
    if (c->L)
        lua_close(c->L);
    memset(c, 0, sizeof *c);
}

/* {====================================================================
 * Files by key */

static uint32_t *slot_of(const rd_cov *c, const char *key)
{
    uint32_t mask = c->capix - 1, i = hash_str(key) & mask;
    while (c->ix[i] && strcmp(c->f[c->ix[i] - 1].key, key))
        i = (i + 1) & mask;
    return &c->ix[i];
}

static int rehash(rd_cov *c)
{
    uint32_t *old = c->ix;
    c->ix = calloc((size_t)c->capix * 2, sizeof *c->ix);
    if (!c->ix) {
        c->ix = old;
        return -ENOMEM;
    }
    c->capix *= 2;
    free(old);
    for (uint32_t k = 0; k < c->nf; k++)
        *slot_of(c, c->f[k].key) = k + 1;
    return 0;
}

/* rd_grow for a file's lines and functions, from 4 elements, not 64: most
 * sources are small (a loadstring chunk has a line or two), and 100k of
 * them took 2.5 KB each of room never used. */
static int grow_small(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (!*cap && need < 4) {
        if (!(*p = calloc(4, elem)))
            return -ENOMEM;
        *cap = 4;
    }
    return rd_grow(p, cap, need, elem);
}

static int add_line(rd_cov_file *f, uint32_t line, uint8_t exec, uint64_t hits)
{
    if (grow_small((void **)&f->ln, &f->capln, f->nln, sizeof *f->ln))
        return -ENOMEM;
    f->ln[f->nln++] = (rd_cov_line){line, exec, hits};
    return 0;
}

static rd_cov_fn *new_fn(rd_cov_file *f, uint32_t line, uint32_t last)
{
    if (grow_small((void **)&f->fn, &f->capfn, f->nfn, sizeof *f->fn))
        return NULL;
    f->fn[f->nfn] = (rd_cov_fn){line, last, 0, 0, NULL};
    return &f->fn[f->nfn++];
}

static int same_name(const rd_cov_fn *fn, const char *name)
{
    return name && fn->name && !strcmp(fn->name, name);
}

/* The prototype of f a traced function of this line range and name (NULL:
 * none known) goes to. Several prototypes may share a range (`local a, b
 * = function() end, function() end`): each traced function of a model
 * takes one of them, first the one of its name (from an earlier model),
 * else one not named yet, else any free one; when the model has more
 * functions of the range than f has prototypes (the source changed), they
 * add up in the first. A range f lacks is created, and so is one more of
 * a range in a file that was not compiled (Lua 5.4's syntax, which
 * recorderd's Lua 5.1 cannot compile): its prototypes are the traced
 * functions, so each one the model has is another (the second of two on
 * one line was counted as the first, and NEST's count then added a
 * never-called one in its place). */
static rd_cov_fn *fn_for(rd_cov_file *f, uint32_t line, uint32_t last, const char *name,
                         uint32_t model)
{
    rd_cov_fn *pick[4] = {NULL, NULL, NULL, NULL}; /* by name, unnamed, free, any */
    for (uint32_t i = 0; i < f->nfn; i++) {
        rd_cov_fn *fn = &f->fn[i];
        if (fn->line != line || fn->last != last)
            continue;
        int free_ = fn->model != model;
        int k = free_ && same_name(fn, name) ? 0 : free_ && !fn->name ? 1 : free_ ? 2 : 3;
        if (!pick[k])
            pick[k] = fn;
    }
    for (int k = 0; k < 4; k++)
        if (pick[k] && (k < 3 || f->exact))
            return pick[k];
    return new_fn(f, line, last);
}

/* Records the executable lines and prototypes of f's file. A file that
 * cannot be compiled keeps its hits, with the reason as its note. */
static int compile_file(rd_cov *c, rd_cov_file *f)
{
    char err[512];
    rd_lines ls;
    if (!c->L && !(c->L = rd_lines_state()))
        return -ENOMEM;
    int e = rd_lines_file(c->L, f->path, &ls, err, sizeof err);
    if (e)
        return e == -ENOMEM ? e : (f->note = strdup(err)) ? 0 : -ENOMEM;
    f->exact = 1;
    for (uint32_t i = 0; !e && i < ls.nline; i++)
        e = add_line(f, ls.line[i], 1, 0);
    for (uint32_t i = 0; !e && i < ls.nproto; i++) /* each, even on a shared range */
        if (!new_fn(f, ls.proto[i].linedefined, ls.proto[i].lastlinedefined))
            e = -ENOMEM;
    rd_lines_free(&ls);
    return e;
}

static int new_file(rd_cov *c, const char *key, const char *name, const char *path,
                    const char *note, int chunk, uint32_t *ix)
{
    if ((c->nf + 1) * 2 > c->capix && rehash(c))
        return -ENOMEM;
    if (rd_grow((void **)&c->f, &c->capf, c->nf, sizeof *c->f))
        return -ENOMEM;
    rd_cov_file *f = &c->f[c->nf];
    *f = (rd_cov_file){.key = strdup(key), .name = strdup(name)};
    f->path = path ? strdup(path) : NULL;
    f->note = note ? strdup(note) : NULL;
    f->chunk = chunk;
    int e = !f->key || !f->name || (path && !f->path) || (note && !f->note) ? -ENOMEM : 0;
    if (!e && path)
        e = compile_file(c, f);
    if (e) {
        file_free(f);
        return e;
    }
    *slot_of(c, key) = ++c->nf;
    *ix = c->nf - 1;
    return 0;
}

/* }==================================================================== */

/* {====================================================================
 * Sources: which file a traced source names */

typedef struct source {
    int chunk; /* a string chunk or a "=name": no file */
    char key[64 + PATH_MAX];
    char path[PATH_MAX]; /* absolute, "" if not a file */
    char note[PATH_MAX + 256];
} source;

/* base/name with "." and ".." folded and "//" squeezed, as people write
 * paths (the kernel may resolve ".." after a symlink elsewhere: checked by
 * the caller). */
static int normalize(const char *base, const char *name, char *out, size_t cap)
{
    char buf[2 * PATH_MAX + 2];
    if (snprintf(buf, sizeof buf, "%s/%s", name[0] == '/' ? "" : base, name) >= (int)sizeof buf)
        return -ENAMETOOLONG;
    size_t n = 0;
    for (char *save = NULL, *p = strtok_r(buf, "/", &save); p; p = strtok_r(NULL, "/", &save)) {
        if (!strcmp(p, "."))
            continue;
        if (!strcmp(p, "..")) {
            while (n && out[--n] != '/')
                ;
            continue;
        }
        size_t l = strlen(p);
        if (n + l + 2 > cap)
            return -ENAMETOOLONG;
        out[n++] = '/';
        memcpy(out + n, p, l);
        n += l;
    }
    if (!n)
        out[n++] = '/';
    out[n] = 0;
    return 0;
}

static int is_string_chunk(const char *name)
{
    return !name[0] || !strncmp(name, "[string \"", 9) || !strcmp(name, "?");
}

/* LCOV and luacov stats are line-based: a name with a line break cannot
 * go into them. */
static int has_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20)
            return 1;
    return 0;
}

/* file: some function of this source was read from a file (its chunk
 * name began with '@'); else it is a string chunk or a "=name". */
static void resolve(const char *name, int file, const char *base, source *s)
{
    char cwd[PATH_MAX], raw[PATH_MAX];
    struct stat st, st2;
    s->path[0] = s->note[0] = 0;
    s->chunk = !file || is_string_chunk(name);
    /* "s:": a "=name" chunk is apart from a file of that name gone since */
    snprintf(s->key, sizeof s->key, "%s:%s", s->chunk ? "s" : "c", name);
    if (s->chunk) {
        snprintf(s->note, sizeof s->note, "a chunk loaded from a string%s: no source file",
                 file ? "" : " or named with '='");
        return;
    }
    if (!base)
        base = getcwd(cwd, sizeof cwd) ? cwd : "/";
    int se = snprintf(raw, sizeof raw, "%s%s%s", name[0] == '/' ? "" : base,
                      name[0] == '/' ? "" : "/", name) >= (int)sizeof raw ? ENAMETOOLONG : 0;
    if (!se && stat(raw, &st) < 0)
        se = errno;
    if (!se && has_control(raw))
        se = EILSEQ;
    if (se || !S_ISREG(st.st_mode)) {
        snprintf(s->note, sizeof s->note, "no source file: %s: %s (a chunk not loaded from a "
                 "file, or a file gone since)", raw, se ? strerror(se) : "not a regular file");
        return;
    }
    snprintf(s->key, sizeof s->key, "f:%llx:%llx", (unsigned long long)st.st_dev,
             (unsigned long long)st.st_ino);
    if (normalize(base, name, s->path, sizeof s->path) || stat(s->path, &st2) < 0 ||
        st2.st_dev != st.st_dev || st2.st_ino != st.st_ino) {
        if (!realpath(raw, s->path))
            snprintf(s->path, sizeof s->path, "%s", raw);
    }
}

/* A pattern matches a string, or a directory above it ("dir" covers
 * "dir/x.lua"). */
static int pat_match(const char *pat, const char *s)
{
    char dir[PATH_MAX + 3];
    if (!fnmatch(pat, s, 0))
        return 1;
    size_t n = strlen(pat);
    while (n > 1 && pat[n - 1] == '/')
        n--;
    return n < PATH_MAX && snprintf(dir, sizeof dir, "%.*s/*", (int)n, pat) > 0 &&
           !fnmatch(dir, s, 0);
}

/* Patterns see the source as traced (without a leading "./") and, for a
 * file, its absolute path; a pattern's own leading "./" goes too (--include
 * ./src matches src/app.lua, as the shell's ./src names that directory). */
static int any_match(const char *const *pats, unsigned n, const char *name, const char *path)
{
    while (name[0] == '.' && name[1] == '/')
        name += 2;
    for (unsigned i = 0; i < n; i++) {
        const char *pat = pats[i];
        while (pat[0] == '.' && pat[1] == '/' && pat[2])
            pat += 2;
        if (pat_match(pat, name) || (path[0] && pat_match(pat, path)))
            return 1;
    }
    return 0;
}

static int wanted(const rd_cov *c, const char *name, const char *path)
{
    if (c->opts.ninclude && !any_match(c->opts.include, c->opts.ninclude, name, path))
        return 0;
    return !any_match(c->opts.exclude, c->opts.nexclude, name, path);
}

/* The file index of source name, or SKIP. Returns 0 or -ENOMEM. */
static int map_source(rd_cov *c, const char *name, int file, const char *base, uint32_t *ix)
{
    source *s = malloc(sizeof *s);
    if (!s)
        return -ENOMEM;
    resolve(name, file, base, s);
    int e = 0;
    uint32_t k = *slot_of(c, s->key);
    if (!wanted(c, name, s->path))
        *ix = SKIP;
    else if (k)
        *ix = k - 1;
    else
        e = new_file(c, s->key, name, s->path[0] ? s->path : NULL, s->note[0] ? s->note : NULL,
                     s->chunk, ix);
    free(s);
    return e;
}

/* }==================================================================== */

/* {====================================================================
 * Adding a model */

typedef struct adder {
    rd_cov *c;
    const rd_model *m;
    uint32_t *slotf; /* source slot -> file index + 1, or SKIP */
    uint8_t *ran;   /* fid had line events */
} adder;

/* The name a slot's source goes by: as traced; for a relative file read
 * in another directory (DIR), its path from base when it is under base,
 * else its absolute path. Relative names are base's. */
static const char *slot_name(const rd_model *m, uint32_t slot, const char *base, char *buf,
                             size_t cap)
{
    const char *src = rd_model_slot_src(m, slot), *dir = rd_model_slot_dir(m, slot);
    if (!dir)
        return src;
    while (src[0] == '.' && src[1] == '/')
        src += 2;
    size_t n = base ? strlen(base) : 0;
    while (n > 1 && base[n - 1] == '/')
        n--;
    if (n > 1 && !strncmp(dir, base, n) && (dir[n] == '/' || !dir[n])) {
        const char *rest = dir + n + (dir[n] == '/');
        snprintf(buf, cap, "%s%s%s", rest, *rest ? "/" : "", src);
    } else {
        snprintf(buf, cap, "%s/%s", dir, src);
    }
    return buf;
}

/* Sources by slot (rd_model_src_slot): a "=m.lua" chunk and the file
 * m.lua share a string id, never a file entry. */
static int map_sources(adder *a, const char *base)
{
    const rd_model *m = a->m;
    int e = 0;
    for (uint32_t fid = 1; !e && fid < m->nfunc; fid++) {
        uint32_t slot = rd_model_src_slot(m, fid), ix = SKIP;
        if (slot == UINT32_MAX || a->slotf[slot])
            continue;
        char buf[PATH_MAX];
        e = map_source(a->c, slot_name(m, slot, base, buf, sizeof buf), !RD_SLOT_NOFILE(slot),
                       base, &ix);
        a->slotf[slot] = ix == SKIP ? SKIP : ix + 1;
    }
    return e;
}

/* The file of fid's source, or NULL (C, unknown, left out). */
static rd_cov_file *file_of(const adder *a, uint32_t fid)
{
    uint32_t slot = rd_model_src_slot(a->m, fid);
    uint32_t k = slot == UINT32_MAX ? 0 : a->slotf[slot];
    return k && k != SKIP ? &a->c->f[k - 1] : NULL;
}

static int add_lines(adder *a)
{
    const rd_model *m = a->m;
    for (uint32_t i = 0; i < m->capline; i++) {
        const rd_line *l = &m->line[i];
        rd_cov_file *f = l->fid && l->line ? file_of(a, l->fid) : NULL;
        if (!f || !l->hits)
            continue;
        a->ran[l->fid] = 1;
        if (add_line(f, l->line, 0, l->hits))
            return -ENOMEM;
    }
    return 0;
}

/* LuaJIT's lines (LINES) of the functions of files, exec 2 (rd_cov.h);
 * rd_cov_finish lets them replace Lua 5.1's in the functions' ranges. */
static int add_jit_lines(adder *a)
{
    const rd_model *m = a->m;
    for (uint32_t fid = 1; fid < m->nfunc; fid++) {
        const rd_func *mf = &m->func[fid];
        rd_cov_file *f = mf->jl_n ? file_of(a, fid) : NULL;
        if (!f || !f->path)
            continue; /* no file: no executable lines at all */
        int all = mf->what == LT_WHAT_MAIN;
        rd_cov_span r = {all ? 1 : mf->linedefined, all ? LUACOV_MAX_LINE : mf->lastlinedefined};
        f->jit_all |= all;
        if (!all && grow_small((void **)&f->jit, &f->capjit, f->njit, sizeof *f->jit))
            return -ENOMEM;
        if (!all)
            f->jit[f->njit++] = r;
        for (uint32_t k = 0; k < mf->jl_n; k++) {
            const rd_jlines *j = &m->jl[mf->jl_first + k];
            for (uint32_t b = 0; b < 64; b++) {
                uint64_t l = (uint64_t)j->line + b;
                if ((j->mask >> b & 1) && l >= r.line && l <= r.last && add_line(f, (uint32_t)l, 2, 0))
                    return -ENOMEM;
            }
        }
    }
    return 0;
}

/* A traced function's name, or NULL when it has none worth keeping. As
 * the profile names it (rd_model_name): two functions of one range and
 * name in one model are NAME and NAME#2 there, and here. */
static char *traced_name(const rd_model *m, uint32_t fid)
{
    char buf[RD_LABEL_MAX];
    const char *raw = rd_model_string(m, m->func[fid].name_sid);
    if (!strcmp(raw, "?") || !strcmp(raw, "function"))
        return NULL;
    rd_model_name(m, fid, buf, sizeof buf);
    return strdup(buf);
}

/* Calls go to a prototype with the function's line range (fn_for). A
 * function already running when tracing began has line events but no
 * call: it counts as entered once, so that FNH never misses a function
 * that ran. */
static int add_functions(adder *a)
{
    const rd_model *m = a->m;
    uint32_t model = ++a->c->nmodels;
    for (uint32_t fid = 1; fid < m->nfunc; fid++) {
        rd_cov_file *f = file_of(a, fid);
        if (!f)
            continue;
        const rd_func *mf = &m->func[fid];
        char *name = traced_name(m, fid);
        rd_cov_fn *fn = fn_for(f, mf->linedefined, mf->lastlinedefined, name, model);
        if (!fn) {
            free(name);
            return -ENOMEM;
        }
        fn->model = model;
        fn->calls += mf->calls ? mf->calls : a->ran[fid];
        if (!fn->name)
            fn->name = name;
        else
            free(name);
    }
    return 0;
}

/* {====================================================================
 * Functions never called in files Lua 5.1 cannot compile (NEST, 5.4) */

/* A function's range in file f (fid 0: one f has already). */
typedef struct nested {
    uint32_t f, line, last, fid;
} nested;

static int cmp_nested(const void *a, const void *b)
{
    const nested *x = a, *y = b;
    if (x->f != y->f)
        return x->f < y->f ? -1 : 1;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    if (x->last != y->last)
        return x->last < y->last ? -1 : 1;
    return x->fid < y->fid ? -1 : x->fid > y->fid;
}

static int same_range(const nested *x, const nested *y)
{
    return x->f == y->f && x->line == y->line && x->last == y->last;
}

/* The nested ranges of files with no executable lines of Lua 5.1's, then
 * the ranges their functions have (fid 0). */
static nested *nested_ranges(adder *a, uint32_t *n)
{
    const rd_model *m = a->m;
    uint8_t *mark = calloc(a->c->nf + 1, 1);
    nested *v = mark ? malloc(((size_t)m->nnest + 1) * sizeof *v) : NULL;
    uint32_t k = 0, cap = m->nnest + 1;
    for (uint32_t i = 0; v && i < m->nnest; i++) {
        const rd_nest *e = &m->nest[i];
        const rd_cov_file *f = file_of(a, e->fid);
        if (f && f->path && !f->exact) {
            v[k++] = (nested){(uint32_t)(f - a->c->f), e->line, e->last, e->fid};
            mark[f - a->c->f] = 1;
        }
    }
    for (uint32_t fi = 0; v && k && fi < a->c->nf; fi++)
        for (uint32_t j = 0; mark[fi] && j < a->c->f[fi].nfn; j++) {
            if (k == cap && rd_grow((void **)&v, &cap, k, sizeof *v)) {
                free(v);
                v = NULL;
                break;
            }
            v[k++] = (nested){fi, a->c->f[fi].fn[j].line, a->c->f[fi].fn[j].last, 0};
        }
    free(mark);
    *n = k;
    return v;
}

/* Each range a function nested in another came with gets as many
 * prototypes in its file as it has in the function that has the most
 * of them (two functions on one line), never called unless traced. */
static int add_nested(adder *a)
{
    uint32_t n = 0, i = 0;
    if (!a->m->nnest)
        return 0;
    nested *v = nested_ranges(a, &n);
    if (!v)
        return -ENOMEM;
    qsort(v, n, sizeof *v, cmp_nested);
    while (i < n) {
        uint32_t have = 0, most = 0, j = i;
        while (j < n && same_range(&v[i], &v[j])) { /* a run per function */
            uint32_t run = 0, fid = v[j].fid;
            for (; j < n && same_range(&v[i], &v[j]) && v[j].fid == fid; j++)
                run++;
            if (!fid)
                have = run;
            else if (run > most)
                most = run;
        }
        for (; have < most; have++)
            if (!new_fn(&a->c->f[v[i].f], v[i].line, v[i].last)) {
                free(v);
                return -ENOMEM;
            }
        i = j;
    }
    free(v);
    return 0;
}

/* }==================================================================== */

int rd_cov_add_model(rd_cov *c, const rd_model *m, const char *basedir)
{
    adder a = {c, m, calloc(RD_SLOTS(m) + 1, sizeof(uint32_t)), calloc(m->nfunc + 1, 1)};
    int e = a.slotf && a.ran ? 0 : -ENOMEM;
    if (!e && basedir && !c->basedir && !(c->basedir = strdup(basedir)))
        e = -ENOMEM;
    if (!e)
        e = map_sources(&a, basedir);
    if (!e)
        e = add_lines(&a);
    if (!e)
        e = add_jit_lines(&a);
    if (!e)
        e = add_functions(&a);
    if (!e)
        e = add_nested(&a);
    free(a.slotf);
    free(a.ran);
    return e;
}

uint32_t *rd_cov_files_of(const rd_cov *c, const rd_model *m, const char *basedir)
{
    uint32_t *v = calloc((size_t)RD_SLOTS(m) + 1, sizeof *v);
    uint8_t *done = calloc((size_t)RD_SLOTS(m) + 1, 1);
    source *s = malloc(sizeof *s);
    for (uint32_t fid = 1; v && done && s && fid < m->nfunc; fid++) {
        uint32_t slot = rd_model_src_slot(m, fid);
        if (slot == UINT32_MAX || done[slot])
            continue;
        done[slot] = 1;
        char buf[PATH_MAX];
        const char *name = slot_name(m, slot, basedir, buf, sizeof buf);
        resolve(name, !RD_SLOT_NOFILE(slot), basedir, s);
        v[slot] = wanted(c, name, s->path) ? *slot_of(c, s->key) : 0;
    }
    if (!done || !s) {
        free(v);
        v = NULL;
    }
    free(done);
    free(s);
    return v;
}

/* }==================================================================== */

/* {====================================================================
 * Files never loaded */

static int add_untested_file(rd_cov *c, const char *path)
{
    while (path[0] == '.' && path[1] == '/')
        path += 2;
    source *s = malloc(sizeof *s);
    if (!s)
        return -ENOMEM;
    resolve(path, 1, NULL, s);
    uint32_t ix;
    int e = 0;
    if (s->path[0] && !*slot_of(c, s->key) && wanted(c, path, s->path))
        e = new_file(c, s->key, path, s->path, NULL, 0, &ix);
    free(s);
    return e;
}

static int has_lua_suffix(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && !strcmp(name + n - 4, ".lua");
}

/* Depth first under path (a buffer of PATH_MAX, modified and restored). */
static int walk(rd_cov *c, char *path, int depth, char *err, size_t cap)
{
    DIR *d = opendir(path);
    if (!d) {
        int e = errno;
        snprintf(err, cap, "cannot read directory %s: %s", path, strerror(e));
        return depth ? 0 : -e; /* below the top: skip what we may not read */
    }
    size_t len = strlen(path);
    int e = 0;
    for (struct dirent *de; !e && (de = readdir(d));) {
        struct stat st;
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
            snprintf(path + len, PATH_MAX - len, "/%s", de->d_name) >= (int)(PATH_MAX - len))
            continue;
        if (lstat(path, &st) < 0)
            continue;
        if (S_ISDIR(st.st_mode) && depth < WALK_MAX_DEPTH)
            e = walk(c, path, depth + 1, err, cap);
        else if (S_ISREG(st.st_mode) && has_lua_suffix(de->d_name))
            e = add_untested_file(c, path);
    }
    path[len] = 0;
    closedir(d);
    if (e == -ENOMEM)
        snprintf(err, cap, "out of memory");
    return e;
}

int rd_cov_add_untested(rd_cov *c, const char *dir, char *err, size_t cap)
{
    char path[PATH_MAX];
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    if (n >= sizeof path) {
        snprintf(err, cap, "%s: path too long", dir);
        return -ENAMETOOLONG;
    }
    memcpy(path, dir, n);
    path[n] = 0;
    return walk(c, path, 0, err, cap);
}

/* }==================================================================== */

/* {====================================================================
 * Finishing: sorted lines and functions, unique names */

static int cmp_line(const void *a, const void *b)
{
    uint32_t x = ((const rd_cov_line *)a)->line, y = ((const rd_cov_line *)b)->line;
    return x < y ? -1 : x > y;
}

/* By range, then label (rd_cov_finish labels first), the most called
 * first: prototypes of one range and label are adjacent, in an order that
 * does not depend on the order of the models. */
static int cmp_fn(const void *a, const void *b)
{
    const rd_cov_fn *x = a, *y = b;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    if (x->last != y->last)
        return x->last < y->last ? -1 : 1;
    int c = strcmp(x->name ? x->name : "", y->name ? y->name : "");
    return c ? c : x->calls > y->calls ? -1 : x->calls < y->calls;
}

static int cmp_span(const void *a, const void *b)
{
    const rd_cov_span *x = a, *y = b;
    return x->line != y->line ? (x->line < y->line ? -1 : 1) : x->last < y->last ? -1 : x->last > y->last;
}

/* Whether LuaJIT's lines stand for Lua 5.1's at line: strictly inside a
 * range that came, where only that function and those nested in it have
 * code (its first and last lines may hold its parent's too). */
static int jit_knows(const rd_cov_file *f, uint32_t line)
{
    if (f->jit_all)
        return 1;
    for (uint32_t i = 0; i < f->njit && f->jit[i].line < line; i++)
        if (line < f->jit[i].last)
            return 1;
    return 0;
}

/* Lua 5.1's executable lines where LuaJIT's are known leave, LuaJIT's
 * become plain executable lines; with a main chunk's, the file is exact
 * even if Lua 5.1 cannot compile it (LuaJIT's own syntax). */
static void take_jit_lines(rd_cov_file *f)
{
    uint32_t w = 0;
    if (!f->jit_all && !f->njit)
        return;
    if (f->njit > 1) { /* sorted and unique: each model adds its own */
        qsort(f->jit, f->njit, sizeof *f->jit, cmp_span);
        for (uint32_t i = 0; i < f->njit; i++)
            if (!w || cmp_span(&f->jit[w - 1], &f->jit[i]))
                f->jit[w++] = f->jit[i];
        f->njit = w;
        w = 0;
    }
    for (uint32_t i = 0; i < f->nln; i++) {
        rd_cov_line l = f->ln[i];
        if (l.exec == 1 && jit_knows(f, l.line))
            continue;
        l.exec = l.exec != 0;
        f->ln[w++] = l;
    }
    f->nln = w;
    if (f->jit_all && !f->exact) {
        f->exact = 1;
        free(f->note);
        f->note = NULL;
    }
}

static void fold_lines(rd_cov_file *f)
{
    uint32_t w = 0;
    if (f->nln > 1) /* qsort wants a valid base even for no elements */
        qsort(f->ln, f->nln, sizeof *f->ln, cmp_line);
    for (uint32_t i = 0; i < f->nln; i++) {
        if (w && f->ln[w - 1].line == f->ln[i].line) {
            f->ln[w - 1].hits += f->ln[i].hits;
            f->ln[w - 1].exec |= f->ln[i].exec;
        } else {
            f->ln[w++] = f->ln[i];
        }
    }
    f->nln = w;
    f->changed = 0;
    for (uint32_t i = 0; f->exact && i < w; i++)
        if (!f->ln[i].exec) { /* ran, yet no bytecode now: keep the count */
            f->ln[i].exec = 1;
            f->changed++;
        }
}

/* LCOV reads "FN:<line>,<name>" up to the end of the line and cuts a name
 * at ',': such bytes become '_'. */
static char *label_of(const rd_cov_fn *fn)
{
    char buf[512];
    if (fn->name)
        snprintf(buf, sizeof buf, "%s", fn->name);
    else if (fn->line == 0)
        snprintf(buf, sizeof buf, "main chunk");
    else
        snprintf(buf, sizeof buf, "function@%u", fn->line);
    for (char *p = buf; *p; p++)
        if (*p == ',' || (unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '_';
    return strdup(buf);
}

/* A function's label; "?" only if memory ran out while naming it. */
static const char *label(const rd_cov_fn *fn)
{
    return fn->name ? fn->name : "?";
}

static int cmp_range_label(const rd_cov_fn *x, const rd_cov_fn *y)
{
    return x->line != y->line || x->last != y->last || strcmp(label(x), label(y));
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(label(*(rd_cov_fn *const *)a), label(*(rd_cov_fn *const *)b));
}

/* Renames every function whose name another one shares: NAME@LINE, then
 * NAME@LINE-LAST, then NAME#k. Returns the number of clashes seen. */
static uint32_t unclash(rd_cov_file *f, rd_cov_fn **v, int round)
{
    uint32_t clashes = 0;
    for (uint32_t i = 0; i < f->nfn; i++)
        v[i] = &f->fn[i];
    qsort(v, f->nfn, sizeof *v, cmp_name);
    for (uint32_t i = 0, j; i < f->nfn; i = j) {
        for (j = i + 1; j < f->nfn && !strcmp(label(v[i]), label(v[j])); j++)
            ;
        for (uint32_t k = i; j - i > 1 && k < j; k++, clashes++) {
            char buf[600];
            if (round == 0)
                snprintf(buf, sizeof buf, "%s@%u", label(v[k]), v[k]->line);
            else if (round == 1)
                snprintf(buf, sizeof buf, "%s@%u-%u", label(v[k]), v[k]->line, v[k]->last);
            else
                snprintf(buf, sizeof buf, "%s#%u", label(v[k]), k - i + 1);
            char *n = strdup(buf);
            if (n) {
                free(v[k]->name);
                v[k]->name = n;
            }
        }
    }
    return clashes;
}

static void rename_fn(rd_cov_fn *fn, const char *fmt, const char *name, uint32_t k)
{
    char buf[600];
    snprintf(buf, sizeof buf, fmt, name, k);
    char *n = strdup(buf);
    if (n) {
        free(fn->name);
        fn->name = n;
    }
}

/* Prototypes of one range and label (sorted by cmp_fn): the first keeps
 * it, the next become LABEL#2, LABEL#3, as the profile's labels do. */
static void number_same_range(rd_cov_file *f)
{
    for (uint32_t i = 0, j; i < f->nfn; i = j) {
        for (j = i + 1; j < f->nfn && !cmp_range_label(&f->fn[i], &f->fn[j]); j++)
            ;
        for (uint32_t k = i + 1; k < j; k++)
            rename_fn(&f->fn[k], "%s#%u", label(&f->fn[i]), k - i + 1);
    }
}

static void name_functions(rd_cov_file *f)
{
    for (uint32_t i = 0; i < f->nfn; i++) {
        char *l = label_of(&f->fn[i]);
        if (l) {
            free(f->fn[i].name);
            f->fn[i].name = l;
        }
    }
    if (f->nfn > 1)
        qsort(f->fn, f->nfn, sizeof *f->fn, cmp_fn);
    number_same_range(f);
    rd_cov_fn **v = malloc((f->nfn + 1) * sizeof *v);
    for (int round = 0; v && round < 3 && unclash(f, v, round); round++)
        ;
    free(v);
}

static const char *shown(const rd_cov_file *f)
{
    return f->path ? f->path : f->name;
}

static int cmp_file(const void *a, const void *b)
{
    return strcmp(shown(a), shown(b));
}

void rd_cov_finish(rd_cov *c)
{
    for (uint32_t i = 0; i < c->nf; i++) {
        take_jit_lines(&c->f[i]);
        fold_lines(&c->f[i]);
        name_functions(&c->f[i]);
    }
    if (c->nf > 1)
        qsort(c->f, c->nf, sizeof *c->f, cmp_file);
    memset(c->ix, 0, (size_t)c->capix * sizeof *c->ix);
    for (uint32_t k = 0; k < c->nf; k++)
        *slot_of(c, c->f[k].key) = k + 1;
}

rd_cov_total rd_cov_file_total(const rd_cov_file *f)
{
    rd_cov_total t = {0, 0, 0, 0};
    for (uint32_t i = 0; i < f->nln; i++) {
        t.lines += f->ln[i].exec;
        t.hit += f->ln[i].exec && f->ln[i].hits;
    }
    for (uint32_t i = 0; i < f->nfn; i++) {
        t.fns++;
        t.fns_hit += f->fn[i].calls > 0;
    }
    return t;
}

rd_cov_total rd_cov_total_of(const rd_cov *c)
{
    rd_cov_total t = {0, 0, 0, 0};
    for (uint32_t i = 0; i < c->nf; i++) {
        if (!c->f[i].exact)
            continue;
        rd_cov_total ft = rd_cov_file_total(&c->f[i]);
        t.lines += ft.lines;
        t.hit += ft.hit;
        t.fns += ft.fns;
        t.fns_hit += ft.fns_hit;
    }
    return t;
}

/* }==================================================================== */

/* {====================================================================
 * Writers */

const char *rd_cov_truncated_note(const rd_cov *c, char *buf, size_t cap)
{
    if (!c->truncated)
        snprintf(buf, cap, "%s", "");
    else if (c->nmodels <= 1)
        snprintf(buf, cap, "INCOMPLETE: the trace was cut short (the program was killed, or "
                 "vanished without ending its trace): counts stop where it ends");
    else
        snprintf(buf, cap, "INCOMPLETE: %u of the %u traces were cut short (the program was "
                 "killed, or vanished without ending its trace): their counts stop where they "
                 "end", c->truncated, c->nmodels);
    return buf;
}

/* f's SF: relative to the working directory when under it, as luacov
 * writes and CI services match to the project's files with no mapping;
 * else absolute (genhtml, run from that directory, reads both). */
static const char *lcov_sf(const rd_cov *c, const rd_cov_file *f)
{
    size_t n = c->basedir ? strlen(c->basedir) : 0;
    while (n > 1 && c->basedir[n - 1] == '/')
        n--;
    if (n > 1 && !strncmp(f->path, c->basedir, n) && f->path[n] == '/' && f->path[n + 1])
        return f->path + n + 1;
    return f->path;
}

int rd_cov_write_lcov(const rd_cov *c, FILE *out)
{
    char note[256];
    rd_cov_total all = rd_cov_total_of(c);
    /* lcov skips lines it does not know; a file of no record stays empty,
     * as lcov reads one (it refuses a file of a comment only) */
    if (rd_cov_truncated_note(c, note, sizeof note)[0] && (all.lines || all.fns))
        fprintf(out, "# luatrace: %s\n", note);
    for (uint32_t i = 0; i < c->nf; i++) {
        const rd_cov_file *f = &c->f[i];
        if (!f->exact)
            continue; /* genhtml must be able to read every SF */
        rd_cov_total t = rd_cov_file_total(f);
        fprintf(out, "TN:\nSF:%s\n", lcov_sf(c, f));
        for (uint32_t k = 0; k < f->nfn; k++) /* LCOV lines start at 1 */
            fprintf(out, "FN:%u,%s\n", f->fn[k].line ? f->fn[k].line : 1, label(&f->fn[k]));
        for (uint32_t k = 0; k < f->nfn; k++)
            fprintf(out, "FNDA:%llu,%s\n", (unsigned long long)f->fn[k].calls, label(&f->fn[k]));
        fprintf(out, "FNF:%llu\nFNH:%llu\n", (unsigned long long)t.fns,
                (unsigned long long)t.fns_hit);
        for (uint32_t k = 0; k < f->nln; k++)
            if (f->ln[k].exec)
                fprintf(out, "DA:%u,%llu\n", f->ln[k].line, (unsigned long long)f->ln[k].hits);
        fprintf(out, "LF:%llu\nLH:%llu\nend_of_record\n", (unsigned long long)t.lines,
                (unsigned long long)t.hit);
    }
    return ferror(out) ? -EIO : 0;
}

/* luacov's key: the chunk name without a leading "./". */
static const char *luacov_key(const rd_cov_file *f)
{
    const char *k = f->name;
    while (k[0] == '.' && k[1] == '/')
        k += 2;
    return k;
}

static int cmp_luacov(const void *a, const void *b)
{
    return strcmp(luacov_key(*(rd_cov_file *const *)a), luacov_key(*(rd_cov_file *const *)b));
}

/* Two lines per file: "MAX:NAME", then the counts of lines 1..MAX, each
 * followed by one space (luacov drops a last count without it). */
static void luacov_file(const rd_cov_file *f, FILE *out)
{
    uint32_t max = 0, k = 0;
    for (uint32_t i = 0; i < f->nln; i++)
        if (f->ln[i].line <= LUACOV_MAX_LINE && f->ln[i].line > max)
            max = f->ln[i].line;
    fprintf(out, "%u:%s\n", max, luacov_key(f));
    for (uint32_t line = 1; line <= max; line++) {
        while (k < f->nln && f->ln[k].line < line)
            k++;
        fprintf(out, "%llu ",
                (unsigned long long)(k < f->nln && f->ln[k].line == line ? f->ln[k].hits : 0));
    }
    fputc('\n', out);
}

int rd_cov_write_luacov(const rd_cov *c, FILE *out)
{
    const rd_cov_file **v = malloc((c->nf + 1) * sizeof *v);
    uint32_t n = 0;
    if (!v)
        return -ENOMEM;
    for (uint32_t i = 0; i < c->nf; i++)
        if (c->f[i].exact) /* luacov's reporters open every file they list */
            v[n++] = &c->f[i];
    qsort(v, n, sizeof *v, cmp_luacov);
    for (uint32_t i = 0; i < n; i++)
        luacov_file(v[i], out);
    free(v);
    return ferror(out) ? -EIO : 0;
}

/* ---- coverage.txt ---- */

static void pct(char *buf, size_t cap, uint64_t part, uint64_t all)
{
    if (all)
        snprintf(buf, cap, "%.2f%%", 100.0 * (double)part / (double)all);
    else
        snprintf(buf, cap, "-");
}

static void summary_row(FILE *out, int w, const char *name, rd_cov_total t)
{
    char lp[16], fp[16], fns[48];
    pct(lp, sizeof lp, t.hit, t.lines);
    pct(fp, sizeof fp, t.fns_hit, t.fns);
    snprintf(fns, sizeof fns, "%llu/%llu", (unsigned long long)t.fns_hit,
             (unsigned long long)t.fns);
    fprintf(out, "%-*s %8llu %8llu %9s %13s %9s\n", w, name, (unsigned long long)t.hit,
            (unsigned long long)(t.lines - t.hit), lp, fns, fp);
}

static void rule(FILE *out, int n, char ch)
{
    for (int i = 0; i < n; i++)
        fputc(ch, out);
    fputc('\n', out);
}

/* coverage.txt is read by people, often on a terminal: every name in it
 * goes through rd_printable. */
static void text_summary(const rd_cov *c, FILE *out)
{
    char name[PATH_MAX];
    int w = 5;
    for (uint32_t i = 0; i < c->nf; i++)
        if (c->f[i].exact && (int)strlen(shown(&c->f[i])) > w)
            w = (int)strlen(shown(&c->f[i]));
    fprintf(out, "%-*s %8s %8s %9s %13s %9s\n", w, "File", "Hits", "Missed", "Coverage",
            "Functions", "Fn cov");
    rule(out, w + 52, '-');
    for (uint32_t i = 0; i < c->nf; i++)
        if (c->f[i].exact)
            summary_row(out, w, rd_printable(shown(&c->f[i]), name, sizeof name),
                        rd_cov_file_total(&c->f[i]));
    rule(out, w + 52, '-');
    summary_row(out, w, "Total", rd_cov_total_of(c));
}

static uint32_t lines_hit(const rd_cov_file *f)
{
    uint32_t hit = 0;
    for (uint32_t k = 0; k < f->nln; k++)
        hit += f->ln[k].hits > 0;
    return hit;
}

/* A chunk that is no file and had no line event (the LUA_INIT chunk that
 * started tracing) has nothing to show. */
static int worth_showing(const rd_cov_file *f)
{
    return f->exact || f->path || lines_hit(f);
}

static void text_others(const rd_cov *c, FILE *out)
{
    char name[PATH_MAX], note[PATH_MAX + 256];
    int head = 0;
    for (uint32_t i = 0; i < c->nf; i++) {
        const rd_cov_file *f = &c->f[i];
        if (f->exact || !worth_showing(f))
            continue;
        if (!head++)
            fprintf(out, "\nNot in the totals (no executable lines known; hit lines only):\n");
        uint32_t hit = lines_hit(f);
        fprintf(out, "  %s: %u line%s hit; %s\n", rd_printable(f->name, name, sizeof name), hit,
                hit == 1 ? "" : "s",
                f->note ? rd_printable(f->note, note, sizeof note) : "no source");
    }
}

static int digits(uint64_t v)
{
    int d = 1;
    while (v >= 10) {
        v /= 10;
        d++;
    }
    return d;
}

/* One listing row: the count right-aligned in w columns, "*...0" for a
 * missed line, blanks for a line without bytecode. */
static void list_row(FILE *out, int w, const rd_cov_line *l, int exact, const char *text,
                     int len)
{
    if (l && l->hits)
        fprintf(out, "%*llu %.*s\n", w, (unsigned long long)l->hits, len, text);
    else if (l && exact && l->exec)
        fprintf(out, "%.*s0 %.*s\n", w - 1, "****************************", len, text);
    else
        fprintf(out, "%*s %.*s\n", w, "", len, text);
}

/* The source lines of f, then rows for lines with data past its end (or
 * for all of them when there is no source). */
static void list_lines(const rd_cov_file *f, int w, const char *text, size_t len, FILE *out)
{
    char num[32];
    uint32_t line = 0, k = 0;
    size_t at = 0, n;
    for (const char *s; (s = rd_lines_next(text, len, &at, &n)); line++) {
        while (k < f->nln && f->ln[k].line < line + 1)
            k++;
        list_row(out, w, k < f->nln && f->ln[k].line == line + 1 ? &f->ln[k] : NULL, f->exact,
                 s, (int)n);
    }
    for (; k < f->nln; k++)
        if (f->ln[k].line > line) {
            int n = snprintf(num, sizeof num, "(line %u)", f->ln[k].line);
            list_row(out, w, &f->ln[k], f->exact, num, n);
        }
}

static void text_listing(const rd_cov_file *f, FILE *out)
{
    uint64_t most = 0;
    char *text = NULL, err[PATH_MAX + 64], name[PATH_MAX + 256];
    size_t len = 0;
    for (uint32_t i = 0; i < f->nln; i++)
        most = f->ln[i].hits > most ? f->ln[i].hits : most;
    rule(out, 78, '=');
    fprintf(out, "%s\n", rd_printable(shown(f), name, sizeof name));
    rule(out, 78, '=');
    if (f->note)
        fprintf(out, "(%s)\n", rd_printable(f->note, name, sizeof name));
    if (f->changed)
        fprintf(out, "(%u line%s ran but carry no bytecode now: the source changed since the "
                "trace?)\n", f->changed, f->changed == 1 ? "" : "s");
    if (f->path && rd_lines_read(f->path, &text, &len, err, sizeof err))
        fprintf(out, "(%s now; lines with data only)\n", rd_printable(err, err, sizeof err));
    rd_lines_unnul(text, len);
    list_lines(f, digits(most) + 1, text, len, out);
    free(text);
    fputc('\n', out);
}

int rd_cov_write_text(const rd_cov *c, const char *title, FILE *out)
{
    char note[256], name[PATH_MAX];
    fprintf(out, "luatrace coverage%s%s\n", title ? ": " : "",
            title ? rd_printable(title, name, sizeof name) : "");
    if (rd_cov_truncated_note(c, note, sizeof note)[0])
        fprintf(out, "%s.\n", note);
    fprintf(out, "Executable lines are the lines that carry bytecode (as luac -l -l of the Lua "
                 "that ran lists them);\nhits are line events; a function is hit when it was "
                 "called.\n\n");
    text_summary(c, out);
    text_others(c, out);
    fputc('\n', out);
    for (uint32_t i = 0; i < c->nf; i++)
        if (worth_showing(&c->f[i]))
            text_listing(&c->f[i], out);
    return ferror(out) ? -EIO : 0;
}

/* }==================================================================== */
