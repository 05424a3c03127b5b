/* rd_sessfile: reading a session directory back: session.json's fields
 * (rd_session.c writes them) and its trace replayed, for coverage or any
 * report. */
#include "rd_sessfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rd_replay.h"
#include "rd_stack.h"
#include "rd_util.h"

static int hexval(int ch)
{
    return ch >= '0' && ch <= '9'   ? ch - '0'
           : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
           : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                    : -1;
}

/* Decodes the JSON string at s (after its opening quote) into buf. A
 * \u escape above 0x7f, or of NUL, is refused: rd_json_str escapes only
 * '"', '\' and control bytes. */
static int json_unquote(const char *s, char *buf, size_t cap)
{
    size_t n = 0;
    for (; *s && *s != '"'; s++) {
        unsigned ch = (unsigned char)*s;
        if (ch == '\\') {
            s++;
            ch = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s == 'r' ? '\r' : (unsigned char)*s;
            if (*s == 'u') {
                int h[4] = {0};
                for (int i = 0; i < 4; i++)
                    if ((h[i] = hexval(s[i + 1])) < 0)
                        return -EPROTO;
                ch = (unsigned)(h[0] << 12 | h[1] << 8 | h[2] << 4 | h[3]);
                s += 4;
            }
            if (!ch || ch > 0x7f)
                return -EPROTO;
        }
        if (n + 1 >= cap)
            return -ENAMETOOLONG;
        buf[n++] = (char)ch;
    }
    buf[n] = 0;
    return *s == '"' && n ? 0 : -EPROTO;
}

/* The value of a top-level key of session_dir's session.json (written by
 * rd_session: keys are unique and come before any value holding their
 * quoted name), past its colon, in text (the file, read into it); NULL if
 * there is none. */
static const char *session_value(const char *session_dir, const char *key, char *text,
                                 size_t cap)
{
    char path[PATH_MAX + 16], quoted[32];
    snprintf(path, sizeof path, "%s/session.json", session_dir);
    snprintf(quoted, sizeof quoted, "\"%s\"", key);
    FILE *f = rd_fopen_regular(path); /* a FIFO there would block */
    if (!f)
        return NULL;
    size_t n = fread(text, 1, cap - 1, f);
    fclose(f);
    text[n] = 0;
    const char *p = strstr(text, quoted);
    if (!p)
        return NULL;
    p += strlen(quoted);
    p += strspn(p, " \t\r\n");
    if (*p++ != ':')
        return NULL;
    return p + strspn(p, " \t\r\n");
}

/* The string value of a top-level key (session_value) into buf. Returns 0
 * or -ENOENT. */
static int session_field(const char *session_dir, const char *key, char *buf, size_t cap)
{
    char text[16384];
    const char *p = session_value(session_dir, key, text, sizeof text);
    return p && *p == '"' && !json_unquote(p + 1, buf, cap) ? 0 : -ENOENT;
}

/* The digits of a number under key (session_value) into buf. */
static int session_number(const char *session_dir, const char *key, char *buf, size_t cap)
{
    char text[16384];
    const char *p = session_value(session_dir, key, text, sizeof text);
    size_t k = p ? strspn(p, "0123456789") : 0;
    if (!k || k >= cap)
        return -ENOENT;
    memcpy(buf, p, k);
    buf[k] = 0;
    return 0;
}

int rd_sessfile_cwd(const char *session_dir, char *buf, size_t cap)
{
    return !session_field(session_dir, "cwd", buf, cap) && buf[0] == '/' ? 0 : -ENOENT;
}

/* 1 if session.json of session_dir says "status": "truncated", 0 for
 * another status, -ENOENT when it has none. */
static int rd_sessfile_truncated(const char *session_dir)
{
    char status[32];
    if (session_field(session_dir, "status", status, sizeof status))
        return -ENOENT;
    return !strcmp(status, "truncated");
}

/* The session directory of a trace path: itself, or the directory of a
 * trace.ltr. */
