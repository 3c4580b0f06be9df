/**
 * Resident memory of the daemon after 10,000 turns over 1,000 chats, and after 10,000 more
 * (a leak check), measured two ways:
 *  - the built daemon as `npm start` runs it, serving Telegram (daemon-memory.ts): the figure
 *    the target is judged on;
 *  - the earlier method, kept to compare with the older figures: the app in a process of its
 *    own under tsx (TypeScript loaded on the fly, which itself holds memory the built daemon does
 *    not), messages handed to `app.handle`, 100 turns at once, sizes after a forced GC.
 * Then one long chat: 10,000 messages in one chat with the default settings (compaction on),
 * resident size after every 1,000 — flat after the first 1,000 is the target (issue 11: a cache
 * keyed by lines cut out of each prompt kept every prompt alive), also under tsx.
 * `--daemon`: the built daemon only. `--node-flags="…"`: the daemon's Node flags instead of
 * those of `npm start` (e.g. `--node-flags=` for none, to compare). `--rounds=N`: N rounds of
 * 10,000 turns instead of 2, to see where growth stops.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { rng, userText } from './text.js';
import { benchDaemonMemory, startFlags } from './daemon-memory.js';

const MiB = (n: number) => (n / 2 ** 20).toFixed(0);

async function child(): Promise<void> {
  const { setup, turn, msg } = await import('./pipeline.js');
  const before = process.memoryUsage().rss;
  const b = await setup(0);
  const r = rng(5);
  const round = async () => {
    for (let i = 0; i < 10_000; i += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, k) => turn(b.app, msg(`mem${(i + k) % 1000}`, userText(r)))));
    }
    global.gc?.();
    const u = process.memoryUsage();
    return { rss: u.rss, heap: u.heapUsed, external: u.external, sessions: b.app.parts.sessions.cachedCount };
  };
  const started = process.memoryUsage().rss;
  const one = await round();
  const two = await round();
  await b.close();
  process.stdout.write(`${JSON.stringify({ before, started, one, two })}\n`);
}

/** One chat, 10,000 messages one after another, default runtime settings; RSS after each 1,000. */
async function longChild(): Promise<void> {
  const { setup, turn, msg } = await import('./pipeline.js');
  const b = await setup(0, {});
  const r = rng(11);
  const samples: Array<{ messages: number; rss: number; heap: number; heapTotal: number; external: number; msPerTurn: number }> = [];
  let t0 = performance.now();
  for (let i = 1; i <= 10_000; i++) {
    await turn(b.app, msg('long', userText(r)));
    if (i % 1_000 === 0) {
      const msPerTurn = (performance.now() - t0) / 1_000;
      global.gc?.();
      const u = process.memoryUsage();
      samples.push({ messages: i, rss: u.rss, heap: u.heapUsed, heapTotal: u.heapTotal, external: u.external, msPerTurn });
      t0 = performance.now();
    }
  }
  const session = b.app.parts.sessions.get('bench:long');
  await b.close();
  process.stdout.write(`${JSON.stringify({ samples, sessionMessages: session?.messages.length ?? 0 })}\n`);
}

async function runChild(mode: string): Promise<any> {
  const self = fileURLToPath(import.meta.url);
  const proc = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', self, mode], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  const code = await new Promise<number | null>((resolve) => proc.once('exit', resolve));
  if (code !== 0) throw new Error(`memory benchmark process exited with ${code}`);
  return JSON.parse(out.trim().split('\n').at(-1)!);
}

export async function benchMemory(): Promise<Record<string, string>> {
  const flagArg = process.argv.find((a) => a.startsWith('--node-flags='));
  const nodeFlags = flagArg === undefined ? startFlags() : flagArg.slice('--node-flags='.length).split(' ').filter(Boolean);
  const roundsArg = process.argv.find((a) => a.startsWith('--rounds='));
  const daemon = await benchDaemonMemory({ nodeFlags, rounds: roundsArg ? Number(roundsArg.slice('--rounds='.length)) : undefined });
  if (process.argv.includes('--daemon')) return daemon;
  const m = (await runChild('--child')) as {
    before: number;
    started: number;
    one: { rss: number; heap: number; external: number; sessions: number };
    two: { rss: number; heap: number; external: number; sessions: number };
  };
  const d = m.two.rss - m.one.rss;
  const long = (await runChild('--long')) as {
    samples: Array<{ messages: number; rss: number; heap: number; heapTotal: number; external: number; msPerTurn: number }>;
    sessionMessages: number;
  };
  const first = long.samples[0]!;
  const later = long.samples.slice(1);
  const max = later.reduce((a, b) => (b.rss > a.rss ? b : a), first);
  const last = long.samples.at(-1)!;
  return {
    ...daemon,
    'the earlier method, under tsx: resident memory of a fresh process (tsx loaded) → app started': `${MiB(m.before)} → ${MiB(m.started)} MiB`,
    'resident memory after 10,000 turns over 1,000 chats': `${MiB(m.one.rss)} MiB (JS heap ${MiB(m.one.heap)} MiB, buffers and native objects ${MiB(m.one.external)} MiB, ${m.one.sessions} sessions in memory)`,
    'after 10,000 more turns (leak check)': `${MiB(m.two.rss)} MiB (${d >= 0 ? '+' : ''}${MiB(d)} MiB; JS heap ${MiB(m.two.heap)} MiB, buffers and native objects ${MiB(m.two.external)} MiB)`,
    'one long chat, 10,000 messages (default settings): resident after 1,000 → highest after that → after 10,000': `${MiB(first.rss)} → ${MiB(max.rss)} (at ${max.messages.toLocaleString('en-US')}) → ${MiB(last.rss)} MiB; JS heap ${MiB(first.heap)} → ${MiB(last.heap)} MiB; ${long.sessionMessages} messages left in the session after compactions`,
    '  resident / JS heap used / reserved / buffers and native (MiB), ms per turn, at each 1,000': long.samples
      .map((x) => `${x.messages / 1000}k: ${MiB(x.rss)}/${MiB(x.heap)}/${MiB(x.heapTotal)}/${MiB(x.external)}, ${x.msPerTurn.toFixed(0)} ms`)
      .join('; '),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (process.argv.includes('--child')) await child();
  else if (process.argv.includes('--long')) await longChild();
  else throw new Error('run through npm run bench -- memory');
  process.exit(0);
}
