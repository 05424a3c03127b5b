/* Unit tests for rd_outdir (files by directory descriptor) and rd_srcperm
 * (which sources a report of someone else's trace may read). */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rd_lines.h"
#include "rd_outdir.h"
#include "rd_srcperm.h"
#include "ut_main.h"

#define NOBODY 65534

static char g_tmp[64];
static char g_err[512];

static void path(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", g_tmp, name);
}

static void put(const char *name, const char *text, mode_t mode)
{
    char p[128];
    path(p, sizeof p, name);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    chmod(p, mode);
}

static char *get(const char *name)
{
    static char buf[256];
    char p[128];
    path(p, sizeof p, name);
    FILE *f = fopen(p, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

static int write_hello(FILE *f, void *ud)
{
    (void)ud;
    fputs("hello\n", f);
    return 0;
}

static int write_fails(FILE *f, void *ud)
{
    (void)ud;
    fputs("half", f);
    return -EIO;
}

START_TEST(test_open_symlink)
{
    char dir[128], link[128], slash[140];
    path(dir, sizeof dir, "real");
    path(link, sizeof link, "link");
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    ck_assert_int_eq(symlink(dir, link), 0);
    ck_assert_int_eq(rd_out_open(link, 1, g_err, sizeof g_err), -ELOOP);
    snprintf(slash, sizeof slash, "%s//", link); /* a trailing slash would follow it */
    ck_assert_int_eq(rd_out_open(slash, 1, g_err, sizeof g_err), -ELOOP);
    int fd = rd_out_open(dir, 0, g_err, sizeof g_err);
    ck_assert_int_ge(fd, 0);
    close(fd);
}
END_TEST

START_TEST(test_open_rule)
{
    const struct {
        mode_t mode;
        int ok;
    } cases[] = {{0777, 0}, {0770, 0}, {0757, 0}, {01777, 1}, {0755, 1}, {0700, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char dir[128], name[16];
        snprintf(name, sizeof name, "d%zu", i);
        path(dir, sizeof dir, name);
        ck_assert_int_eq(mkdir(dir, 0700), 0);
        chmod(dir, cases[i].mode);
        int fd = rd_out_open(dir, 0, g_err, sizeof g_err);
        if (cases[i].ok) {
            ck_assert_msg(fd >= 0, "mode %o: %s", (unsigned)cases[i].mode, g_err);
            close(fd);
        } else {
            ck_assert_msg(fd == -EPERM && strstr(g_err, "not sticky"), "mode %o: %d",
                          (unsigned)cases[i].mode, fd);
        }
    }
}
END_TEST

START_TEST(test_open_creates)
{
    char dir[128];
    struct stat st;
    path(dir, sizeof dir, "a/b/c");
    int fd = rd_out_open(dir, 1, g_err, sizeof g_err);
    ck_assert_msg(fd >= 0, "%s", g_err);
    close(fd);
    ck_assert_int_eq(stat(dir, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0700);
}
END_TEST

/* a directory that is not ours, in a session's place: nothing goes in */
START_TEST(test_subdir_not_ours)
{
    int dfd = open(g_tmp, O_RDONLY | O_DIRECTORY);
    char dir[128];
    path(dir, sizeof dir, "theirs");
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    ck_assert_int_eq(rd_out_subdir(dfd, "theirs", 1), -EEXIST);
    int fd = rd_out_subdir(dfd, "theirs", 0);
    ck_assert_int_ge(fd, 0); /* ours: fine */
    close(fd);
    if (geteuid() == 0) {
        ck_assert_int_eq(chown(dir, NOBODY, NOBODY), 0);
        ck_assert_int_eq(rd_out_subdir(dfd, "theirs", 0), -EPERM);
    }
    path(dir, sizeof dir, "sub_link");
    ck_assert_int_eq(symlink(g_tmp, dir), 0);
    ck_assert_int_lt(rd_out_subdir(dfd, "sub_link", 0), 0); /* never followed */
    close(dfd);
}
END_TEST

START_TEST(test_write_replaces_symlink)
{
    int dfd = open(g_tmp, O_RDONLY | O_DIRECTORY);
    char victim[128], link[128];
    struct stat st;
    put("victim", "victim\n", 0600);
    path(victim, sizeof victim, "victim");
    path(link, sizeof link, "r.txt");
    ck_assert_int_eq(symlink(victim, link), 0);
    ck_assert_int_eq(rd_out_write(dfd, "r.txt", write_hello, NULL), 0);
    ck_assert_str_eq(get("victim"), "victim\n");
    ck_assert_str_eq(get("r.txt"), "hello\n");
    ck_assert_int_eq(lstat(link, &st), 0);
    ck_assert(S_ISREG(st.st_mode));
    ck_assert_int_eq(st.st_mode & 0777, 0600);
    ck_assert_int_eq(entries(g_tmp), 2); /* no temporary left */
    ck_assert_int_eq(rd_out_write(dfd, "r.txt", write_fails, NULL), -EIO);
    ck_assert_str_eq(get("r.txt"), "hello\n"); /* the old one stays whole */
    ck_assert_int_eq(entries(g_tmp), 2);
    ck_assert_int_eq(rd_out_create(dfd, "r.txt"), -EEXIST);
    close(dfd);
}
END_TEST

/* 64 KiB in small writes, then in blocks larger than stdio's buffer (which
 * stdio writes straight through), the stream's error seen at the end only,
 * as the report writers do */
static int write_big(FILE *f, void *ud)
{
    static char block[32768];
    (void)ud;
    for (int i = 0; i < 4096; i++)
        fputs("0123456789abcde\n", f);
    for (int i = 0; i < 2; i++)
        fwrite(block, 1, sizeof block, f);
    return ferror(f) ? -EIO : 0;
}

/* A write that fails mid-report is said by its reason (EFBIG here, ENOSPC
 * on a full disk), not the writer's -EIO: stdio drops the buffer whose
 * write failed, so the final flush succeeds and knows nothing. */
START_TEST(test_write_error_reason)
{
    int dfd = open(g_tmp, O_RDONLY | O_DIRECTORY);
    struct rlimit old, lim = {10000, 10000};
    char p[128];
    signal(SIGXFSZ, SIG_IGN);
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim.rlim_max = old.rlim_max;
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    ck_assert_int_eq(rd_out_write(dfd, "big.txt", write_big, NULL), -EFBIG);
    ck_assert_int_eq(entries(g_tmp), 0); /* the temporary file is gone */
    path(p, sizeof p, "big.txt");
    ck_assert_int_eq(rd_out_write_path(p, write_big, NULL, g_err, sizeof g_err), -EFBIG);
    ck_assert_int_eq(entries(g_tmp), 0);
    setrlimit(RLIMIT_FSIZE, &old);
    close(dfd);
}
END_TEST

START_TEST(test_tmpfile)
{
    int dfd = open(g_tmp, O_RDONLY | O_DIRECTORY);
    int fd = rd_out_tmpfile(dfd);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "x", 1), 1);
    ck_assert_int_eq(entries(g_tmp), 0);
    close(fd);
    close(dfd);
}
END_TEST

static int can_read(const char *name)
{
    char p[128], err[256], *text;
    size_t len;
    path(p, sizeof p, name);
    int e = rd_lines_read(p, &text, &len, err, sizeof err);
    free(text);
    return e;
}

/* a report of nobody's trace reads what nobody may read, no more */
START_TEST(test_srcperm)
{
    if (geteuid() == NOBODY)
        return;
    chmod(g_tmp, 0755);
    put("public.lua", "x = 1\n", 0644);
    put("private.lua", "x = 1\n", 0600);
    put("group.lua", "x = 1\n", 0640);
    ck_assert_int_eq(can_read("private.lua"), 0); /* ours: no condition yet */
    rd_src_owner_add(geteuid()); /* ourselves add none */
    ck_assert_int_eq(can_read("private.lua"), 0);
    rd_src_owner_add(NOBODY);
    ck_assert_int_eq(can_read("public.lua"), 0);
    ck_assert_int_eq(can_read("private.lua"), -EACCES);
    ck_assert_int_eq(can_read("group.lua"), -EACCES);
    chmod(g_tmp, 0700); /* nobody may not pass the directory */
    ck_assert_int_eq(can_read("public.lua"), -EACCES);
    chmod(g_tmp, 0755);
    rd_src_owner_reset();
    ck_assert_int_eq(can_read("private.lua"), 0);
}
END_TEST

static void rm_rf(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static void tmp_setup(void)
{
    snprintf(g_tmp, sizeof g_tmp, "/tmp/check_outdir.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(g_tmp));
    umask(022);
}

static void tmp_teardown(void)
{
    rd_src_owner_reset();
    rm_rf(g_tmp);
}

UT_MAIN("outdir", tmp_setup, tmp_teardown, test_open_symlink, test_open_rule, test_open_creates,
        test_subdir_not_ours, test_write_replaces_symlink, test_write_error_reason,
        test_tmpfile, test_srcperm)
