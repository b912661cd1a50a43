// Shared pieces of the MCP client scripts (client.mjs, swarm.mjs): option
// parsing, the transports of the official TypeScript SDK, and a transport
// wrapper that can rewrite the protocolVersion an initialize asks for and
// log every JSON-RPC message.
//
// The v1 SDK (@modelcontextprotocol/sdk 1.32.2) always asks for its
// LATEST_PROTOCOL_VERSION (2025-11-25) and has no option to ask for another
// one (client/index.js, connect()); to test each handshake revision, Tap
// rewrites params.protocolVersion of the outgoing initialize. The SDK then
// checks the answer against its SUPPORTED_PROTOCOL_VERSIONS as usual.
// 2026-07-28 needs the v2 client (@modelcontextprotocol/client 2.3.1) with
// versionNegotiation {pin: '2026-07-28'} (server/discover, no handshake).

import fs from 'node:fs';

export const MODERN = '2026-07-28';

// Parse argv: --name=value and --flag options (repeatable ones collect
// into arrays), positional words, and everything after "--" (the server
// command for stdio).
export function parseArgs(argv, repeatable = []) {
	const opts = {};
	const words = [];
	let rest = [];
	for (let i = 0; i < argv.length; i++) {
		const a = argv[i];
		if (a === '--') {
			rest = argv.slice(i + 1);
			break;
		}
		const m = /^--([a-z0-9-]+)(?:=(.*))?$/s.exec(a);
		if (!m) {
			words.push(a);
			continue;
		}
		const key = m[1];
		const val = m[2] === undefined ? true : m[2];
		if (repeatable.includes(key))
			(opts[key] ??= []).push(val);
		else
			opts[key] = val;
	}
	return { opts, words, rest };
}

// Turn an error of any kind (McpError, StreamableHTTPError, AbortError,
// SdkError...) into plain JSON the shell tests can check.
export function errorJSON(e) {
	if (!(e instanceof Error))
		return { name: typeof e, message: String(e) };
	const out = { name: e.name, class: e.constructor?.name, message: e.message };
	if (e.code !== undefined)
		out.code = e.code;
	if (e.data !== undefined)
		out.data = e.data;
	if (e.cause instanceof Error)
		out.cause = e.cause.message;
	return out;
}

// A Transport that forwards to another one; it rewrites the protocolVersion
// of an outgoing initialize (when asked), appends every message to a
// trace file as {"t":ms,"dir":"out"|"in","msg":...} lines, and keeps the
// sends still under way so that disconnect() can wait for them: the SDK
// sends the notifications/cancelled of a timed-out request without
// awaiting it, and a DELETE that overtook it made the server answer it
// 404 (a race the test saw, not a server fault).
export class Tap {
	constructor(inner, { version, trace } = {}) {
		this.inner = inner;
		this.version = version;
		this.traceFd = trace ? fs.openSync(trace, 'a') : undefined;
		this.t0 = Date.now();
		this.initId = undefined;
		this.initResult = undefined;
		this._onmessage = undefined;
		this.sending = new Set();
		inner.onmessage = (m, extra) => {
			this.log('in', m);
			if (this.initId !== undefined && m.id === this.initId &&
			    m.result)
				this.initResult = m.result;
			this._onmessage?.(m, extra);
		};
	}

	log(dir, msg) {
		if (this.traceFd === undefined)
			return;
		fs.writeSync(this.traceFd, JSON.stringify(
			{ t: Date.now() - this.t0, dir, msg }) + '\n');
	}

	start() { return this.inner.start(); }
	close() { return this.inner.close(); }

	send(msg, options) {
		if (msg.method === 'initialize') {
			this.initId = msg.id;
			if (this.version)
				msg = { ...msg, params: { ...msg.params,
					protocolVersion: this.version } };
		}
		this.log('out', msg);
		const p = this.inner.send(msg, options);
		this.sending.add(p);
		const done = () => this.sending.delete(p);
		p.then(done, done);
		return p;
	}

	// resolves when every send started so far has ended, well or not
	async settle() {
		await Promise.allSettled([...this.sending]);
	}

	get onmessage() { return this._onmessage; }
	set onmessage(fn) { this._onmessage = fn; }
	get onclose() { return this.inner.onclose; }
	set onclose(fn) { this.inner.onclose = fn; }
	get onerror() { return this.inner.onerror; }
	set onerror(fn) { this.inner.onerror = fn; }
	get sessionId() { return this.inner.sessionId; }
	setProtocolVersion(v) { this.inner.setProtocolVersion?.(v); }
}

