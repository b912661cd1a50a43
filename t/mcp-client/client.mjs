#!/usr/bin/env node
// An MCP client built on the official TypeScript SDK, for the shell tests
// (t/t41xx). It connects, runs the steps given on the command line and
// prints one JSON line per step on stdout.
//
//   node client.mjs [options] step... [-- server command (stdio)]
//
// Transport: stdio spawns the command after "--" (with our environment and
// stderr); --url=http://127.0.0.1:PORT/mcp uses streamable HTTP, with
// --token=T or --token-file=F (Authorization: Bearer) and --header='N: v'.
//
// Steps:
//   info                 negotiated protocolVersion, serverInfo, capabilities
//   list                 tools/list, every page (nextCursor) followed
//   call NAME ARGS       tools/call; ARGS is JSON text or @file with JSON;
//                        "{{job_id}}" in ARGS is the last job_id a result
//                        had in its structuredContent, or in its text
//                        ("job <id> submitted", the jobs toolset);
//                        "{{exec_id}}" likewise the last exec_id
//                        (sandbox_exec_start)
//   until NAME ARGS RE   call again (every 0.2 s, at most 30 s) until the
//                        result's text matches the regular expression RE
//                        (multiline: ^ and $ match at line ends)
//   ping                 ping
//   loglevel LEVEL       logging/setLevel
// Tasks (2025-11-25, client.experimental.tasks of the v1 SDK); ID is a
// task id, "{{task_id}}" (the last one tstart made) or @FILE (its text):
//   task NAME ARGS       callToolStream with a task: the messages it
//                        yielded ("events": type and status) and the result
//   tstart NAME ARGS     tools/call with "task": {"ttl": 60000}: the
//                        CreateTaskResult (written to --task-file=FILE too)
//   tget ID              tasks/get
//   twait ID STATUS      tasks/get every 0.2 s (30 s at most) until STATUS
//   tresult ID           tasks/result (the CallToolResult)
//   tlist                tasks/list
//   tcancel ID           tasks/cancel
//
// Options before the first step apply to every call; the call options
// given between steps apply to the next call only.
//   --protocol=V     ask for revision V (v1 SDK: the initialize is rewritten;
//                    2026-07-28: the v2 client pinned to it)
//   --sdk=v1|v2      which SDK package (default v1; v2 for 2026-07-28)
//   --negotiate=auto the v2 client probes server/discover, falls back
//   --trace=FILE     append every JSON-RPC message to FILE
//   --ready=FILE     create FILE once connected
//   --connect-timeout=MS  timeout of the initialize (or server/discover)
//   --no-list        no tools/list before the first call (by default the
//                    client lists the tools first, so that the SDK checks
//                    structuredContent against each tool's outputSchema)
//   --no-terminate   HTTP: no DELETE of the session at the end
//   --session-id=ID  HTTP: join that session (no initialize), as a client
//                    whose connection dropped does
//   --task-file=FILE tstart writes the task id there
// Call options:
//   --progress       ask for progress (onprogress); the notifications seen
//                    before the result are in the step's "progress"
//   --timeout=MS     request timeout (the SDK's default is 60 s)
//   --reset-timeout-on-progress
//   --abort-on=FILE  abort the call in flight (AbortController) once FILE
//                    exists (the file is removed then)
//   --abort-after=MS abort the call MS after it was sent
//   --save-text=FILE write the result's first text block to FILE, raw
//
// Output lines: {"step":"call","tool":..,"ok":true,"result":{..},
// "progress":[..],"ms":N} or {"step":..,"ok":false,"error":{"name":..,
// "code":..,"message":..}}; {"event":"onerror",..} for errors the SDK
// reported outside a request (e.g. a message it could not parse, or a
// progress notification for a request that was already answered);
// {"event":"log","params":..} for each notifications/message (v1 SDK).
// Exit status: 0 when every step succeeded, 1 when one failed, 2 for a
// usage error, 3 when the connection failed.

import fs from 'node:fs';
import { connect, disconnect, errorJSON, parseArgs, writeLine } from
	'./common.mjs';

function usage(msg) {
	process.stderr.write(`client.mjs: ${msg}\n`);
	process.exit(2);
}

const CALL_OPTIONS = ['progress', 'timeout', 'reset-timeout-on-progress',
	'abort-on', 'abort-after', 'save-text'];

// Split argv: global options up to the first step, then steps with the
// call options in front of them, then the server command after "--".
const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
const mine = dash < 0 ? argv : argv.slice(0, dash);
const rest = dash < 0 ? [] : argv.slice(dash + 1);
let first = mine.findIndex((a) => !a.startsWith('--'));
if (first < 0)
	first = mine.length;
const { opts } = parseArgs(mine.slice(0, first), ['header']);
if (!opts.url && rest.length === 0)
	usage('give --url=URL or the server command after --');

