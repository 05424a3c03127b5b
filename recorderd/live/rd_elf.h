/* rd_elf: the address of an exported function in another process, from
 * /proc/PID/maps and the ELF dynamic symbols of the files mapped there. */
#ifndef RD_ELF_H
#define RD_ELF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Where the defined dynamic symbol `name` of the ELF file path is, that
 * file's first mapping (offset 0) starting at start. 0 or -errno. */
int rd_elf_sym_in(const char *path, uintptr_t start, const char *name, uintptr_t *addr);

/* The first file mapped in pid (whose path contains `only`, unless NULL)
 * that defines `name`: its address into *addr, the file into lib. 0,
 * -ENOENT if none does, or -errno. */
int rd_elf_find(pid_t pid, const char *name, const char *only, uintptr_t *addr, char *lib,
                size_t cap);

/* Where the file (an exact path) is mapped at offset 0 in pid. 0 or
 * -ENOENT. */
int rd_elf_mapped(pid_t pid, const char *file, uintptr_t *start);

/* The name of the mapping of pid holding pc ("" for anonymous memory).
 * 0 or -ENOENT. */
int rd_elf_range(pid_t pid, uintptr_t pc, char *file, size_t cap);

#endif
