/**
 * One configured MCP server over the daemon's life: connected in the background at start,
 * opened again with exponential back-off (jittered, capped: util/retry.ts) whenever it dies
 * or cannot be reached, and ended at stop. Its tools are offered only while it is connected;
 * a call meanwhile is answered "not connected, try later" (`mcp.unreachable`).
 */
import type { McpServerConfig } from '../config/mcp.js';
import { AppError } from '../core/errors.js';
import { scrubSecrets, type Logger } from '../core/log.js';
import { backoffDelay } from '../core/retry.js';
import type { Tool, ToolContext } from '../tools/types.js';
import { listTools, mcpFailure, openSession, type OpenSession } from './client.js';
import { renderResult } from './output.js';
import { buildTools, someNames, type ListedTool } from './tools.js';

export interface Backoff {
  baseMs: number;
  capMs: number;
  /** Connected this long, a server that dies starts again from `baseMs`. */
  healthyMs: number;
  random: () => number;
}

export const DEFAULT_BACKOFF: Backoff = { baseMs: 1_000, capMs: 60_000, healthyMs: 60_000, random: Math.random };

/** The SDK's own request deadline is a backstop: the registry's (the tool's timeoutMs) ends a call first. */
const SDK_GRACE_MS = 5_000;
/** Starting a server (`npx` may fetch a package first) and listing its tools may take this long, or its timeoutMs when longer. */
export const CONNECT_TIMEOUT_MS = 30_000;
/** Names in one log line of tools left out, at most (a server may list thousands). */
export const MAX_LOGGED_NAMES = 100;

export type McpState =
  | { kind: 'connecting'; since: number; attempt: number; downSince: number | undefined }
  | { kind: 'connected'; since: number }
  | { kind: 'down'; since: number; retryAt: number; reason: string }
  | { kind: 'stopped' };

export class McpConnection {
  private session: OpenSession | undefined;
  /** Bumped by each attempt and each loss: events of an older session are ignored. */
  private generation = 0;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private attempt: AbortController | undefined;
  private attempting: Promise<void> | undefined;
  /** A lost session being closed (its process ended): a stop waits for it too. */
  private closing: Promise<void> | undefined;
  private known: Tool[] = [];
  /** The server's names of its tools past `maxTools` (not offered). */
  overMax: string[] = [];
  state: McpState = { kind: 'down', since: Date.now(), retryAt: Date.now(), reason: 'not started' };

  constructor(
    readonly server: McpServerConfig,
    private readonly deps: { log: Logger; toolTimeoutMs: number; backoff?: Backoff | undefined },
  ) {}

  private get timeoutMs(): number {
    return this.server.timeoutMs ?? this.deps.toolTimeoutMs;
  }

  private get backoff(): Backoff {
    return this.deps.backoff ?? DEFAULT_BACKOFF;
  }

  /** Connects in the background: never waits, never throws. */
  start(): void {
    this.run();
  }

  private run(): void {
    const p = this.connect();
    this.attempting = p;
    void p.finally(() => {
      if (this.attempting === p) this.attempting = undefined;
    });
  }

  /** Ends the session and any attempt; a stdio server's process is ended (waited for). */
  async stop(): Promise<void> {
    this.state = { kind: 'stopped' };
    this.generation++;
    clearTimeout(this.timer);
    this.attempt?.abort();
    const session = this.session;
    this.session = undefined;
    // An attempt under way ends its own process once aborted: waited for, so none outlives the stop.
    await Promise.all([session?.close(), this.attempting, this.closing]);
  }

  /** The tools offered now: none unless connected. */
  offered(): Tool[] {
    return this.state.kind === 'connected' ? this.known : [];
  }

  /** A tool by name, also while the server is down (its call then says so). */
  find(name: string): Tool | undefined {
    return this.known.find((t) => t.name === name);
  }

  /** The stdio server's process id while connected. */
  get pid(): number | undefined {
    return this.state.kind === 'connected' ? this.session?.pid : undefined;
  }

  private async connect(): Promise<void> {
    if (this.state.kind === 'stopped') return;
    const gen = ++this.generation;
    const downSince = this.state.kind === 'down' && this.state.reason !== 'not started' ? this.state.since : undefined;
    this.state = { kind: 'connecting', since: Date.now(), attempt: this.failures + 1, downSince };
    const ac = new AbortController();
    this.attempt = ac;
    try {
      const session = await openSession(this.server, {
        timeoutMs: Math.max(this.timeoutMs, CONNECT_TIMEOUT_MS),
        log: this.deps.log,
        signal: ac.signal,
        onLost: (reason) => this.lost(gen, reason),
        onToolsChanged: () => void this.refresh(gen),
      });
      if (gen !== this.generation) {
        await session.close();
        return;
      }
      this.session = session;
      this.adopt(session.tools);
      this.state = { kind: 'connected', since: Date.now() };
      this.deps.log.info({ server: this.server.name, tools: this.known.map((t) => t.name), pid: session.pid }, `MCP server ${this.server.name} connected`);
    } catch (err) {
      this.lost(gen, (err as Error).message);
    } finally {
      if (this.attempt === ac) this.attempt = undefined;
    }
  }

