/* rd_elf: where a function of another process is, from its /proc/PID/maps
 * and the dynamic symbols of the ELF file mapped there (the exported ones:
 * a stripped lua5.1 or libc keeps them). Reads only files, never the
 * process. */
#include "rd_elf.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

enum { SYMS_MAX = 1 << 20 }; /* a bound on a corrupt section header */

typedef struct elf_file {
    uint8_t *b;
    size_t n;
} elf_file;

static int load(const char *path, elf_file *f)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int e = 0;
    if (fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr) || st.st_size > (1 << 30))
        e = -ENOEXEC;
    else if (!(f->b = malloc((size_t)st.st_size)))
        e = -ENOMEM;
    else if (pread(fd, f->b, (size_t)st.st_size, 0) != st.st_size)
        e = -EIO;
    f->n = (size_t)st.st_size;
    close(fd);
    if (e) {
        free(f->b);
        f->b = NULL;
    }
    return e;
}

/* A table of the file, checked to lie inside it. */
static const void *part(const elf_file *f, uint64_t off, uint64_t size)
{
    return off <= f->n && size <= f->n - off ? f->b + off : NULL;
}

static const Elf64_Shdr *section(const elf_file *f, const Elf64_Ehdr *h, unsigned i)
{
    if (i >= h->e_shnum || h->e_shentsize != sizeof(Elf64_Shdr))
        return NULL;
    return part(f, h->e_shoff + (uint64_t)i * sizeof(Elf64_Shdr), sizeof(Elf64_Shdr));
}

/* The dynamic symbol `name` defined in f: its value; of several versions,
 * the default one (not hidden). */
static int find_sym(const elf_file *f, const char *name, uint64_t *value)
{
    const Elf64_Ehdr *h = part(f, 0, sizeof *h);
    if (!h || memcmp(h->e_ident, ELFMAG, SELFMAG) || h->e_ident[EI_CLASS] != ELFCLASS64)
        return -ENOEXEC;
    const Elf64_Shdr *dyn = NULL, *ver = NULL, *s;
    for (unsigned i = 0; (s = section(f, h, i)); i++) {
        if (s->sh_type == SHT_DYNSYM)
            dyn = s;
        if (s->sh_type == SHT_GNU_versym)
            ver = s;
    }
    const Elf64_Shdr *strs = dyn ? section(f, h, dyn->sh_link) : NULL;
    const Elf64_Sym *sym = dyn ? part(f, dyn->sh_offset, dyn->sh_size) : NULL;
    const char *str = strs ? part(f, strs->sh_offset, strs->sh_size) : NULL;
    if (!sym || !str)
        return -ENOENT;
    size_t n = dyn->sh_size / sizeof *sym, len = strlen(name);
    const uint16_t *vs = ver ? part(f, ver->sh_offset, n * 2) : NULL;
    int found = 0;
    for (size_t i = 0; i < n && i < SYMS_MAX; i++) {
        if (sym[i].st_shndx == SHN_UNDEF || sym[i].st_name >= strs->sh_size ||
            strs->sh_size - sym[i].st_name <= len || memcmp(str + sym[i].st_name, name, len + 1))
            continue;
        *value = sym[i].st_value;
        found = 1;
        if (!vs || !(vs[i] & 0x8000))
            return 0;
    }
    return found ? 0 : -ENOENT;
}

/* The virtual address the file's bytes at offset 0 are loaded for (its
 * first PT_LOAD): the load bias is where that is mapped minus this. */
static int first_load(const elf_file *f, uint64_t *vaddr, int *dyn)
{
    const Elf64_Ehdr *h = part(f, 0, sizeof *h);
    if (!h || h->e_phentsize != sizeof(Elf64_Phdr))
        return -ENOEXEC;
    *dyn = h->e_type == ET_DYN;
    for (unsigned i = 0; i < h->e_phnum; i++) {
        const Elf64_Phdr *p = part(f, h->e_phoff + (uint64_t)i * sizeof *p, sizeof *p);
        if (p && p->p_type == PT_LOAD && p->p_offset == 0) {
            *vaddr = p->p_vaddr;
            return 0;
        }
    }
    return -ENOEXEC;
}