function readArgs(name, text) {
	if (text.startsWith('@'))
		text = fs.readFileSync(text.slice(1), 'utf8');
	try {
		JSON.parse(text.replaceAll('{{job_id}}', 'x')
			.replaceAll('{{exec_id}}', 'x'));
	} catch (e) {
		usage(`call ${name}: bad JSON arguments: ${e.message}`);
	}
	return text;
}

const steps = [];
let pending = {};
const words = mine.slice(first);
for (let i = 0; i < words.length; i++) {
	const w = words[i];
	const need = (n) => {
		if (i + n >= words.length)
			usage(`${w}: ${n} argument(s) needed`);
	};
	if (w.startsWith('--')) {
		const { opts: o } = parseArgs([w]);
		const k = Object.keys(o)[0];
		if (!CALL_OPTIONS.includes(k))
			usage(`${w} is not a call option`);
		pending[k] = o[k];
		continue;
	}
	if (w === 'call' || w === 'until') {
		need(w === 'call' ? 2 : 3);
		const s = { step: w, name: words[i + 1] };
		s.args = readArgs(s.name, words[i + 2]);
		i += 2;
		if (w === 'until')
			s.re = new RegExp(words[++i], 'm');
		s.opts = { ...opts, ...pending };
		pending = {};
		steps.push(s);
	} else if (w === 'loglevel') {
		need(1);
		steps.push({ step: 'loglevel', level: words[++i] });
	} else if (w === 'task' || w === 'tstart') {
		need(2);
		steps.push({ step: w, name: words[i + 1],
			args: readArgs(words[i + 1], words[i + 2]) });
		i += 2;
	} else if (['tget', 'tresult', 'tcancel'].includes(w)) {
		need(1);
		steps.push({ step: w, id: words[++i] });
	} else if (w === 'twait') {
		need(2);
		steps.push({ step: w, id: words[i + 1], status: words[i + 2] });
		i += 2;
	} else if (['info', 'list', 'ping', 'tlist'].includes(w)) {
		steps.push({ step: w });
	} else {
		usage(`unknown step '${w}'`);
	}
}

// Every page of tools/list (the v1 SDK returns one page per request).
async function listAll(client) {
	const tools = [];
	let cursor;
	let pages = 0;
	do {
		const r = await client.listTools(cursor ? { cursor } : undefined);
		pages++;
		tools.push(...r.tools);
		cursor = r.nextCursor;
	} while (cursor && pages < 100);
	return { tools, pages };
}

const vars = {};

// One tools/call with the step's options; resolves to the output line.
async function call(c, s) {
	const o = s.opts;
	const ac = new AbortController();
	const progress = [];
	const t0 = Date.now();
	const ropts = { signal: ac.signal };
	if (o.timeout)
		ropts.timeout = Number(o.timeout);
	if (o['reset-timeout-on-progress'])
		ropts.resetTimeoutOnProgress = true;
	if (o.progress)
		ropts.onprogress = (p) => progress.push({ ...p,
			ms: Date.now() - t0 });
	const timers = [];
	if (o['abort-on']) {
		const f = o['abort-on'];
		timers.push(setInterval(() => {
			if (fs.existsSync(f) && !ac.signal.aborted) {
				fs.rmSync(f, { force: true });
				ac.abort(new Error(`aborted: ${f} appeared`));
			}
		}, 50));
	}
	if (o['abort-after'])
		timers.push(setTimeout(() => ac.abort(new Error('aborted: time')),
			Number(o['abort-after'])));
	const out = { step: 'call', tool: s.name };
	try {
		const args = JSON.parse(s.args.replaceAll('{{job_id}}',
			vars.job_id ?? '').replaceAll('{{exec_id}}',
			vars.exec_id ?? ''));
		const params = { name: s.name, arguments: args };
		// v1: callTool(params, resultSchema, options); v2:
		// callTool(params, options)
		const result = c.sdk === 'v1'
			? await c.client.callTool(params, undefined, ropts)
			: await c.client.callTool(params, ropts);
		out.ok = true;
		out.result = result;
		const text = result.content?.find((b) => b.type === 'text');
		if (o['save-text'] && text)
			fs.writeFileSync(o['save-text'], text.text);
		const id = result.structuredContent?.job_id ??
			/^job (\S+) submitted/.exec(text?.text ?? '')?.[1];
		if (typeof id === 'string')
			vars.job_id = id;
		const eid = result.structuredContent?.exec_id ??
			/^exec_id=(\S+)/.exec(text?.text ?? '')?.[1];
		if (typeof eid === 'string')
			vars.exec_id = eid;
	} catch (e) {
		out.ok = false;
		out.error = errorJSON(e);
	} finally {
		timers.forEach((t) => clearInterval(t));
	}
	out.ms = Date.now() - t0;
	if (o.progress)
		out.progress = progress;
	return out;
}

