/* rd_path: the stacks that the path writers (stacks.folded, the sampled
 * speedscope profile, pprof) print, one per call-tree node, bounded. A
 * node up to RD_PATH_MAX frames deep prints its whole stack; a deeper one
 * its RD_PATH_ROOT root-most frames, one frame RD_PATH_CUT for those in
 * between, and its RD_PATH_LEAF leaf-most frames; deep nodes that print
 * alike are one path (their weights added). A 20 000-deep recursion (a
 * stack overflow) would otherwise print 200 million frames. */
#ifndef RD_PATH_H
#define RD_PATH_H

#include "rd_model.h"

#define RD_PATH_MAX 1000
#define RD_PATH_ROOT 100
#define RD_PATH_LEAF (RD_PATH_MAX - RD_PATH_ROOT - 1)
#define RD_PATH_CUT UINT32_MAX /* the fid of the cut frame */
#define RD_PATH_CUT_LABEL "[...]"

typedef struct rd_paths {
    uint32_t *rep;   /* node -> the node it prints as: itself unless deep */
    uint32_t *depth; /* node -> frames in its stack (the root's children: 1) */
    uint32_t ndeep;  /* nodes deeper than RD_PATH_MAX: their paths have the cut */
} rd_paths;

/* Computes the paths of m's nodes. With lines, deep nodes print alike
 * when their leaf-most frames' functions and call lines are equal (pprof's
 * locations have lines), else when their functions are. Returns 0 or
 * -ENOMEM. */
int rd_paths_init(rd_paths *p, const rd_model *m, int lines);
void rd_paths_free(rd_paths *p);

/* Node n's printed path, root first, into fids and (if not NULL) nodes
 * (the node of each frame; 0 for the cut), each of RD_PATH_MAX entries.
 * Returns the number of frames. */
uint32_t rd_paths_get(const rd_paths *p, const rd_model *m, uint32_t n, uint32_t *fids,
                      uint32_t *nodes);

#endif
