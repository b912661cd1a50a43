/*
 * libFuzzer harness: client paths under a workdir (lib/workpath.c,
 * Documentation/protocol/runtime-api.md "Paths"). The input is one request
 * path, already percent-decoded. Properties: a resolved path never leaves the
 * workdir, and a cleaned path has no "." or ".." segment.
 *
 * The workdir is made once: files, directories and symlinks that
 * point inside, outside (/etc, ..), at themselves and at missing
 * names, so that the resolution follows every kind of link.
 */
#include "compat.h"
#include "dir.h"
#include "strbuf.h"
#include "workpath.h"

#include <stdint.h>
#include <sys/stat.h>

static char root[4096];

static void setup(void)
{
	char tmpl[] = "/tmp/gosbx-fuzz-workpath.XXXXXX";
	char *dir = mkdtemp(tmpl);
	struct strbuf p = STRBUF_INIT;
	static const char *const links[][2] = {
		{ "in", "d" },
		{ "out", "/etc" },
		{ "up", ".." },
		{ "loop", "loop" },
		{ "dangle", "missing/x" },
		{ "d/back", "../in" },
		{ "d/esc", "../../.." },
		{ "ping", "pong" },
		{ "pong", "ping" },
	};

	if (!dir || !realpath(dir, root))
		abort();
	strbuf_addf(&p, "%s/d/e", root);
	if (mkdir_p(p.buf, 0755) < 0)
		abort();
	for (size_t i = 0; i < ARRAY_SIZE(links); i++) {
		strbuf_reset(&p);
		strbuf_addf(&p, "%s/%s", root, links[i][0]);
		if (symlink(links[i][1], p.buf) < 0)
			abort();
	}
	strbuf_release(&p);
}

static int has_dot_segment(const char *s)
{
	while (*s) {
		size_t n = strcspn(s, "/");

		if ((n == 1 && s[0] == '.') ||
		    (n == 2 && s[0] == '.' && s[1] == '.') || n == 0)
			return 1;
		s += n;
		if (*s == '/')
			s++;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf path = STRBUF_INIT, abs = STRBUF_INIT;
	struct strbuf rel = STRBUF_INIT, clean = STRBUF_INIT;

	if (!*root)
		setup();
	if (size > 8192)
		return 0;
	/* a C string: the server cuts a decoded path at NUL (refused) */
	strbuf_add(&path, data, size);
	if (strlen(path.buf) != path.len)
		goto out;
	if (!workpath_resolve(root, path.buf, &abs, &rel)) {
		if (!workpath_within(root, abs.buf))
			abort(); /* escaped the workdir */
		if (rel.buf[0] != '/' ||
		    strcmp(abs.buf + strlen(root), rel.len > 1 ? rel.buf : ""))
			abort(); /* rel is not abs minus the root */
	}
	if (path.buf[0] != '/' && !workpath_clean(path.buf, &clean) &&
	    clean.len && (clean.buf[0] == '/' || has_dot_segment(clean.buf)))
		abort();
out:
	strbuf_release(&path);
	strbuf_release(&abs);
	strbuf_release(&rel);
	strbuf_release(&clean);
	return 0;
}
