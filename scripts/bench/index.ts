/**
 * The SQLite index at 100k (and with --full, 1M) episodes of generated chat text: ingest
 * latency per message through the live ingest path, hybrid search latency, file size per 1k.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import { MemoryIndex } from '../../src/index/memory-index.js';
import { IndexingService } from '../../src/index/ingest.js';
import { silentLogger } from '../../src/log.js';
import { tempDir } from '../../test/helpers/workspace.js';
import { rng, userText, assistantText, query } from './text.js';

const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]!;

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

export async function benchIndex(full: boolean): Promise<Record<string, string>> {
  const ws = await tempDir('membot-bench-index-');
  const file = path.join(ws.dir, 'memory.db');
  const index = new MemoryIndex(file, silentLogger());
  const ingest = new IndexingService(index);
  const r = rng(3);
  const out: Record<string, string> = {};
  const SCOPES = 100;
  const targets = full ? [100_000, 1_000_000] : [100_000];
  let n = 0;
  const start = Date.UTC(2026, 0, 1);
  try {
    for (const target of targets) {
      const lat: number[] = [];
      for (; n < target; n++) {
        const scope = `telegram:${n % SCOPES}`;
        const t0 = performance.now();
        ingest.ingestMessage({
          content: n % 2 ? assistantText(r) : userText(r),
          role: n % 2 ? 'assistant' : 'user',
          speaker: n % 2 ? 'assistant' : `user${n % SCOPES}`,
          sessionId: `conv_${n % SCOPES}_${Math.floor(n / 5000)}`,
          scope,
          eventTime: new Date(start + n * 60_000),
          sourceMessageId: String(n),
        });
        lat.push(performance.now() - t0);
      }
      lat.sort((a, b) => a - b);
      const s: number[] = [];
      for (let i = 0; i < 500; i++) {
        const t0 = performance.now();
        index.search(query(r), { scope: `telegram:${i % SCOPES}`, limit: 10 });
        s.push(performance.now() - t0);
      }
      s.sort((a, b) => a - b);
      const label = target.toLocaleString('en-US');
      out[`ingest at ${label} episodes (last ${lat.length.toLocaleString('en-US')} inserts)`] = `p50 ${pct(lat, 50).toFixed(3)} ms, p99 ${pct(lat, 99).toFixed(3)} ms`;
      out[`hybrid search at ${label} episodes (500 queries, ${SCOPES} chats)`] = `p50 ${pct(s, 50).toFixed(2)} ms, p95 ${pct(s, 95).toFixed(2)} ms`;
      index.database!.pragma('wal_checkpoint(TRUNCATE)');
      out[`database size at ${label} episodes`] = `${(fileSize(file) / 2 ** 20).toFixed(1)} MiB (${((fileSize(file) / target) * 1000 / 2 ** 20).toFixed(2)} MiB per 1k messages)`;
    }
  } finally {
    index.close();
    await ws.cleanup();
  }
  return out;
}
