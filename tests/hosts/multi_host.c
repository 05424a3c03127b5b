/* multi_host: a C host with one Lua state per OS thread, as servers and
 * game engines that run scripts in parallel have:
 *
 *     multi_host SCRIPT STATES ROUNDS
 *
 * starts STATES threads at once; each makes its own state, runs SCRIPT
 * with its tag (A, B, ...) and ROUNDS, and prints the result when the
 * state is closed. The script requires luatrace, calls tron/tracing, runs
 * coroutines and loadstring'd chunks, and sets and removes hooks of its
 * own; a traced process traces one state and must leave the others
 * untraced and unharmed (tests/integration/collector.py, case multistate).
 */
#include <lauxlib.h>
#include <lualib.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_STATES 8

/* No state closes before every state has run: a closed state gives up the
 * claim (a state made after it may trace), so a slow thread (under a
 * sanitizer) would otherwise find the claim free and trace a second. */
static pthread_barrier_t g_all_ran;

typedef struct job {
    const char *script;
    char tag[2];
    int rounds;
    char result[256];
} job;

static void *run(void *arg)
{
    job *j = arg;
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    if (luaL_loadfile(L, j->script)) {
        snprintf(j->result, sizeof j->result, "%s", lua_tostring(L, -1));
    } else {
        lua_pushstring(L, j->tag);
        lua_pushinteger(L, j->rounds);
        if (lua_pcall(L, 2, 1, 0))
            snprintf(j->result, sizeof j->result, "error: %s", lua_tostring(L, -1));
        else
            snprintf(j->result, sizeof j->result, "%s", lua_tostring(L, -1));
    }
    pthread_barrier_wait(&g_all_ran);
    lua_close(L);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: multi_host SCRIPT STATES ROUNDS\n");
        return 2;
    }
    int n = atoi(argv[2]);
    if (n < 1 || n > MAX_STATES)
        n = MAX_STATES;
    pthread_barrier_init(&g_all_ran, NULL, (unsigned)n);
    job jobs[MAX_STATES];
    pthread_t t[MAX_STATES];
    for (int i = 0; i < n; i++) {
        jobs[i] = (job){.script = argv[1], .tag = {(char)('A' + i), 0}, .rounds = atoi(argv[3])};
        if (pthread_create(&t[i], NULL, run, &jobs[i])) {
            fprintf(stderr, "multi_host: cannot start a thread\n");
            return 1;
        }
    }
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < n; i++)
        printf("%s: %s\n", jobs[i].tag, jobs[i].result);
    return 0;
}
