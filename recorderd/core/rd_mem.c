/* rd_mem: memory accounting from MEM records (rd_mem.h). */
#include "rd_mem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rd_model.h" /* rd_grow */

static const rd_memrow zero_row;

/* Row n, to change: what it held before the tail's first change to it is
 * kept in was (rd_mem_seal). */
static rd_memrow *row_of(rd_mem *mm, uint32_t n)
{
    rd_memslot *r = &mm->row[n];
    if (r->at != mm->tail_at) {
        r->was = r->now;
        r->at = mm->tail_at;
    }
    return &r->now;
}

void rd_mem_free(rd_mem *mm)
{
    free(mm->seal_was);
    free(mm->seal_node);
    free(mm->row);
    free(mm->blk);
    free(mm->big);
    free(mm->line_b);
    free(mm->off_node);
    *mm = (rd_mem){0};
}

uint64_t rd_mem_bytes(const rd_mem *mm)
{
    return (uint64_t)mm->caprow * sizeof *mm->row + (uint64_t)mm->capblk * sizeof *mm->blk +
           (uint64_t)mm->capbig * sizeof *mm->big +
           (uint64_t)mm->capline_b * sizeof *mm->line_b +
           (uint64_t)mm->capoff * sizeof *mm->off_node +
           (uint64_t)mm->capseal * (sizeof *mm->seal_was + sizeof *mm->seal_node);
}

const rd_memrow *rd_mem_row(const rd_mem *mm, uint32_t n)
{
    return n < mm->caprow ? &mm->row[n].now : &zero_row;
}

void rd_mem_seal(rd_mem *mm, uint64_t hooks, uint64_t lines)
{
    if (!mm->tail_records || mm->tail_at != hooks) /* no allocator call just before */
        return;
    mm->sealed = 0;
    mm->nseal = 0;
    for (uint32_t n = 0; n < mm->caprow; n++) {
        if (mm->row[n].at != mm->tail_at)
            continue;
        if (mm->nseal == mm->capseal) {
            uint32_t cap = mm->capseal ? mm->capseal * 2 : 64;
            rd_memrow *w = realloc(mm->seal_was, cap * sizeof *w);
            if (w)
                mm->seal_was = w;
            uint32_t *v = w ? realloc(mm->seal_node, cap * sizeof *v) : NULL;
            if (!v)
                return;
            mm->seal_node = v;
            mm->capseal = cap;
        }
        mm->seal_was[mm->nseal] = mm->row[n].was;
        mm->seal_node[mm->nseal++] = n;
    }
    memcpy(mm->seal_line, mm->tail_line, mm->ntail_line * sizeof *mm->tail_line);
    mm->nseal_line = mm->ntail_line;
    mm->sealed = 1;
    mm->seal_lines = lines;
    mm->seal_records = mm->tail_records;
}

void rd_mem_end(rd_mem *mm, uint64_t lines)
{
    if (mm->sealed && mm->seal_lines == lines) {
        for (uint32_t i = 0; i < mm->nseal; i++)
            mm->row[mm->seal_node[i]].now = mm->seal_was[i];
        for (uint32_t i = 0; i < mm->nseal_line; i++)
            mm->line_b[mm->seal_line[i].lix - 1] = mm->seal_line[i].was;
        mm->after_end = mm->seal_records;
    }
    mm->sealed = 0;
}

/* Notes line slot lix's bytes before the tail's first allocation on it:
 * the tail's line is the same for all its records but across a switch
 * of threads, so the last one noted is checked first. */
static void note_tail_line(rd_mem *mm, uint32_t lix)
{
    for (uint32_t i = mm->ntail_line; i > 0; i--)
        if (mm->tail_line[i - 1].lix == lix)
            return;
    if (mm->ntail_line < RD_TAIL_LINES)
        mm->tail_line[mm->ntail_line++] = (rd_lineslot){lix, mm->line_b[lix - 1]};
}

int rd_mem_line(rd_mem *mm, uint32_t lix, uint64_t bytes)
{
    if (!lix || !bytes)
        return 0;
    if (lix > mm->capline_b &&
        rd_grow((void **)&mm->line_b, &mm->capline_b, lix - 1, sizeof *mm->line_b))
        return -ENOMEM;
    /* an uncaught error's collection may grow a block (Lua 5.1's string
     * table made anew smaller) on the line that raised it: its bytes go
     * back with the rows (rd_mem_end) */
    note_tail_line(mm, lix);
    mm->line_b[lix - 1] += bytes;
    return 0;
}

