/* rd_lines: executable lines from Lua 5.1 bytecode.
 *
 * lua_dump writes a 12-byte header, then the main function; each function
 * is, in order (int and size_t of the sizes the header declares):
 *
 *   string source        size_t n (0: none), then n bytes ending in NUL
 *   int linedefined, int lastlinedefined
 *   byte nups, numparams, is_vararg, maxstacksize
 *   int ncode,  ncode instructions
 *   int nk,     nk constants: byte type (0 nil, 1 boolean + byte,
 *               3 number, 4 string)
 *   int np,     np functions, recursively
 *   int nline,  nline ints: the source line of each instruction
 *   int nloc,   nloc x (string name, int startpc, int endpc)
 *   int nup,    nup strings
 *
 * Only the line info and the line range of each function are kept. Every
 * count is checked against the bytes left before anything is skipped. */
#include "rd_lines.h"

#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rd_srcperm.h"

#define HDR_SIZE 12
#define MAX_DEPTH 250 /* the compiler nests at most LUAI_MAXCCALLS (200) */

enum { T_NIL = 0, T_BOOLEAN = 1, T_NUMBER = 3, T_STRING = 4 };

typedef struct reader {
    const uint8_t *p;
    size_t n, off;
    int big; /* big-endian numbers */
    size_t intsz, sizetsz, insz, numsz;
    rd_lines *out;
    uint32_t capline, capproto;
} reader;

static int take(reader *r, size_t k, const uint8_t **at)
{
    if (k > r->n - r->off)
        return -EPROTO;
    if (at)
        *at = r->p + r->off;
    r->off += k;
    return 0;
}

/* An unsigned number of sz bytes in the chunk's byte order. */
static int get_uint(reader *r, size_t sz, uint64_t *v)
{
    const uint8_t *b;
    if (take(r, sz, &b))
        return -EPROTO;
    *v = 0;
    for (size_t i = 0; i < sz; i++)
        *v |= (uint64_t)b[r->big ? sz - 1 - i : i] << (8 * i);
    return 0;
}

/* A C int: sign-extended from intsz bytes. */
static int get_int(reader *r, int64_t *v)
{
    uint64_t u;
    if (get_uint(r, r->intsz, &u))
        return -EPROTO;
    if (r->intsz < 8 && (u >> (8 * r->intsz - 1)) & 1)
        u |= ~0ull << (8 * r->intsz);
    *v = (int64_t)u;
    return 0;
}

/* A count of items of at least elem bytes each: it must fit in what is
 * left, so no count can make us loop or allocate beyond the input. */
static int get_count(reader *r, size_t elem, uint32_t *n)
{
    int64_t v;
    if (get_int(r, &v) || v < 0 || v > INT_MAX || (uint64_t)v * elem > r->n - r->off)
        return -EPROTO;
    *n = (uint32_t)v;
    return 0;
}

static int skip_string(reader *r)
{
    uint64_t len;
    if (get_uint(r, r->sizetsz, &len) || len > r->n - r->off)
        return -EPROTO;
    if (len && r->p[r->off + len - 1] != 0)
        return -EPROTO; /* lua_dump always writes the terminating NUL */
    return take(r, (size_t)len, NULL);
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    uint32_t c = *cap ? *cap : 64;
    while (c < need) {
        if (c > UINT32_MAX / 2)
            return -ENOMEM;
        c *= 2;
    }
    void *q = realloc(*p, (size_t)c * elem);
    if (!q)
        return -ENOMEM;
    *p = q;
    *cap = c;
    return 0;
}

static int parse_header(reader *r)
{
    const uint8_t *h;
    if (take(r, HDR_SIZE, &h) || memcmp(h, "\033Lua", 4) || h[4] != 0x51 || h[5] != 0 ||
        h[6] > 1)
        return -EPROTO;
    r->big = h[6] == 0;
    r->intsz = h[7];
    r->sizetsz = h[8];
    r->insz = h[9];
    r->numsz = h[10];
    if ((r->intsz != 4 && r->intsz != 8) || (r->sizetsz != 4 && r->sizetsz != 8) ||
        r->insz != 4 || (r->numsz != 4 && r->numsz != 8) || h[11] > 1)
        return -EPROTO;
    return 0;
}

