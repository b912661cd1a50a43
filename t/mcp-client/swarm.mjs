#!/usr/bin/env node
// Many MCP sessions at once from one process (official TypeScript SDK,
// streamable HTTP): N clients connect at the same time, client i calls
// run_go_code with the command template where every "{i}" became i, and
// checks that its stdout is exactly "i\n" (the "── stdout ──" section of
// the result, Documentation/protocol/mcp.md); only when every call is done does each client
// end its session (DELETE) and close.
//
//   node swarm.mjs --url=URL [--token=T|--token-file=F] [--clients=20]
//                  [--command='echo {i}'] [--protocol=V] [--timeout=MS]
//
// Prints one JSON line per client ({"i":..,"ok":..,"text":..|"error":..})
// and a last line {"summary":true,"ok":N,"failed":N}. Exit status 0 when
// all N succeeded, 1 otherwise, 2 for a usage error.

import { connect, disconnect, errorJSON, parseArgs, writeLine } from
	'./common.mjs';

const { opts } = parseArgs(process.argv.slice(2), ['header']);
if (!opts.url) {
	process.stderr.write('swarm.mjs: --url=URL is needed\n');
	process.exit(2);
}
const n = Number(opts.clients ?? 20);
const template = typeof opts.command === 'string' ? opts.command
	: 'echo {i}';
const timeout = Number(opts.timeout ?? 120000);

async function one(i) {
	const out = { i };
	try {
		out.c = await connect(opts, undefined, `swarm-${i}`);
		out.session = out.c.transport.sessionId;
		const params = { name: 'run_go_code', arguments:
			{ command: template.replaceAll('{i}', String(i)) } };
		const r = out.c.sdk === 'v1'
			? await out.c.client.callTool(params, undefined, { timeout })
			: await out.c.client.callTool(params, { timeout });
		out.text = r.content?.[0]?.text;
		out.isError = !!r.isError;
		const want = `\n── stdout ──\n${i}\n`;
		const got = /\n── stdout ──\n(?:.|\n)*?(?:\n\n|$)/.exec(out.text ??
			'');
		out.ok = !out.isError && got !== null &&
			got[0].replace(/\n+$/, '\n') === want;
	} catch (e) {
		out.ok = false;
		out.error = errorJSON(e);
	}
	return out;
}

const results = await Promise.all(Array.from({ length: n },
	(_, k) => one(k + 1)));
// Every call answered: now end the sessions, all at once too.
await Promise.all(results.map(async (r) => {
	if (!r.c)
		return;
	try {
		await disconnect(r.c);
	} catch (e) {
		r.ok = false;
		r.closeError = errorJSON(e);
	}
}));
let ok = 0;
for (const r of results) {
	const { c, ...line } = r;
	writeLine(line);
	if (r.ok)
		ok++;
}
writeLine({ summary: true, ok, failed: n - ok });
process.exit(ok === n ? 0 : 1);
