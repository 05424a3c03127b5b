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
 * it, since recorderd makes it 0700. */
static int own_dir(const char *dir, uid_t uid)
{
    char def[4096], pre[64];
    lt_ctl_default_path(def, sizeof def);
    char *slash = strrchr(def, '/');
    *slash = 0;
    int n = snprintf(pre, sizeof pre, "/tmp/luatrace-%u", (unsigned)uid);
    return !strcmp(dir, def) ||
           (!strncmp(dir, pre, (size_t)n) && (dir[n] == 0 || dir[n] == '/'));
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
    struct stat st;
    if (lstat(dir, &st) < 0) {
        int e = -errno;
        snprintf(why, cap, "%s: %s", dir, strerror(errno));
        return e;
    }
    mode_t others = own_dir(dir, uid) ? 077 : 022;
    if (!S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & others)) {
        snprintf(why, cap, "%s is not a directory of yours that only you can %s "
                 "(owner uid %u, mode %03o): not using the socket in it", dir,
                 others == 077 ? "use" : "write", (unsigned)st.st_uid,
                 (unsigned)(st.st_mode & 07777));
        return -EPERM;
    }
    return 0;
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
