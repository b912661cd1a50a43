#!/usr/bin/env node
// A scripted model for the tests that drive real agent hosts (t413x):
// a small HTTP server on 127.0.0.1 that answers like the Anthropic
// Messages API (Claude Code) or the Gemini API (Gemini CLI), and whose
// "model" asks for the tool calls of a script, one per turn, then ends
// the turn with a text. It records every request body, so a test can
// check what the host sent back to the model (tool results, tool
// declarations).
//
//   node model-api.mjs --api=anthropic|gemini --script=FILE
//                      --port-file=FILE --log=FILE
//
// The script is a JSON array; step i is {"tool": NAME, "input": {...}}
// (a tool call) or {"text": "..."} (a final answer). A request whose
// declared tools include the first step's tool is the conversation: its
// answer is step N, where N is the number of tool results the request
// carries (so each result the host sends back advances the script), and
// {"text":"done"} once the script is over. Any other request (a title,
// a quota check...) gets a short text.
//
// Anthropic: POST /v1/messages (?beta=true), a JSON answer or, when the
// request says "stream": true, the event stream of the real API
// (message_start, content_block_*, message_delta, message_stop).
// Gemini: POST /v1beta/models/<model>:generateContent (JSON) and
// :streamGenerateContent?alt=sse (data: lines), :countTokens.
//
// The log gets one JSON line per request: {"api","url","body"}. The port
// is written to --port-file once the server listens (port 0: any free).
// It stops on SIGTERM.

import fs from 'node:fs';
import http from 'node:http';

const opts = {};
for (const a of process.argv.slice(2)) {
	const m = /^--([a-z-]+)=(.*)$/s.exec(a);
	if (!m) {
		process.stderr.write(`model-api.mjs: bad argument '${a}'\n`);
		process.exit(2);
	}
	opts[m[1]] = m[2];
}
for (const k of ['api', 'script', 'port-file', 'log']) {
	if (!opts[k]) {
		process.stderr.write(`model-api.mjs: --${k}= is needed\n`);
		process.exit(2);
	}
}
const script = JSON.parse(fs.readFileSync(opts.script, 'utf8'));
const firstTool = script.find((s) => s.tool)?.tool;

function log(url, body) {
	fs.appendFileSync(opts.log, JSON.stringify({ api: opts.api, url,
		body }) + '\n');
}

// ---- Anthropic Messages API ----

function anthropicStep(body) {
	const tools = (body.tools ?? []).map((t) => t.name);
	if (!firstTool || !tools.includes(firstTool))
		return { text: 'ok' };
	let n = 0;
	for (const m of body.messages ?? [])
		if (m.role === 'user' && Array.isArray(m.content))
			n += m.content.filter((b) => b.type === 'tool_result')
				.length;
	return script[n] ?? { text: 'done' };
}

function anthropic(req, res, body) {
	const step = anthropicStep(body);
	const id = `msg_${Date.now()}`;
	const block = step.tool
		? { type: 'tool_use', id: `toolu_${Date.now()}`, name: step.tool,
			input: step.input ?? {} }
		: { type: 'text', text: step.text };
	const stop = step.tool ? 'tool_use' : 'end_turn';
	const usage = { input_tokens: 10, output_tokens: 5 };
	const msg = { id, type: 'message', role: 'assistant',
		model: body.model, content: [block], stop_reason: stop,
		stop_sequence: null, usage };
	if (!body.stream) {
		res.writeHead(200, { 'content-type': 'application/json' });
		res.end(JSON.stringify(msg));
		return;
	}
	res.writeHead(200, { 'content-type': 'text/event-stream',
		'cache-control': 'no-cache' });
	const ev = (type, data) => res.write(`event: ${type}\ndata: ` +
		JSON.stringify({ type, ...data }) + '\n\n');
	ev('message_start', { message: { ...msg, content: [],
		stop_reason: null, usage: { input_tokens: 10,
			output_tokens: 0 } } });
	if (step.tool) {
		ev('content_block_start', { index: 0,
			content_block: { ...block, input: {} } });
		ev('content_block_delta', { index: 0, delta: {
			type: 'input_json_delta',
			partial_json: JSON.stringify(block.input) } });
	} else {
		ev('content_block_start', { index: 0,
			content_block: { type: 'text', text: '' } });
		ev('content_block_delta', { index: 0, delta: {
			type: 'text_delta', text: block.text } });
	}
	ev('content_block_stop', { index: 0 });
	ev('message_delta', { delta: { stop_reason: stop,
		stop_sequence: null }, usage: { output_tokens: 5 } });
	ev('message_stop', {});
	res.end();
}

