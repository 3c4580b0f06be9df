/**
 * Resident memory of the built daemon, run the way `npm start` runs it: `npm run build`, then
 * `node <the flags of npm start> dist/main.js` as a process of its own, serving Telegram (the
 * Bot API emulator and stand-in of test/helpers/telegram.ts, in this process) with the LLM stub
 * in a third process.
 * 1,000 users in private chats (TELEGRAM_DM_POLICY=open) send 10,000 messages, 50 chats at a
 * time, every reply awaited; then 10,000 more (the leak check). Every other setting is the
 * default. Resident size is read from /proc/<pid>/status every second; at the end of each
 * round (and after 10 s idle) the daemon is sent SIGUSR2 and its log line (core/memory-report.ts)
 * gives the main thread's heap and buffers, and /proc/<pid>/smaps the largest mappings.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTelegramEmulator, type EmuUser } from '../../test/helpers/telegram.js';
import { childEnv, repoRoot, telegramDaemonEnv } from '../../test/helpers/child.js';
import { tempDir } from '../../test/helpers/workspace.js';
import { startLlmProcess } from './llm-process.js';
import { rng, userText } from './text.js';
import type { MemoryReport } from '../../src/core/memory-report.js';
import { waitFor } from '../../test/helpers/wait.js';

const REPLY = 'Sure, noted. Here is a short answer to that.';
const CHATS = 1_000;
const AT_ONCE = 50;
const SETTLE_MS = 10_000;

const MiB = (kb: number) => (kb / 1024).toFixed(0);

/** The Node flags `npm start` gives the daemon (package.json: `node <flags> dist/main.js`). */
export function startFlags(): string[] {
  const start = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.split(/\s+/);
  return start.slice(start.indexOf('node') + 1, start.indexOf('dist/main.js'));
}

/** A field of /proc/<pid>/status, in kB (VmRSS, VmHWM) or a count (Threads). */
function status(pid: number, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? NaN);
}

/** Resident kB by mapping (anonymous ones together, the main heap `[heap]` apart), largest first. */
export function smapsByMapping(pid: number, top = 6): string {
  const sizes = new Map<string, number>();
  let name = '';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      name = head[1] ? path.basename(head[1]) : 'anonymous';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) sizes.set(name, (sizes.get(name) ?? 0) + Number(rss[1]));
  }
  return [...sizes.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([n, kb]) => `${n} ${MiB(kb)}`)
    .join(', ');
}

/** The line the daemon logs on SIGUSR2. */
type Report = MemoryReport;

/** Asks the daemon for its memory report (SIGUSR2) and reads the line it logs. */
async function report(daemon: ChildProcess, logFile: string): Promise<Report> {
  const reports = () =>
    readFileSync(logFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes('memory report"'))
      .map((l) => JSON.parse(l).memory as Report);
  const before = reports().length;
  daemon.kill('SIGUSR2');
  await waitFor(() => reports().length > before, 10_000, 'the memory report in the daemon log');
  return reports().at(-1)!;
}

export interface DaemonMemoryOptions {
  /** Turns per round (10,000). */
  turns?: number;
  /** Node flags for the daemon (default: none; `npm run bench` passes those of `npm start`). */
  nodeFlags?: string[];
  /** Extra settings for the daemon. */
  env?: Record<string, string>;
  /** Rounds of `turns` (2: the first and the leak check; more shows where growth stops). */
  rounds?: number;
  /** Runs after each round's figures (e.g. to take a heap snapshot), before the daemon stops. */
  afterRound?: (round: number, daemon: { pid: number; workspace: string }) => Promise<void>;
}

