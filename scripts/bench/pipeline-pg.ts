/**
 * `npm run bench -- pipeline-pg`: the pipeline's overhead per turn (as in pipeline.ts: wall time
 * of a turn minus the time inside LLM calls) with DATABASE_URL beside the embedded mode, in one
 * run, alternating files, PostgreSQL, files, PostgreSQL so that a change in the machine's load
 * falls on both. The database is a throwaway cluster on this machine (loopback) with fsync on, as
 * a production server has it; each setup gets a fresh database.
 *
 * Sessions are kept at their size between turns through the store's writer (`replace`, outside
 * the timed turn) in both modes, so the two are measured the same way (pipeline.ts trims the
 * session in memory, which only the file store tolerates).
 */
import { startPg, type PgCluster } from '../../test/helpers/pg.js';
import { makeMessage } from '../../src/sessions/model.js';
import { msg, setup, sustainedLoad, turn } from './pipeline.js';
import { assistantText, rng, userText } from './text.js';
import { pct } from './index.js';

const f = (n: number) => n.toFixed(2);
const SIZES = [10, 1000];
const TURNS = 200;
const WARMUP = 10;
const ROUNDS = 2;

type Mode = 'files' | 'postgres';

async function sessionSizes(mode: Mode, cluster: PgCluster, r: () => number): Promise<Map<number, number[]>> {
  const b = await setup(0, undefined, mode === 'postgres' ? { databaseUrl: await cluster.createDatabase() } : {});
  const out = new Map<number, number[]>();
  try {
    for (const size of SIZES) {
      const s = await b.app.parts.sessions.getOrCreate('bench', `size${size}`);
      const writer = b.app.parts.sessions.writer(s);
      await writer.replace(Array.from({ length: size }, (_, i) => makeMessage(i % 2 ? 'assistant' : 'user', i % 2 ? assistantText(r) : userText(r))));
      const over: number[] = [];
      for (let i = 0; i < TURNS + WARMUP; i++) {
        b.resetLlm();
        const t0 = performance.now();
        await turn(b.app, msg(`size${size}`, userText(r)), t0);
        if (i >= WARMUP) over.push(performance.now() - t0 - b.llmTime());
        await writer.replace(s.messages.slice(-size));
      }
      out.set(size, over);
    }
  } finally {
    await b.close();
  }
  return out;
}

async function sustained(mode: Mode, cluster: PgCluster, r: () => number): Promise<string> {
  const b = await setup(0, undefined, mode === 'postgres' ? { databaseUrl: await cluster.createDatabase() } : {});
  try {
    return await sustainedLoad(b.app, r);
  } finally {
    await b.close();
  }
}

export async function benchPipelinePg(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const cluster = await startPg({ durable: true });
  const r = rng(5);
  try {
    const runs: Record<Mode, Array<Map<number, number[]>>> = { files: [], postgres: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of ['files', 'postgres'] as const) runs[mode].push(await sessionSizes(mode, cluster, r));
    }
    for (const size of SIZES) {
      const label = `session of ${size.toLocaleString('en-US')} messages (${TURNS} turns × ${ROUNDS} runs)`;
      const of = (mode: Mode) => runs[mode].flatMap((m) => m.get(size)!).sort((a, b) => a - b);
      const [files, pg] = [of('files'), of('postgres')];
      out[`overhead per turn, ${label}: files`] = `p50 ${f(pct(files, 50))} ms, p95 ${f(pct(files, 95))} ms`;
      out[`overhead per turn, ${label}: PostgreSQL`] = `p50 ${f(pct(pg, 50))} ms, p95 ${f(pct(pg, 95))} ms`;
      out[`  PostgreSQL / files, ${label}`] = `p50 ×${(pct(pg, 50) / pct(files, 50)).toFixed(2)}, p95 ×${(pct(pg, 95) / pct(files, 95)).toFixed(2)}`;
    }
    for (const mode of ['files', 'postgres'] as const) out[`sustained load, 100 chats × 30 turns at once: ${mode}`] = await sustained(mode, cluster, r);
  } finally {
    await cluster.stop();
  }
  return out;
}
