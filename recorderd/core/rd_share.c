/* rd_share: the coroutines' tracks (rd_track) and their shares of the
 * call tree (rd_tnode), and the folding of ended coroutines into one
 * aggregate track per function they started in (rd_model.h).
 *
 * Shares and tracks live in dense arrays with open-addressing indexes. A
 * fold compacts the shares (their indexes change: rd_model_fold hands the
 * caller a map) and puts the folded tracks' slots on a free list. The
 * thread index maps a thread id to its latest track: a dead coroutine's
 * address seen again overwrites its entry with a new track; a folded
 * track's entry is removed. */
#include "rd_model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t pow2_at_least(uint64_t n)
{
    uint32_t cap = 1024;
    while (cap < n)
        cap *= 2;
    return cap;
}

/* {======================================================================
 * thread id -> track */

/* Slot of id in the thread index (empty if absent); the index has room. */
static uint32_t *track_slot(const rd_model *m, uint64_t id)
{
    uint32_t mask = m->captrack_ix - 1, i = rd_model_hash_id(id) & mask;
    while (m->track_ix[i] && m->track[m->track_ix[i] - 1].thread != id)
        i = (i + 1) & mask;
    return &m->track_ix[i];
}

static int grow_track_ix(rd_model *m)
{
    uint32_t *old = m->track_ix, oldcap = m->captrack_ix;
    uint32_t cap = oldcap ? oldcap * 2 : 64;
    if (!(m->track_ix = calloc(cap, sizeof *m->track_ix))) {
        m->track_ix = old;
        return -ENOMEM;
    }
    m->captrack_ix = cap;
    for (uint32_t i = 0; i < oldcap; i++)
        if (old[i]) *track_slot(m, m->track[old[i] - 1].thread) = old[i];
    free(old);
    return 0;
}

/* Removes track k from the thread index if its thread's entry is k's.
 * Backward-shift deletion keeps probe chains intact without tombstones. */
static void unindex_track(rd_model *m, uint32_t k)
{
    uint32_t *slot = m->captrack_ix ? track_slot(m, m->track[k].thread) : NULL;
    if (!slot || *slot != k + 1) return;
    uint32_t mask = m->captrack_ix - 1, i = (uint32_t)(slot - m->track_ix);
    m->track_ix[i] = 0;
    m->ntrack_ix--;
    for (uint32_t j = (i + 1) & mask; m->track_ix[j]; j = (j + 1) & mask) {
        uint32_t home = rd_model_hash_id(m->track[m->track_ix[j] - 1].thread) & mask;
        if (((j - home) & mask) >= ((j - i) & mask)) {
            m->track_ix[i] = m->track_ix[j];
            m->track_ix[j] = 0;
            i = j;
        }
    }
}

/* A track slot, a free one first: its index + 1, 0 if memory ran out. */
static uint32_t new_track(rd_model *m, uint64_t thread, uint64_t serial)
{
    uint32_t k;
    if (m->free_track) {
        k = m->free_track - 1;
        m->free_track = m->track[k].first_fid;
    } else {
        if (rd_grow((void **)&m->track, &m->captrack, m->ntrack, sizeof *m->track)) return 0;
        k = m->ntrack++;
    }
    m->track[k] = (rd_track){.thread = thread, .serial = serial};
    return k + 1;
}

uint32_t rd_model_track(rd_model *m, uint64_t thread)
{
    if ((m->ntrack_ix + 1) * 2 > m->captrack_ix && grow_track_ix(m)) return 0;
    uint32_t *slot = track_slot(m, thread);
    if (*slot && !m->track[*slot - 1].dead) return *slot;
    uint32_t had = *slot, k = new_track(m, thread, m->nserial);
    if (!k) return 0;
    m->nserial++;
    m->ntrack_ix += !had;
    return *slot = k;
}

uint64_t rd_model_track_end(rd_model *m, uint64_t thread)
{
    uint32_t *slot = m->captrack_ix ? track_slot(m, thread) : NULL;
    rd_track *t = slot && *slot ? &m->track[*slot - 1] : NULL;
    if (!t || t->dead) return UINT64_MAX;
    t->dead = 1;
    if (t->serial == 0 || m->nkept < m->keep_tracks) {
        m->nkept += t->serial != 0;
        return t->serial;
    }
    t->fold = 1;
    m->fold_shares += t->nshare + 1; /* + 1: a track of no share is memory too */
    return t->serial;
}

void rd_model_track_name(const rd_model *m, uint32_t k, char *buf, size_t cap)
{
    const rd_track *t = k < m->ntrack ? &m->track[k] : NULL;
    char label[RD_LABEL_MAX];
    if (t && !t->agg && t->serial == 0) {
        snprintf(buf, cap, "main");
        return;
    }
    rd_model_label(m, t && t->named ? t->first_fid : 0, label, sizeof label);
    if (t && t->agg)
        snprintf(buf, cap, "coroutine * (%s)", label);
    else
        snprintf(buf, cap, "coroutine %llu (%s)", t ? (unsigned long long)t->serial : k, label);
}