export async function benchDaemonMemory(opts: DaemonMemoryOptions = {}): Promise<Record<string, string>> {
  const TURNS = opts.turns ?? 10_000;
  const nodeFlags = opts.nodeFlags ?? [];
  const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: repoRoot, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build failed');
  const llm = await startLlmProcess(REPLY);
  const tg = await startTelegramEmulator();
  const ws = await tempDir('membot-bench-daemon-');
  const logFile = path.join(ws.dir, 'daemon.log');
  // What real Telegram answers to the cosmetic calls the emulator does not know.
  for (const m of ['sendChatAction', 'setMyCommands']) tg.intercept(m, () => ({ json: { ok: true, result: true } }));
  const replies = new Map<string, number>();
  const other: string[] = [];
  tg.intercept('sendMessage', (call) => {
    const chat = String(call.body?.chat_id);
    replies.set(chat, (replies.get(chat) ?? 0) + 1);
    if (call.body?.text !== REPLY && other.length < 5) other.push(String(call.body?.text).slice(0, 120));
    return undefined;
  });
  const env = telegramDaemonEnv(
    { llmUrl: llm.url, workspace: ws.dir, tg },
    { TELEGRAM_DM_POLICY: 'open', LLM_MODEL: 'gpt-4.1', LOG_FILE: logFile, ...opts.env },
  );
  // The temp dir as cwd: no .env of the repo is read.
  const daemon = spawn(process.execPath, [...nodeFlags, path.join(repoRoot, 'dist', 'main.js')], {
    cwd: ws.dir,
    env: childEnv(env),
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const pid = daemon.pid!;
  const out: Record<string, string> = {};
  const load = () =>
    os
      .loadavg()
      .map((n) => n.toFixed(1))
      .join(' ');
  out['the daemon'] = `node ${[...nodeFlags, 'dist/main.js'].join(' ')}; load average at the start ${load()}`;
  try {
    await waitFor(() => tg.callsOf('getUpdates').length > 0 || daemon.exitCode !== null, 30_000, 'the daemon to poll');
    if (daemon.exitCode !== null) throw new Error(`the daemon exited with ${daemon.exitCode}`);
    await new Promise((r) => setTimeout(r, 2_000));
    const started = await report(daemon, logFile);
    const users: EmuUser[] = Array.from({ length: CHATS }, (_, i) => tg.user({ userId: 10_000 + i }));
    const r = rng(5);
    let samples: number[] = [];
    let rounds = 0;
    const sampler = setInterval(() => samples.push(status(pid, 'VmRSS')), 1_000);
    const round = async () => {
      samples = [];
      const t0 = performance.now();
      for (let i = 0; i < TURNS; i += AT_ONCE) {
        const wave = Array.from({ length: AT_ONCE }, (_, k) => users[(i + k) % CHATS]!);
        const want = wave.map((u) => (replies.get(String(u.chatId)) ?? 0) + 1);
        await Promise.all(wave.map((u) => u.say(userText(r))));
        await waitFor(() => wave.every((u, k) => (replies.get(String(u.chatId)) ?? 0) >= want[k]!), 120_000, `the replies of turns ${i}–${i + AT_ONCE}`);
        // The proxy's call log is for tests; kept here it would cost the driver O(n²).
        tg.calls.length = 0;
        if (daemon.exitCode !== null) throw new Error(`the daemon exited with ${daemon.exitCode}`);
      }
      const seconds = (performance.now() - t0) / 1000;
      const sorted = [...samples].sort((a, b) => a - b);
      const peakKb = sorted.at(-1) ?? 0;
      const medianKb = sorted[Math.floor(sorted.length / 2)] ?? 0;
      const end = await report(daemon, logFile);
      const mappings = smapsByMapping(pid);
      const threads = status(pid, 'Threads');
      await new Promise((res) => setTimeout(res, SETTLE_MS));
      const idle = await report(daemon, logFile);
      await opts.afterRound?.(++rounds, { pid, workspace: ws.dir });
      return { seconds, peakKb, medianKb, end, mappings, threads, idle };
    };
    const results: Array<Awaited<ReturnType<typeof round>>> = [];
    for (let n = 0; n < (opts.rounds ?? 2); n++) results.push(await round());
    clearInterval(sampler);
    const spaces = (x: Report) =>
      Object.entries(x.spaces)
        .filter(([, v]) => v >= 1)
        .map(([k, v]) => `${k.replace(/_space$/, '')} ${v.toFixed(0)}`)
        .join(', ');
    const line = (x: Report) =>
      `${x.rss.toFixed(0)} MiB (anonymous ${x.anonymous?.toFixed(0)}, file-backed ${x.fileBacked?.toFixed(0)}; main-thread V8 heap used ${x.heapUsed.toFixed(0)} of ${x.heapTotal.toFixed(0)}, buffers and native objects ${x.external.toFixed(0)} of which ArrayBuffers ${x.arrayBuffers.toFixed(0)})`;
    const delta = (a: number, b: number) => `${b >= a ? '+' : ''}${(b - a).toFixed(0)} MiB`;
    out['built daemon, Telegram, 1,000 chats: started (polling, 2 s after the first getUpdates)'] = line(started);
    results.forEach((r, n) => {
      const prev = results[n - 1];
      const name = n === 0 ? 'after 10,000 turns' : `after ${(n + 1) * 10},000 turns (leak check: ${delta(prev!.end.rss, r.end.rss)})`;
      out[name] =
        `${line(r.end)}; during the round: median ${MiB(r.medianKb)}, peak ${MiB(r.peakKb)} MiB; ${(TURNS / r.seconds).toFixed(0)} turns/s; ${r.threads} threads`;
      out[`  10 s later, idle${prev ? ` (${delta(prev.idle.rss, r.idle.rss)})` : ''}`] = line(r.idle);
      out[`  V8 heap spaces, largest mappings (MiB resident)${n ? ` (${(n + 1) * 10},000)` : ''}`] = `${spaces(r.end)}; ${r.mappings}`;
    });
    const answered = [...replies.values()].reduce((a, b) => a + b, 0);
    out.replies = `${answered} to ${results.length * TURNS} messages${other.length ? `; other texts: ${other.map((t) => JSON.stringify(t)).join(', ')}` : ''}; load average at the end ${load()}`;
  } finally {
    if (daemon.exitCode === null) {
      daemon.kill('SIGTERM');
      await once(daemon, 'exit');
    }
    await tg.close();
    await llm.close();
    await ws.cleanup();
  }
  return out;
}