// ---- Gemini API ----

function geminiStep(body) {
	const decls = (body.tools ?? []).flatMap((t) =>
		t.functionDeclarations ?? []).map((d) => d.name);
	if (!firstTool || !decls.includes(firstTool))
		return { text: 'ok' };
	let n = 0;
	for (const c of body.contents ?? [])
		for (const p of c.parts ?? [])
			if (p.functionResponse)
				n++;
	return script[n] ?? { text: 'done' };
}

// A value that fits a (Gemini or JSON) schema: what a host that asks for
// JSON (Gemini CLI's model router) can parse.
function fill(schema) {
	const t = String(schema?.type ?? 'object').toLowerCase();
	if (schema?.enum)
		return schema.enum[0];
	if (t === 'object') {
		const o = {};
		for (const [k, v] of Object.entries(schema?.properties ?? {}))
			o[k] = fill(v);
		return o;
	}
	if (t === 'array')
		return [];
	if (t === 'integer' || t === 'number')
		return 1;
	if (t === 'boolean')
		return false;
	return 'scripted';
}

function gemini(req, res, body) {
	const url = req.url;
	const gc = body.generationConfig ?? {};
	if (/:countTokens/.test(url)) {
		res.writeHead(200, { 'content-type': 'application/json' });
		res.end(JSON.stringify({ totalTokens: 10 }));
		return;
	}
	let step = geminiStep(body);
	if (!step.tool && gc.responseMimeType === 'application/json')
		step = { text: JSON.stringify(fill(gc.responseJsonSchema ??
			gc.responseSchema)) };
	const part = step.tool
		? { functionCall: { name: step.tool, args: step.input ?? {} } }
		: { text: step.text };
	const answer = { candidates: [{ content: { role: 'model',
		parts: [part] }, finishReason: 'STOP', index: 0 }],
		usageMetadata: { promptTokenCount: 10,
			candidatesTokenCount: 5, totalTokenCount: 15 },
		modelVersion: 'scripted' };
	if (/:streamGenerateContent/.test(url)) {
		res.writeHead(200, { 'content-type': 'text/event-stream' });
		res.end(`data: ${JSON.stringify(answer)}\r\n\r\n`);
		return;
	}
	res.writeHead(200, { 'content-type': 'application/json' });
	res.end(JSON.stringify(answer));
}

const srv = http.createServer((req, res) => {
	const chunks = [];
	req.on('data', (d) => chunks.push(d));
	req.on('end', () => {
		const raw = Buffer.concat(chunks).toString('utf8');
		let body = {};
		try {
			body = raw ? JSON.parse(raw) : {};
		} catch {
			body = { unparsed: raw };
		}
		log(req.url, body);
		if (req.method === 'POST' && opts.api === 'anthropic' &&
		    req.url.startsWith('/v1/messages') &&
		    !req.url.startsWith('/v1/messages/count_tokens')) {
			anthropic(req, res, body);
		} else if (req.method === 'POST' && opts.api === 'anthropic') {
			res.writeHead(200, { 'content-type': 'application/json' });
			res.end(JSON.stringify({ input_tokens: 10 }));
		} else if (req.method === 'POST' && opts.api === 'gemini' &&
			   /\/models\/[^/:]+:/.test(req.url)) {
			gemini(req, res, body);
		} else {
			res.writeHead(404, { 'content-type': 'application/json' });
			res.end(JSON.stringify({ error: { code: 404,
				message: `scripted model: no ${req.method} ` +
					req.url } }));
		}
	});
});
srv.listen(0, '127.0.0.1', () => {
	fs.writeFileSync(opts['port-file'] + '.tmp',
		String(srv.address().port));
	fs.renameSync(opts['port-file'] + '.tmp', opts['port-file']);
});
process.on('SIGTERM', () => srv.close(() => process.exit(0)));
