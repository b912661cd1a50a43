#include "compat.h"
#include "dir.h"
#include "strbuf.h"

#include <ftw.h>
#include <sys/stat.h>

/* mkdir each prefix of path ending before a '/' (and path if whole) */
static int make_prefixes(const char *path, mode_t mode, int whole)
{
	struct strbuf p = STRBUF_INIT;
	int ret = 0;

	strbuf_addstr(&p, path);
	for (size_t i = 1; i <= p.len; i++) {
		struct stat st;

		if (i < p.len ? p.buf[i] != '/' : !whole)
			continue;
		p.buf[i] = '\0';
		if (mkdir(p.buf, mode) < 0 && errno != EEXIST) {
			int saved = errno;

			/* mkdir's EACCES, EROFS, ENOTDIR, not stat's ENOENT */
			if (stat(p.buf, &st) < 0 || !S_ISDIR(st.st_mode)) {
				errno = saved;
				ret = -1;
				break;
			}
		}
		if (i < p.len)
			p.buf[i] = '/';
	}
	strbuf_release(&p);
	return ret;
}

int mkdir_p(const char *path, mode_t mode)
{
	struct stat st;

	if (make_prefixes(path, mode, 1) < 0)
		return -1;
	if (stat(path, &st) < 0)
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	return 0;
}

int mkdir_leading(const char *path, mode_t mode)
{
	return make_prefixes(path, mode, 0);
}

static int make_writable(const char *path, const struct stat *st, int flag,
			 struct FTW *ftw)
{
	if (flag == FTW_D || flag == FTW_DNR)
		chmod(path, (st->st_mode & 07777) | S_IRWXU);
	return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag,
			struct FTW *ftw)
{
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

int remove_tree(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path);
	nftw(path, make_writable, 32, FTW_PHYS);
	nftw(path, remove_entry, 32, FTW_DEPTH | FTW_PHYS);
	if (lstat(path, &st) == 0) {
		errno = ENOTEMPTY;
		return -1;
	}
	return 0;
}
