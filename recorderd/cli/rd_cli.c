/* rd_cli: what every command's argument parsing shares. */
#include "rd_cli.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rd_formats.h"
#include "rd_help.h"
#include "rd_luabk.h"
#include "rd_session.h"
#include "rd_util.h"

static const char *rd_cli_cmd = ""; /* the command, for messages */

void rd_cli_set_command(const char *cmd)
{
    rd_cli_cmd = cmd;
}

/* Returns the value of option argv[*i] (advancing), or NULL. "--" is no
 * value: `--out -- lua5.1 x.lua` lacks one, it does not name a directory;
 * nor is an option (--NAME, -X): `-o --memory -- lua5.1 x.lua` forgot the
 * directory, it does not mean one named --memory (traced without memory). */
const char *rd_cli_optval(int argc, char **argv, int *i)
{
    const char *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    int opt = v && v[0] == '-' && (v[1] == '-' || (isalpha((unsigned char)v[1]) && !v[2]));
    if (!v || opt) {
        fprintf(stderr, "recorderd%s%s: %s needs a value%s%s (recorderd%s%s --help)\n",
                *rd_cli_cmd ? " " : "", rd_cli_cmd, argv[*i],
                v && strcmp(v, "--") ? ", not the option " : "", v && strcmp(v, "--") ? v : "",
                *rd_cli_cmd ? " " : "", rd_cli_cmd);
        return NULL;
    }
    return argv[++*i];
}

/* v as a whole decimal number from min to max, or -1 ("123abc" is none). */
long rd_cli_whole(const char *v, long min, long max)
{
    char *end;
    errno = 0;
    long n = v && *v >= '0' && *v <= '9' ? strtol(v, &end, 10) : -1;
    return n >= 0 && !errno && !*end && n >= min && n <= max ? n : -1;
}

int rd_cli_is_help(const char *a)
{
    return !strcmp(a, "--help") || !strcmp(a, "-h");
}

/* Exit status 2, naming what was not understood. */
int rd_cli_unknown(const char *cmd, const char *a)
{
    const char *eq = !strncmp(a, "--", 2) ? strchr(a, '=') : NULL, *meant;
    if (eq) /* --out=DIR: a value goes after a space (--out DIR) */
        fprintf(stderr, "recorderd %s: unknown option %s: options take their value after a "
                        "space, %.*s %s (see recorderd %s --help)\n",
                cmd, a, (int)(eq - a), a, eq + 1, cmd);
    else if ((meant = rd_help_closest_opt(cmd, a))) /* --fromat: one line naming --format */
        fprintf(stderr, "recorderd %s: unknown option %s: did you mean %s? (see recorderd %s "
                        "--help)\n", cmd, a, meant, cmd);
    else
        fprintf(stderr, "recorderd %s: unknown option %s (see recorderd %s --help)\n", cmd, a,
                cmd);
    return 2;
}

/* --backend SPEC, repeatable (run, listen, serve, report). */
const char *rd_cli_backends[RD_MAX_BACKENDS];
unsigned rd_cli_nbackends;

int rd_cli_add_backend(const char *v)
{
    if (!rd_backend_known(v)) {
        fprintf(stderr, "recorderd: unknown backend %s (chrome, speedscope-evented, "
                        "lua:FILE.lua)\n", v);
        return -1;
    }
    char err[1024];
    if (!strncmp(v, "lua:", 4) && rd_luabk_check(v + 4, err, sizeof err)) {
        fprintf(stderr, "recorderd: backend %s: %s\n", v, err); /* before any session runs it */
        return -1;
    }
    if (rd_cli_nbackends == RD_MAX_BACKENDS) {
        fprintf(stderr, "recorderd: at most %d backends\n", RD_MAX_BACKENDS);
        return -1;
    }
    rd_cli_backends[rd_cli_nbackends++] = v;
    return 0;
}

int rd_cli_backend(int argc, char **argv, int *i)
{
    if (strcmp(argv[*i], "--backend") && strcmp(argv[*i], "-b"))
        return 0;
    const char *v = rd_cli_optval(argc, argv, i);
    return !v || rd_cli_add_backend(v) ? -1 : 1;
}

/* Seconds (decimals allowed) as milliseconds; -1 if not a number. */
long rd_cli_seconds_ms(const char *v)
{
    char *end;
    double d = v ? strtod(v, &end) : -1;
    return v && end != v && !*end && d >= 0 && d < 1e7 ? (long)(d * 1000 + 0.5) : -1;
}

/* --format LIST (run, listen, attach, serve): the reports a session writes
 * besides the default ones, as names of rd_formats joined with ',', or
 * "all"; repeatable. A backend's name in it (chrome, lua:FILE.lua) is
 * taken as --backend. 0 until one is given; then the rows to write. */
