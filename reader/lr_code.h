/* lr_code: the Lua functions a reader of a running process has seen, kept
 * from read to read, and the one whose code holds a saved pc. Read as it
 * runs, a fast recursion (fib) calls and returns many times within the one
 * copy of a thread (a microsecond and more): a frame's slot then often
 * holds its callee's result by the time it is copied, and the frame is
 * told by its saved pc instead (lr_stackread). */
#ifndef LR_CODE_H
#define LR_CODE_H

#include <stdint.h>

enum { LR_CODE_MAX = 128 }; /* functions kept: the oldest gives way */

typedef struct lr_code_fn {
    const void *pr;   /* its Proto, */
    const void *cl;   /* a closure last seen running it, */
    const void *code; /* and the Proto's code, */
    uint32_t ncode;   /* of this many instructions */
} lr_code_fn;

typedef struct lr_code {
    lr_code_fn fn[LR_CODE_MAX];
    uint32_t n, next; /* entries used; the one given up next when full */
} lr_code;

/* Keeps Proto pr (copied in p, PR_READ bytes), seen running in closure
 * cl; the entry of pr if kept already (its closure updated). */
void lr_code_note(lr_code *k, const void *cl, const void *pr, const uint8_t *p);

/* The entry at or after *at whose code holds pc (an instruction's
 * address), its index in *at; NULL when none. The entry is what was seen,
 * the caller checks that its Proto still reads so. */
const lr_code_fn *lr_code_find(const lr_code *k, const void *pc, uint32_t *at);

#endif
