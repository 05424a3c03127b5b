/* rd_srcperm: may a report embed this source (rd_srcperm.h). */
#include "rd_srcperm.h"

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_OWNERS 8
#define MAX_GROUPS 256

typedef struct owner {
    uid_t uid;
    int ngid;
    gid_t gid[MAX_GROUPS];
} owner;

static _Thread_local owner g_owner[MAX_OWNERS];
static _Thread_local int g_nowner;
static _Thread_local int g_overflow; /* more owners than kept: nothing is read */

/* uid's groups, as login would give them; none if uid has no account. */
static void owner_groups(owner *o)
{
    char buf[16384];
    struct passwd pw, *res = NULL;
    o->ngid = 0;
    if (getpwuid_r(o->uid, &pw, buf, sizeof buf, &res) || !res)
        return;
    int n = MAX_GROUPS;
    if (getgrouplist(pw.pw_name, pw.pw_gid, o->gid, &n) < 0)
        n = MAX_GROUPS; /* the first MAX_GROUPS were filled in */
    o->ngid = n < 0 ? 0 : n > MAX_GROUPS ? MAX_GROUPS : n;
}

void rd_src_owner_add(uid_t uid)
{
    if (uid == 0 || uid == geteuid())
        return;
    for (int i = 0; i < g_nowner; i++)
        if (g_owner[i].uid == uid)
            return;
    if (g_nowner == MAX_OWNERS) {
        g_overflow = 1;
        return;
    }
    g_owner[g_nowner].uid = uid;
    owner_groups(&g_owner[g_nowner++]);
}

void rd_src_owner_reset(void)
{
    g_nowner = 0;
    g_overflow = 0;
}

/* The permission bits that apply to o (the owner's, a group's, or the
 * others'; one class only, as the kernel picks it), tested for want
 * (4: read, 1: search). */
static int may(const owner *o, const struct stat *st, unsigned want)
{
    if (st->st_uid == o->uid)
        return (st->st_mode >> 6 & want) == want;
    for (int i = 0; i < o->ngid; i++)
        if (o->gid[i] == st->st_gid)
            return (st->st_mode >> 3 & want) == want;
    return (st->st_mode & want) == want;
}

static int all_may(const struct stat *st, unsigned want)
{
    for (int i = 0; i < g_nowner; i++)
        if (!may(&g_owner[i], st, want))
            return 0;
    return 1;
}

/* Every directory above the file open at fd lets every owner pass. Its
 * path is the one the kernel has for the descriptor: the file that was
 * opened, wherever the name the trace gave led (symlinks, ..). */
static int dirs_passable(int fd)
{
    char link[64], path[PATH_MAX];
    struct stat st;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0 || path[0] != '/')
        return 0;
    path[n] = 0;
    char *end = strrchr(path, '/');
    for (char *p = path; p && p <= end; p = strchr(p + 1, '/')) {
        char keep = p[1];
        p[1] = 0; /* "/", "/a/", "/a/b/" */
        int ok = stat(path, &st) == 0 && S_ISDIR(st.st_mode) && all_may(&st, 1);
        p[1] = keep;
        if (!ok)
            return 0;
    }
    return 1;
}

int rd_src_allowed(int fd, const struct stat *st)
{
    if (g_overflow)
        return -EACCES;
    if (!g_nowner)
        return 0;
    return all_may(st, 4) && dirs_passable(fd) ? 0 : -EACCES;
}
