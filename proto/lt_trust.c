/* lt_trust: checking a socket's directory and its listener (lt_trust.h). */
#include "lt_trust.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lt_ctl.h"

/* A directory luatrace names by itself: nobody but its user may even list
 * it, since recorderd makes it 0700. *parent: its /tmp/luatrace-UID when
 * dir lies under it (then that one must be the user's alone too). */
static int own_dir(const char *dir, uid_t uid, char *parent, size_t cap)
{
    char def[4096];
    lt_ctl_default_path(def, sizeof def);
    *strrchr(def, '/') = 0;
    int n = snprintf(parent, cap, "/tmp/luatrace-%u", (unsigned)uid);
    int top = !strcmp(dir, parent);
    int under = !strncmp(dir, parent, (size_t)n) && dir[n] == '/';
    if (!under)
        parent[0] = 0;
    return top || under || !strcmp(dir, def);
}

static int check_dir(const char *dir, uid_t uid, char *why, size_t cap)
{
    char parent[64];
    struct stat st;
    if (lstat(dir, &st) < 0) {
        int e = -errno;
        snprintf(why, cap, "%s: %s", dir, strerror(errno));
        return e;
    }
    int own = own_dir(dir, uid, parent, sizeof parent);
    mode_t others = own ? 077 : 022;
    if (!S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & others)) {
        snprintf(why, cap, "%s is not a directory of yours that only you can %s "
                 "(owner uid %u, mode %03o): not using the socket in it", dir,
                 others == 077 ? "use" : "write", (unsigned)st.st_uid,
                 (unsigned)(st.st_mode & 07777));
        return -EPERM;
    }
    return parent[0] ? check_dir(parent, uid, why, cap) : 0;
}

int lt_trust_dir(const char *path, uid_t uid, char *why, size_t cap)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        slash[slash == dir] = 0; /* "/x" is in "/" */
    return check_dir(dir, uid, why, cap);
}

int lt_trust_peer(int fd, uid_t uid, char *why, size_t cap)
{
    struct ucred cr;
    socklen_t len = sizeof cr;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0) {
        snprintf(why, cap, "cannot tell who listens: %s", strerror(errno));
        return -EPERM;
    }
    if (cr.uid != uid) {
        snprintf(why, cap, "the process listening (pid %d) runs as uid %u, not as you (uid %u)",
                 (int)cr.pid, (unsigned)cr.uid, (unsigned)uid);
        return -EPERM;
    }
    return 0;
}

int lt_trust_connect(const char *path, char *why, size_t cap)
{
    char what[512];
    uid_t uid = geteuid();
    int e = lt_trust_dir(path, uid, what, sizeof what);
    if (e) {
        snprintf(why, cap, "%s", what);
        return e;
    }
    int fd = lt_ctl_connect(path);
    if (fd < 0) {
        snprintf(why, cap, "cannot connect to recorderd at %s: %s", path, strerror(-fd));
        return fd;
    }
    e = lt_trust_peer(fd, uid, what, sizeof what);
    if (e) {
        close(fd);
        snprintf(why, cap, "%s: %s", path, what);
        return e;
    }
    return fd;
}

char *lt_trust_printable(const char *text, size_t n, char *buf, size_t cap)
{
    size_t o = 0;
    if (!cap)
        return buf;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        int esc = (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f;
        if (o + (esc ? 4 : 1) >= cap)
            break;
        if (esc)
            o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", c);
        else
            buf[o++] = (char)c;
    }
    buf[o] = 0;
    return buf;
}
