#ifndef MCP_ENVIRONMENT_H
#define MCP_ENVIRONMENT_H

#include "compat.h"
#include "mcp/mcp.h"
#include "strbuf.h"

/*
 * What the model is told about the sandboxes of this server (issue 18
 * "What the model is told"; Documentation/technical/design.md "The MCP
 * server"): the Go it runs, whether Go modules come through the host's verified
 * cache, which hosts are reachable and how (the proxy variables pip, npm, curl,
 * git and Go read), and the limits. Appended to out as one paragraph, for the
 * describe() hook of the tools that run code. The Go version is asked once per
 * process (`go env GOVERSION`).
 */
void mcp_describe_environment(const struct mcp_options *o, struct strbuf *out);
/* the same without the limits (tools whose limits are said elsewhere) */
void mcp_describe_environment_nolimits(const struct mcp_options *o,
				       struct strbuf *out);

#endif
