/* nomem: an LD_PRELOAD library for tests that makes the collector run out
 * of memory. Anonymous mmap calls made from luatrace.so (its tables live
 * in mappings of their own, co_mem.c) fail with ENOMEM once NOMEM_AFTER of
 * them have succeeded; every other mapping, the Lua state's and libc's,
 * goes through (tests/integration/collector.py, case nomem). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static long g_seen, g_after = -1;

static int from_collector(const void *caller)
{
    Dl_info di;
    return dladdr(caller, &di) && di.dli_fname && strstr(di.dli_fname, "luatrace");
}

__attribute__((visibility("default"))) void *mmap(void *addr, size_t len, int prot, int flags,
                                                  int fd, off_t off)
{
    if (g_after < 0) {
        const char *a = getenv("NOMEM_AFTER");
        g_after = a ? atol(a) : 1L << 62;
    }
    if ((flags & MAP_ANONYMOUS) && from_collector(__builtin_return_address(0)) &&
        ++g_seen > g_after) {
        errno = ENOMEM;
        return MAP_FAILED;
    }
    return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}