#define PAGE_SLOTS 4096u /* the 16-byte granules of a 64 KiB page of addresses */

/* A block's home slot. The first probe's cache miss was most of the
 * table's cost (a quarter of a memory trace's replay): a 64 KiB page of
 * addresses is a run of slots in address order, so that blocks made or
 * freed near each other (a collector's sweep, an allocator's bins) share
 * cache lines, and the pages' runs are spread by a hash. */
static uint32_t slot_of(uint64_t addr, uint32_t cap)
{
    if (cap < PAGE_SLOTS)
        return (uint32_t)((addr >> 3) * 0x9E3779B97F4A7C15ull >> 32) & (cap - 1);
    uint64_t g = addr >> 4, run = (g / PAGE_SLOTS) * 0x9E3779B97F4A7C15ull >> 32;
    return (uint32_t)(run * PAGE_SLOTS + g % PAGE_SLOTS) & (cap - 1);
}

/* Doubles the block table (from 1024 slots), rehashing. 0 or -ENOMEM. */
static int grow_blocks(rd_mem *mm)
{
    uint32_t cap = mm->capblk ? mm->capblk * 2 : 1024;
    if (cap < mm->capblk)
        return -ENOMEM;
    rd_block *b = calloc(cap, sizeof *b);
    if (!b)
        return -ENOMEM;
    for (uint32_t i = 0; i < mm->capblk; i++) {
        if (!mm->blk[i].addr)
            continue;
        uint32_t j = slot_of(mm->blk[i].addr, cap);
        while (b[j].addr)
            j = (j + 1) & (cap - 1);
        b[j] = mm->blk[i];
    }
    free(mm->blk);
    mm->blk = b;
    mm->capblk = cap;
    return 0;
}

/* Blocks of 4 GiB or more kept at once, at most: a list searched whole
 * (a program has a few; a forged trace would make each search long). */
#define RD_BIG_MAX 1024u

/* The bytes block b (out of the table) is charged with: a big one's
 * (RD_BLOCK_BIG) leave mm->big. */
static uint64_t take_size(rd_mem *mm, const rd_block *b)
{
    if (b->size != RD_BLOCK_BIG)
        return b->size;
    for (uint32_t i = 0; i < mm->nbig; i++) {
        if (mm->big[i].addr == b->addr) {
            uint64_t size = mm->big[i].size;
            mm->big[i] = mm->big[--mm->nbig];
            return size;
        }
    }
    return 0;
}

/* The live part of block b (size bytes) leaves its maker's row. */
static void unlive(rd_mem *mm, const rd_block *b, uint64_t size)
{
    rd_memrow *r = row_of(mm, b->node & ~RD_BLOCK_OBJ);
    r->live_b -= size;
    r->live_n -= (b->node & RD_BLOCK_OBJ) != 0;
}

/* Keeps block b (a new address) of size bytes; a table that cannot grow
 * loses it. */
static void put_block(rd_mem *mm, rd_block b, uint64_t size)
{
    if (((mm->nblk + 1) * 2 > mm->capblk && grow_blocks(mm)) ||
        (size >= RD_BLOCK_BIG && mm->nbig == mm->capbig &&
         (mm->nbig >= RD_BIG_MAX ||
          rd_grow((void **)&mm->big, &mm->capbig, mm->nbig, sizeof *mm->big)))) {
        mm->lost++;
        return;
    }
    uint32_t j = slot_of(b.addr, mm->capblk);
    while (mm->blk[j].addr && mm->blk[j].addr != b.addr)
        j = (j + 1) & (mm->capblk - 1);
    if (mm->blk[j].addr) /* an address seen twice: the trace lost its free */
        unlive(mm, &mm->blk[j], take_size(mm, &mm->blk[j]));
    b.size = size < RD_BLOCK_BIG ? (uint32_t)size : RD_BLOCK_BIG;
    if (b.size == RD_BLOCK_BIG)
        mm->big[mm->nbig++] = (rd_bigblock){b.addr, size};
    mm->nblk += !mm->blk[j].addr;
    mm->blk[j] = b;
}