/* }====================================================================== */

/* {======================================================================
 * shares */

/* Slot of (track, node) in share index ix of cap entries over shares tn. */
static uint32_t *share_slot(uint32_t *ix, uint32_t cap, const rd_tnode *tn, uint32_t track,
                            uint32_t node)
{
    uint32_t mask = cap - 1, i = rd_model_hash2(track, node) & mask;
    for (; ix[i]; i = (i + 1) & mask)
        if (tn[ix[i] - 1].track == track && tn[ix[i] - 1].node == node) break;
    return &ix[i];
}

/* The index holds every share but each node's first (rd_node.first_tn):
 * most nodes are run by one coroutine, whose share is then found without
 * a probe into a table as big as the tree. Rebuilt at cap entries. */
static int index_tnodes(rd_model *m, uint32_t cap)
{
    uint32_t *ix = calloc(cap, sizeof *ix);
    if (!ix) return -ENOMEM;
    for (uint32_t k = 0; k < m->ntnode; k++)
        if (m->node[m->tnode[k].node].first_tn != k + 1)
            *share_slot(ix, cap, m->tnode, m->tnode[k].track, m->tnode[k].node) = k + 1;
    free(m->tnode_ix);
    m->tnode_ix = ix;
    m->captnode_ix = cap;
    return 0;
}

/* A new share of track in node; indexed at ix unless it is the node's first. */
static uint32_t new_tnode(rd_model *m, uint32_t track, uint32_t node, uint32_t *ix)
{
    if (rd_grow((void **)&m->tnode, &m->captnode, m->ntnode, sizeof *m->tnode)) return 0;
    m->tnode[m->ntnode] = (rd_tnode){.node = node, .track = track};
    m->track[track].nshare++;
    rd_node *nd = &m->node[node];
    nd->hot_track = track;
    nd->hot_tn = ++m->ntnode;
    if (ix) {
        *ix = nd->hot_tn;
        m->ntnode_ix++;
    } else {
        nd->first_tn = nd->hot_tn;
    }
    return nd->hot_tn;
}

uint32_t rd_model_tnode(rd_model *m, uint32_t track, uint32_t node)
{
    rd_node *nd = &m->node[node];
    if (nd->hot_tn && nd->hot_track == track) /* one coroutine per node, mostly */
        return nd->hot_tn;
    if (!nd->first_tn) return new_tnode(m, track, node, NULL);
    if (m->tnode[nd->first_tn - 1].track == track)
        return nd->hot_track = track, nd->hot_tn = nd->first_tn;
    if ((m->ntnode_ix + 1) * 2 > m->captnode_ix &&
        index_tnodes(m, m->captnode_ix ? m->captnode_ix * 2 : 1024))
        return 0;
    uint32_t *slot = share_slot(m->tnode_ix, m->captnode_ix, m->tnode, track, node);
    if (*slot) return nd->hot_track = track, nd->hot_tn = *slot;
    return new_tnode(m, track, node, slot);
}

/* }====================================================================== */

/* {======================================================================
 * folding */

int rd_model_fold_due(const rd_model *m)
{
    return m->fold_shares >= m->fold_min && m->fold_shares * 2 >= (uint64_t)m->ntnode + m->ntrack;
}

static int grow_agg_ix(rd_model *m)
{
    uint32_t cap = m->capagg_ix ? m->capagg_ix * 2 : 64, *ix = calloc(cap, sizeof *ix);
    if (!ix) return -ENOMEM;
    for (uint32_t j = 0; j < m->capagg_ix; j++) {
        uint32_t k = m->agg_ix[j], i = k ? rd_model_hash2(m->track[k - 1].first_fid, 0) : 0;
        while (k && ix[i & (cap - 1)])
            i++;
        if (k) ix[i & (cap - 1)] = k;
    }
    free(m->agg_ix);
    m->agg_ix = ix;
    m->capagg_ix = cap;
    return 0;
}

/* The aggregate track of the coroutines that started in fid, made on
 * first use: its index + 1, 0 if memory ran out. */
static uint32_t agg_track(rd_model *m, uint32_t fid)
{
    if ((m->nagg_ix + 1) * 2 > m->capagg_ix && grow_agg_ix(m)) return 0;
    uint32_t mask = m->capagg_ix - 1, i = rd_model_hash2(fid, 0) & mask;
    for (; m->agg_ix[i]; i = (i + 1) & mask)
        if (m->track[m->agg_ix[i] - 1].first_fid == fid) return m->agg_ix[i];
    uint32_t k = new_track(m, 0, UINT64_MAX);
    if (!k) return 0;
    rd_track *t = &m->track[k - 1];
    t->first_fid = fid;
    t->named = t->agg = 1;
    m->nagg_ix++;
    return m->agg_ix[i] = k;
}

