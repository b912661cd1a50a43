#ifndef HTTP_CHECKS_H
#define HTTP_CHECKS_H

#include "compat.h"
#include "strbuf.h"

/*
 * Request checks of gosbx's HTTP servers (gosbx-runtime, gosbx mcp
 * --http) against the web pages a user has open. A page can make the
 * browser send requests to a server on 127.0.0.1 (a form, a no-cors
 * fetch, a WebSocket), and after DNS rebinding (its name resolving to
 * 127.0.0.1) it can even read the answers. Browsers always send Origin
 * on cross-origin POSTs and WebSocket handshakes, always send Host, and
 * cannot send a body of another type than text/plain,
 * application/x-www-form-urlencoded or multipart/form-data without a
 * CORS preflight (which these servers never grant). So:
 *   - Origin, when present, must be a local origin (http_origin_local);
 *   - Host, on a TCP listener, must be an address literal, localhost or
 *     a name the operator allowed (http_host_allowed): a rebinding
 *     page's Host is its own name;
 *   - a JSON body must say application/json (http_content_type_is).
 * Clients that are not browsers (curl, the seed's Go client, the
 * agent-sandbox router, gosbx) send no Origin and the right type.
 * Source: the MCP transport spec (streamable HTTP, "Security Warning":
 * validate Origin, bind to localhost), WHATWG Fetch (CORS-safelisted
 * request headers), RFC 9110 section 7.2 (Host).
 */

/*
 * True when origin is http:// or https:// followed by localhost,
 * 127.0.0.1 or [::1], with an optional numeric port and an optional
 * "/" (what a browser sends for a page of this machine). "null" and
 * every other origin are false.
 */
int http_origin_local(const char *origin);

/*
 * True when the Host header value host is allowed on a TCP listener:
 * NULL or empty (HTTP/1.0 clients; browsers always send one), an IPv4
 * literal or a bracketed IPv6 literal (a page cannot rebind those),
 * "localhost", or a name that matches an entry of allowed (a NULL
 * terminated list, may be NULL): an exact name, or "*.suffix" for the
 * names below suffix. Names compare case-insensitively, a trailing dot
 * ignored; a ":port" must be digits (and is otherwise ignored).
 */
int http_host_allowed(const char *host, const char *const *allowed);

/*
 * Check the entries of a comma-separated host allow-list (list) for
 * http_host_allowed(): each a DNS name or "*.name" of letters, digits,
 * '-' and '.'. Appends each entry, lower-cased, to out (a NULL-terminated
 * list of owned strings; free with strvec_clear()). Returns 0, or -1
 * with error() naming the bad entry.
 */
struct strvec;
int http_host_list_parse(const char *list, struct strvec *out);

/*
 * True when the Content-Type value ct names the media type type
 * (e.g. "application/json"), case-insensitively, with or without
 * parameters ("; charset=utf-8"). NULL ct is false.
 */
int http_content_type_is(const char *ct, const char *type);

/*
 * True when the Authorization header value auth is "Bearer <token>"
 * (scheme case-insensitive, spaces around the token ignored). Compares
 * in time that depends only on the token's length. NULL auth is false.
 */
int http_bearer_ok(const char *auth, const char *token);

/*
 * Read a bearer token from the file at path into out (its contents
 * replaced; trimmed of surrounding white space). Returns 0, or -1 with
 * error() naming path when the file cannot be read, is empty or holds
 * more than one line.
 */
int http_token_read(const char *path, struct strbuf *out);

#endif /* HTTP_CHECKS_H */