// The HTTP headers from --token, --token-file and --header options.
export function httpHeaders(opts) {
	const headers = {};
	let token = opts.token;
	if (opts['token-file'])
		token = fs.readFileSync(opts['token-file'], 'utf8').trim();
	if (typeof token === 'string')
		headers.Authorization = `Bearer ${token}`;
	for (const h of opts.header ?? []) {
		const i = h.indexOf(':');
		if (i < 1)
			throw new Error(`bad --header '${h}' (want "Name: value")`);
		headers[h.slice(0, i).trim()] = h.slice(i + 1).trim();
	}
	return headers;
}

// Make a connected client. opts: url (HTTP) or command (stdio: an argv
// array), protocol, sdk ("v1" or "v2"), negotiate ("auto"), trace, plus the
// HTTP header options. Returns { client, transport, tap, sdk,
// negotiated() }.
export async function connect(opts, command, name = 'gosbx-test-client') {
	const protocol = typeof opts.protocol === 'string' ? opts.protocol
		: undefined;
	const sdk = opts.sdk ?? (protocol === MODERN || opts.negotiate ? 'v2'
		: 'v1');
	const info = { name, version: '0.0.1' };
	let inner;
	let client;

	if (sdk === 'v1') {
		const { Client } = await import(
			'@modelcontextprotocol/sdk/client/index.js');
		if (opts.url) {
			const { StreamableHTTPClientTransport } = await import(
				'@modelcontextprotocol/sdk/client/streamableHttp.js');
			inner = new StreamableHTTPClientTransport(new URL(opts.url),
				{ requestInit: { headers: httpHeaders(opts) },
					sessionId: opts['session-id'] });
		} else {
			const { StdioClientTransport } = await import(
				'@modelcontextprotocol/sdk/client/stdio.js');
			inner = stdioTransport(StdioClientTransport, command);
		}
		client = new Client(info, { capabilities: {} });
	} else if (sdk === 'v2') {
		const v2 = await import('@modelcontextprotocol/client');
		if (opts.url) {
			inner = new v2.StreamableHTTPClientTransport(
				new URL(opts.url),
				{ requestInit: { headers: httpHeaders(opts) } });
		} else {
			const { StdioClientTransport } = await import(
				'@modelcontextprotocol/client/stdio');
			inner = stdioTransport(StdioClientTransport, command);
		}
		const copts = { capabilities: {} };
		if (protocol && protocol >= MODERN)
			copts.versionNegotiation = { mode: { pin: protocol } };
		else if (opts.negotiate === 'auto')
			copts.versionNegotiation = { mode: 'auto' };
		else if (protocol)
			copts.supportedProtocolVersions = [protocol];
		client = new v2.Client(info, copts);
	} else {
		throw new Error(`unknown --sdk=${sdk}`);
	}

	// The v1 client always goes through the Tap (to choose the revision
	// and to learn the negotiated one). The v2 client negotiates by
	// itself, and its stdio probe needs the real stdio transport, so on
	// stdio it is wrapped only when a trace is asked for.
	let tap;
	let transport = inner;
	if (sdk === 'v1' || opts.trace || opts.url) {
		tap = new Tap(inner, { version: sdk === 'v1' ? protocol
			: undefined, trace: opts.trace });
		transport = tap;
	}
	const timeout = opts['connect-timeout'] ? Number(opts['connect-timeout'])
		: undefined;
	await client.connect(transport, timeout ? { timeout } : undefined);
	const negotiated = () => {
		if (client.getNegotiatedProtocolVersion)
			return client.getNegotiatedProtocolVersion();
		return tap?.initResult?.protocolVersion;
	};
	return { client, transport: inner, tap, sdk, negotiated };
}

// The server's environment is ours in full (the SDK's default passes only
// HOME, PATH and a few more; the tests' XDG_* directories must reach gosbx),
// and its stderr goes to ours, where the shell test collects it.
function stdioTransport(StdioClientTransport, command) {
	if (!command || command.length === 0)
		throw new Error('stdio needs the server command after "--"');
	const env = {};
	for (const [k, v] of Object.entries(process.env))
		if (v !== undefined)
			env[k] = v;
	return new StdioClientTransport({ command: command[0],
		args: command.slice(1), env, stderr: 'inherit' });
}

// End a session the way a polite client does: DELETE on HTTP (the server
// then closes the session's sandboxes), then close the transport (on stdio:
// stdin EOF, then SIGTERM after 2 s, SIGKILL after 2 s more).
export async function disconnect(c, { terminate = true } = {}) {
	await c.tap?.settle();
	if (terminate && c.transport.terminateSession)
		await c.transport.terminateSession();
	await c.client.close();
}

export function writeLine(obj) {
	fs.writeSync(1, JSON.stringify(obj) + '\n');
}
