/**
 * One session with one MCP server through the official SDK: start the program (stdio) or
 * reach the URL (streamable HTTP), initialize, list its tools — each step within a deadline —
 * and tell what went wrong in the project's terms: `mcp.unreachable` (could not start or
 * reach it), `mcp.rejected` (it answered with an error), `mcp.timeout`.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from '../config/mcp.js';
import { AppError, errorMessage } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { ListedTool } from './tools.js';

const VERSION = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
/** A server listing more is cut here (each page is a request; each tool is sent with every request). */
const MAX_PAGES = 20;
/** Characters of a stdio server's last stderr line kept to explain why it stopped. */
const STDERR_LINE_CHARS = 300;
/** How long a program told to stop (SIGTERM) has before SIGKILL. */
const KILL_AFTER_MS = 2_000;

/**
 * The SDK's stdio transport, keeping hold of its process. When initialize fails the SDK's
 * client closes the transport itself, without waiting, and forgets the process: a program that
 * ignores end of input would outlive the attempt. Holding it, the attempt ends it for sure.
 */
class HeldStdioTransport extends StdioClientTransport {
  child: ChildProcess | undefined;

  override async start(): Promise<void> {
    await super.start();
    // The SDK's own field; were it renamed, ending falls back to the SDK's close.
    this.child = (this as unknown as { _process?: ChildProcess })._process;
  }
}

/** Ends a program that has not exited: SIGTERM, then SIGKILL; resolves once it is gone. */
async function endProcess(child: ChildProcess | undefined): Promise<void> {
  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;
  if (!child || !running()) return;
  const exited = once(child, 'exit').catch(() => undefined);
  child.kill('SIGTERM');
  const gone = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), KILL_AFTER_MS).unref())]);
  if (!gone && running()) {
    child.kill('SIGKILL');
    await exited;
  }
}

export type McpFailure = AppError<'mcp.unreachable' | 'mcp.rejected' | 'mcp.timeout'>;

export interface OpenSession {
  client: Client;
  tools: ListedTool[];
  /** The stdio server's process id. */
  pid: number | undefined;
  /** Ends the session; a stdio server gets end of input, then SIGTERM, then SIGKILL (the SDK's close). */
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
  const t = server.transport;
  const transport =
    t.kind === 'stdio'
      ? new HeldStdioTransport({ command: t.command, args: t.args, env: t.env, ...(t.cwd ? { cwd: t.cwd } : {}), stderr: 'pipe' })
      : new StreamableHTTPClientTransport(new URL(t.url), { requestInit: { headers: t.headers } });
  const child = () => (transport instanceof HeldStdioTransport ? transport.child : undefined);
  if (transport instanceof HeldStdioTransport) {
    // Read always (a full pipe would stall the server); the last line explains an exit.
    let partial = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = (lines.pop() ?? '').slice(-STDERR_LINE_CHARS);
      for (const line of lines) {
        if (!line.trim()) continue;
        lastStderr = line.trim().slice(0, STDERR_LINE_CHARS);
        opts.log.debug({ server: server.name, stderr: lastStderr }, 'MCP server stderr');
      }
    });
  }
  const client = new Client(
    { name: 'membot', version: VERSION },
    { capabilities: {}, listChanged: { tools: { autoRefresh: false, onChanged: () => opts.onToolsChanged?.() } } },
  );
  client.onclose = () => {
    if (!closing) opts.onLost?.(`${t.kind === 'stdio' ? 'the program exited' : 'the connection closed'}${lastStderr ? ` (its last words: ${lastStderr})` : ''}`);
  };
  const close = async () => {
    closing = true;
    // The SDK's close: end of input, SIGTERM and SIGKILL 2 s apart. It forgets the process when
    // the client closed the transport first (a failed initialize): then it is ended here.
    await client.close().catch(() => undefined);
    await endProcess(child());
  };
  const request = { timeout: opts.timeoutMs, signal: opts.signal };
  try {
    await client.connect(transport, request);
    const tools = await listTools(client, request);
    const pid = child()?.pid;
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
    if (err.code === ErrorCode.RequestTimeout) return tell(new AppError('mcp.timeout', { server, ms: timeoutMs }, { cause: err }), false);
    if (err.code === ErrorCode.ConnectionClosed) return tell(new AppError('mcp.unreachable', { server, detail: `the connection closed${words}` }, { cause: err }), true);
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