static uint32_t rd_cli_formats;
static uint32_t rd_cli_asked; /* what --format named, without the default rows */
static uint32_t rd_cli_named; /* the rows named one by one (not by "all") */

uint32_t rd_cli_formats_named(void)
{
    return rd_cli_named;
}

/* One name of a --format list (len bytes at v) into *rows or the
 * backends. Returns 0 or -1. */
static int format_item(const char *cmd, const char *v, size_t len, uint32_t *rows)
{
    char name[1024], names[512];
    snprintf(name, sizeof name, "%.*s", (int)len, v);
    const rd_format *f = rd_format_find(name);
    if (!strcmp(name, "all")) {
        *rows |= rd_format_rows(0) & ~rd_format_rows(RD_FMT_NOFILE);
        return 0;
    }
    if (f && f->file) {
        *rows |= 1u << (unsigned)(f - rd_formats);
        rd_cli_named |= 1u << (unsigned)(f - rd_formats);
        return 0;
    }
    if (rd_backend_known(name)) {
        char *keep = strdup(name); /* for the command's life */
        return keep ? rd_cli_add_backend(keep) : -1;
    }
    rd_format_names(names, sizeof names, ", ", RD_FMT_NOFILE, 0);
    fprintf(stderr, "recorderd %s: unknown format %s (%s, all, or a backend: chrome, "
                    "speedscope-evented, lua:FILE.lua)\n", cmd, name, names);
    return -1;
}

int rd_cli_format_list(const char *cmd, const char *v, uint32_t *rows)
{
    for (const char *p = v; *p;) {
        size_t n = strcspn(p, ","), k = strspn(p, " "); /* "callgrind, pprof" quoted */
        size_t end = n;
        while (end > k && p[end - 1] == ' ')
            end--;
        if (end > k && format_item(cmd, p + k, end - k, rows))
            return -1;
        p += n + (p[n] == ',');
    }
    return 0;
}

int rd_cli_format_split(const char *cmd, const char *v, const char *next)
{
    char first[64];
    size_t len = strlen(v), n = next ? strcspn(next, ",") : 0;
    if (!len || v[len - 1] != ',' || !n || n >= sizeof first)
        return 0;
    snprintf(first, sizeof first, "%.*s", (int)n, next);
    if (!rd_format_find(first) && strcmp(first, "all") && !rd_backend_known(first))
        return 0;
    fprintf(stderr, "recorderd %s: --format %s %s: join the names with no space (--format "
                    "%s%s)\n", cmd, v, next, v, next);
    return 1;
}

/* 1 if argv[*i] was --format (taken), 0 if not, -1 on a bad value. */
static int rd_cli_format(const char *cmd, int argc, char **argv, int *i)
{
    if (strcmp(argv[*i], "--format") && strcmp(argv[*i], "-f"))
        return 0;
    const char *v = rd_cli_optval(argc, argv, i);
    if (!v || rd_cli_format_split(cmd, v, *i + 1 < argc ? argv[*i + 1] : NULL))
        return -1;
    rd_cli_formats |= rd_format_rows(RD_FMT_DEFAULT);
    if (rd_backend_known(v)) /* whole: lua:FILE may hold a ',' */
        return rd_cli_add_backend(v) ? -1 : 1;
    if (rd_cli_format_list(cmd, v, &rd_cli_asked))
        return -1;
    rd_cli_formats |= rd_cli_asked;
    return 1;
}

int rd_cli_is_out(const char *a)
{
    return !strcmp(a, "-o") || !strcmp(a, "--out") || !strcmp(a, "--output");
}

/* --include and --exclude of a session's coverage: repeatable. */
static const char *rd_cli_include[RD_MAX_PATTERNS], *rd_cli_exclude[RD_MAX_PATTERNS];

static int pattern_opt(const char *cmd, int argc, char **argv, int *i, rd_cov_opts *co)
{
    int incl = !strcmp(argv[*i], "--include");
    if (!incl && strcmp(argv[*i], "--exclude"))
        return 0;
    const char *v = rd_cli_optval(argc, argv, i);
    unsigned *n = incl ? &co->ninclude : &co->nexclude;
    if (!v)
        return -1;
    if (*n == RD_MAX_PATTERNS) {
        fprintf(stderr, "recorderd %s: at most %d --%s patterns\n", cmd, RD_MAX_PATTERNS,
                incl ? "include" : "exclude");
        return -1;
    }
    (incl ? rd_cli_include : rd_cli_exclude)[(*n)++] = v;
    co->include = rd_cli_include;
    co->exclude = rd_cli_exclude;
    return 1;
}

