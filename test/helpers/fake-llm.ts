/**
 * An OpenAI-compatible HTTP server on 127.0.0.1 for tests: records every request and answers
 * with whatever the test's responder says (text, tool calls, an error status, a hang, a cut
 * connection). The real `openai` SDK talks to it over HTTP.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

export interface FakeReply {
  status?: number;
  json?: unknown;
  /** Sent verbatim instead of `json` (for malformed bodies). */
  raw?: string;
  headers?: Record<string, string>;
  delayMs?: number;
  /** Never answer (the client must time out). */
  hang?: boolean;
  /** Close the socket without an answer. */
  destroy?: boolean;
  /**
   * How a 200 completion is streamed when the request asks for `stream: true` (it always is
   * then: as server-sent events, `chunkChars` characters per event, `paceMs` apart; default 16
   * characters with no pause). `usage: false` plays a server that never reports usage.
   */
  stream?: { chunkChars?: number; paceMs?: number; usage?: boolean };
}

/** One streamed answer, as the server sent it (ms timestamps, Date.now()). */
export interface StreamRecord {
  startedAt: number;
  /** When the first event with answer text went out. */
  firstTextAt: number | undefined;
  endedAt: number | undefined;
  events: number;
}

export type Responder = (req: RecordedRequest, index: number) => FakeReply | Promise<FakeReply>;

export interface FakeLlm {
  url: string;
  requests: RecordedRequest[];
  /** Requests to /chat/completions only. */
  chatRequests(): RecordedRequest[];
  /** Streamed answers, in the order they started. */
  streams: StreamRecord[];
  /** Requests to /audio/transcriptions (multipart: `body` is the raw text). */
  transcriptionRequests(): RecordedRequest[];
  setResponder(r: Responder): void;
  /** Answers /audio/transcriptions (default: transcribeMarker). */
  setTranscriber(r: Responder): void;
  close(): Promise<void>;
}

let seq = 0;

