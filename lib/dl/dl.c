#include "compat.h"
#include "dl/dl.h"

#include <dlfcn.h>

void *dl_open(const char *soname, const char *package, struct strbuf *why)
{
	const char *dir = getenv("GOSBX_TEST_DL_DIR");
	struct strbuf path = STRBUF_INIT;
	void *h;

	if (dir && *dir)
		strbuf_addf(&path, "%s/%s", dir, soname);
	else
		strbuf_addstr(&path, soname);
	h = dlopen(path.buf, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *msg = dlerror();

		strbuf_reset(why);
		strbuf_addf(why, "%s could not be loaded: %s; install %s",
			    soname, msg ? msg : "unknown error", package);
	}
	strbuf_release(&path);
	return h;
}

void *dl_sym(void *handle, const char *soname, const char *package,
	     const char *name, struct strbuf *why)
{
	void *p;
	const char *msg;

	dlerror(); /* clear */
	p = dlsym(handle, name);
	if (p)
		return p;
	msg = dlerror();
	strbuf_reset(why);
	strbuf_addf(why,
		    "%s could not be loaded: no symbol '%s' (%s); "
		    "install %s",
		    soname, name, msg ? msg : "null address", package);
	return NULL;
}
