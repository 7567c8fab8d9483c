#!/usr/bin/env node
// mock-server.js PORTFILE LOGFILE: a stand-in model server for the
// real-host scenarios. Node's http module only, no dependencies, bound
// to 127.0.0.1 on a free port (written to PORTFILE once listening).
//
// Answers, with a short fixed reply ("MOCK-REPLY"):
//   Anthropic Messages   POST /v1/messages (SSE when stream:true, else JSON)
//                        POST /v1/messages/count_tokens
//   OpenAI Responses     POST /v1/responses (SSE; a request with a
//                        json_schema text format gets schema-shaped JSON:
//                        Codex's thread title)
//   Gemini               POST /v1beta/models/M:generateContent (JSON; a
//                        request with a responseJsonSchema gets an object
//                        shaped by that schema: Gemini's model router)
//                        POST /v1beta/models/M:streamGenerateContent?alt=sse
//                        POST /v1beta/models/M:countTokens
// Lines in the new user text of a turn (the prompt) drive the model,
// deterministically:
//   mock-shell: COMMAND    a call of the host's shell tool (Claude Bash,
//                          Codex exec_command, Gemini run_shell_command,
//                          Copilot CLI bash, opencode bash)
//                          running COMMAND; the request carrying its
//                          result gets the text reply. That is how a
//                          scenario makes "the model" run a command.
//   mock-intro-send: TO TEXT   the same with the command the request's
//                          Pigeon introduction gives on its line "Send a
//                          message: ... --to NAME \"text\"", NAME and
//                          text replaced by TO and TEXT: a model that
//                          follows the introduction (none found: the
//                          text reply).
//   mock-intro-send-new: TO TEXT   the same for an agent that has not
//                          started: the command as above, plus what the
//                          introduction's line "An agent not here yet:
//                          add FLAG, ..." says to add (no such line: the
//                          command as above, which such an agent refuses).
//   mock-intro-reply: N TO TEXT   the same with the introduction's line
//                          "Reply to message N: ... --to SENDER
//                          --reply-to N \"text\"": the answer to message N.
//   mock-tool: NAME ARGS   a call of the host's tool NAME with ARGS (a
//                          JSON object on one line; "\n" in its strings
//                          for a patch): an edit or a write the host's
//                          before-tool hook may deny.
//   mock-before-reply: COMMAND   run COMMAND here (sh -c, synchronously,
//                          at most 10 s) before answering with text: mail
//                          queued after the turn's last hook, before its
//                          stop.
// And, for text that is not the prompt's (what a hook injected): each line
// "TEXT<tab>COMMAND" of the file LOGFILE.on-text, if it exists, runs
// COMMAND here (as mock-before-reply:, once per line) before the text
// answer to the first request whose new items hold TEXT.
// Anything else gets a 404. Every request is appended to LOGFILE as one
// JSON line: {"seq","method","path","body"} (body parsed when it is JSON).
'use strict';

const { execSync } = require('child_process');
const fs = require('fs');
const http = require('http');

const [portFile, logFile] = process.argv.slice(2);
if (!portFile || !logFile) {
  process.stderr.write('usage: mock-server.js PORTFILE LOGFILE\n');
  process.exit(2);
}

const REPLY = 'MOCK-REPLY';
let seq = 0;
let inputTokens = 10;  // about a quarter of the last request's bytes

function record(req, raw) {
  let body = raw;
  try {
    body = raw.length ? JSON.parse(raw) : null;
  } catch (e) {
    // keep the raw text
  }
  seq += 1;
  inputTokens = Math.max(1, Math.ceil(raw.length / 4));
  const line = JSON.stringify({ seq, method: req.method, path: req.url, body });
  fs.appendFileSync(logFile, line + '\n');
  return body;
}