/* into[k]: the aggregate track + 1 that track k folds into, 0 if it stays.
 * Sized for the aggregates made here: one per folded track at most. */
static uint32_t *fold_targets(rd_model *m)
{
    uint32_t n = m->ntrack, nfold = 0;
    for (uint32_t k = 0; k < n; k++)
        nfold += m->track[k].fold;
    uint32_t *into = calloc((size_t)n + nfold + 1, sizeof *into);
    for (uint32_t k = 0; into && k < n; k++) {
        const rd_track *t = &m->track[k];
        if (t->fold && !(into[k] = agg_track(m, t->named ? t->first_fid : 0))) {
            free(into);
            return NULL;
        }
    }
    return into;
}

static void add_counts(rd_tnode *to, const rd_tnode *from)
{
    to->self += from->self;
    to->lines += from->lines;
}

/* Moves every share to its track's target and merges the shares that
 * meet, in order (a node's first share stays its first); re[old + 1] =
 * new + 1. ix (cap entries, zeroed) becomes the index of the result. A
 * share that meets its node's first one adds to it at the root (where
 * shares are all counted) and vanishes elsewhere: the first one's counts
 * are the node's less the others'. */
static void compact_shares(rd_model *m, const uint32_t *into, uint32_t *re, uint32_t *ix,
                           uint32_t cap)
{
    uint32_t w = 0, nix = 0;
    for (uint32_t j = 0; j < m->ntnode; j++) {
        rd_tnode t = m->tnode[j];
        rd_node *nd = &m->node[t.node];
        if (into[t.track]) t.track = into[t.track] - 1;
        uint32_t *slot;
        if (nd->first_tn == j + 1) {
            m->tnode[w] = t;
            re[j + 1] = nd->first_tn = ++w;
        } else if (m->tnode[nd->first_tn - 1].track == t.track) {
            if (!t.node) add_counts(&m->tnode[nd->first_tn - 1], &t);
            re[j + 1] = nd->first_tn;
        } else if (*(slot = share_slot(ix, cap, m->tnode, t.track, t.node))) {
            add_counts(&m->tnode[*slot - 1], &t);
            re[j + 1] = *slot;
        } else {
            m->tnode[w] = t;
            re[j + 1] = *slot = ++w;
            nix++;
        }
    }
    m->ntnode = w;
    m->ntnode_ix = nix;
}

/* Folded tracks' slots to the free list; every track's share count anew. */
static void free_folded(rd_model *m)
{
    for (uint32_t k = 0; k < m->ntrack; k++)
        if (m->track[k].fold) unindex_track(m, k); /* before any slot's thread changes */
    for (uint32_t k = 0; k < m->ntrack; k++) {
        rd_track *t = &m->track[k];
        t->nshare = 0;
        if (t->fold) {
            *t = (rd_track){.first_fid = m->free_track};
            m->free_track = k + 1;
            m->folded++;
        }
    }
    for (uint32_t k = 0; k < m->ntnode; k++)
        m->track[m->tnode[k].track].nshare++;
}

/* Gives back what the fold freed (if a smaller copy cannot be had, the big
 * one stays). */
static void shrink(rd_model *m, uint32_t cap)
{
    uint32_t want = pow2_at_least(2ull * m->ntnode_ix + 2);
    if (want < cap / 4) index_tnodes(m, want);
    want = pow2_at_least(2ull * m->ntnode);
    rd_tnode *tn = want < m->captnode / 4 ? realloc(m->tnode, want * sizeof *tn) : NULL;
    if (tn) {
        m->tnode = tn;
        m->captnode = want;
    }
}

int rd_model_fold(rd_model *m, uint32_t **remap, uint32_t *nremap)
{
    uint32_t cap = pow2_at_least(2ull * m->ntnode + 2);
    uint32_t *into = fold_targets(m), *re = calloc((size_t)m->ntnode + 1, sizeof *re);
    uint32_t *ix = calloc(cap, sizeof *ix);
    if (!into || !re || !ix) {
        free(into);
        free(re);
        free(ix);
        return -ENOMEM;
    }
    *nremap = m->ntnode + 1;
    compact_shares(m, into, re, ix, cap);
    free(into);
    free(m->tnode_ix);
    m->tnode_ix = ix;
    m->captnode_ix = cap;
    free_folded(m);
    for (uint32_t n = 0; n < m->nnode; n++)
        m->node[n].hot_tn = 0; /* it may name a share that moved */
    m->fold_shares = 0;
    shrink(m, cap);
    *remap = re;
    return 0;
}

/* }====================================================================== */
