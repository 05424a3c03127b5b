/* rd_backend: the registry of streaming backends and the fan-out. */
#include "rd_backend.h"
#include "rd_luabk.h"

#include "rd_chrome.h"
#include "rd_speedscope.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Spec prefixes: "NAME" alone, or "NAME:ARG" when the prefix ends in ':'. */
static const struct {
    const char *prefix;
    rd_backend_create_fn *create;
    const char *file; /* what it writes, NULL: its own choice */
} kinds[] = {
    {"chrome", rd_chrome_create, RD_CHROME_FILE},
    {"speedscope-evented", rd_speedscope_evented_create, RD_SPEEDSCOPE_EVENTED_FILE},
    {"lua:", rd_luabk_create, NULL}, /* a user backend: lua:FILE.lua */
    {NULL, NULL, NULL}, /* the table's end */
};

/* The row of kinds spec names (*arg: what follows its prefix), or -1. */
static int lookup(const char *spec, const char **arg)
{
    for (int i = 0; kinds[i].prefix; i++) {
        size_t n = strlen(kinds[i].prefix);
        int with_arg = kinds[i].prefix[n - 1] == ':';
        if (with_arg ? !strncmp(spec, kinds[i].prefix, n) : !strcmp(spec, kinds[i].prefix)) {
            *arg = spec + (with_arg ? n : strlen(spec));
            return i;
        }
    }
    return -1;
}

int rd_backend_known(const char *spec)
{
    const char *arg;
    return lookup(spec, &arg) >= 0;
}

const char *rd_backend_file(const char *spec)
{
    const char *arg;
    int i = lookup(spec, &arg);
    return i < 0 ? NULL : kinds[i].file;
}

#define FAN(call)                                                                                  \
    do {                                                                                           \
        const rd_backends *set = ud;                                                               \
        for (unsigned i = 0; i < set->n; i++) {                                                    \
            const rd_listener *l = &set->b[i]->ls;                                                 \
            call;                                                                                  \
        }                                                                                          \
    } while (0)

static void fan_enter(void *ud, uint64_t th, const rd_frame *f, uint32_t level, enum rd_how how,
                      uint64_t t)
{
    FAN(if (l->enter) l->enter(l->ud, th, f, level, how, t));
}

static void fan_leave(void *ud, uint64_t th, const rd_frame *f, uint32_t level, enum rd_how how,
                      uint64_t t)
{
    FAN(if (l->leave) l->leave(l->ud, th, f, level, how, t));
}

static void fan_line(void *ud, uint64_t th, const rd_frame *f, uint32_t level, uint64_t t)
{
    FAN(if (l->line) l->line(l->ud, th, f, level, t));
}

static void fan_thread(void *ud, uint64_t th, uint64_t t)
{
    FAN(if (l->thread) l->thread(l->ud, th, t));
}

static void fan_end(void *ud, uint64_t th, uint64_t t)
{
    FAN(if (l->end) l->end(l->ud, th, t));
}

int rd_backends_open(rd_backends *set, const char *const *specs, unsigned n, const rd_model *m,
                     char *err, size_t cap)
{
    memset(set, 0, sizeof *set);
    set->fan = (rd_listener){set, fan_enter, fan_leave, fan_line, fan_thread, fan_end};
    if (n > RD_MAX_BACKENDS) {
        snprintf(err, cap, "at most %d backends", RD_MAX_BACKENDS);
        return -E2BIG;
    }
    for (unsigned i = 0; i < n; i++) {
        const char *arg;
        char why[256] = "";
        int k = lookup(specs[i], &arg);
        rd_backend_create_fn *create = k < 0 ? NULL : kinds[k].create;
        rd_backend *b = create ? create(arg, m, why, sizeof why) : NULL;
        if (!b) {
            snprintf(err, cap, "backend %s: %s", specs[i], create ? why : "unknown backend");
            rd_backends_close(set);
            return -EINVAL;
        }
        set->b[set->n++] = b;
    }
    return 0;
}

void rd_backends_info(rd_backends *set, const rd_backend_info *info)
{
    for (unsigned i = 0; i < set->n; i++)
        set->b[i]->info = info;
}

void rd_backends_attach(rd_backends *set, rd_stack *s)
{
    s->ls = set->n == 0 ? NULL : set->n == 1 ? &set->b[0]->ls : &set->fan;
}

int rd_backends_finish(rd_backends *set, const rd_model *m, const char *dir, const char *file,
                       char *err, size_t cap)
{
    int first = 0;
    for (unsigned i = 0; i < set->n; i++) {
        char why[256] = "";
        int e = set->b[i]->finish(set->b[i], m, dir, set->n == 1 ? file : NULL, why, sizeof why);
        if (e && !first) {
            first = e;
            snprintf(err, cap, "backend %s: %s", set->b[i]->name, why);
        }
    }
    return first;
}

void rd_backends_close(rd_backends *set)
{
    for (unsigned i = 0; i < set->n; i++)
        set->b[i]->destroy(set->b[i]);
    set->n = 0;
}