export function completion(content: string | null, toolCalls?: Array<{ name: string; args: unknown; id?: string }>, model = 'fake-model'): unknown {
  return {
    id: `chatcmpl-${++seq}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        finish_reason: toolCalls ? 'tool_calls' : 'stop',
        message: {
          role: 'assistant',
          content,
          ...(toolCalls
            ? {
                tool_calls: toolCalls.map((c, i) => ({
                  id: c.id ?? `call_${seq}_${i}`,
                  type: 'function',
                  function: { name: c.name, arguments: typeof c.args === 'string' ? c.args : JSON.stringify(c.args) },
                })),
              }
            : {}),
        },
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

export function text(content: string): FakeReply {
  return { json: completion(content) };
}

export function toolCalls(calls: Array<{ name: string; args: unknown; id?: string }>, content: string | null = null): FakeReply {
  return { json: completion(content, calls) };
}

/** The newest user message's text (of its text parts, when it carries an image). */
export function lastUserText(req: RecordedRequest): string {
  const msgs = (req.body?.messages ?? []) as Array<{ role: string; content: unknown }>;
  for (let i = msgs.length - 1; i >= 0; i--) {
    const c = msgs[i]!.content;
    if (msgs[i]!.role !== 'user') continue;
    if (!Array.isArray(c)) return String(c);
    return c
      .filter((p: { type?: string }) => p.type === 'text')
      .map((p: { text?: string }) => p.text)
      .join('\n');
  }
  return '';
}

/** Default: answers "echo: <last user message>". */
export const echoResponder: Responder = (req) => text(`echo: ${lastUserText(req)}`);

/**
 * The default speech-to-text: the "audio" tests upload is text, `AUDIO:<words>`, and the
 * transcript is those words — so a transcript proves the file's bytes made it through. Any
 * other upload is refused with 400, as a real server refuses what it cannot decode.
 */
export const transcribeMarker: Responder = (req) => {
  const m = /AUDIO:([^\r\n]*)/.exec(typeof req.body === 'string' ? req.body : '');
  return m ? { json: { text: m[1] } } : { status: 400, json: { error: { message: 'Invalid file format.', type: 'invalid_request_error' } } };
};

export async function startFakeLlm(responder: Responder = echoResponder, opts: { record?: boolean } = {}): Promise<FakeLlm> {
  let current = responder;
  let transcriber: Responder = transcribeMarker;
  const requests: RecordedRequest[] = [];
  const streams: StreamRecord[] = [];
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = raw;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        /* keep raw */
      }
      const rec: RecordedRequest = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body };
      if (opts.record !== false) requests.push(rec);
      let reply: FakeReply;
      try {
        reply = rec.path.endsWith('/audio/transcriptions') ? await transcriber(rec, requests.length - 1) : await current(rec, requests.length - 1);
      } catch (err) {
        reply = { status: 500, json: { error: { message: String(err) } } };
      }
      if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
      if (reply.hang) return;
      if (reply.destroy) {
        req.socket.destroy();
        return;
      }
      const status = reply.status ?? 200;
      if (status === 200 && reply.raw === undefined && (rec.body as any)?.stream === true && isCompletion(reply.json)) {
        const record: StreamRecord = { startedAt: Date.now(), firstTextAt: undefined, endedAt: undefined, events: 0 };
        streams.push(record);
        await streamCompletion(res, reply.json, reply.stream ?? {}, (rec.body as any)?.stream_options?.include_usage === true, record);
        return;
      }
      const payload = reply.raw ?? JSON.stringify(reply.json ?? (status >= 400 ? { error: { message: `fake error ${status}`, type: 'server_error' } } : {}));
      res.writeHead(status, { 'content-type': 'application/json', ...(reply.headers ?? {}) });
      res.end(payload);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    streams,
    chatRequests: () => requests.filter((r) => r.path.endsWith('/chat/completions')),
    transcriptionRequests: () => requests.filter((r) => r.path.endsWith('/audio/transcriptions')),
    setResponder(r) {
      current = r;
    },
    setTranscriber(r) {
      transcriber = r;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function isCompletion(json: unknown): json is { id: string; model: string; created: number; choices: any[]; usage?: unknown } {
  return !!json && typeof json === 'object' && (json as any).object === 'chat.completion' && Array.isArray((json as any).choices);
}

/** Sends a completion as server-sent events, the way OpenAI streams one (text and tool calls in pieces). */
async function streamCompletion(
  res: http.ServerResponse,
  json: { id: string; model: string; created: number; choices: any[]; usage?: unknown },
  opts: NonNullable<FakeReply['stream']>,
  includeUsage: boolean,
  record: StreamRecord,
): Promise<void> {
  const size = Math.max(1, opts.chunkChars ?? 16);
  const pieces = (t: string): string[] =>
    t.length === 0 ? [] : Array.from({ length: Math.ceil(t.length / size) }, (_, i) => t.slice(i * size, (i + 1) * size));
  const base = { id: json.id, object: 'chat.completion.chunk', created: json.created, model: json.model };
  const msg = json.choices[0]?.message ?? {};
  const deltas: Array<{ delta: any; text?: boolean }> = [{ delta: { role: 'assistant', content: '' } }];
  for (const p of pieces(typeof msg.content === 'string' ? msg.content : '')) deltas.push({ delta: { content: p }, text: true });
  for (const [index, c] of ((msg.tool_calls ?? []) as any[]).entries()) {
    deltas.push({ delta: { tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } }] } });
    for (const p of pieces(c.function.arguments)) deltas.push({ delta: { tool_calls: [{ index, function: { arguments: p } }] } });
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (data: unknown) => {
    record.events++;
    res.write(`data: ${JSON.stringify(data)}\n\n`);
  };
  for (const d of deltas) {
    if (res.destroyed) return;
    if (d.text && opts.paceMs) await new Promise((r) => setTimeout(r, opts.paceMs));
    if (d.text) record.firstTextAt ??= Date.now();
    send({ ...base, choices: [{ index: 0, delta: d.delta, finish_reason: null }] });
  }
  send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: json.choices[0]?.finish_reason ?? 'stop' }] });
  if (includeUsage && opts.usage !== false && json.usage) send({ ...base, choices: [], usage: json.usage });
  res.end('data: [DONE]\n\n');
  record.endedAt = Date.now();
}

/** The prompt kind of a request, recognised by the first words our services use. */
export function promptKind(req: RecordedRequest): 'consolidation' | 'summary' | 'chat' {
  const first = String(req.body?.messages?.[0]?.content ?? '');
  if (first.startsWith('You are a memory consolidation agent')) return 'consolidation';
  if (first.startsWith('Summarize the conversation')) return 'summary';
  return 'chat';
}

/**
 * Answers like a cooperative model: consolidation prompts get JSON with history_entry and a
 * memory_update that appends a line naming how many messages it saw; summary prompts get a
 * short summary; chat gets the echo.
 */
export const memoryAwareResponder: Responder = (req) => {
  const kind = promptKind(req);
  const prompt = String(req.body?.messages?.[0]?.content ?? '');
  if (kind === 'consolidation') {
    const conv = prompt.slice(prompt.indexOf('## Conversation to Process'));
    const lines = conv.split('\n').filter((l) => l.startsWith('['));
    const mem = prompt.slice(prompt.indexOf('## Current Long-term Memory') + 28, prompt.indexOf('## Conversation to Process')).trim();
    const current = mem === '(empty)' ? '' : mem;
    const firstUser = lines.find((l) => l.includes('] USER: ')) ?? '';
    return text(
      JSON.stringify({
        history_entry: `[2026-01-01 00:00] Consolidated ${lines.length} messages. First: ${firstUser.slice(0, 80)}`,
        memory_update: `${current}\n- consolidated ${lines.length} messages`.trim(),
      }),
    );
  }
  if (kind === 'summary') return text(`- The user and the assistant exchanged messages (summary #${req.body.messages[0].content.length}).`);
  return echoResponder(req, 0);
};

/** The tool results of a request (this turn's: those after the last user message), by the tool that produced them. */
export function toolResults(req: RecordedRequest): Array<{ name: string; args: any; content: string }> {
  const calls = new Map<string, { name: string; args: any }>();
  for (const m of req.body.messages) {
    for (const c of m.tool_calls ?? []) calls.set(c.id, { name: c.function.name, args: JSON.parse(c.function.arguments) });
  }
  const msgs = req.body.messages as any[];
  const start = msgs.map((m) => m.role).lastIndexOf('user');
  return msgs
    .slice(start + 1)
    .filter((m) => m.role === 'tool')
    .map((m) => ({ ...calls.get(m.tool_call_id)!, content: String(m.content) }));
}
