/**
 * One session with one MCP server through the official SDK: start the program (stdio) or
 * reach the URL (streamable HTTP), initialize, list its tools — each step within a deadline —
 * and tell what went wrong in the project's terms: `mcp.unreachable` (could not start or
 * reach it), `mcp.rejected` (it answered with an error, or too much), `mcp.timeout`. The stdio
 * transport is ours (stdio.ts: a process group, bounded lines); the HTTP one is the SDK's with
 * a fetch that bounds what comes back (cap.ts).
 */
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from '../config/mcp.js';
import { AppError, errorMessage } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { ANSWER_TOO_LARGE, cappedFetch } from './cap.js';
import { GroupStdioTransport } from './stdio.js';
import type { ListedTool } from './tools.js';

const VERSION = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
/** A server listing more is cut here (each page is a request; each tool is sent with every request). */
const MAX_PAGES = 20;
/** Characters of a stdio server's last stderr line kept to explain why it stopped. */
const STDERR_LINE_CHARS = 300;

export type McpFailure = AppError<'mcp.unreachable' | 'mcp.rejected' | 'mcp.timeout'>;

export interface OpenSession {
  client: Client;
  tools: ListedTool[];
  /** The stdio server's process id. */
  pid: number | undefined;
  /** Ends the session; a stdio server gets end of input, then its process group SIGTERM, then SIGKILL (stdio.ts). */
  close(): Promise<void>;
}

export interface OpenOptions {
  /** Each request's deadline (initialize, each page of tools/list). */
  timeoutMs: number;
  log: Logger;
  /** Aborts the attempt (the daemon stops meanwhile): the process is ended. */
  signal?: AbortSignal | undefined;
  /** The session ended by itself (the program exited, the connection closed); not called after `close`. */
  onLost?: (reason: string) => void;
  /** The server says its tool list changed. */
  onToolsChanged?: () => void;
}

/** Starts a session and lists the tools; on any failure the program is ended and an `McpFailure` thrown. */
export async function openSession(server: McpServerConfig, opts: OpenOptions): Promise<OpenSession> {
  let closing = false;
  let lastStderr = '';
  /** Why the transport dropped the session itself (an answer over the bound on a stream no request waits on). */
  let dropped: string | undefined;
  const t = server.transport;
  const max = server.maxAnswerBytes;
  let partial = '';
  // The last stderr line explains an exit.
  const onStderr = (chunk: Buffer) => {
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = (lines.pop() ?? '').slice(-STDERR_LINE_CHARS);
    for (const line of lines) {
      if (!line.trim()) continue;
      lastStderr = line.trim().slice(0, STDERR_LINE_CHARS);
      opts.log.debug({ server: server.name, stderr: lastStderr }, 'MCP server stderr');
    }
  };
  const transport =
    t.kind === 'stdio'
      ? new GroupStdioTransport({ server: server.name, command: t.command, args: t.args, env: t.env, cwd: t.cwd, maxBytes: max, onStderr })
      : new StreamableHTTPClientTransport(new URL(t.url), {
          requestInit: { headers: t.headers },
          fetch: cappedFetch(server.name, max, () => {
            dropped = `it sent an event of more than ${max.toLocaleString('en-US')} bytes on its stream (maxAnswerBytes)`;
            void transport.close();
          }),
        });
  const client = new Client(
    { name: 'membot', version: VERSION },
    { capabilities: {}, listChanged: { tools: { autoRefresh: false, onChanged: () => opts.onToolsChanged?.() } } },
  );
  client.onclose = () => {
    if (closing) return;
    const why = dropped ?? (transport instanceof GroupStdioTransport ? transport.reason : undefined);
    opts.onLost?.(why ?? `${t.kind === 'stdio' ? 'the program exited' : 'the connection closed'}${lastStderr ? ` (its last words: ${lastStderr})` : ''}`);
  };
  const close = async () => {
    closing = true;
    await client.close().catch(() => undefined);
    // The client may have closed the transport first, without waiting (a failed initialize):
    // the stdio transport's close is one wait for every caller, ending its program for sure.
    if (transport instanceof GroupStdioTransport) await transport.close();
  };
  const request = { timeout: opts.timeoutMs, signal: opts.signal };
  try {
    await client.connect(transport, request);
    const tools = await listTools(client, request);
    const pid = transport instanceof GroupStdioTransport ? transport.pid : undefined;
    return { client, tools, pid, close };
  } catch (err) {
    await close();
    throw mcpFailure(server.name, err, opts.timeoutMs, lastStderr);
  }
}

/** Every page of `tools/list` (up to MAX_PAGES). */
export async function listTools(client: Client, request: { timeout: number; signal?: AbortSignal | undefined }): Promise<ListedTool[]> {
  const out: ListedTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const res = await client.listTools(cursor ? { cursor } : undefined, request);
    out.push(...(res.tools as ListedTool[]));
    cursor = res.nextCursor;
    if (!cursor) break;
  }
  return out;
}

/**
 * A failure in the project's codes. `reconnect`: the session is no use any more (the program is
 * gone, the connection failed, the HTTP session was refused) and must be opened again.
 */
export function mcpFailure(server: string, err: unknown, timeoutMs: number, stderr = ''): McpFailure & { reconnect: boolean } {
  const tell = (e: McpFailure, reconnect: boolean) => Object.assign(e, { reconnect });
  const words = stderr ? ` (its last words: ${stderr})` : '';
  if (err instanceof AppError && err.code.startsWith('mcp.')) return tell(err as McpFailure, true);
  if (err instanceof McpError) {
    // Cut on the wire (cap.ts): the session is fine, the answer was too big.
    if (err.code === ANSWER_TOO_LARGE)
      return tell(new AppError('mcp.rejected', { server, detail: err.message.replace(/^MCP error -?\d+: /, '') }, { cause: err }), false);
    if (err.code === ErrorCode.RequestTimeout) return tell(new AppError('mcp.timeout', { server, ms: timeoutMs }, { cause: err }), false);
    if (err.code === ErrorCode.ConnectionClosed)
      return tell(new AppError('mcp.unreachable', { server, detail: `the connection closed${words}` }, { cause: err }), true);
    return tell(new AppError('mcp.rejected', { server, detail: err.message }, { cause: err }), false);
  }
  if (err instanceof StreamableHTTPError && typeof err.code === 'number' && err.code >= 400) {
    return tell(new AppError('mcp.rejected', { server, detail: `HTTP ${err.code}: ${err.message}` }, { cause: err }), true);
  }
  // fetch failed, ECONNREFUSED, spawn ENOENT, "Not connected": nobody there to say no.
  const cause = (err as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  const detail = `${errorMessage(err)}${typeof cause === 'string' ? ` (${cause})` : ''}${words}`;
  return tell(new AppError('mcp.unreachable', { server, detail }, { cause: err }), true);
}
