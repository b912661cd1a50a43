/*
 * The doctor checks of the url backend (lib/session/doctor.h): can we reach
 * the runtime? Moved from builtin/doctor.c.
 */
#include "compat.h"
#include "local/backend-local.h"
#include "dir.h"
#include "session/doctor.h"
#include "http.h"
#include "local/isolate.h"
#include "json.h"
#include "kube/kube.h"
#include "kube/kubeconfig.h"
#include "run-command.h"
#include "session/session.h"
#include "local/storage.h"
#include "strbuf.h"
#include "usage.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

int doctor_url(struct check_list *cl, const struct doctor_opts *o)
{
	struct session_opts so = *o->session;
	struct strbuf msg = STRBUF_INIT;
	struct capture cap;
	struct session s;
	int r;

	capture_start(&cap);
	r = session_open(&s, &so);
	capture_end(&cap);
	if (r < 0) {
		check_add(cl, "runtime", ISOLATE_CHECK_FAIL, cap.err.buf,
			  "check --url (or GOSBX_URL) and that the runtime "
			  "server runs there");
	} else {
		strbuf_addf(&msg, "%s answers (server '%s')", s.claim,
			    *s.server ? s.server : "upstream");
		check_add(cl, "runtime", ISOLATE_CHECK_OK, msg.buf, NULL);
		session_disconnect(&s);
		if (o->probe)
			doctor_probe(cl, o);
	}
	capture_release(&cap);
	strbuf_release(&msg);
	return 0;
}