int rd_cli_expanded_pattern(const char *cmd, char **argv, int i)
{
    if (i < 2 || (strcmp(argv[i - 2], "--include") && strcmp(argv[i - 2], "--exclude")))
        return 0;
    const char *v = argv[i - 1], *a = argv[i];
    const char *vs = strrchr(v, '/'), *as = strrchr(a, '/');
    /* a pattern given quoted keeps its '*': a session directory after it is one */
    if (!vs || !as || vs - v != as - a || strncmp(v, a, (size_t)(vs - v)) || strpbrk(v, "*?["))
        return 0;
    char sa[256], sv[256];
    rd_printable(a, sa, sizeof sa);
    rd_printable(v, sv, sizeof sv);
    fprintf(stderr, "recorderd %s: %s after %s %s: the shell expanded a pattern; quote it "
                    "(%s '%.*s/*')\n",
            cmd, sa, argv[i - 2], sv, argv[i - 2], (int)(vs - v), sv);
    return 1;
}

/* --time exact|sample, --clock cpu|wall: 1, or -1 on a bad value. */
static int time_opt(const char *cmd, int argc, char **argv, int *i, rd_session_opts *so)
{
    const char *a = argv[*i], *v = rd_cli_optval(argc, argv, i);
    int is_time = !strcmp(a, "--time");
    if (!v)
        return -1;
    if (is_time && (!strcmp(v, "sample") || !strcmp(v, "exact"))) {
        so->sample_time = !strcmp(v, "sample");
        so->time_given = 1;
    }
    else if (!is_time && (!strcmp(v, "cpu") || !strcmp(v, "wall"))) {
        so->wall = !strcmp(v, "wall");
        so->clock_given = 1;
    } else
        return fprintf(stderr, "recorderd %s: %s %s: %s\n", cmd, a, v,
                       is_time ? "exact or sample" : "cpu or wall"), -1;
    if (so->clock_given && so->time_given && !so->sample_time) /* else silently unused */
        return fprintf(stderr, "recorderd %s: --clock is the clock of sampled time (--time "
                               "sample): not with --time exact, which reads each event's "
                               "clock\n", cmd), -1;
    return 1;
}

int rd_cli_session_opt(const char *cmd, int argc, char **argv, int *i, rd_session_opts *so)
{
    int b = rd_cli_backend(argc, argv, i);
    if (!b)
        b = pattern_opt(cmd, argc, argv, i, &so->cov);
    if (!b)
        b = rd_cli_format(cmd, argc, argv, i);
    if (!b && rd_cli_is_out(argv[*i]))
        b = (so->out = rd_cli_optval(argc, argv, i)) ? 1 : -1;
    if (!b && !strcmp(argv[*i], "--coverage")) /* the collectors read no clock */
        b = so->coverage = 1;
    if (!b && !strcmp(argv[*i], "--memory")) /* the collectors trace their allocators */
        b = so->memory = 1;
    if (!b && (!strcmp(argv[*i], "--time") || !strcmp(argv[*i], "--clock")))
        b = time_opt(cmd, argc, argv, i, so);
    so->backends = rd_cli_backends;
    so->nbackends = rd_cli_nbackends;
    so->formats = rd_cli_formats;
    so->formats_asked = rd_cli_asked;
    if (rd_cli_named & rd_format_rows(RD_FMT_MEM)) /* -f heap: what it needs */
        so->memory = 1;
    return b;
}

/* The first format named one by one in rows, or NULL. */
static const rd_format *first_named(uint32_t rows)
{
    for (unsigned i = 0; i < rd_nformats; i++)
        if (rows & rd_cli_named & 1u << i)
            return &rd_formats[i];
    return NULL;
}

/* --coverage makes the collectors read no clock: what asks for time with
 * it would be dropped (--time, --clock: coverage won) or come out empty
 * (stacks.folded; flamegraph.svg and speedscope left out), so it is
 * refused before anything is traced, as run --sample refuses coverage. */
int rd_cli_session_check(const char *cmd, const rd_session_opts *so)
{
    uint32_t by_time = rd_format_rows(RD_FMT_TIME) | rd_format_rows(RD_FMT_BYTIME);
    const rd_format *f = first_named(by_time);
    if (!so->coverage)
        return 0;
    if (so->time_given || so->clock_given)
        return fprintf(stderr, "recorderd %s: --coverage reads no clock, so %s %s would be "
                               "dropped: for coverage with %s time, leave out --coverage and "
                               "add -f lcov (it counts every line)\n", cmd,
                       so->time_given ? "--time" : "--clock",
                       so->time_given ? (so->sample_time ? "sample" : "exact")
                                      : (so->wall ? "wall" : "cpu"),
                       so->time_given && !so->sample_time ? "exact" : "sampled"), 2;
    if (f)
        return fprintf(stderr, "recorderd %s: --coverage reads no clock, so --format %s, "
                               "weighed by time, would be empty: for time, leave out --coverage "
                               "(-f lcov keeps the coverage)%s\n", cmd, f->name,
                       f->flags & RD_FMT_BYTIME ? ", or fold the calls later: recorderd report "
                                                  "SESSION -f folded --weight calls" : ""), 2;
    return 0;
}