function json(res, status, obj) {
  const text = JSON.stringify(obj);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

function sse(res, events) {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  for (const [name, data] of events) {
    if (name) res.write(`event: ${name}\n`);
    res.write(`data: ${JSON.stringify(data)}\n\n`);
  }
  res.end();
}

// The items of the conversation that are new in this request: those
// after the model's last item (as integration/hosts/log.jq's "turn").
function turnItems(body) {
  const items = Array.isArray(body.messages) ? body.messages
    : Array.isArray(body.input) ? body.input
    : Array.isArray(body.contents) ? body.contents : [];
  let last = -1;
  items.forEach((it, i) => {
    if (it && (it.role === 'assistant' || it.role === 'model' ||
        /function_call$|^reasoning$|_call$/.test(it.type || ''))) last = i;
  });
  return items.slice(last + 1);
}

function strings(v, out) {
  if (typeof v === 'string') out.push(v);
  else if (v && typeof v === 'object') for (const k of Object.keys(v)) strings(v[k], out);
  return out;
}

// The value of the first line "mock-KEY: VALUE" new in this turn, or null.
function directive(body, key) {
  if (!body || typeof body !== 'object') return null;
  const re = new RegExp(`^mock-${key}: (.+)$`, 'm');
  for (const text of strings(turnItems(body), [])) {
    const m = re.exec(text);
    if (m) return m[1];
  }
  return null;
}

// Run COMMAND for each line of LOGFILE.on-text whose TEXT is new in
// this request, once per line.
const onTextDone = new Set();
function onText(body) {
  let lines;
  try {
    lines = fs.readFileSync(`${logFile}.on-text`, 'utf8').split('\n');
  } catch (e) {
    return;
  }
  const items = strings(turnItems(body || {}), []);
  for (const line of lines) {
    const tab = line.indexOf('\t');
    if (tab <= 0 || onTextDone.has(line)) continue;
    const text = line.slice(0, tab);
    if (!items.some((t) => t.includes(text))) continue;
    onTextDone.add(line);
    try {
      execSync(line.slice(tab + 1), { stdio: 'ignore', timeout: 10000, shell: '/bin/sh' });
    } catch (e) {
      process.stderr.write(`mock on-text failed: ${e.message}\n`);
    }
  }
}

// The shell command the model runs in this request (mock-shell: or
// mock-intro-send:), or null. A mock-before-reply: command is run here
// when the answer is text (no tool call), once per request.
function shellCommand(body) {
  const cmd = directive(body, 'shell');
  if (cmd !== null) return cmd;
  const reply = directive(body, 'intro-reply');
  if (reply !== null) {
    const m = /^(\d+) (\S+) (.+)$/.exec(reply);
    const line = strings(body, []).map((t) =>
      /Reply to message N: ([^\n]*) --to SENDER --reply-to N "text"/.exec(t))
      .find((x) => x);
    if (m && line) return `${line[1]} --to ${m[2]} --reply-to ${m[1]} "${m[3]}"`;
    return null;
  }
  const fresh = directive(body, 'intro-send-new');
  const send = fresh !== null ? fresh : directive(body, 'intro-send');
  if (send !== null) {
    const m = /^(\S+) (.+)$/.exec(send);
    const texts = strings(body, []);
    const line = texts.map((t) =>
      /Send a message: ([^\n]*) --to NAME "text"/.exec(t)).find((x) => x);
    const add = fresh === null ? null : texts.map((t) =>
      /^An agent not here yet: add (--[a-z-]+)\b/m.exec(t)).find((x) => x);
    const flag = add ? ` ${add[1]}` : '';
    if (m && line) return `${line[1]}${flag} --to ${m[1]} "${m[2]}"`;
    return null;
  }
  onText(body);
  const before = directive(body, 'before-reply');
  if (before !== null) {
    try {
      execSync(before, { stdio: 'ignore', timeout: 10000, shell: '/bin/sh' });
    } catch (e) {
      process.stderr.write(`mock-before-reply failed: ${e.message}\n`);
    }
  }
  return null;
}

// The tool call of a "mock-tool: NAME ARGS" line new in this request,
// as { name, args }, or null (none, or ARGS not a JSON object).
function toolCall(body) {
  const spec = directive(body, 'tool');
  const m = spec === null ? null : /^(\S+) (\{.*\})$/.exec(spec);
  if (!m) return null;
  try {
    return { name: m[1], args: JSON.parse(m[2]) };
  } catch (e) {
    return null;
  }
}

// The tool a ToolSearch call is loading, called with the next request.
let deferred = null;

function toolNames(body) {
  const names = [];
  for (const t of body.tools || []) {
    if (t.name) names.push(t.name);
    for (const f of t.functionDeclarations || []) names.push(f.name);
  }
  return names;
}

// ---- Anthropic Messages ------------------------------------------------

function anthropic(res, body) {
  const model = (body && body.model) || 'mock';
  const id = `msg_mock_${seq}`;
  const usage = { input_tokens: inputTokens, output_tokens: 2,
    cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const message = { id, type: 'message', role: 'assistant', model,
    content: [{ type: 'text', text: REPLY }], stop_reason: 'end_turn',
    stop_sequence: null, usage };
  let tool = toolCall(body);
  // A deferred tool (Claude Code's MCP tools sit behind ToolSearch): load
  // it first with ToolSearch "select:NAME", then, in the request carrying
  // that result, call it.
  if (tool === null && deferred !== null) {
    tool = deferred;
    deferred = null;
  } else if (tool !== null && !toolNames(body).includes(tool.name) &&
      toolNames(body).includes('ToolSearch')) {
    deferred = tool;
    tool = { name: 'ToolSearch', args: { query: `select:${tool.name}`, max_results: 1 } };
  }
  const cmd = tool === null ? shellCommand(body) : null;
  if (cmd !== null || tool !== null) {
    let input = { command: cmd, description: 'mock-shell' };
    // Claude Code's shell tool is Bash, Copilot CLI's and opencode's bash.
    const names = toolNames(body);
    let name = !names.includes('Bash') && names.includes('bash') ? 'bash' : 'Bash';
    if (tool !== null) {
      name = tool.name;
      input = tool.args;
    }
    const use = { type: 'tool_use', id: `toolu_mock_${seq}`, name, input };
    if (!body.stream)
      return json(res, 200, { ...message, content: [use], stop_reason: 'tool_use' });
    return sse(res, [
      ['message_start', { type: 'message_start', message: { ...message,
        content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } }],
      ['content_block_start', { type: 'content_block_start', index: 0,
        content_block: { ...use, input: {} } }],
      ['content_block_delta', { type: 'content_block_delta', index: 0,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(input) } }],
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      ['message_delta', { type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: { output_tokens: 2 } }],
      ['message_stop', { type: 'message_stop' }],
    ]);
  }
  if (!body || !body.stream) return json(res, 200, message);
  sse(res, [
    ['message_start', { type: 'message_start', message: { ...message,
      content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } }],
    ['content_block_start', { type: 'content_block_start', index: 0,
      content_block: { type: 'text', text: '' } }],
    ['content_block_delta', { type: 'content_block_delta', index: 0,
      delta: { type: 'text_delta', text: REPLY } }],
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    ['message_delta', { type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: 2 } }],
    ['message_stop', { type: 'message_stop' }],
  ]);
}

