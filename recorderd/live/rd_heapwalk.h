/* rd_heapwalk: the objects a Lua 5.1 state reaches from its roots, read
 * from another process (process_vm_readv) breadth first, each with its
 * own size and the edge it was first reached by: a tree whose paths are
 * the shortest from a root. Bounded in objects and time. */
#ifndef RD_HEAPWALK_H
#define RD_HEAPWALK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* How an object is held by its parent (the tree's edge). */
enum {
    HE_ROOT,    /* key: HR_* */
    HE_FIELD,   /* a table's value under a string key: key is the TString's address */
    HE_NUMKEY,  /* ... under a number key: key is the double's bits */
    HE_INDEX,   /* ... in the array part: key is the index (1-based) */
    HE_OTHERKEY,/* ... under another key: key is its type (LUA_T*), | 256 for true */
    HE_KEY,     /* a table's key object itself */
    HE_META,    /* a table's or userdata's metatable */
    HE_ENV,     /* a function's or userdata's environment */
    HE_UPVAL,   /* a closure's upvalue: key is its name's TString (0 unknown) */
    HE_PROTO,   /* a function's prototype, or a prototype's nested one */
    HE_CONST,   /* a prototype's constant or source */
    HE_STACK,   /* a slot of a thread's stack: key is its index */
    HE_GLOBALS  /* a thread's globals */
};
enum { HR_GLOBALS, HR_REGISTRY, HR_MAIN }; /* the roots, in this order */

/* Types: LUA_T* (5 table ... 8 thread), and: */
enum { HT_PROTO = 9, HT_UPVAL = 10, HT_CFUNC = 11, HT_NTYPES = 12 };

typedef struct rd_hobj {
    uintptr_t addr;
    uint64_t key;    /* the edge's: see HE_* */
    uint64_t size;   /* its own bytes, as Lua allocated them */
    uint64_t sub;    /* bytes of its subtree: itself and what was first reached through it */
    uint32_t parent; /* index; UINT32_MAX for a root */
    uint32_t nsub;   /* objects of its subtree */
    uint8_t type;    /* LUA_T*, HT_* */
    uint8_t edge;    /* HE_* */
    uint16_t extra;  /* a table: 1 if its hash part holds more than its array part */
} rd_hobj;

typedef struct rd_heapwalk {
    pid_t pid;
    const void *main;      /* the main thread */
    uint64_t deadline_us;  /* rd_gcwalk_now_us's clock */
    size_t max_objects;
    /* what the walk found */
    rd_hobj *o;
    size_t n;
    uint64_t totalbytes;   /* the state's own count (global_State.totalbytes) */
    uint64_t internal;     /* bytes of no object: the string table, the state, its buffer */
    size_t bad;            /* values that could not be read or were not what they said */
    int cut;               /* 1: max_objects reached, 2: out of time */
    int gone;              /* the process exited during the walk */
    size_t cap;            /* objects o has room for (grown up to max_objects) */
    /* internals: the set of addresses seen, and blocks of memory copied */
    uint32_t *set;
    size_t set_cap;
    void *cache;
    int weak;              /* the table being read: its __mode's WEAK_* */
    uintptr_t *wk;         /* the weak keys a walk met (a set of addresses) */
    size_t nwk, capwk;
    uintptr_t *dead;       /* weak keys no walk reached: their entries left out */
    size_t ndead, capdead;
} rd_heapwalk;

/* Walks the state whose main thread is w->main in w->pid. Returns 0, or
 * -errno (-ENOMEM, -EFAULT: the state cannot be read, -ESRCH: the process
 * exited during the walk); the objects are in
 * w->o[0..w->n), subtrees summed. rd_heapwalk_free frees them. */
int rd_heapwalk_run(rd_heapwalk *w);
void rd_heapwalk_free(rd_heapwalk *w);

/* n bytes at at in pid into dst (process_vm_readv): 0, or -1 with errno
 * (an address of 0 is refused). */
int rd_heapwalk_copy(pid_t pid, void *dst, uintptr_t at, size_t n);

/* Reads up to cap-1 bytes of the string at ts into buf (NUL-ended after
 * them, "" if it cannot be read; the string's own NULs are kept); returns
 * its length in the process. */
size_t rd_heapwalk_string(const rd_heapwalk *w, uintptr_t ts, char *buf, size_t cap);

#endif