static int skip_constants(reader *r)
{
    uint32_t nk;
    const uint8_t *t;
    if (get_count(r, 1, &nk))
        return -EPROTO;
    for (uint32_t i = 0; i < nk; i++) {
        if (take(r, 1, &t))
            return -EPROTO;
        int e = *t == T_NIL       ? 0
                : *t == T_BOOLEAN ? take(r, 1, NULL)
                : *t == T_NUMBER  ? take(r, r->numsz, NULL)
                : *t == T_STRING  ? skip_string(r)
                                  : -EPROTO;
        if (e)
            return e;
    }
    return 0;
}

static int read_lineinfo(reader *r)
{
    uint32_t n;
    rd_lines *o = r->out;
    if (get_count(r, r->intsz, &n))
        return -EPROTO;
    if (grow((void **)&o->line, &r->capline, o->nline + n, sizeof *o->line))
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++) {
        int64_t line;
        if (get_int(r, &line))
            return -EPROTO;
        if (line > 0 && line <= INT_MAX) /* luac prints [-] for others */
            o->line[o->nline++] = (uint32_t)line;
    }
    return 0;
}

static int skip_debug_rest(reader *r)
{
    uint32_t n;
    int64_t pc;
    if (get_count(r, r->sizetsz + 2 * r->intsz, &n))
        return -EPROTO;
    for (uint32_t i = 0; i < n; i++)
        if (skip_string(r) || get_int(r, &pc) || get_int(r, &pc))
            return -EPROTO;
    if (get_count(r, r->sizetsz, &n))
        return -EPROTO;
    for (uint32_t i = 0; i < n; i++)
        if (skip_string(r))
            return -EPROTO;
    return 0;
}

static int parse_function(reader *r, int depth)
{
    int64_t first, last;
    uint32_t ncode, np;
    rd_lines *o = r->out;
    if (depth > MAX_DEPTH || skip_string(r) || get_int(r, &first) || get_int(r, &last) ||
        take(r, 4, NULL) || get_count(r, r->insz, &ncode) || take(r, (size_t)ncode * r->insz, NULL))
        return -EPROTO;
    if (grow((void **)&o->proto, &r->capproto, o->nproto + 1, sizeof *o->proto))
        return -ENOMEM;
    o->proto[o->nproto++] = (rd_lproto){first > 0 && first <= INT_MAX ? (uint32_t)first : 0,
                                        last > 0 && last <= INT_MAX ? (uint32_t)last : 0};
    int e = skip_constants(r);
    if (!e)
        e = get_count(r, HDR_SIZE, &np); /* a function takes far more than 12 bytes */
    for (uint32_t i = 0; !e && i < np; i++)
        e = parse_function(r, depth + 1);
    if (!e)
        e = read_lineinfo(r);
    return e ? e : skip_debug_rest(r);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

int rd_lines_parse(const uint8_t *p, size_t n, rd_lines *out)
{
    reader r = {.p = p, .n = n, .out = out};
    memset(out, 0, sizeof *out);
    int e = parse_header(&r);
    if (!e)
        e = parse_function(&r, 0);
    if (!e && r.off != n)
        e = -EPROTO; /* lua_dump writes nothing after the main function */
    if (e) {
        rd_lines_free(out);
        return e;
    }
    if (out->nline > 1) /* qsort wants a valid base even for no elements */
        qsort(out->line, out->nline, sizeof *out->line, cmp_u32);
    uint32_t w = 0;
    for (uint32_t i = 0; i < out->nline; i++)
        if (!w || out->line[w - 1] != out->line[i])
            out->line[w++] = out->line[i];
    out->nline = w;
    return 0;
}

void rd_lines_free(rd_lines *l)
{
    if (!l)
        return;
    free(l->line);
    free(l->proto);
    memset(l, 0, sizeof *l);
}

/* {====================================================================
 * Compiling a file */

lua_State *rd_lines_state(void)
{
    return luaL_newstate(); /* no libraries: nothing here ever runs */
}

#define MAX_FILE (256u << 20) /* larger is no source file */

typedef struct job {
    const char *path;
    const char *text;
    size_t len;
    uint8_t *buf; /* the dump */
    size_t n, cap;
    int status; /* luaL_loadbuffer's */
    char *err;
    size_t errcap;
} job;

static int writer(lua_State *L, const void *p, size_t sz, void *ud)
{
    job *j = ud;
    (void)L;
    if (sz > j->cap - j->n) {
        size_t cap = j->cap ? j->cap : 4096;
        while (cap - j->n < sz)
            cap *= 2;
        uint8_t *b = realloc(j->buf, cap);
        if (!b)
            return 1;
        j->buf = b;
        j->cap = cap;
    }
    memcpy(j->buf + j->n, p, sz);
    j->n += sz;
    return 0;
}

/* Where lua5.1 starts reading a script (luaL_loadfile): a first line
 * starting with '#' is skipped but its newline kept, so line numbers do
 * not move; a binary chunk after it starts at its ESC. */
static size_t script_start(const char *t, size_t n)
{
    if (n == 0 || t[0] != '#')
        return 0;
    const char *nl = memchr(t, '\n', n);
    if (!nl)
        return n;
    size_t k = (size_t)(nl - t);
    return k + 1 < n && t[k + 1] == '\033' ? k + 1 : k;
}

/* Runs under lua_cpcall, so that no Lua error can escape to the panic
 * function (which would exit recorderd). */
static int compile(lua_State *L)
{
    job *j = lua_touserdata(L, 1);
    size_t at = script_start(j->text, j->len);
    lua_pushfstring(L, "@%s", j->path); /* the chunk name lua5.1 gives a file */
    j->status = luaL_loadbuffer(L, j->text + at, j->len - at, lua_tostring(L, -1));
    if (j->status) {
        snprintf(j->err, j->errcap, "%s", lua_isstring(L, -1) ? lua_tostring(L, -1) : "?");
        return 0;
    }
    if (lua_dump(L, writer, j))
        j->status = LUA_ERRMEM;
    return 0;
}

/* One open, checked and read on the same descriptor: a FIFO or a device
 * put in a file's place is refused, never read (it could block forever). */
int rd_lines_read(const char *path, char **text, size_t *len, char *err, size_t cap)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), e = 0, owner = 0;
    *text = NULL;
    *len = 0;
    if (fd < 0 || fstat(fd, &st) < 0)
        e = -errno;
    else if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > MAX_FILE)
        e = S_ISREG(st.st_mode) ? -EFBIG : -EISDIR;
    else if ((owner = rd_src_allowed(fd, &st))) /* someone else's trace named it */
        e = owner;
    else if (!(*text = malloc((size_t)st.st_size + 1)))
        e = -ENOMEM;
    while (!e && *len < (size_t)st.st_size) {
        ssize_t k = read(fd, *text + *len, (size_t)st.st_size - *len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            e = -errno;
        if (k <= 0)
            break; /* 0: the file shrank while we read it; keep what we have */
        *len += (size_t)k;
    }
    if (fd >= 0)
        close(fd);
    if (!e)
        (*text)[*len] = 0;
    if (e) {
        free(*text);
        *text = NULL;
        if (owner)
            snprintf(err, cap, "not reading %s: the trace's owner may not read it", path);
        else
            snprintf(err, cap, e == -EISDIR ? "%s is not a regular file" : "cannot read %s: %s",
                     path, strerror(-e));
    }
    return e;
}

