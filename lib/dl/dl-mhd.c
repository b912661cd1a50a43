#include "compat.h"
#include "dl/dl.h"
#include "usage.h"

#include <microhttpd.h>
#include <pthread.h>

/*
 * libmicrohttpd for `gosbx` (`gosbx mcp --http`, lib/mcp/mcp-http.c), loaded
 * on the first call of any function below (lib/dl/dl.h). Not part of
 * libgosbx-base.a: gosbx-runtime and the test programs link the real
 * library. Each function has the prototype of <microhttpd.h> and calls
 * the library's own through a pointer of the same type (__typeof__).
 */

#define SONAME "libmicrohttpd.so.12"
#define PACKAGE "libmicrohttpd12"

#define MHD_SYMBOLS(X)                                                         \
	X(MHD_add_response_header)                                             \
	X(MHD_create_response_from_buffer)                                     \
	X(MHD_create_response_from_callback)                                   \
	X(MHD_destroy_response)                                                \
	X(MHD_get_version)                                                     \
	X(MHD_get_connection_info)                                             \
	X(MHD_lookup_connection_value)                                         \
	X(MHD_queue_response)                                                  \
	X(MHD_set_connection_option)                                           \
	X(MHD_start_daemon_va)                                                 \
	X(MHD_stop_daemon)

DL_LOADER(MHD_SYMBOLS)

const char *dl_mhd_version(const char **why)
{
	if (loaded())
		return fn.MHD_get_version();
	*why = load_error;
	return NULL;
}

/*
 * The entry point: without a daemon no other function can be reached
 * with a valid object, so this is where the reason is reported.
 */
struct MHD_Daemon *MHD_start_daemon(unsigned int flags, uint16_t port,
				    MHD_AcceptPolicyCallback apc, void *apc_cls,
				    MHD_AccessHandlerCallback dh, void *dh_cls,
				    ...)
{
	struct MHD_Daemon *d;
	va_list ap;

	if (!loaded()) {
		error("%s", load_error);
		return NULL;
	}
	va_start(ap, dh_cls);
	d = fn.MHD_start_daemon_va(flags, port, apc, apc_cls, dh, dh_cls, ap);
	va_end(ap);
	return d;
}

void MHD_stop_daemon(struct MHD_Daemon *d)
{
	if (loaded())
		fn.MHD_stop_daemon(d);
}

/*
 * libmicrohttpd has no va_list variant of this one: further arguments
 * are not passed on. gosbx only asks for info types that take none
 * (MHD_CONNECTION_INFO_CONNECTION_FD, _CLIENT_ADDRESS, _SOCKET_CONTEXT).
 */
const union MHD_ConnectionInfo *
MHD_get_connection_info(struct MHD_Connection *c,
			enum MHD_ConnectionInfoType type, ...)
{
	return loaded() ? fn.MHD_get_connection_info(c, type) : NULL;
}

/*
 * No va_list variant either: gosbx only sets
 * MHD_CONNECTION_OPTION_TIMEOUT, whose one argument (unsigned int
 * seconds) is passed on.
 */
enum MHD_Result MHD_set_connection_option(struct MHD_Connection *c,
					  enum MHD_CONNECTION_OPTION option,
					  ...)
{
	unsigned int secs;
	va_list ap;

	if (!loaded() || option != MHD_CONNECTION_OPTION_TIMEOUT)
		return MHD_NO;
	va_start(ap, option);
	secs = va_arg(ap, unsigned int);
	va_end(ap);
	return fn.MHD_set_connection_option(c, option, secs);
}

const char *MHD_lookup_connection_value(struct MHD_Connection *c,
					enum MHD_ValueKind kind,
					const char *key)
{
	return loaded() ? fn.MHD_lookup_connection_value(c, kind, key) : NULL;
}

enum MHD_Result MHD_queue_response(struct MHD_Connection *c,
				   unsigned int status,
				   struct MHD_Response *resp)
{
	return loaded() ? fn.MHD_queue_response(c, status, resp) : MHD_NO;
}

struct MHD_Response *
MHD_create_response_from_buffer(size_t size, void *buf,
				enum MHD_ResponseMemoryMode mode)
{
	return loaded() ? fn.MHD_create_response_from_buffer(size, buf, mode)
			: NULL;
}

struct MHD_Response *
MHD_create_response_from_callback(uint64_t size, size_t block_size,
				  MHD_ContentReaderCallback crc, void *crc_cls,
				  MHD_ContentReaderFreeCallback crfc)
{
	return loaded() ? fn.MHD_create_response_from_callback(
				  size, block_size, crc, crc_cls, crfc)
			: NULL;
}

enum MHD_Result MHD_add_response_header(struct MHD_Response *resp,
					const char *header, const char *content)
{
	return loaded() ? fn.MHD_add_response_header(resp, header, content)
			: MHD_NO;
}

void MHD_destroy_response(struct MHD_Response *resp)
{
	if (loaded())
		fn.MHD_destroy_response(resp);
}