  /** The session of generation `gen` ended or failed: try again after the back-off. */
  private lost(gen: number, reason: string): void {
    if (gen !== this.generation || this.state.kind === 'stopped') return;
    this.generation++;
    const session = this.session;
    this.session = undefined;
    if (session) this.closing = session.close();
    const now = Date.now();
    if (this.state.kind === 'connected' && now - this.state.since >= this.backoff.healthyMs) this.failures = 0;
    this.failures++;
    const delay = backoffDelay(this.failures, this.backoff.baseMs, this.backoff.capMs, this.backoff.random);
    const since = this.state.kind === 'connecting' ? (this.state.downSince ?? now) : now;
    const text = scrubSecrets(reason).slice(0, 300);
    this.state = { kind: 'down', since, retryAt: now + delay, reason: text };
    this.deps.log.warn(
      { server: this.server.name, reason: text, retryInMs: delay, failures: this.failures },
      `MCP server ${this.server.name} is down; trying again in ${delay} ms`,
    );
    this.timer = setTimeout(() => this.run(), delay);
    this.timer.unref();
  }

  /** The server's tool list changed: list again (a failure leaves the old list). */
  private async refresh(gen: number): Promise<void> {
    const session = this.session;
    if (!session || gen !== this.generation) return;
    try {
      const tools = await listTools(session.client, { timeout: Math.max(this.timeoutMs, CONNECT_TIMEOUT_MS) });
      if (gen === this.generation) this.adopt(tools);
    } catch (err) {
      this.deps.log.warn({ server: this.server.name, err: (err as Error).message }, 'MCP server tool list could not be read again');
    }
  }

  private adopt(listed: ListedTool[]): void {
    const s = this.server;
    const { tools, skipped, overMax } = buildTools(s.name, listed, { allowed: s.tools, timeoutMs: s.timeoutMs, maxTools: s.maxTools }, (tool, args, ctx) =>
      this.call(tool, args, ctx),
    );
    const missing = (s.tools ?? []).filter((name) => !listed.some((t) => t.name === name));
    if (skipped.length > 0 || missing.length > 0 || overMax.length > 0) {
      const over = overMax.length > 0 ? { overMaxTools: overMax.slice(0, MAX_LOGGED_NAMES), overMaxToolsCount: overMax.length, maxTools: s.maxTools } : {};
      this.deps.log.warn({ server: s.name, skipped: skipped.slice(0, MAX_LOGGED_NAMES), missing, ...over }, 'MCP server tools left out');
    }
    this.known = tools;
    this.overMax = overMax;
  }

  private async call(tool: string, args: Record<string, unknown>, ctx: ToolContext): Promise<string> {
    const session = this.session;
    const gen = this.generation;
    if (!session || this.state.kind !== 'connected')
      throw new AppError('mcp.unreachable', { server: this.server.name, detail: `not connected (${this.describe(Date.now())}); try again later` });
    let result: unknown;
    try {
      result = await session.client.callTool({ name: tool, arguments: args }, undefined, { signal: ctx.signal, timeout: this.timeoutMs + SDK_GRACE_MS });
    } catch (err) {
      // Stopped by the registry (its deadline, the turn's): it reports that itself.
      if (ctx.signal.aborted) throw err;
      const failure = mcpFailure(this.server.name, err, this.timeoutMs + SDK_GRACE_MS);
      if (failure.reconnect) this.lost(gen, failure.message);
      throw failure;
    }
    return renderResult(this.server.name, tool, result);
  }

  /** The state in words: "connected, 3 tools", "down since 12:03:04 UTC (…), retry in 8 s". */
  describe(now: number): string {
    const s = this.state;
    const at = (ms: number) => `${new Date(ms).toISOString().slice(11, 19)} UTC`;
    switch (s.kind) {
      case 'connected':
        return `connected, ${this.known.length} tool${this.known.length === 1 ? '' : 's'}${this.overMax.length > 0 ? `; ${this.overMax.length} more left out, past its maxTools ${this.server.maxTools} (${someNames(this.overMax)})` : ''}`;
      case 'connecting':
        return `connecting (attempt ${s.attempt}${s.downSince ? `, down since ${at(s.downSince)}` : ''})`;
      case 'down':
        return `down since ${at(s.since)} (${s.reason}), retry in ${Math.max(0, Math.ceil((s.retryAt - now) / 1000))} s`;
      case 'stopped':
        return 'stopped';
    }
  }
}
