/*
 * The doctor checks of the url backend (lib/session/doctor.h): can we reach
 * the runtime? Moved from builtin/doctor.c.
 */
#include "compat.h"
#include "session/doctor.h"
#include "session/session.h"

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
		check_add(cl, "runtime", DOCTOR_FAIL, cap.err.buf,
			  "check --url (or GOSBX_URL) and that the runtime "
			  "server runs there");
	} else {
		strbuf_addf(&msg, "%s answers (server '%s')", s.claim,
			    *s.server ? s.server : "upstream");
		check_add(cl, "runtime", DOCTOR_OK, msg.buf, NULL);
		session_disconnect(&s);
		if (o->probe)
			doctor_probe(cl, o);
	}
	capture_release(&cap);
	strbuf_release(&msg);
	return 0;
}
