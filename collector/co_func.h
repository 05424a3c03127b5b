/* co_func.h: the function cache's hot path (co_func.c), inline in the hook
 * so that a call to a cached function makes no call of its own. */
#ifndef CO_FUNC_H
#define CO_FUNC_H

#include "lr_layout.h"
#include "co_state.h"

/* The closure of frame ar (Lua 5.1 layout: state_ok). */
static inline const uint8_t *co_func_closure(lua_State *L, const lua_Debug *ar)
{
    const char *ci = (const char *)lr_ptr_at(L, LS_BASE_CI) + (ptrdiff_t)ar->i_ci * CI_SIZE;
    return lr_ptr_at(lr_ptr_at(ci, CI_FUNC), 0);
}

/* co_func_id past its first probe: another layout, a collision, or a
 * function not seen yet. */
uint32_t co_func_id_slow(co_state *s, lua_State *L, lua_Debug *ar, uint32_t *flags);

/* The GC can reuse a freed Proto's address, and its source string's: two
 * chunks "=a" and "=b" loaded one after the other may get both. Where the
 * allocator is not watched (co_alloc.c), a hit on a Proto's address,
 * source and linedefined is also checked against this mix of the source's
 * contents (the hash Lua keeps in the string), lastlinedefined and the
 * code size. */
static inline uint32_t co_proto_shape(const void *pr)
{
    const void *src = lr_ptr_at(pr, PR_SOURCE);
    uint32_t h = src ? (uint32_t)lr_int_at(src, TS_HASH) : 0;
    return h ^ (uint32_t)lr_int_at(pr, PR_LASTLINE) * 0x9E3779B1u ^
           (uint32_t)lr_int_at(pr, PR_SIZECODE) * 0x85EBCA77u;
}

/* The id of the function of frame ar (0 if the trace is lost), its
 * LT_FF_* flags in *flags. The hot path: the function's entry at the first
 * slot it hashes to. A key is in the table once (insert replaces), and a
 * freed Proto's key leaves it before the next lookup (co_alloc.c: a free
 * clears key_only until co_func_id_slow has forgotten it), so a match
 * there is what a full lookup would find. */
static inline uint32_t co_func_id(co_state *s, lua_State *L, lua_Debug *ar, uint32_t *flags)
{
    if (__builtin_expect(s->key_only, 1)) {
        const co_fent *e = co_ftab_first(&s->ft, lr_ptr_at(co_func_closure(L, ar), CL_FP));
        if (__builtin_expect(e != NULL, 1)) {
            *flags = e->flags;
            return e->fid;
        }
    }
    return co_func_id_slow(s, L, ar, flags);
}

/* Whether T's top frame (Lua 5.1 layout: thread_ok) calls
 * coroutine.resume or a wrap function. For a thread of status LUA_YIELD
 * that says it runs all the same: C called Lua on the suspended thread
 * (luv, required inside a coroutine, runs its callbacks on that thread)
 * and that Lua resumed the thread running now; a thread that yielded has
 * coroutine.yield (or the C function that yielded) on top. */
static inline int co_func_top_resumes(const co_state *s, lua_State *T)
{
    const char *ci = lr_ptr_at(T, LS_CI);
    if (ci <= (const char *)lr_ptr_at(T, LS_BASE_CI))
        return 0;
    const char *func = lr_ptr_at(ci, CI_FUNC);
    if (lr_int_at(func, TV_TT) != LUA_TFUNCTION)
        return 0;
    const uint8_t *cl = lr_ptr_at(func, 0);
    const void *f = cl[CL_ISC] ? lr_ptr_at(cl, CL_FP) : NULL;
    return f && (f == (const void *)s->cf_resume || f == (const void *)s->cf_wrap);
}

/* push_body's function (co_func.c) read from co's structures, without a
 * push: the bottom frame's function (ci->func of base_ci + 1) of a started
 * coroutine, stack index 1 of one not started. NULL: none, or a C one. */
static inline const uint8_t *co_func_body(lua_State *co)
{
    const char *base_ci = lr_ptr_at(co, LS_BASE_CI), *slot;
    if ((const char *)lr_ptr_at(co, LS_CI) > base_ci)
        slot = lr_ptr_at(base_ci + CI_SIZE, CI_FUNC);
    else if (((const uint8_t *)co)[LS_STATUS] == 0 && lr_ptr_at(co, LS_TOP) > lr_ptr_at(co, LS_BASE))
        slot = lr_ptr_at(co, LS_BASE);
    else
        return NULL;
    const uint8_t *cl = lr_int_at(slot, TV_TT) == LUA_TFUNCTION ? lr_ptr_at(slot, 0) : NULL;
    return cl && !cl[CL_ISC] ? cl : NULL;
}

/* A call of a coroutine.wrap function whose coroutine co runs a known
 * body: that body's wraps' id from the first slot it hashes to, or 0
 * (then co_func_wrap_id). */
static inline uint32_t co_func_wrap_fast(const co_state *s, lua_State *co)
{
    const uint8_t *cl = s->key_only && co ? co_func_body(co) : NULL;
    if (!cl)
        return 0;
    const co_fent *e = co_ftab_first(&s->ft, (const char *)lr_ptr_at(cl, CL_FP) + 1); /* wrap_key */
    return e ? e->fid : 0;
}

#endif
