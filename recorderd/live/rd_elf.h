/* rd_elf: the address of an exported function in another process, from
 * /proc/PID/maps and the ELF dynamic symbols of the files mapped there. */
#ifndef RD_ELF_H
#define RD_ELF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The first file mapped in pid (whose path contains `only`, unless NULL)
 * that defines `name`: its address into *addr, the file into lib. 0,
 * -ENOENT if none does, or -errno. A file is read as the process sees it
 * (/proc/PID/root), and only if it is still the one mapped (its inode). */
int rd_elf_find(pid_t pid, const char *name, const char *only, uintptr_t *addr, char *lib,
                size_t cap);

/* The file (an exact path) mapped in pid: 0 if it is; with name, the
 * address of that symbol of it into *addr. -ENOENT if not mapped (or no
 * such symbol), -ESTALE if the file on disk is no longer the one mapped. */
int rd_elf_mapped_sym(pid_t pid, const char *file, const char *name, uintptr_t *addr);

/* The name of the mapping of pid holding pc ("" for anonymous memory).
 * 0 or -ENOENT. */
int rd_elf_range(pid_t pid, uintptr_t pc, char *file, size_t cap);

#endif
