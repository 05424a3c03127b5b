/* rd_heapslot: a heap path's step through a thread's stack, named as a
 * person reads it: the local variable of the function whose frame holds
 * the slot ("local top_line of function (luacheck/check_state.lua:12)"),
 * read from the thread's CallInfos and the function's prototype, as Lua's
 * own luaF_getlocalname finds a local's name. Read from outside: a frame
 * that changed meanwhile gives the bare slot number. */
#include "rd_heapslot.h"

#include <lua.h>
#include <stdio.h>
#include <string.h>

#include "lr_layout.h"
#include "rd_heapwalk.h"

enum { MAX_CI = 1 << 16, MAX_LOC = 4096, PR_CODE_ = PR_CODE };

/* The CallInfos of the thread read last: a report names many slots of one
 * thread (its deep stack read once, not once a path). */
static struct {
    pid_t pid;
    uintptr_t thread, base_ci;
    size_t n;
    uint8_t ci[MAX_CI * CI_SIZE];
} g_cis;

static uintptr_t ptr(const uint8_t *b, int off)
{
    return (uintptr_t)lr_ptr_at(b, off);
}

/* The source of prototype p, short: from the Lua library root if under
 * one, else its last two components. */
static void source_of(pid_t pid, const uint8_t *p, char *out, size_t cap)
{
    uint8_t ts[TS_SIZE];
    char s[512] = "?";
    uint64_t len = 0;
    if (!rd_heapwalk_copy(pid, ts, ptr(p, PR_SOURCE), sizeof ts)) {
        memcpy(&len, ts + TS_LEN, sizeof len);
        size_t n = len < sizeof s - 1 ? (size_t)len : sizeof s - 1;
        if (!rd_heapwalk_copy(pid, s, ptr(p, PR_SOURCE) + TS_SIZE, n))
            s[n] = 0;
    }
    const char *f = s[0] == '@' || s[0] == '=' ? s + 1 : s, *root = strstr(f, "/lua/5.1/");
    if (root)
        f = root + 9;
    else
        for (int k = 0, i = (int)strlen(f); i-- > 0;)
            if (f[i] == '/' && ++k == 2) {
                f += i + 1;
                break;
            }
    snprintf(out, cap, "%s", f);
}

/* The name of the n-th (1-based) local active at pc in prototype p. */
static int local_name(pid_t pid, const uint8_t *p, int n, int pc, char *out, size_t cap)
{
    static uint8_t lvs[MAX_LOC * LV_SIZE];
    int nloc = lr_int_at(p, PR_SIZELOC);
    nloc = nloc < 0 ? 0 : nloc > MAX_LOC ? MAX_LOC : nloc;
    if (rd_heapwalk_copy(pid, lvs, ptr(p, PR_LOCVARS), (size_t)nloc * LV_SIZE))
        return -1;
    for (int i = 0; i < nloc; i++) {
        const uint8_t *lv = lvs + (size_t)i * LV_SIZE;
        if (lr_int_at(lv, 8) > pc)
            break; /* locals are in order of their start */
        if (pc < lr_int_at(lv, 12) && --n == 0) {
            uint8_t ts[TS_SIZE];
            uint64_t len = 0;
            if (rd_heapwalk_copy(pid, ts, ptr(lv, 0), sizeof ts))
                return -1;
            memcpy(&len, ts + TS_LEN, sizeof len);
            size_t k = len < cap - 1 ? (size_t)len : cap - 1;
            if (rd_heapwalk_copy(pid, out, ptr(lv, 0) + TS_SIZE, k))
                return -1;
            out[k] = 0;
            return 0;
        }
    }
    return -1;
}

/* Slot k of the frame whose function is at ci's func, named. */
static void in_frame(pid_t pid, const uint8_t *ci, uintptr_t stack, uintptr_t savedpc,
                     size_t k, char *out, size_t cap)
{
    uint8_t fn[TV_SIZE], cl[CL_READ], p[PR_READ];
    char src[128], name[64];
    size_t f = (ptr(ci, CI_FUNC) - stack) / TV_SIZE, base = (ptr(ci, CI_BASE) - stack) / TV_SIZE;
    if (rd_heapwalk_copy(pid, fn, ptr(ci, CI_FUNC), sizeof fn) || lr_int_at(fn, TV_TT) != LUA_TFUNCTION ||
        rd_heapwalk_copy(pid, cl, ptr(fn, 0), sizeof cl) || cl[CL_ISC] ||
        rd_heapwalk_copy(pid, p, ptr(cl, CL_FP), sizeof p)) {
        snprintf(out, cap, "(stack %zu, a C function's)", k);
        return;
    }
    source_of(pid, p, src, sizeof src);
    int line = lr_int_at(p, PR_LINEDEF);
    char where[192];
    snprintf(where, sizeof where, line ? "function (%s:%d)" : "main chunk (%s)", src, line);
    int pc = (int)((savedpc - ptr(p, PR_CODE_)) / 4) - 1;
    if (k == f)
        snprintf(out, cap, "(stack: the %s being called)", where);
    else if (k < base)
        snprintf(out, cap, "(stack: a vararg of %s)", where);
    else if (!local_name(pid, p, (int)(k - base) + 1, pc, name, sizeof name))
        snprintf(out, cap, "(local %s of %s)", name, where);
    else
        snprintf(out, cap, "(stack: a temporary of %s)", where);
}

void rd_heapslot_name(pid_t pid, uintptr_t thread, size_t slot, char *out, size_t cap)
{
    uint8_t l[LS_READ], ci[CI_SIZE];
    snprintf(out, cap, "(stack %zu)", slot);
    if (rd_heapwalk_copy(pid, l, thread, sizeof l))
        return;
    uintptr_t stack = ptr(l, LS_STACK), base_ci = ptr(l, LS_BASE_CI), cur = ptr(l, LS_CI);
    if (cur < base_ci || (cur - base_ci) / CI_SIZE >= MAX_CI)
        return;
    size_t n = (cur - base_ci) / CI_SIZE + 1;
    if (g_cis.pid != pid || g_cis.thread != thread || g_cis.base_ci != base_ci ||
        g_cis.n != n) {
        g_cis.n = 0;
        if (rd_heapwalk_copy(pid, g_cis.ci, base_ci, n * CI_SIZE))
            return;
        g_cis.pid = pid, g_cis.thread = thread, g_cis.base_ci = base_ci, g_cis.n = n;
    }
    /* the frame holding the slot: the last whose function is at or below it */
    for (size_t j = n; j-- > 0;) {
        memcpy(ci, g_cis.ci + j * CI_SIZE, sizeof ci);
        uintptr_t f = ptr(ci, CI_FUNC);
        if (f < stack || (f - stack) / TV_SIZE > slot)
            continue;
        /* where it is: the thread's own savedpc for the running frame, the
         * frame's for one that called the next */
        uintptr_t pc = j + 1 == n ? ptr(l, LS_SAVEDPC) : ptr(ci, CI_SAVEDPC);
        in_frame(pid, ci, stack, pc, slot, out, cap);
        return;
    }
}