/* Takes the block at addr out of the table into *out. 1 if it was there. */
static int take_block(rd_mem *mm, uint64_t addr, rd_block *out)
{
    if (!mm->capblk)
        return 0;
    uint32_t mask = mm->capblk - 1, j = slot_of(addr, mm->capblk);
    while (mm->blk[j].addr && mm->blk[j].addr != addr)
        j = (j + 1) & mask;
    if (!mm->blk[j].addr)
        return 0;
    *out = mm->blk[j];
    mm->nblk--;
    /* backward shift: the entries after it that probed past j move up */
    for (uint32_t i = (j + 1) & mask; mm->blk[i].addr; i = (i + 1) & mask) {
        uint32_t home = slot_of(mm->blk[i].addr, mm->capblk);
        if (((i - home) & mask) >= ((i - j) & mask)) {
            mm->blk[j] = mm->blk[i];
            j = i;
        }
    }
    mm->blk[j].addr = 0;
    return 1;
}

/* A reallocation of oaddr (osize bytes) into addr (size bytes) at node. */
static void resize(rd_mem *mm, rd_memrow *r, uint32_t node, uint64_t size, uint64_t osize,
                   uint64_t addr, uint64_t oaddr)
{
    rd_block b;
    int64_t d = (int64_t)size - (int64_t)osize;
    if (d > 0)
        r->alloc_b += (uint64_t)d;
    else
        r->freed_b += (uint64_t)-d;
    if (!take_block(mm, oaddr, &b)) /* not seen made: its growth alone is live here */
        b = (rd_block){addr, node, 0};
    uint64_t had = take_size(mm, &b);
    unlive(mm, &b, had);
    int64_t kept = (int64_t)had + d;
    uint64_t now = kept > 0 ? (uint64_t)kept : 0;
    b.addr = addr;
    rd_memrow *maker = row_of(mm, b.node & ~RD_BLOCK_OBJ);
    maker->live_b += now;
    maker->live_n += (b.node & RD_BLOCK_OBJ) != 0;
    if (now || (b.node & RD_BLOCK_OBJ))
        put_block(mm, b, now);
}

int rd_mem_apply(rd_mem *mm, uint32_t node, uint64_t size, uint64_t osize, uint64_t addr,
                 uint64_t oaddr, uint64_t hooks)
{
    if (node & RD_BLOCK_OBJ)
        return 0; /* never: nodes are far fewer */
    if (node >= mm->caprow && rd_grow((void **)&mm->row, &mm->caprow, node, sizeof *mm->row))
        return -ENOMEM;
    if (mm->tail_at != hooks + 1) { /* the program ran since: a new tail */
        mm->tail_at = hooks + 1;
        mm->tail_records = 0;
        mm->ntail_line = 0;
    }
    mm->tail_records++;
    rd_memrow *r = row_of(mm, node);
    rd_block b;
    mm->records++;
    if (size && oaddr) {
        resize(mm, r, node, size, osize, addr, oaddr);
    } else if (size) {
        r->alloc_n++;
        r->alloc_b += size;
        r->live_n++;
        r->live_b += size;
        put_block(mm, (rd_block){addr, node | RD_BLOCK_OBJ, 0}, size);
    } else {
        r->freed_b += osize;
        if (take_block(mm, oaddr, &b))
            unlive(mm, &b, take_size(mm, &b));
        else
            mm->unknown_free++;
    }
    return 0;
}

int rd_mem_off(rd_mem *mm, uint64_t size, uint64_t addr, uint64_t oaddr)
{
    rd_block b;
    if (!oaddr || !take_block(mm, oaddr, &b)) /* a new block, or not the trace's */
        return 0;
    uint64_t had = take_size(mm, &b), now = size < had ? size : had;
    uint32_t n = b.node & ~RD_BLOCK_OBJ;
    rd_memslot *r = &mm->row[n];
    if (!r->off_n && !r->off_b) {
        if (mm->noff == mm->capoff &&
            rd_grow((void **)&mm->off_node, &mm->capoff, mm->noff, sizeof *mm->off_node)) {
            put_block(mm, b, had); /* back: live it stays */
            return -ENOMEM;
        }
        mm->off_node[mm->noff++] = n;
    }
    r->off_b += had - now;
    r->off_n += !size && (b.node & RD_BLOCK_OBJ);
    b.addr = addr;
    if (size && (now || (b.node & RD_BLOCK_OBJ)))
        put_block(mm, b, now);
    return 0;
}

void rd_mem_resume(rd_mem *mm)
{
    for (uint32_t i = 0; i < mm->noff; i++) {
        rd_memslot *r = &mm->row[mm->off_node[i]];
        r->now.live_b -= r->off_b;
        r->now.live_n -= r->off_n;
        r->off_b = r->off_n = 0;
    }
    mm->noff = 0;
}
