/* rd_stack: rebuilds every call stack of a traced process from its event
 * records and accumulates the profile into an rd_model's call tree.
 *
 * Rules (doc/design.md has them and the facts about Lua 5.1's hooks they
 * rest on; tests/unit/check_stack.c has a case for each):
 * - One stack per thread (coroutine). RESUME pushes a thread on the resume
 *   chain and hangs its stack under the resumer's current frame; YIELD pops
 *   it (and forgets it when it died). Code in a coroutine is thus charged
 *   under its resumer's stack. A THREAD record for an id in use ends that
 *   thread (collected while suspended): its frames are unwound, its track
 *   ends, and the id starts an empty stack.
 * - Every record carries the depth (CallInfo index) of the frame it
 *   concerns. Frames deeper than that were unwound by an error nobody
 *   announced (E): they are popped.
 * - Lua 5.1 reports a tail call as a call one level deeper than the frame
 *   it replaces. A Lua frame whose first record arrives one level lower
 *   than it was called at was tail-called (T): it replaces its caller. Its
 *   call is counted once that is known.
 * - dt on a record belongs to the frame and line on top before the record.
 * - Each charge to a node also goes to the share of the running coroutine
 *   in it (rd_tnode): frames cache theirs, as they cache their line slot.
 */
#ifndef RD_STACK_H
#define RD_STACK_H

#include "rd_model.h"

/* The frames one thread's stack may hold: more than any Lua allows (5.1
 * stops at 20 000 calls, LuaJIT's stack at 65 500 slots, 5.4's at 1 000 000
 * slots, one or more a frame), so a deeper one is forged or corrupt. */
#define RD_DEPTH_MAX (1u << 20)

typedef struct rd_frame {
    uint32_t depth, fid, node, line;
    uint32_t lix;       /* rd_model line slot + 1 of (fid, line); 0 none */
    uint32_t tix;       /* rd_model tnode + 1 of (its thread's track, node) to charge; 0
                           none (its node's first share: implied, see rd_tnode) */
    uint8_t fresh;  /* Lua frame called, no record of its own yet */
    uint8_t is_lua;
    uint64_t t_call; /* ticks_total when it was called (listeners only) */
} rd_frame;

/* Why a frame entered or left the rebuilt stack. */
enum rd_how {
    RD_CALL,   /* enter: called; leave: returned */
    RD_TAIL,   /* enter: tail-called (T); leave: replaced by a tail call */
    RD_UNWIND, /* leave: unwound by an error (E) */
    RD_SNAP,   /* enter: found on the stack when tracing began (S) */
    RD_STOP,   /* leave: tracing stopped, or the stack was replaced by a snapshot */
};

/* An optional observer of the rebuilt stacks, for streaming backends
 * (timelines, user Lua backends). t is the traced time in ticks since the
 * trace began (rd_model's clock converts it); thread is the coroutine's
 * rd_model track's serial: 0 for the first thread seen, then one per
 * coroutine in order of appearance, never reused (the collector's ids
 * are), the same across a STOP and START; RD_LS_NO_TRACK if memory ran out.
 * enter of a Lua call is reported once its first record settles it (so a
 * tail call is never reported as a call), with the time of the call. */
#define RD_LS_NO_TRACK UINT64_MAX

typedef struct rd_listener {
    void *ud;
    void (*enter)(void *ud, uint64_t thread, const rd_frame *f, uint32_t level,
                  enum rd_how how, uint64_t t);
    void (*leave)(void *ud, uint64_t thread, const rd_frame *f, uint32_t level,
                  enum rd_how how, uint64_t t);
    void (*line)(void *ud, uint64_t thread, const rd_frame *f, uint32_t level, uint64_t t);
    void (*thread)(void *ud, uint64_t thread, uint64_t t); /* becomes current */
    /* thread is gone (its coroutine died or was collected): its frames
     * have left; a thread whose stack merely emptied (the main thread of
     * a host calling into Lua from C) is not gone */
    void (*end)(void *ud, uint64_t thread, uint64_t t);
} rd_listener;

typedef struct rd_thread {
    uint64_t id; /* the collector's thread id (lt_event.h THREAD); 0 = free slot */
    uint64_t addr; /* its lua_State address, for display; 0 if not told */
    rd_frame *f;
    uint32_t n, cap;
    uint32_t base; /* call-tree node the stack hangs under */
    uint32_t track;    /* rd_model track + 1; 0 until its first frame or time */
    uint32_t base_tix; /* tnode + 1 of (track, base); 0: not looked up yet */
    uint64_t fresh_ticks; /* charged while the top was an unsettled Lua call */
} rd_thread;

typedef struct rd_stack {
    rd_model *m;
    rd_thread *th; /* open addressing by id */
    uint32_t capth, nth;
    uint64_t *chain; /* resume chain of thread ids, current last */
    uint32_t nchain, capchain;
    rd_thread *cur;  /* cache of the current thread, NULL = look it up */
    rd_frame *spare; /* a dropped thread's frames, for the next new one */
    uint32_t capspare;
    rd_frame *snap; /* frames of a START being received */
    uint32_t nsnap, capsnap;
    uint64_t snap_thread;
    int in_snap;
    int snap_begin; /* the START began tracing (not a late-hooked thread) */
    int stopped;    /* after STOP until the next START */
    uint64_t unwinds, tails, gaps, dropped, bad;
    const rd_listener *ls; /* NULL: no listener (the common, fast case) */
    uint64_t ls_t;         /* the last time reported to it */
    lt_dec dec;            /* the record stream's state (rd_replay_feed) */
    uint64_t fed;          /* record bytes applied (rd_replay's memory bound) */
    int too_deep;          /* a thread's stack passed RD_DEPTH_MAX */
} rd_stack;

int rd_stack_init(rd_stack *s, rd_model *m);
void rd_stack_free(rd_stack *s);

/* About the bytes the rebuilt stacks hold on the heap (rd_model_bytes
 * does the model's). */
uint64_t rd_stack_bytes(const rd_stack *s);

/* Applies one decoded record. Never fails on bad input: inconsistent
 * records are counted in s->bad and skipped. Returns -ENOMEM only. */
int rd_stack_event(rd_stack *s, const lt_event *ev);

/* Applies every complete record in p[0..n) (the stream state is s->dec):
 * the steps and short forms, nearly all records, are decoded and applied
 * inline, the others through lt_dec_next and rd_stack_event. Returns the
 * bytes used (a trailing partial record is left), or -EPROTO (bytes that
 * are no record) / -ENOMEM / -E2BIG (a stack past RD_DEPTH_MAX), with *at
 * the offset of the record. */
int64_t rd_stack_feed(rd_stack *s, const uint8_t *p, size_t n, size_t *at);

/* Ends input: completes a pending snapshot, folds the ended coroutines
 * still to fold. */
void rd_stack_finish(rd_stack *s);

/* The current thread's stack (NULL if none). For tests. */
const rd_thread *rd_stack_current(const rd_stack *s);

#endif
