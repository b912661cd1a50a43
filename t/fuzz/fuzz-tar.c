/*
 * libFuzzer harness: tar extraction of POST /v1/archive
 * (lib/tarball.c tar_extract_safe, extension `archive` of
 * Documentation/protocol/runtime-api.md). The input is the archive (any
 * compression libarchive knows). Each run extracts into an empty root next to
 * an empty sibling directory "outside", then checks what was written: nothing
 * outside root, only directories, regular files and symlinks with relative
 * targets, no setuid/setgid bit. Then root is emptied.
 */
#include "compat.h"
#include "strbuf.h"
#include "tarball.h"

#include <dirent.h>
#include <ftw.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>

static char box[4096], root[4096], outside[4096];

static void setup(void)
{
	char tmpl[] = "/tmp/gosbx-fuzz-tar.XXXXXX";
	char *dir = mkdtemp(tmpl);

	if (!dir || !realpath(dir, box))
		abort();
	snprintf(root, sizeof(root), "%s/root", box);
	snprintf(outside, sizeof(outside), "%s/outside", box);
	if (mkdir(root, 0755) < 0 || mkdir(outside, 0755) < 0)
		abort();
}

static int check_entry(const char *path, const struct stat *st, int flag,
		       struct FTW *ftw)
{
	if (S_ISLNK(st->st_mode)) {
		char target[4096];
		ssize_t n = readlink(path, target, sizeof(target) - 1);

		if (n <= 0 || target[0] == '/')
			abort(); /* an absolute or unreadable link */
		return 0;
	}
	if (!S_ISDIR(st->st_mode) && !S_ISREG(st->st_mode))
		abort(); /* a device, fifo or socket was made */
	if (st->st_mode & (S_ISUID | S_ISGID))
		abort();
	return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag,
			struct FTW *ftw)
{
	if (ftw->level == 0)
		return 0; /* keep root itself */
	if (flag == FTW_DP) {
		chmod(path, 0700);
		return rmdir(path) < 0 ? -1 : 0;
	}
	return unlink(path) < 0 ? -1 : 0;
}

static int make_writable(const char *path, const struct stat *st, int flag,
			 struct FTW *ftw)
{
	if (flag == FTW_D)
		chmod(path, 0700);
	return 0;
}

static int count_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int n = 0;

	if (!d)
		abort();
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf err = STRBUF_INIT;
	struct tar_stats st;
	int fd;

	if (!*box)
		setup();
	fd = memfd_create("fuzz-tar", MFD_CLOEXEC);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	/* "" and a subdirectory that does not exist yet */
	tar_extract_safe(fd, root, size % 2 ? "sub/dir" : "",
			 size % 4 >= 2 ? TAR_EXTRACT_TOUCH : 0, &st, &err);
	close(fd);

	/* root's parent holds root and outside, and outside is empty */
	if (count_entries(box) != 2 || count_entries(outside))
		abort(); /* something was written outside root */
	if (nftw(root, check_entry, 16, FTW_PHYS) < 0)
		abort();
	/* directories may have been made read-only: open them first */
	nftw(root, make_writable, 16, FTW_PHYS);
	if (nftw(root, remove_entry, 16, FTW_PHYS | FTW_DEPTH) < 0 ||
	    count_entries(root))
		abort();
	strbuf_release(&err);
	return 0;
}
