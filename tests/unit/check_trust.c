/* Unit tests of proto/lt_trust: what a socket's directory and listener
 * must be, and peer text made printable. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lt_trust.h"
#include "ut_main.h"

START_TEST(test_printable_escapes)
{
    char buf[64];
    const char in[] = "a\x1b[2J\tb\nc\x7f\x07";
    ck_assert_str_eq(lt_trust_printable(in, sizeof in - 1, buf, sizeof buf),
                     "a\\x1b[2J\tb\nc\\x7f\\x07");
    /* NUL bytes inside are escaped too: the length is the caller's */
    ck_assert_str_eq(lt_trust_printable("x\0y", 3, buf, sizeof buf), "x\\x00y");
}
END_TEST

START_TEST(test_printable_cut)
{
    char buf[6];
    /* an escape that does not fit whole is left out, never cut */
    ck_assert_str_eq(lt_trust_printable("ab\x1b", 3, buf, sizeof buf), "ab");
    ck_assert_str_eq(lt_trust_printable("abcdefgh", 8, buf, sizeof buf), "abcde");
    ck_assert_str_eq(lt_trust_printable("abc", 3, buf, 1), "");
}
END_TEST

static char g_tmp[64];

static void make_tmp(void)
{
    snprintf(g_tmp, sizeof g_tmp, "/tmp/check-trust-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(g_tmp));
}

/* g_tmp and the empty directories in it. */
static void remove_tmp(void)
{
    DIR *d = opendir(g_tmp);
    struct dirent *e;
    char path[512];
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(path, sizeof path, "%s/%s", g_tmp, e->d_name);
            rmdir(path);
        }
    if (d)
        closedir(d);
    rmdir(g_tmp);
}

static int dir_with_mode(const char *name, mode_t mode, char *sock, size_t cap)
{
    char dir[128];
    snprintf(dir, sizeof dir, "%s/%s", g_tmp, name);
    if (mkdir(dir, 0700) < 0 || chmod(dir, mode) < 0)
        return -errno;
    snprintf(sock, cap, "%s/s.sock", dir);
    char why[512];
    return lt_trust_dir(sock, geteuid(), why, sizeof why);
}

START_TEST(test_dir_modes)
{
    char sock[256], why[512];
    make_tmp();
    ck_assert_int_eq(dir_with_mode("private", 0700, sock, sizeof sock), 0);
    ck_assert_int_eq(dir_with_mode("readable", 0755, sock, sizeof sock), 0);
    ck_assert_int_eq(dir_with_mode("groupw", 0770, sock, sizeof sock), -EPERM);
    ck_assert_int_eq(dir_with_mode("open", 0777, sock, sizeof sock), -EPERM);
    ck_assert_int_eq(lt_trust_dir("/nonexistent-dir/s.sock", geteuid(), why, sizeof why),
                     -ENOENT);
    /* another owner: refused whatever the mode */
    ck_assert_int_eq(lt_trust_dir("/tmp/x.sock", geteuid() + 1, why, sizeof why), -EPERM);
    ck_assert_ptr_nonnull(strstr(why, "is not a directory of yours"));
    remove_tmp();
}
END_TEST

START_TEST(test_dir_default_strict)
{
    char sock[256], why[512];
    make_tmp();
    setenv("XDG_RUNTIME_DIR", g_tmp, 1);
    /* the default directory may not even be readable by others */
    ck_assert_int_eq(dir_with_mode("luatrace", 0750, sock, sizeof sock), -EPERM);
    *strrchr(sock, '/') = 0;
    ck_assert_int_eq(chmod(sock, 0700), 0);
    strcat(sock, "/s.sock");
    ck_assert_int_eq(lt_trust_dir(sock, geteuid(), why, sizeof why), 0);
    remove_tmp();
}
END_TEST

START_TEST(test_peer)
{
    int sv[2];
    char why[512];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ck_assert_int_eq(lt_trust_peer(sv[0], geteuid(), why, sizeof why), 0);
    ck_assert_int_eq(lt_trust_peer(sv[0], geteuid() + 1, why, sizeof why), -EPERM);
    ck_assert_ptr_nonnull(strstr(why, "not as you"));
    close(sv[0]);
    close(sv[1]);
}
END_TEST

UT_MAIN("trust", NULL, NULL, test_printable_escapes, test_printable_cut, test_dir_modes,
        test_dir_default_strict, test_peer)
