/* rd_label: `name (file:line)`, see rd_label.h. */
#include "rd_label.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rd_label_set_cwd(rd_model *m, const char *cwd)
{
    free(m->cwd);
    m->cwd = NULL;
    rd_label_names_free(m->label_names); /* made with the old cwd */
    m->label_names = NULL;
    if (!cwd || cwd[0] != '/')
        return 0;
    m->cwd = strdup(cwd);
    return m->cwd ? 0 : -ENOMEM;
}

/* A plain prefix test, no realpath: labels are made per call-tree node,
 * and the path shown must be the one traced, only shorter. A relative
 * path is the cwd's already: its "./" (package.path's "./?.lua") goes. */
static const char *cwd_rel(const rd_model *m, const char *src)
{
    size_t n = m->cwd ? strlen(m->cwd) : 0;
    while (n > 1 && m->cwd[n - 1] == '/') /* "/" itself stays "/" */
        n--;
    if (n > 1 && !strncmp(src, m->cwd, n) && src[n] == '/' && src[n + 1])
        src += n + 1;
    while (src[0] == '.' && src[1] == '/' && src[2])
        src += 2;
    return src;
}

/* src past its Lua library root (".../share/lua/5.N/", ".../lib/lua/5.N/"),
 * or NULL: what require names it by. */
static const char *lib_rel(const char *src)
{
    for (const char *p = strstr(src, "/lua/5."); p; p = strstr(p + 1, "/lua/5.")) {
        int root = (p - src >= 6 && !strncmp(p - 6, "/share", 6)) ||
                   (p - src >= 4 && !strncmp(p - 4, "/lib", 4));
        if (root && p[7] >= '1' && p[7] <= '9' && p[8] == '/' && p[9])
            return p + 9;
    }
    return NULL;
}

/* {====== the short name of each source of a model, unambiguous */

typedef struct name_ent {
    char *src;    /* a copy: the model's strings may move as it grows */
    uint32_t off; /* shown as src + off */
    uint32_t cwd; /* the offset past the cwd (0: not under it) */
    uint8_t lib;  /* shortened past a library root (else past the cwd, or not) */
} name_ent;

struct rd_label_names {
    uint32_t nstr, nfunc; /* the model's size it was made for */
    name_ent *e;
    uint32_t cap, n; /* open addressing by src; cap a power of two */
};

static pthread_mutex_t names_mu = PTHREAD_MUTEX_INITIALIZER;

static uint32_t hash_src(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static name_ent *slot_of(const struct rd_label_names *t, const char *src)
{
    for (uint32_t i = hash_src(src) & (t->cap - 1);; i = (i + 1) & (t->cap - 1))
        if (!t->e[i].src || !strcmp(t->e[i].src, src))
            return &t->e[i];
}

void rd_label_names_free(struct rd_label_names *t)
{
    if (!t)
        return;
    for (uint32_t i = 0; i < t->cap; i++)
        free(t->e[i].src);
    free(t->e);
    free(t);
}

/* A name shortened past a library root that another source is shown as
 * too (another root's copy of the module, or a file of the program's own
 * of that name) is shown as it would be without the root: relative to the
 * cwd, or whole. Sources are few (hundreds): pairs. */
static void unambiguous(struct rd_label_names *t)
{
    for (uint32_t i = 0; i < t->cap; i++) {
        name_ent *a = &t->e[i];
        for (uint32_t j = 0; a->src && a->lib && j < t->cap; j++) {
            const name_ent *b = &t->e[j];
            if (j != i && b->src && !strcmp(a->src + a->off, b->src + b->off))
                a->lib = 2; /* whole, once every pair is seen */
        }
    }
    for (uint32_t i = 0; i < t->cap; i++)
        if (t->e[i].lib == 2)
            t->e[i].off = t->e[i].cwd;
}

/* The names of m's Lua sources, or NULL (out of memory: shown whole). */
static struct rd_label_names *make_names(const rd_model *m)
{
    struct rd_label_names *t = calloc(1, sizeof *t);
    uint32_t cap = 16;
    while (cap < 2 * (uint64_t)m->nfunc + 2)
        cap *= 2;
    if (!t || !(t->e = calloc(cap, sizeof *t->e)))
        return free(t), NULL;
    t->cap = cap;
    t->nstr = m->nstr;
    t->nfunc = m->nfunc;
    for (uint32_t f = 0; f < m->nfunc; f++) {
        const rd_func *fn = rd_model_func(m, f);
        int lua = fn->known && fn->what != LT_WHAT_C;
        const char *src = lua ? rd_model_string(m, fn->src_sid) : NULL;
        name_ent *e = src ? slot_of(t, src) : NULL;
        if (!e || e->src)
            continue;
        const char *cwd = cwd_rel(m, src), *lib = lib_rel(src);
        if (!(e->src = strdup(src)))
            return rd_label_names_free(t), NULL;
        e->off = (uint32_t)((lib ? lib : cwd) - src);
        e->cwd = (uint32_t)(cwd - src);
        e->lib = lib != NULL;
        t->n++;
    }
    unambiguous(t);
    return t;
}

const char *rd_label_src(const rd_model *m, const char *src)
{
    pthread_mutex_lock(&names_mu);
    struct rd_label_names *t = m->label_names;
    if (!t || t->nstr != m->nstr || t->nfunc != m->nfunc) {
        rd_label_names_free(t);
        t = ((rd_model *)m)->label_names = make_names(m); /* a cache: m is the same */
    }
    const name_ent *e = t ? slot_of(t, src) : NULL;
    const char *shown = e && e->src ? src + e->off : NULL;
    pthread_mutex_unlock(&names_mu);
    if (shown)
        return shown;
    const char *lib = lib_rel(src);
    return lib ? lib : cwd_rel(m, src); /* not a source of m's (a file coverage resolved) */
}

/* }====== */

void rd_label_human(const rd_model *m, uint32_t fid, uint32_t line, char *buf, size_t cap)
{
    const rd_func *f = rd_model_func(m, fid);
    if (!f->known) {
        snprintf(buf, cap, "? (unknown frame)");
        return;
    }
    rd_model_name(m, fid, buf, cap);
    size_t n = strlen(buf);
    if (f->what == LT_WHAT_C)
        snprintf(buf + n, cap - n, " [C]");
    else
        snprintf(buf + n, cap - n, " (%s:%u)", rd_label_src(m, rd_model_string(m, f->src_sid)),
                 line ? line : f->linedefined);
    rd_label_clean(buf);
}

void rd_label_folded(const rd_model *m, uint32_t fid, char *buf, size_t cap)
{
    const rd_func *f = rd_model_func(m, fid);
    if (!f->known || f->what == LT_WHAT_C) {
        rd_model_label(m, fid, buf, cap); /* no source to shorten */
        return;
    }
    rd_model_name(m, fid, buf, cap);
    size_t n = strlen(buf);
    snprintf(buf + n, cap - n, "@%s:%u", rd_label_src(m, rd_model_string(m, f->src_sid)),
             f->linedefined);
    rd_label_clean(buf);
}
