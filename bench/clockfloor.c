/* clockfloor: the least a hook that times every event exactly must do, for
 * scripts/bench's `clockfloor` mode. On call, return and line it reads the
 * clock at its start (the program's time ends) and at its end (the hook's
 * own time ends), as the collector does, and writes one 16-byte record
 * (time since the last hook's end, event, line) into an in-memory ring the
 * size of the collector's default. Nothing reads the ring: the floor of
 * exact timing on this machine, not a tracer. */
#include <lua.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static inline uint64_t ticks(void)
{
    return __rdtsc();
}
#else
static inline uint64_t ticks(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif

#define RING_SIZE (8u << 20) /* LT_RING_DEFAULT_SIZE */

static uint64_t *ring;
static uint64_t pos, last;

static void floor_hook(lua_State *L, lua_Debug *ar)
{
    (void)L;
    uint64_t t0 = ticks();
    uint64_t *r = ring + (pos & (RING_SIZE / 8 - 1));
    r[0] = t0 - last;
    r[1] = (uint64_t)ar->event | (uint64_t)(uint32_t)ar->currentline << 8;
    pos += 2;
    last = ticks();
}

__attribute__((visibility("default"))) int luaopen_clockfloor(lua_State *L)
{
    ring = calloc(RING_SIZE / 8, 8);
    if (ring) {
        last = ticks();
        lua_sethook(L, floor_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE, 0);
    }
    lua_pushboolean(L, ring != NULL);
    return 1;
}
