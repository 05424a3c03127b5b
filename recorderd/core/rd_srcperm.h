/* rd_srcperm: which source files a report may embed. A trace names files
 * (its chunk names are whatever the traced program chose: loadstring(s,
 * "@/etc/shadow") names /etc/shadow), and the html, annotate and coverage
 * reports copy the lines of the files it names. Reported by someone other
 * than who made it (root, a colleague), a crafted trace would copy into
 * the report files its maker may not read. So a source is read only if
 * every trace owner given here could read it too: its maker (the owner of
 * the trace file: recorderd writes a trace as the traced process's own
 * user) as well as the reporting user (whose open() decides the rest).
 * With no owner given, or only ourselves, nothing more than open() is
 * asked. Per thread: each report is made on one thread. */
#ifndef RD_SRCPERM_H
#define RD_SRCPERM_H

#include <sys/stat.h>
#include <sys/types.h>

/* Sources must also be readable by uid (the owner of a trace that is
 * reported). Ourselves and root add nothing. */
void rd_src_owner_add(uid_t uid);

/* Forgets the owners added on this thread. */
void rd_src_owner_reset(void);

/* 0 if the open file fd (st: its fstat) may be read for every owner
 * added: its mode bits let each read it (as owner, through one of their
 * groups, or as anyone) and every directory of the path it is open at lets
 * each pass. -EACCES if not. */
int rd_src_allowed(int fd, const struct stat *st);

#endif
