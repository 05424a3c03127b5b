/* rd_mem: memory accounting of a traced process (MEM records,
 * LUATRACE_MEMORY=1): per call-tree node the objects and bytes allocated
 * there, the bytes freed there, and what of it is live; and the table of
 * live blocks (address -> allocating node, size) that keeps "live" exact.
 * Memory is the live blocks' (16 bytes each, at most twice over for the
 * hash's room; a block of 4 GiB or more, 16 more for its size) and a row
 * per node, never the number of records.
 *
 * Counting (doc/memory.md): a new block is an object and its bytes
 * allocated where it was made; a free is its bytes freed where it was
 * freed, and leaves the live bytes of the node that made it; a
 * reallocation is a growth (the difference allocated where it happened)
 * or a shrink (the difference freed there), no object, and the block
 * stays its maker's, its live bytes changed by the difference. A block
 * the trace never saw made (before tracing, or the collector's own):
 * its free is still bytes freed, but no live bytes leave anywhere. Its
 * first growth makes it a block of the node that grew it, without an
 * object, which then stays that node's as any block its maker's.
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
    uint32_t size; /* its bytes the node is charged with; RD_BLOCK_BIG: in rd_mem.big */
} rd_block;

#define RD_BLOCK_OBJ 0x80000000u
#define RD_BLOCK_BIG UINT32_MAX /* a block of this size or more (4 GiB) */

/* The size of a block of RD_BLOCK_BIG bytes or more (a few at most). */
typedef struct rd_bigblock {
    uint64_t addr, size;
} rd_bigblock;

/* A line slot's bytes before the tail's first allocation on it
 * (rd_mem_line), put back as the rows are (rd_mem_end). */
typedef struct rd_lineslot {
    uint32_t lix;
    uint64_t was;
} rd_lineslot;

/* The tail's line slots kept, at most: a tail is one frame's line, or a
 * few across a switch of threads. */
#define RD_TAIL_LINES 16u

/* A node's row, and what it held before the allocator calls since the
 * program's last hook (the tail: rd_mem_seal, rd_mem_end). */
typedef struct rd_memslot {
    rd_memrow now, was;
    uint64_t at; /* 1 + the hook count when was was taken; 0: never */
    /* live objects and bytes of the node's blocks freed while tracing was
     * off, taken from now if it restarts (rd_mem_off, rd_mem_resume) */
    uint64_t off_n, off_b;
} rd_memslot;

typedef struct rd_mem {
    rd_memslot *row; /* by node; NULL until the first MEM record */
    uint32_t caprow;
    uint64_t tail_at;      /* 1 + the hook count of the tail's records */
    uint64_t tail_records; /* records in the tail */
    rd_memrow *seal_was;   /* rd_mem_seal's rows as they were, */
    uint32_t *seal_node;   /* of these nodes */
    uint32_t nseal, capseal;
    rd_lineslot tail_line[RD_TAIL_LINES]; /* the lines the tail allocated on, */
    uint32_t ntail_line;                  /* how many (more lines: theirs stay) */
    rd_lineslot seal_line[RD_TAIL_LINES]; /* the sealed tail's */
    uint32_t nseal_line;
    uint64_t seal_lines, seal_records; /* when sealed: the lines run, its tail's records */
    int sealed;
    uint64_t after_end; /* records left out by rd_mem_end */
    rd_block *blk; /* open addressing by address, linear probing */
    uint32_t capblk, nblk;
    rd_bigblock *big; /* the sizes of the blocks in blk of RD_BLOCK_BIG */
    uint32_t capbig, nbig;
    uint64_t *line_b; /* by model line slot: bytes allocated on that line of its
                         function's own frame (report.html's sources); NULL until
                         the first */
    uint32_t capline_b;
    uint32_t *off_node; /* the nodes whose off_n or off_b is set */
    uint32_t noff, capoff;
    uint64_t records;      /* MEM records applied */
    uint64_t unknown_free; /* frees of blocks the trace did not see made */
    uint64_t lost;         /* blocks not kept (no memory): their live bytes unknown */
} rd_mem;

void rd_mem_free(rd_mem *mm);
uint64_t rd_mem_bytes(const rd_mem *mm);

/* One MEM record (lt_event.h) made at node: size, osize, addr, oaddr as
 * the record says, already checked (a reallocation's sizes below 2^32,
 * addr 0 exactly when size is, oaddr 0 exactly when osize is, not both
 * 0), after the
 * program's hook number hooks (rd_model.hooked). Returns 0 or -ENOMEM
 * (the row could not grow: nothing charged). */
int rd_mem_apply(rd_mem *mm, uint32_t node, uint64_t size, uint64_t osize, uint64_t addr,
                 uint64_t oaddr, uint64_t hooks);

/* One MEM record while tracing is off (after a STOP: troff): a free or
 * reallocation of a block the trace may have seen made. Nothing is
 * counted, but the block leaves the table (a reallocation's moves,
 * charged at most its new size) and its bytes are noted off its maker's
 * live ones: they leave them if tracing restarts (rd_mem_resume); else
 * live at the end is what was live at the STOP. 0 or -ENOMEM. */
int rd_mem_off(rd_mem *mm, uint64_t size, uint64_t addr, uint64_t oaddr);

/* Tracing restarts (START after a STOP): the blocks freed while it was
 * off leave their makers' live bytes. */
void rd_mem_resume(rd_mem *mm);

/* The end of the program's Lua code, seen at hook number hooks: the
 * first hook after an error it did not catch (its frames unwound, none of
 * Lua's left), or the end of the trace with a Lua frame still open (an
 * error whose collection no hook followed, Ctrl-C, os.exit). The rows as
 * they were before the allocator calls just before it (the tail) are
 * kept, and the bytes of the lines it allocated on, with lines, the LINE
 * records run so far. Lua 5.1's and LuaJIT's interpreters collect all
 * garbage after an uncaught error (Ctrl-C too), once the main chunk's
 * frames are gone: that frees what the program held, and would charge it
 * to a frame that no longer runs. Without memory for it, nothing is
 * kept. */
void rd_mem_seal(rd_mem *mm, uint64_t hooks, uint64_t lines);

/* The end of the trace, lines LINE records run: if none ran since the
 * last seal, the sealed rows and lines go back as they were then ("live
 * at the end" is what the program held when its Lua code ended), and
 * mm->after_end says how many records were left out. */
void rd_mem_end(rd_mem *mm, uint64_t lines);

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
