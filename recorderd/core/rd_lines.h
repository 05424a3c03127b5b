/* rd_lines: the executable lines of a Lua 5.1 chunk, exactly: every line
 * that carries an instruction in any function prototype of the chunk,
 * nested ones and ones that never ran included (what `luac5.1 -l -l -p`
 * lists). The source is compiled in a private lua_State, never run, and
 * the chunk is read back through lua_dump, whose bytes are parsed as
 * untrusted input. Any thread; one lua_State per thread. */
#ifndef RD_LINES_H
#define RD_LINES_H

#include <stddef.h>
#include <stdint.h>

#include <lua.h>

typedef struct rd_lproto {
    uint32_t linedefined, lastlinedefined; /* 0, 0 for the main chunk */
} rd_lproto;

typedef struct rd_lines {
    uint32_t *line; /* sorted, distinct, each >= 1 */
    uint32_t nline;
    rd_lproto *proto; /* every prototype, main first, depth first */
    uint32_t nproto;
} rd_lines;

/* Parses a Lua 5.1 binary chunk (lua_dump's output, any endianness and
 * sizes the header declares). Returns 0, -EPROTO for bytes that are not a
 * well-formed chunk (out is then empty), or -ENOMEM. Caller frees out. */
int rd_lines_parse(const uint8_t *p, size_t n, rd_lines *out);

/* A lua_State that only compiles (no libraries opened), or NULL. Close it
 * with lua_close. */
lua_State *rd_lines_state(void);

/* Compiles the regular file at path (read with rd_lines_read; as lua5.1
 * loads a script: a first line starting with '#' is skipped) and collects
 * its lines. Returns 0, or
 * a negative errno with a message in err: -ENOENT, -EACCES... (cannot
 * read), -EISDIR (not a regular file), -EINVAL (does not compile),
 * -EPROTO, -ENOMEM. Caller frees out. */
int rd_lines_file(lua_State *L, const char *path, rd_lines *out, char *err, size_t cap);

void rd_lines_free(rd_lines *l);

/* Reads the regular file at path (up to 256 MiB) into *text: *len bytes
 * and a NUL; the caller frees it. Returns 0, or a negative errno with a
 * message in err: -EISDIR for anything but a regular file (a FIFO is never
 * read), -EFBIG, -ENOENT... */
int rd_lines_read(const char *path, char **text, size_t *len, char *err, size_t cap);

/* The next line of text (len bytes) from *at, as Lua 5.1 numbers lines: a
 * line ends at "\n", "\r", "\r\n" or "\n\r". Returns its start, its length
 * in *n, and moves *at past its end; NULL after the last line. */
const char *rd_lines_next(const char *text, size_t len, size_t *at, size_t *n);

/* Makes text (len bytes) showable as lines of C strings: a NUL byte
 * becomes '?'. */
void rd_lines_unnul(char *text, size_t len);

#endif
