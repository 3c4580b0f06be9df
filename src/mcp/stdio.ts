/**
 * The stdio transport to an MCP server program, in place of the SDK's StdioClientTransport
 * (which spawns the program itself, with no say in how):
 *
 * - The program leads its own process group, and the stop ends the group. A wrapper — `sh -c
 *   …`, `npx` — may ignore end of input or leave its child behind; ending only the program
 *   we started left those running after the daemon had stopped. End of input first, then
 *   SIGTERM to the group, then SIGKILL, 2 s apart; the stop waits for the program.
 * - One message (a line) may hold `maxBytes` at most (cap.ts): past it, the requests waiting
 *   for an answer are answered "answer too large" and the program is ended (its output is out
 *   of step from there; the connection starts it again).
 *
 * Messages are the SDK's (one JSON-RPC message a line), read and written with its functions.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { tooLargeAnswer } from './cap.js';
import { AppError } from '../core/errors.js';

/** How long a program has after end of input, and after SIGTERM, before the next step. */
export const KILL_AFTER_MS = 2_000;
/** How often the stop looks whether a group the program left behind is gone. */
const GROUP_POLL_MS = 50;
/** Windows has no process groups: there the program alone is ended. */
const GROUPS = process.platform !== 'win32';

export interface StdioParams {
  /** The server's name in MCP_CONFIG (for errors). */
  server: string;
  command: string;
  args: string[];
  /** Added to the few variables every program gets (the SDK's getDefaultEnvironment). */
  env: Record<string, string>;
  cwd?: string | undefined;
  /** The bound on one message the program writes. */
  maxBytes: number;
  /** What the program writes to stderr (read always: a full pipe would stall it). */
  onStderr?: (chunk: Buffer) => void;
}

export class GroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** The program while it runs (also after a close began: the stop waits for it). */
  child: ChildProcess | undefined;
  /** Set when the transport ended the program itself: why (the session's loss says it). */
  reason: string | undefined;
  private parts: Buffer[] = [];
  private size = 0;
  /** Requests sent and not answered yet: those answered "too large" when a message is cut. */
  private readonly pending = new Set<RequestId>();
  private closing: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly params: StdioParams) {}

  async start(): Promise<void> {
    if (this.child) throw new AppError('internal.bug', { problem: 'the MCP stdio transport is started already' });
    const p = this.params;
    const child = spawn(p.command, p.args, {
      env: { ...getDefaultEnvironment(), ...p.env },
      ...(p.cwd ? { cwd: p.cwd } : {}),
      stdio: ['pipe', 'pipe', 'pipe'],
      // Its own process group (and session), which the stop signals whole.
      detached: GROUPS,
      windowsHide: true,
    });
    this.child = child;
    child.stdout.on('data', (chunk: Buffer) => this.read(chunk));
    child.stderr.on('data', (chunk: Buffer) => p.onStderr?.(chunk));
    for (const s of [child.stdin, child.stdout, child.stderr]) s.on('error', (err) => this.onerror?.(err));
    child.on('close', () => {
      if (this.closed) return;
      this.closed = true;
      this.onclose?.();
    });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
    child.on('error', (err) => this.onerror?.(err));
  }

  /** The program's process id (its group's id too). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.closing || stdin.destroyed) throw new AppError('mcp.unreachable', { server: this.params.server, detail: 'not connected' });
    if ('method' in message && 'id' in message) this.pending.add(message.id);
    // A request given up (its deadline, the turn's) is answered by no one any more.
    if ('method' in message && message.method === 'notifications/cancelled')
      this.pending.delete((message.params as { requestId?: RequestId } | undefined)?.requestId ?? '');
    if (!stdin.write(serializeMessage(message))) await once(stdin, 'drain');
  }

  /** Ends the program and its group (see the file's comment); the same wait for every caller. */
  close(): Promise<void> {
    this.closing ??= this.end();
    return this.closing;
  }

  private read(chunk: Buffer): void {
    let from = 0;
    while (from < chunk.length && !this.closing) {
      const nl = chunk.indexOf(0x0a, from);
      const piece = chunk.subarray(from, nl === -1 ? chunk.length : nl);
      this.size += piece.length;
      if (this.size > this.params.maxBytes) {
        this.tooLarge();
        return;
      }
      this.parts.push(piece);
      if (nl === -1) return;
      const line = Buffer.concat(this.parts, this.size).toString('utf8').replace(/\r$/, '');
      this.parts = [];
      this.size = 0;
      from = nl + 1;
      if (line.trim() !== '') this.deliver(line);
    }
  }

  private deliver(line: string): void {
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch (err) {
      this.onerror?.(err as Error);
      return;
    }
    if ('id' in message && message.id !== undefined && ('result' in message || 'error' in message)) this.pending.delete(message.id);
    this.onmessage?.(message);
  }

  private tooLarge(): void {
    const max = this.params.maxBytes;
    this.parts = [];
    this.size = 0;
    this.reason = `it wrote a message of more than ${max.toLocaleString('en-US')} bytes (maxAnswerBytes)`;
    const waiting = [...this.pending];
    this.pending.clear();
    for (const id of waiting) this.onmessage?.(tooLargeAnswer(id, max));
    void this.close();
  }

  private async end(): Promise<void> {
    const child = this.child;
    this.parts = [];
    this.size = 0;
    if (!child || child.pid === undefined) return;
    const pid = child.pid;
    const exited = running(child)
      ? once(child, 'exit').then(
          () => undefined,
          () => undefined,
        )
      : Promise.resolve();
    // Done when the program has exited and nothing of its group is left (a wrapper's child).
    const done = () => !running(child) && !groupAlive(pid);
    child.stdin?.end();
    if (await waitFor(done, child, exited)) return;
    signal(child, 'SIGTERM');
    if (await waitFor(done, child, exited)) return;
    signal(child, 'SIGKILL');
    await exited;
  }
}

/** Whether `done()` holds within KILL_AFTER_MS: looked at when the program exits, and every GROUP_POLL_MS. */
async function waitFor(done: () => boolean, child: ChildProcess, exited: Promise<void>): Promise<boolean> {
  const until = Date.now() + KILL_AFTER_MS;
  while (!done()) {
    if (Date.now() >= until) return false;
    // Held (ref'd): a stop with only this left to do must not let the daemon exit first.
    const tick = sleep(GROUP_POLL_MS);
    await (running(child) ? Promise.race([exited, tick]) : tick);
  }
  return true;
}

function running(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** `sig` to the program's whole group (Windows: the program). */
function signal(child: ChildProcess, sig: NodeJS.Signals): void {
  try {
    if (GROUPS) process.kill(-child.pid!, sig);
    else child.kill(sig);
  } catch {
    // Gone already.
  }
}

/** Whether a process of group `pgid` is left (one we may not signal counts). */
export function groupAlive(pgid: number): boolean {
  if (!GROUPS) return false;
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
