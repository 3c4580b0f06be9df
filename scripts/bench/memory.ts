/**
 * Resident memory of the daemon after 10,000 turns over 1,000 chats, and after 10,000 more
 * (a leak check). Measured in a process of its own, as the daemon runs: in the benchmark's
 * process, the other sections' garbage and 10,000-message sessions would be counted too.
 * The process runs under tsx (TypeScript loaded on the fly), which itself holds some memory
 * the built daemon (`npm start`) does not — so these figures are on the high side.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { rng, userText } from './text.js';

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
    return { rss: u.rss, heap: u.heapUsed, external: u.external, sessions: b.app.services.sessions.cachedCount };
  };
  const started = process.memoryUsage().rss;
  const one = await round();
  const two = await round();
  await b.close();
  process.stdout.write(`${JSON.stringify({ before, started, one, two })}\n`);
}

export async function benchMemory(): Promise<Record<string, string>> {
  const self = fileURLToPath(import.meta.url);
  const proc = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', self, '--child'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  const code = await new Promise<number | null>((resolve) => proc.once('exit', resolve));
  if (code !== 0) throw new Error(`memory benchmark process exited with ${code}`);
  const m = JSON.parse(out.trim().split('\n').at(-1)!) as {
    before: number;
    started: number;
    one: { rss: number; heap: number; external: number; sessions: number };
    two: { rss: number; heap: number; external: number; sessions: number };
  };
  const d = m.two.rss - m.one.rss;
  return {
    'resident memory of a fresh process (tsx loaded) → app started': `${MiB(m.before)} → ${MiB(m.started)} MiB`,
    'resident memory after 10,000 turns over 1,000 chats': `${MiB(m.one.rss)} MiB (JS heap ${MiB(m.one.heap)} MiB, buffers and native objects ${MiB(m.one.external)} MiB, ${m.one.sessions} sessions in memory)`,
    'after 10,000 more turns (leak check)': `${MiB(m.two.rss)} MiB (${d >= 0 ? '+' : ''}${MiB(d)} MiB; JS heap ${MiB(m.two.heap)} MiB, buffers and native objects ${MiB(m.two.external)} MiB)`,
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href && process.argv.includes('--child')) {
  await child();
  process.exit(0);
}
