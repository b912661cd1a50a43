#include "compat.h"
#include "session/websocket.h"
#include "json.h"

#include <openssl/sha.h>

/*
 * ws_accept_key() on its own: gosbx-runtime answers upgrades with it and
 * must not link the client half of websocket.c (libcurl), which its
 * image does not have.
 */

/* RFC 6455 section 1.3 */
#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

void ws_accept_key(const char *key, struct strbuf *out)
{
	struct strbuf in = STRBUF_INIT;
	unsigned char sha[SHA_DIGEST_LENGTH];

	strbuf_addstr(&in, key);
	strbuf_addstr(&in, WS_GUID);
	SHA1((const unsigned char *)in.buf, in.len, sha);
	base64_encode_into(out, sha, sizeof(sha));
	strbuf_release(&in);
}