/* One line of /proc/PID/maps. */
typedef struct map_line {
    unsigned long lo, hi, off, ino;
    unsigned maj, min;
    char file[PATH_MAX];
} map_line;

static int parse(const char *line, map_line *m)
{
    m->file[0] = 0;
    return sscanf(line, "%lx-%lx %*s %lx %x:%x %lu %4095s", &m->lo, &m->hi, &m->off, &m->maj,
                  &m->min, &m->ino, m->file) >= 6;
}

/* Opens the file mapped as m, as the process sees it (its root), and only
 * if it is still the file mapped (same device and inode: a library
 * replaced on disk since, by an upgrade or a rebuild, has other symbols). */
static int load_mapped(pid_t pid, const map_line *m, elf_file *f)
{
    char path[PATH_MAX + 32];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%d/root%s", (int)pid, m->file);
    if (stat(path, &st) < 0)
        return -errno;
    if (st.st_ino != m->ino || major(st.st_dev) != m->maj || minor(st.st_dev) != m->min)
        return -ESTALE;
    return load(path, f);
}

/* name's address in the file mapped as m (its mapping at offset 0). */
static int sym_in(pid_t pid, const map_line *m, const char *name, uintptr_t *addr)
{
    elf_file f = {NULL, 0};
    uint64_t v = 0, load0 = 0;
    int dyn = 0, e = load_mapped(pid, m, &f);
    if (!e)
        e = find_sym(&f, name, &v);
    if (!e)
        e = first_load(&f, &load0, &dyn);
    free(f.b);
    if (!e)
        *addr = dyn ? (uintptr_t)(m->lo - load0 + v) : (uintptr_t)v;
    return e;
}

/* What a walk of the maps looks for, and where it puts what it found. */
typedef struct maps_query {
    pid_t pid;
    const char *name, *only, *file;
    uintptr_t pc, *addr;
    char *out, last[PATH_MAX];
    size_t cap;
} maps_query;

/* Calls visit on each line of pid's maps until it returns other than
 * -ENOENT; returns that, or -ENOENT. */
static int maps_walk(maps_query *q, int (*visit)(maps_query *q, const map_line *m))
{
    char path[64], line[PATH_MAX + 128];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)q->pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -errno;
    int e = -ENOENT;
    map_line m;
    while (e == -ENOENT && fgets(line, sizeof line, f))
        if (parse(line, &m))
            e = visit(q, &m);
    fclose(f);
    return e;
}

static int visit_find(maps_query *q, const map_line *m)
{
    if (m->file[0] != '/' || m->off != 0 || !strcmp(m->file, q->last))
        return -ENOENT; /* the first mapping of each file only */
    snprintf(q->last, sizeof q->last, "%s", m->file);
    if ((q->only && !strstr(m->file, q->only)) || sym_in(q->pid, m, q->name, q->addr) != 0)
        return -ENOENT;
    snprintf(q->out, q->cap, "%s", m->file);
    return 0;
}

int rd_elf_find(pid_t pid, const char *name, const char *only, uintptr_t *addr, char *lib,
                size_t cap)
{
    maps_query q = {.pid = pid, .name = name, .only = only, .addr = addr, .out = lib, .cap = cap};
    return maps_walk(&q, visit_find);
}

static int visit_mapped_sym(maps_query *q, const map_line *m)
{
    if (m->off != 0 || strcmp(m->file, q->file))
        return -ENOENT;
    return q->name ? sym_in(q->pid, m, q->name, q->addr) : 0;
}

int rd_elf_mapped_sym(pid_t pid, const char *file, const char *name, uintptr_t *addr)
{
    maps_query q = {.pid = pid, .file = file, .name = name, .addr = addr};
    return maps_walk(&q, visit_mapped_sym);
}

static int visit_range(maps_query *q, const map_line *m)
{
    if (q->pc < m->lo || q->pc >= m->hi)
        return -ENOENT;
    snprintf(q->out, q->cap, "%s", m->file);
    return 0;
}

int rd_elf_range(pid_t pid, uintptr_t pc, char *file, size_t cap)
{
    maps_query q = {.pid = pid, .pc = pc, .out = file, .cap = cap};
    return maps_walk(&q, visit_range);
}
