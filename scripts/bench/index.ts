/**
 * The SQLite index at 100k (and with --full, 1M) episodes of generated chat text: ingest
 * latency per message through the live ingest path, hybrid search latency (wall and CPU time),
 * file size per 1k.
 *
 * 100k: every message through the live path, one transaction each (as the daemon does), and
 * the ingest figure is over all 100k inserts (comparable with the figures before issue 12).
 * 1M (--full): the file is first filled to 1M minus LIVE_AT_1M with the same ingest call
 * wrapped in transactions of FILL_BATCH messages (each message's own transaction becomes a
 * savepoint: same rows, same full-text and entity writes, one commit per batch), because a
 * million single commits take most of an hour on a loaded 2-core machine; the last LIVE_AT_1M
 * messages then go through the live path one transaction each, and that is the 1M ingest figure.
 * The database lives in a temp dir and is deleted at the end.
 */
import { statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteMemoryIndex } from '../../src/index/sqlite-memory-index.js';
import { IndexingService } from '../../src/index/ingest.js';
import { silentLogger } from '../../src/core/log.js';
import { tempDir } from '../../test/helpers/workspace.js';
import { rng, userText, assistantText, query } from './text.js';
import type { MemoryIndex } from '../../src/index/memory-index.js';

export const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]!;
const SCOPES = 100;
const SEARCHES = 500;
/** Messages ingested one transaction each at the 1M size (the live-path sample). */
const LIVE_AT_1M = 5_000;
/** Messages per transaction while filling the file up to the 1M sample. */
const FILL_BATCH = 2_000;
const START = Date.UTC(2026, 0, 1);

function fileSize(file: string): number {
  let n = 0;
  for (const f of [file, `${file}-wal`]) {
    try {
      n += statSync(f).size;
    } catch {
      /* no wal */
    }
  }
  return n;
}

export const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' / ');
export const cpuMs = (c: NodeJS.CpuUsage) => (c.user + c.system) / 1000;

/** The generated chat history, message by message, through the one live ingest path (seeded: the same text every run). */
export function messages(ingest: IndexingService, r: () => number): { next: () => void } {
  let n = 0;
  return {
    next: () => {
      ingest.ingestMessage({
        content: n % 2 ? assistantText(r) : userText(r),
        role: n % 2 ? 'assistant' : 'user',
        speaker: n % 2 ? 'assistant' : `user${n % SCOPES}`,
        sessionId: `conv_${n % SCOPES}_${Math.floor(n / 5000)}`,
        scope: `telegram:${n % SCOPES}`,
        eventTime: new Date(START + n * 60_000),
        sourceMessageId: String(n),
      });
      n++;
    },
  };
}

/** SEARCHES searches spread over the chats, each timed (wall and CPU): the figure's line, and what each search found (ids), to compare two indexes. */
export function timeSearches(index: Pick<MemoryIndex, 'search'>, r: () => number): { line: string; found: string[] } {
  const wall: number[] = [];
  const cpu: number[] = [];
  const found: string[] = [];
  const t0 = performance.now();
  for (let i = 0; i < SEARCHES; i++) {
    const q = query(r);
    const c = process.cpuUsage();
    const t = performance.now();
    const hits = index.search(q, { scope: `telegram:${i % SCOPES}`, limit: 10 });
    wall.push(performance.now() - t);
    cpu.push(cpuMs(process.cpuUsage(c)));
    found.push(hits.map((h) => h.id).join(','));
  }
  const searchWall = performance.now() - t0;
  wall.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  const cpuTotal = cpu.reduce((s, x) => s + x, 0);
  return {
    line: `p50 ${pct(wall, 50).toFixed(2)} ms, p95 ${pct(wall, 95).toFixed(2)} ms; CPU time per search p50 ${pct(cpu, 50).toFixed(2)} ms, p95 ${pct(cpu, 95).toFixed(2)} ms (on CPU ${((cpuTotal / searchWall) * 100).toFixed(0)} % of the wall time)`,
    found,
  };
}

/** Live path: `count` messages, one transaction each, each timed (wall), with the CPU time of the whole run. */
export function timeIngest(message: () => void, count: number): { lat: number[]; cpu: number[]; cpuShare: number } {
  const lat: number[] = [];
  const cpu: number[] = [];
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < count; i++) {
    const c = process.cpuUsage();
    const t = performance.now();
    message();
    lat.push(performance.now() - t);
    cpu.push(cpuMs(process.cpuUsage(c)));
  }
  const wall = performance.now() - t0;
  return { lat: lat.sort((a, b) => a - b), cpu: cpu.sort((a, b) => a - b), cpuShare: cpuMs(process.cpuUsage(c0)) / wall };
}

export async function benchIndex(full: boolean): Promise<Record<string, string>> {
  const ws = await tempDir('membot-bench-index-');
  const file = path.join(ws.dir, 'memory.db');
  const index = new SqliteMemoryIndex(file, silentLogger());
  const ingest = new IndexingService(index);
  const r = rng(3);
  const out: Record<string, string> = {};
  const gen = messages(ingest, r);
  const message = gen.next;
  let n = 0;
  const live = (to: number) => {
    const res = timeIngest(message, to - n);
    n = to;
    return res;
  };
  const db = index.database!;
  try {
    out['load average (1 / 5 / 15 min) at start'] = load();
    const stages = [{ target: 100_000, liveFrom: 0 }, ...(full ? [{ target: 1_000_000, liveFrom: 1_000_000 - LIVE_AT_1M }] : [])];
    for (const { target, liveFrom } of stages) {
      const label = target.toLocaleString('en-US');
      if (n < liveFrom) {
        const t0 = performance.now();
        const from = n;
        while (n < liveFrom) {
          const end = Math.min(liveFrom, n + FILL_BATCH);
          db.transaction(() => {
            while (n < end) {
              message();
              n++;
            }
          })();
        }
        out[
          `fill ${from.toLocaleString('en-US')} → ${n.toLocaleString('en-US')} (same ingest call, ${FILL_BATCH.toLocaleString('en-US')} messages per transaction)`
        ] = `${((performance.now() - t0) / 1000).toFixed(1)} s, load ${load()}`;
      }
      const first = n;
      const ing = live(target);
      out[
        `ingest at ${label} episodes, live path (messages ${first.toLocaleString('en-US')}–${target.toLocaleString('en-US')}: ${ing.lat.length.toLocaleString('en-US')} transactions)`
      ] =
        `p50 ${pct(ing.lat, 50).toFixed(3)} ms, p99 ${pct(ing.lat, 99).toFixed(3)} ms; CPU time per message p50 ${pct(ing.cpu, 50).toFixed(3)} ms, p99 ${pct(ing.cpu, 99).toFixed(3)} ms (on CPU ${(ing.cpuShare * 100).toFixed(0)} % of the wall time)`;
      out[`hybrid search at ${label} episodes (${SEARCHES} queries, ${SCOPES} chats, default ranking)`] = timeSearches(index, r).line;
      db.pragma('wal_checkpoint(TRUNCATE)');
      out[`database size at ${label} episodes`] =
        `${(fileSize(file) / 2 ** 20).toFixed(1)} MiB (${(((fileSize(file) / target) * 1000) / 2 ** 20).toFixed(2)} MiB per 1k messages)`;
      out[`load average at ${label}`] = load();
    }
  } finally {
    index.close();
    await ws.cleanup();
  }
  return out;
}
