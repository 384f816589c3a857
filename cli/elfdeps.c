/*
 * elfdeps.c — the shared libraries a program asks for (its DT_NEEDED
 * entries), read from the ELF file itself, never by running it: what
 * `stormctl run` guesses a job's MPI from (--mpi's default).  The file is
 * the user's own, read with their rights, but it may be anything: every
 * offset is checked against the file's size and every read is bounded.
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"

#define MAX_PHDRS 256
#define MAX_DYN 4096

static int rd(int fd, void *buf, size_t len, uint64_t off, uint64_t size)
{
	ssize_t n;

	if (off > size || len > size - off)
		return -1;
	n = pread(fd, buf, len, (off_t)off);
	return n == (ssize_t)len ? 0 : -1;
}

/* A virtual address to its file offset, through the PT_LOAD segments. */
static int vaddr_off(const Elf64_Phdr *ph, int n, uint64_t va, uint64_t *off)
{
	for (int i = 0; i < n; i++)
		if (ph[i].p_type == PT_LOAD && va >= ph[i].p_vaddr &&
		    va - ph[i].p_vaddr < ph[i].p_filesz) {
			*off = ph[i].p_offset + (va - ph[i].p_vaddr);
			return 0;
		}
	return -1;
}

int sc_elf_needed(int fd, int (*fn)(const char *lib, void *ctx), void *ctx)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[MAX_PHDRS];
	Elf64_Dyn dyn[MAX_DYN];
	struct stat st;
	uint64_t strtab = 0, strsz = 0, stroff, size;
	int nph, ndyn = 0, found = 0;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return -1;
	size = (uint64_t)st.st_size;
	if (rd(fd, &eh, sizeof(eh), 0, size) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr))
		return -1; /* not a 64-bit ELF: a script, say */
	nph = eh.e_phnum < MAX_PHDRS ? eh.e_phnum : MAX_PHDRS;
	if (rd(fd, ph, (size_t)nph * sizeof(*ph), eh.e_phoff, size))
		return -1;
	for (int i = 0; i < nph; i++) {
		if (ph[i].p_type != PT_DYNAMIC)
			continue;
		ndyn = (int)(ph[i].p_filesz / sizeof(Elf64_Dyn));
		if (ndyn > MAX_DYN)
			ndyn = MAX_DYN;
		if (rd(fd, dyn, (size_t)ndyn * sizeof(*dyn), ph[i].p_offset,
		       size))
			return -1;
		break;
	}
	for (int i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; i++) {
		if (dyn[i].d_tag == DT_STRTAB)
			strtab = dyn[i].d_un.d_ptr;
		else if (dyn[i].d_tag == DT_STRSZ)
			strsz = dyn[i].d_un.d_val;
	}
	if (!strtab || !strsz || vaddr_off(ph, nph, strtab, &stroff))
		return 0; /* static: asks for nothing */
	for (int i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; i++) {
		char name[256];
		uint64_t at = dyn[i].d_un.d_val;
		size_t len;

		if (dyn[i].d_tag != DT_NEEDED || at >= strsz)
			continue;
		/* the name, up to the table's end, the file's, or 255 */
		len = strsz - at < sizeof(name) - 1 ? strsz - at
						    : sizeof(name) - 1;
		if (stroff + at >= size)
			continue;
		if (len > size - (stroff + at))
			len = size - (stroff + at);
		memset(name, 0, sizeof(name));
		if (rd(fd, name, len, stroff + at, size))
			continue;
		name[sizeof(name) - 1] = 0;
		found++;
		if (fn(name, ctx))
			break;
	}
	return found;
}
