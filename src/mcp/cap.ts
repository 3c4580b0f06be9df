/**
 * The bound on one MCP answer (a server's `maxAnswerBytes`, else MCP_MAX_ANSWER_BYTES), counted
 * on the wire before anything is kept. The SDK holds an answer whole before the daemon sees it
 * (a JSON body, an SSE event, a stdio line): an endless one would grow the daemon until it dies
 * for lack of memory, and output.ts's cut to 16,000 characters comes too late for that.
 *
 * Past the bound the transfer is stopped (the HTTP request aborted, its socket closed) and the
 * request it answered gets a JSON-RPC error of ours instead (ANSWER_TOO_LARGE), which reaches
 * the model as `mcp.rejected` "answer too large" (client.ts) while the turn goes on.
 *
 * An HTTP JSON body is bounded whole (it answers one request, or one batch). An SSE stream is
 * bounded per event: a stream may stay open for the session's life, and only one event is ever
 * held at a time. The stdio transport (stdio.ts) bounds each line, one message.
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../core/errors.js';

/** The JSON-RPC error code of an answer cut here (in the range JSON-RPC leaves to implementations). */
export const ANSWER_TOO_LARGE = -32050;

export function tooLargeText(maxBytes: number): string {
  return `answer too large: more than ${maxBytes.toLocaleString('en-US')} bytes in one message (the bound is MCP_MAX_ANSWER_BYTES, or the server's maxAnswerBytes)`;
}

/** The error answer given to request `id` in place of one that was too large. */
export function tooLargeAnswer(id: RequestId, maxBytes: number): JSONRPCMessage {
  return { jsonrpc: '2.0', id, error: { code: ANSWER_TOO_LARGE, message: tooLargeText(maxBytes) } };
}

/** The ids of the requests in a POST body the SDK made (one message or a batch); none for a notification. */
function requestIds(body: unknown): RequestId[] {
  if (typeof body !== 'string') return [];
  try {
    const parsed: unknown = JSON.parse(body);
    return (Array.isArray(parsed) ? parsed : [parsed])
      .filter((m): m is { id: RequestId } => typeof m === 'object' && m !== null && 'method' in m && (typeof m.id === 'string' || typeof m.id === 'number'))
      .map((m) => m.id);
  } catch {
    return [];
  }
}

/** An SSE event with this type is skipped by the SDK (it reads only "message" events): it ends a cut event unread. */
const CUT_EVENT = 'membot-cut';

/**
 * A fetch for the SDK's StreamableHTTPClientTransport that bounds what comes back. `onStreamTooLarge`:
 * an event over the bound came on a stream that answers no request of ours (the standing GET
 * stream): nothing to answer, so the session is dropped (and opened again, client.ts).
 */
export function cappedFetch(server: string, maxBytes: number, onStreamTooLarge: () => void, base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const stop = new AbortController();
    const signal = init?.signal ? AbortSignal.any([init.signal, stop.signal]) : stop.signal;
    const res = await base(url, { ...init, signal });
    if (!res.body) return res;
    const ids = requestIds(init?.body);
    const head = { status: res.status, statusText: res.statusText, headers: res.headers };
    const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (type === 'text/event-stream') {
      const body = bounded(res.body, eventCounter(maxBytes), () => {
        stop.abort();
        if (ids.length === 0) {
          onStreamTooLarge();
          return new AppError('mcp.rejected', { server, detail: tooLargeText(maxBytes) });
        }
        // A line end and an event type of ours end the cut event: the SDK skips it.
        const answers = ids.map((id) => `data: ${JSON.stringify(tooLargeAnswer(id, maxBytes))}\n\n`).join('');
        return new TextEncoder().encode(`\nevent: ${CUT_EVENT}\n\n${answers}`);
      });
      return new Response(body, head);
    }
    // Any other body is read whole by the SDK (a JSON answer, an error's text): read here, up to the bound.
    const whole = await readUpTo(res.body, maxBytes);
    if (whole) return new Response(whole, head);
    stop.abort();
    if (res.ok && ids.length > 0) {
      const headers = new Headers(res.headers);
      headers.set('content-type', 'application/json');
      return new Response(JSON.stringify(ids.map((id) => tooLargeAnswer(id, maxBytes))), { ...head, headers });
    }
    return new Response(`(${tooLargeText(maxBytes)})`, head);
  };
}

/** The body's bytes, or undefined (the rest left unread) once there are more than `max`. */
async function readUpTo(body: ReadableStream<Uint8Array>, max: number): Promise<Uint8Array | undefined> {
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > max) {
      reader.cancel().catch(() => undefined);
      return undefined;
    }
    parts.push(value);
  }
  return Buffer.concat(parts, size);
}

/**
 * `body` passed through while `fits` says each chunk fits; at the first that does not, the
 * rest is cancelled and the stream ends with `onOver()`'s bytes, or with its error.
 */
function bounded(body: ReadableStream<Uint8Array>, fits: (chunk: Uint8Array) => boolean, onOver: () => Uint8Array | Error): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let next: Awaited<ReturnType<typeof reader.read>>;
        try {
          next = await reader.read();
        } catch (err) {
          controller.error(err);
          return;
        }
        if (next.done) return controller.close();
        if (fits(next.value)) return controller.enqueue(next.value);
        reader.cancel().catch(() => undefined);
        const tail = onOver();
        if (tail instanceof Error) return controller.error(tail);
        controller.enqueue(tail);
        controller.close();
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}

const LF = 10;
const CR = 13;

/**
 * Counts the bytes of the SSE event under way across chunks: an event ends at an empty line
 * (its line end right after another, LF, CR or CRLF). False once one holds more than `max`.
 */
export function eventCounter(max: number): (chunk: Uint8Array) => boolean {
  let size = 0;
  let lineEmpty = true;
  let afterCR = false;
  return (chunk) => {
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i]!;
      if (afterCR && b === LF) {
        afterCR = false;
        continue;
      }
      afterCR = b === CR;
      if (b === LF || b === CR) {
        if (lineEmpty) size = 0;
        lineEmpty = true;
        continue;
      }
      lineEmpty = false;
      if (++size > max) return false;
    }
    return true;
  };
}
