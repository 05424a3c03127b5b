/* lr_code: the Lua functions seen running, by their code (lr_code.h). A
 * small table scanned whole: it is looked in only for a frame whose slot
 * no longer holds its function, and Protos of a program's hot part are
 * few. */
#include "lr_code.h"

#include <stddef.h>

#include "lr_layout.h"

void lr_code_note(lr_code *k, const void *cl, const void *pr, const uint8_t *p)
{
    for (uint32_t i = 0; i < k->n; i++)
        if (k->fn[i].pr == pr && k->fn[i].code == lr_ptr_at(p, PR_CODE)) {
            k->fn[i].cl = cl;
            k->fn[i].ncode = (uint32_t)lr_int_at(p, PR_SIZECODE);
            return;
        }
    uint32_t i = k->n < LR_CODE_MAX ? k->n++ : k->next++ % LR_CODE_MAX;
    k->fn[i] = (lr_code_fn){pr, cl, lr_ptr_at(p, PR_CODE), (uint32_t)lr_int_at(p, PR_SIZECODE)};
}

const lr_code_fn *lr_code_find(const lr_code *k, const void *pc, uint32_t *at)
{
    for (uint32_t i = *at; i < k->n; i++) {
        const lr_code_fn *f = &k->fn[i];
        uintptr_t off = (uintptr_t)pc - (uintptr_t)f->code;
        if (f->code && off <= (uintptr_t)f->ncode * 4) { /* a saved pc may be one past the last */
            *at = i;
            return f;
        }
    }
    return NULL;
}