int rd_lines_file(lua_State *L, const char *path, rd_lines *out, char *err, size_t cap)
{
    char *text;
    job j = {.path = path, .err = err, .errcap = cap};
    memset(out, 0, sizeof *out);
    int e = rd_lines_read(path, &text, &j.len, err, cap);
    if (e)
        return e;
    j.text = text;
    int st = lua_cpcall(L, compile, &j);
    lua_settop(L, 0);
    if (st == 0 && j.status == 0) {
        e = rd_lines_parse(j.buf, j.n, out);
        if (e)
            snprintf(err, cap, "%s: %s", path,
                     e == -ENOMEM ? "out of memory" : "unreadable bytecode dump");
    } else if (st || j.status == LUA_ERRMEM) {
        snprintf(err, cap, "%s: out of memory while compiling", path);
        e = -ENOMEM;
    } else {
        e = j.status == LUA_ERRSYNTAX ? -EINVAL : -EIO; /* message from Lua */
    }
    free(j.buf);
    free(text);
    return e;
}

const char *rd_lines_next(const char *text, size_t len, size_t *at, size_t *n)
{
    size_t i = *at;
    if (!text || i >= len)
        return NULL;
    while (i < len && text[i] != '\n' && text[i] != '\r')
        i++;
    *n = i - *at;
    const char *line = text + *at;
    if (i < len) {
        char first = text[i++];
        if (i < len && (text[i] == '\n' || text[i] == '\r') && text[i] != first)
            i++; /* "\r\n" and "\n\r" are one break, as in Lua's lexer */
    }
    *at = i;
    return line;
}

void rd_lines_unnul(char *text, size_t len)
{
    for (char *p = text; text && (p = memchr(p, 0, len - (size_t)(p - text))); *p++ = '?')
        ;
}

/* }==================================================================== */
