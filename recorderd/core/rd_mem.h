/* rd_mem: memory accounting of a traced process (MEM records,
 * LUATRACE_MEMORY=1): per call-tree node the objects and bytes allocated
 * there, the bytes freed there, and what of it is live; and the table of
 * live blocks (address -> allocating node, size) that keeps "live" exact.
 * Memory is the live blocks' (16 bytes each, at most twice over for the
 * hash's room) and a row per node, never the number of records.
 *
 * Counting (doc/memory.md): a new block is an object and its bytes
 * allocated where it was made; a free is its bytes freed where it was
 * freed, and leaves the live bytes of the node that made it; a
 * reallocation is a growth (the difference allocated where it happened)
 * or a shrink (the difference freed there), no object, and the block
 * stays its maker's, its live bytes changed by the difference. A block
 * the trace never saw made (before tracing, or the collector's own):
 * its free is still bytes freed, but no live bytes leave anywhere; a
 * growth of it is live at the node that grew it, without an object.
 * One model is used by one thread at a time. */
#ifndef RD_MEM_H
#define RD_MEM_H

#include <stdint.h>

typedef struct rd_memrow {
    uint64_t alloc_n, alloc_b; /* objects and bytes allocated at the node */
    uint64_t freed_b;          /* bytes freed at the node */
    uint64_t live_n, live_b;   /* of those made at the node, still live */
} rd_memrow;

typedef struct rd_block {
    uint64_t addr; /* 0: an empty slot */
    uint32_t node; /* the maker; RD_BLOCK_OBJ set: an object of it (made, not grown) */
    uint32_t size; /* its bytes the node is charged with */
} rd_block;

#define RD_BLOCK_OBJ 0x80000000u

typedef struct rd_mem {
    rd_memrow *row; /* by node; NULL until the first MEM record */
    uint32_t caprow;
    rd_block *blk; /* open addressing by address, linear probing */
    uint32_t capblk, nblk;
    uint64_t *line_b; /* by model line slot: bytes allocated on that line of its
                         function's own frame (report.html's sources); NULL until
                         the first */
    uint32_t capline_b;
    uint64_t records;      /* MEM records applied */
    uint64_t unknown_free; /* frees of blocks the trace did not see made */
    uint64_t lost;         /* blocks not kept (no memory): their live bytes unknown */
} rd_mem;

void rd_mem_free(rd_mem *mm);
uint64_t rd_mem_bytes(const rd_mem *mm);

/* One MEM record (lt_event.h) made at node: size, osize, addr, oaddr as
 * the record says, already checked (sizes below 2^32, addr 0 exactly
 * when size is, oaddr 0 exactly when osize is, not both 0). Returns 0 or
 * -ENOMEM (the row could not grow: nothing charged). */
int rd_mem_apply(rd_mem *mm, uint32_t node, uint64_t size, uint64_t osize, uint64_t addr,
                 uint64_t oaddr);

/* The bytes a record of size, osize (as rd_mem_apply's) allocated: a new
 * block's size, a growth's difference, else 0. */
static inline uint64_t rd_mem_grown(uint64_t size, uint64_t osize)
{
    return size > osize ? size - osize : 0;
}

/* Adds bytes allocated on the line of model line slot lix - 1 (lix 0:
 * none). Returns 0 or -ENOMEM (not counted). */
int rd_mem_line(rd_mem *mm, uint32_t lix, uint64_t bytes);

/* The bytes allocated on model line slot i (0 if none). */
static inline uint64_t rd_mem_line_bytes(const rd_mem *mm, uint32_t i)
{
    return i < mm->capline_b ? mm->line_b[i] : 0;
}

/* Node n's row, or a row of zeros. */
const rd_memrow *rd_mem_row(const rd_mem *mm, uint32_t n);

#endif