// ---- OpenAI Responses --------------------------------------------------

function responses(res, body) {
  const id = `resp_mock_${seq}`;
  const item = { type: 'message', id: `msg_mock_${seq}`, role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text: REPLY, annotations: [] }] };
  const usage = { input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: 0 }, output_tokens: 2,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: inputTokens + 2 };
  const model = (body && body.model) || 'mock';
  const base = { id, object: 'response', model, created_at: Math.floor(Date.now() / 1000) };
  // Structured output (Codex's thread title): JSON shaped by the schema.
  const format = body && body.text && body.text.format;
  const schema = format && format.type === 'json_schema' ? format.schema : null;
  if (schema) item.content[0].text = JSON.stringify(fromSchema(schema));
  const tool = schema ? null : toolCall(body);
  const cmd = schema || tool !== null ? null : shellCommand(body);
  if (cmd !== null || tool !== null) {
    const names = toolNames(body);
    // "NAMESPACE.NAME": a tool of a namespace (Codex offers an MCP
    // server's tools as namespace mcp__SERVER).
    const dot = tool !== null ? tool.name.indexOf('.') : -1;
    const call = tool !== null
      ? (dot > 0
        ? { namespace: tool.name.slice(0, dot), name: tool.name.slice(dot + 1),
            arguments: JSON.stringify(tool.args) }
        : { name: tool.name, arguments: JSON.stringify(tool.args) })
      : names.includes('exec_command')
        ? { name: 'exec_command', arguments: JSON.stringify({ cmd }) }
        : { name: 'shell', arguments: JSON.stringify({ command: ['sh', '-c', cmd] }) };
    const fc = { type: 'function_call', id: `fc_mock_${seq}`,
      call_id: `call_mock_${seq}`, status: 'completed', ...call };
    return sse(res, [
      ['response.created', { type: 'response.created',
        response: { ...base, status: 'in_progress', output: [] } }],
      ['response.output_item.added', { type: 'response.output_item.added',
        output_index: 0, item: { ...fc, status: 'in_progress' } }],
      ['response.output_item.done', { type: 'response.output_item.done',
        output_index: 0, item: fc }],
      ['response.completed', { type: 'response.completed',
        response: { ...base, status: 'completed', output: [fc], usage } }],
    ]);
  }
  sse(res, [
    ['response.created', { type: 'response.created',
      response: { ...base, status: 'in_progress', output: [] } }],
    ['response.output_item.added', { type: 'response.output_item.added',
      output_index: 0, item: { ...item, status: 'in_progress', content: [] } }],
    ['response.output_text.delta', { type: 'response.output_text.delta',
      item_id: item.id, output_index: 0, content_index: 0,
      delta: item.content[0].text }],
    ['response.output_item.done', { type: 'response.output_item.done',
      output_index: 0, item }],
    ['response.completed', { type: 'response.completed',
      response: { ...base, status: 'completed', output: [item], usage } }],
  ]);
}

