/* rd_util: small helpers for report writers. Any thread. */
#ifndef RD_UTIL_H
#define RD_UTIL_H

#define RD_VERSION "0.1.0" /* as meson.build's project version */

#include <stdio.h>

/* Files are written through rd_outdir.h. */

/* The length of the UTF-8 sequence at s (1-4), or 0 if it is not a valid
 * one (overlong, surrogate, U+FFFE/U+FFFF, cut short). */
int rd_utf8_seq(const char *s);

/* s for a terminal, in buf (cap bytes, cut): control bytes (ESC ones
 * would drive the operator's terminal) and DEL become '?'. Returns buf. */
const char *rd_printable(const char *s, char *buf, size_t cap);

/* Writes s[0..n) for a terminal, a text of several lines (a daemon's
 * status, a report on a tty): as rd_printable, but newlines and tabs are
 * kept. Returns 0 or -EIO. */
int rd_write_printable(FILE *f, const char *s, size_t n);

/* Writes s as a JSON string literal (with quotes); bytes that are not
 * valid UTF-8 become U+FFFD, so the file is UTF-8 whatever the names. */
void rd_json_str(FILE *f, const char *s);

/* Writes at most max code points of s (SIZE_MAX: all), escaped for XML
 * and HTML text and attribute values: & < > " ' as entities, control
 * characters (but tab; DEL and U+0080-U+009F too) as '?', bytes that
 * are not UTF-8 as U+FFFD. */
void rd_xml_put(FILE *out, const char *s, size_t max);

/* Monotonic clock in ns. */
unsigned long long rd_now_ns(void);

/* The start of the file /proc/PID/NAME in buf (NUL-terminated, at most
 * cap - 1 bytes: NAME "stat", "cmdline", "task/TID/stat"...). Returns its
 * length, 0 when it cannot be read (the process is gone). */
size_t rd_proc_read(int pid, const char *name, char *buf, size_t cap);

/* Whether process pid maps the file at path (also once removed: "path
 * (deleted)"), by /proc/PID/maps: 0 when it does not (nor anything, a
 * zombie), 1 when it does or when that cannot be read. */
int rd_proc_maps(int pid, const char *path);

/* The state letter of a /proc stat line (after the command's last ')'),
 * or 0 if there is none. */
char rd_proc_state(const char *stat);

/* Wall clock: ms since the epoch. */
long long rd_wall_ms(void);

/* path opened for reading when it is a regular file, as a FILE (mode
 * "rb"): a FIFO or a device put in the place of a file recorderd finds by
 * itself (a session directory's trace.ltr and session.json) is refused,
 * never read, as its open or its read could wait for ever. Returns NULL
 * with errno set (EINVAL: not a regular file). */
FILE *rd_fopen_regular(const char *path);

#endif