async function until(c, s) {
	const deadline = Date.now() + 30000;
	let out;
	let tries = 0;
	for (;;) {
		out = await call(c, s);
		tries++;
		const text = out.result?.content?.find((b) => b.type === 'text');
		if (out.ok && text && s.re.test(text.text))
			break;
		if (Date.now() > deadline) {
			out.ok = false;
			out.error = { message: `no match for ${s.re} in 30 s` };
			break;
		}
		await new Promise((res) => setTimeout(res, 200));
	}
	out.step = 'until';
	out.tries = tries;
	return out;
}

// the task id an ID argument names
function taskId(id) {
	if (id === '{{task_id}}')
		return vars.task_id;
	if (id.startsWith('@'))
		return fs.readFileSync(id.slice(1), 'utf8').trim();
	return id;
}

// The task steps; resolves to the output line.
async function taskStep(c, s) {
	const t = c.client.experimental.tasks;
	const out = { step: s.step, ok: true };
	if (s.step === 'task') {
		out.events = [];
		const params = { name: s.name, arguments: JSON.parse(s.args) };
		for await (const m of t.callToolStream(params, undefined,
			{ task: { ttl: 60000 } })) {
			out.events.push({ type: m.type,
				status: m.task?.status });
			if (m.type === 'taskCreated')
				vars.task_id = m.task.taskId;
			if (m.type === 'result')
				out.result = m.result;
			if (m.type === 'error') {
				out.ok = false;
				out.error = errorJSON(m.error);
			}
		}
	} else if (s.step === 'tstart') {
		const { CreateTaskResultSchema } = await import(
			'@modelcontextprotocol/sdk/types.js');
		out.result = await c.client.request({ method: 'tools/call',
			params: { name: s.name, arguments: JSON.parse(s.args),
				task: { ttl: 60000 } } }, CreateTaskResultSchema);
		vars.task_id = out.result.task.taskId;
		if (opts['task-file'])
			fs.writeFileSync(opts['task-file'], vars.task_id);
	} else if (s.step === 'tget') {
		out.result = await t.getTask(taskId(s.id));
	} else if (s.step === 'twait') {
		const deadline = Date.now() + 30000;
		for (;;) {
			out.result = await t.getTask(taskId(s.id));
			if (out.result.status === s.status)
				break;
			if (Date.now() > deadline) {
				out.ok = false;
				out.error = { message: `no ${s.status} in 30 s` };
				break;
			}
			await new Promise((res) => setTimeout(res, 200));
		}
	} else if (s.step === 'tresult') {
		const { CallToolResultSchema } = await import(
			'@modelcontextprotocol/sdk/types.js');
		out.result = await t.getTaskResult(taskId(s.id),
			CallToolResultSchema);
	} else if (s.step === 'tlist') {
		out.result = await t.listTasks();
	} else if (s.step === 'tcancel') {
		out.result = await t.cancelTask(taskId(s.id));
	}
	return out;
}

let c;
try {
	c = await connect(opts, rest);
} catch (e) {
	writeLine({ step: 'connect', ok: false, error: errorJSON(e) });
	process.exit(3);
}
c.client.onerror = (e) => writeLine({ event: 'onerror',
	error: errorJSON(e) });
if (c.sdk === 'v1') {
	// the SDK parses notifications/message against its schema first
	const { LoggingMessageNotificationSchema } = await import(
		'@modelcontextprotocol/sdk/types.js');
	c.client.setNotificationHandler(LoggingMessageNotificationSchema,
		(n) => writeLine({ event: 'log', params: n.params }));
}
if (opts.ready)
	fs.writeFileSync(opts.ready, '');

let failed = 0;
let listed = !!opts['no-list'];
for (const s of steps) {
	let out;
	try {
		if (s.step === 'info') {
			out = { step: 'info', ok: true,
				sdk: c.sdk,
				protocolVersion: c.negotiated(),
				serverInfo: c.client.getServerVersion(),
				capabilities: c.client.getServerCapabilities(),
				instructions: c.client.getInstructions?.(),
				sessionId: c.transport.sessionId };
		} else if (s.step === 'list') {
			const r = await listAll(c.client);
			listed = true;
			out = { step: 'list', ok: true, pages: r.pages,
				result: { tools: r.tools } };
		} else if (s.step === 'ping') {
			await c.client.ping();
			out = { step: 'ping', ok: true };
		} else if (s.step === 'loglevel') {
			await c.client.setLoggingLevel(s.level);
			out = { step: 'loglevel', ok: true };
		} else if (s.step.startsWith('t')) {
			out = await taskStep(c, s);
		} else {
			if (!listed) {
				await listAll(c.client);
				listed = true;
			}
			out = s.step === 'call' ? await call(c, s)
				: await until(c, s);
		}
	} catch (e) {
		out = { step: s.step, ok: false, error: errorJSON(e) };
	}
	if (!out.ok)
		failed++;
	writeLine(out);
}

try {
	await disconnect(c, { terminate: !opts['no-terminate'] });
} catch (e) {
	writeLine({ step: 'disconnect', ok: false, error: errorJSON(e) });
	failed++;
}
process.exit(failed ? 1 : 0);