// ---- Gemini ------------------------------------------------------------

// An instance of a JSON schema: what Gemini's router asks for.
function fromSchema(s) {
  if (!s || typeof s !== 'object') return null;
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
  if (s.const !== undefined) return s.const;
  const alt = s.anyOf || s.oneOf;
  if (Array.isArray(alt) && alt.length) return fromSchema(alt[0]);
  let type = s.type;
  if (Array.isArray(type)) type = type[0];
  type = String(type || (s.properties ? 'object' : 'string')).toLowerCase();
  switch (type) {
    case 'object': {
      const o = {};
      for (const [k, v] of Object.entries(s.properties || {})) o[k] = fromSchema(v);
      return o;
    }
    case 'array': return [];
    case 'integer': case 'number': return s.minimum !== undefined ? s.minimum : 1;
    case 'boolean': return false;
    case 'null': return null;
    default: return 'mock';  // (minLength up to 4 is met)
  }
}

function geminiAnswer(body) {
  const gc = (body && body.generationConfig) || {};
  const schema = gc.responseJsonSchema || gc.responseSchema;
  const tool = schema ? null : toolCall(body);
  const cmd = schema || tool !== null ? null : shellCommand(body);
  const part = tool !== null
    ? { functionCall: { name: tool.name, args: tool.args } }
    : cmd !== null
      ? { functionCall: { name: 'run_shell_command', args: { command: cmd } } }
      : { text: schema ? JSON.stringify(fromSchema(schema)) : REPLY };
  return {
    candidates: [{ content: { role: 'model', parts: [part] },
      finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: inputTokens, candidatesTokenCount: 2,
      totalTokenCount: inputTokens + 2 },
    modelVersion: 'mock',
  };
}

function gemini(res, path, body) {
  if (path.includes(':countTokens'))
    return json(res, 200, { totalTokens: inputTokens });
  if (path.includes(':streamGenerateContent'))
    return sse(res, [[null, geminiAnswer(body)]]);
  return json(res, 200, geminiAnswer(body));
}

// ---- server ------------------------------------------------------------

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = record(req, Buffer.concat(chunks).toString('utf8'));
    const path = req.url.split('?')[0];
    if (req.method === 'POST' && path.endsWith('/messages/count_tokens'))
      return json(res, 200, { input_tokens: inputTokens });
    if (req.method === 'POST' && path.endsWith('/messages'))
      return anthropic(res, body);
    if (req.method === 'POST' && path.endsWith('/responses'))
      return responses(res, body);
    if (req.method === 'POST' && /\/models\/[^/]+:/.test(path))
      return gemini(res, path, body);
    return json(res, 404, { error: { message: `mock: no ${req.method} ${path}` } });
  });
});

server.listen(0, '127.0.0.1', () => {
  const tmp = `${portFile}.tmp`;
  fs.writeFileSync(tmp, `${server.address().port}\n`);
  fs.renameSync(tmp, portFile);
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
