#ifndef DIR_H
#define DIR_H

#include "compat.h"

#include <sys/types.h>

/*
 * Directory helpers shared by the runtime, the local backend and the
 * commands. None prints anything: on failure they return -1 with errno
 * set, and the caller says what it was doing.
 */

/*
 * mkdir -p: create path and its missing parents with mode. 0, or -1
 * with errno from the mkdir() that failed (EACCES, EROFS, ENOTDIR, ...),
 * ENOTDIR when path is there but not a directory.
 */
int mkdir_p(const char *path, mode_t mode);

/* Create the missing parents of path (not path itself). 0 or -1. */
int mkdir_leading(const char *path, mode_t mode);

/*
 * rm -rf path, also through directories whose permissions the sandbox
 * took away (they are made writable first); never follows symlinks.
 * A missing path is success. 0, or -1 if something is left.
 */
int remove_tree(const char *path);

#endif /* DIR_H */
