/* resume_host: a test program that drives Lua from C the way a game engine
 * or a server does, with the main thread running no Lua in between:
 *
 *     resume_host SCRIPT ROUNDS
 *
 * loads luatrace (require, when LUATRACE_SHM is set), runs SCRIPT (which
 * defines the globals body, bad, tick and finish), then for each round
 * makes a thread with lua_newthread and lua_resume's it from C until it
 * ends: body(round) yields a few times, every third round bad(round)
 * raises instead; after each yield, tick(round) runs on the main thread by
 * lua_pcall from C. Last, finish() prints the transcript.
 * (tests/integration/collector.py, case hostresume.)
 *
 * With RESUME_HOST_THREAD_FIRST set, SCRIPT itself runs in a thread made
 * by lua_newthread, resumed from C: the first Lua a start-up load of the
 * collector sees is not on the main thread.
 *
 * With RESUME_HOST_LISTEN set, it listens for `recorderd attach` instead
 * (require("luatrace").listen()), prints READY, and sleeps a millisecond
 * after each round (tests/integration/attach_truth.py, case hostattach). */
#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int call(lua_State *L, const char *fn, int arg)
{
    lua_getglobal(L, fn);
    lua_pushinteger(L, arg);
    if (lua_pcall(L, 1, 0, 0)) {
        fprintf(stderr, "resume_host: %s: %s\n", fn, lua_tostring(L, -1));
        return -1;
    }
    return 0;
}

static int round_of(lua_State *L, int round)
{
    lua_State *co = lua_newthread(L);
    lua_getglobal(co, round % 3 == 0 ? "bad" : "body");
    lua_pushinteger(co, round);
    int st, nargs = 1;
    while ((st = lua_resume(co, nargs)) == LUA_YIELD) {
        lua_settop(co, 0);
        nargs = 0;
        if (call(L, "tick", round))
            return -1;
    }
    printf("round %d: %s\n", round, st == 0 ? "done" : lua_tostring(co, -1));
    lua_pop(L, 1);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: resume_host SCRIPT ROUNDS\n");
        return 2;
    }
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    int listen = getenv("RESUME_HOST_LISTEN") != NULL;
    if (listen && luaL_dostring(L, "assert(require('luatrace').listen())")) {
        fprintf(stderr, "resume_host: %s\n", lua_tostring(L, -1));
        return 1;
    }
    if (getenv("LUATRACE_SHM")) {
        lua_getglobal(L, "require");
        lua_pushstring(L, "luatrace");
        if (lua_pcall(L, 1, 0, 0)) {
            fprintf(stderr, "resume_host: %s\n", lua_tostring(L, -1));
            return 1;
        }
    }
    if (getenv("RESUME_HOST_THREAD_FIRST")) {
        lua_State *co = lua_newthread(L);
        if (luaL_loadfile(co, argv[1]) || lua_resume(co, 0)) {
            fprintf(stderr, "resume_host: %s\n", lua_tostring(co, -1));
            return 1;
        }
        lua_pop(L, 1);
    } else if (luaL_dofile(L, argv[1])) {
        fprintf(stderr, "resume_host: %s\n", lua_tostring(L, -1));
        return 1;
    }
    int rounds = atoi(argv[2]), failed = 0;
    if (listen) {
        printf("READY\n");
        fflush(stdout);
    }
    for (int r = 1; r <= rounds && !failed; r++) {
        failed = round_of(L, r);
        if (listen)
            usleep(1000);
    }
    failed = failed || call(L, "finish", rounds);
    lua_close(L);
    return failed ? 1 : 0;
}