static void session_dir_of(const char *path, char *dir, size_t cap)
{
    struct stat st;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(dir, cap, "%s", path);
    else if (!strcmp(base, "trace.ltr"))
        snprintf(dir, cap, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    else
        dir[0] = 0;
}

/* The string under key in the session.json of trace (a session directory
 * or its trace.ltr), into buf. Returns 0, or -ENOENT when there is none
 * (or it holds bytes that are not ASCII, or does not fit). */
static int rd_sessfile_str(const char *trace, const char *key, char *buf, size_t cap)
{
    char dir[PATH_MAX];
    session_dir_of(trace, dir, sizeof dir);
    return dir[0] ? session_field(dir, key, buf, cap) : -ENOENT;
}

unsigned rd_sessfile_sampling(const char *path, rd_model *m)
{
    char sampler[16], hz[16], dir[PATH_MAX], *end;
    session_dir_of(path, dir, sizeof dir);
    int jit = 0;
    m->sampled_hz = 0;
    if (dir[0] && !session_field(dir, "sampler", sampler, sizeof sampler) &&
        ((jit = !strcmp(sampler, "luajit")) || !strcmp(sampler, "outside")) &&
        !session_number(dir, "sampled_hz", hz, sizeof hz)) {
        unsigned long v = strtoul(hz, &end, 10);
        m->sampled_hz = !*end && v > 0 && v <= 1000000 ? (unsigned)v : 0;
    }
    m->sampled_jit = m->sampled_hz && jit;
    m->sampled_cpu = m->sampled_jit || (m->sampled_hz && !session_field(dir, "sample_clock", hz,
                                                                      sizeof hz) &&
                                        !strcmp(hz, "cpu"));
    return m->sampled_hz;
}

int rd_sessfile_add_cov(rd_cov *c, const char *path, char *err, size_t cap)
{
    char dir[PATH_MAX], cwd[PATH_MAX];
    rd_model m;
    rd_stack st;
    err[0] = 0;
    if (rd_model_init(&m) || rd_stack_init(&st, &m)) {
        rd_model_free(&m);
        snprintf(err, cap, "out of memory");
        return -ENOMEM;
    }
    if (rd_sessfile_sampling(path, &m)) { /* as its own session wrote none */
        snprintf(err, cap, "a sampled session (%u Hz): samples see some lines run, not every "
                 "line, so it has no coverage", m.sampled_hz);
        rd_stack_free(&st);
        rd_model_free(&m);
        return -EINVAL;
    }
    int e = rd_replay_path(path, &st, 1, err, cap);
    if (!e && m.lines_sampled) { /* as its own session wrote none */
        snprintf(err, cap, "lines by sample (run's default): its lines were not counted, so it "
                 "has no coverage (run --coverage, or --lines exact, counts every line)");
        e = -EINVAL;
    }
    session_dir_of(path, dir, sizeof dir);
    int has_cwd = dir[0] && !rd_sessfile_cwd(dir, cwd, sizeof cwd);
    /* the session's word, as its own reports had it; a bare trace is cut
     * when it ends inside a record or without its STOP */
    int cut = dir[0] ? rd_sessfile_truncated(dir) : -ENOENT;
    if (cut < 0)
        cut = err[0] || !st.stopped;
    if (!e && (e = rd_cov_add_model(c, &m, has_cwd ? cwd : NULL)))
        snprintf(err, cap, "out of memory");
    if (!e)
        c->truncated += cut;
    rd_stack_free(&st);
    rd_model_free(&m);
    return e;
}

/* A trace keeps no wall clock: its file was last written when tracing
 * ended, so the start is that time less the traced time (0: unknown). Both
 * come from the file: a date past 2262 or a traced time longer than the
 * epoch (a corrupt clock) gives 0, not an overflow. */
static int64_t trace_start_ns(const char *path, const rd_model *m)
{
    char file[PATH_MAX + 16];
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(file, sizeof file, "%s/trace.ltr", path);
    else
        snprintf(file, sizeof file, "%s", path);
    if (stat(file, &st) < 0 || st.st_mtim.tv_sec < 0 ||
        st.st_mtim.tv_sec >= INT64_MAX / 1000000000)
        return 0;
    int64_t end = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    double traced = (double)m->ticks_total * rd_model_ns_per_tick(m);
    if (!(traced >= 0 && traced < (double)end)) /* NaN too */
        return 0;
    return end - (int64_t)traced;
}

void rd_sessfile_render(const char *path, const rd_model *m, rd_sessfile_meta *t,
                        rd_render *r)
{
    int cwd = !rd_sessfile_str(path, "cwd", t->cwd, sizeof t->cwd) && t->cwd[0] == '/';
    int cmd = !rd_sessfile_str(path, "command", t->command, sizeof t->command);
    /* a session's name, as its own reports have it: profile.txt's header */
    int name = !rd_sessfile_str(path, "session", t->name, sizeof t->name) && t->name[0];
    char dir[PATH_MAX];
    session_dir_of(path, dir, sizeof dir);
    *r = (rd_render){m, NULL, name ? t->name : path, cmd ? t->command : NULL, cwd ? t->cwd : NULL,
                     0, trace_start_ns(path, m), dir[0] && rd_sessfile_truncated(dir) > 0,
                     RD_W_TIME, name, NULL, 0};
}
