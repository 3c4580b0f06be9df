/**
 * What /forget confirm costs on memory.db: 100k episodes of generated chat text in 100 chats,
 * a word said 5 times in one chat; timed: finding the rows (one chat's rows scanned in JS),
 * deleting them, and scrubbing (FTS optimize + VACUUM + WAL truncate). The scrub runs in a
 * worker thread (src/index/store/scrubber.ts), as /forget runs it: timed is how long it takes and the
 * longest the event loop went without turning meanwhile (a timer asks every 5 ms) — before the
 * worker, the whole scrub was one stall in which the daemon answered nobody.
 */
import path from 'node:path';
import { SqliteMemoryIndex } from '../../src/index/sqlite-memory-index.js';
import { IndexingService } from '../../src/index/ingest.js';
import { eraseMemories, findMatching } from '../../src/index/store/erase.js';
import { silentLogger } from '../../src/core/log.js';
import { tempDir } from '../../test/helpers/workspace.js';
import { rng, userText, assistantText } from './text.js';

export async function benchForget(): Promise<Record<string, string>> {
  const ws = await tempDir('membot-bench-forget-');
  const index = new SqliteMemoryIndex(path.join(ws.dir, 'memory.db'), silentLogger());
  const ingest = new IndexingService(index);
  const r = rng(5);
  const N = 100_000;
  const SCOPES = 100;
  const start = Date.UTC(2026, 0, 1);
  try {
    for (let n = 0; n < N; n++) {
      const secret = n % SCOPES === 7 && n % 20_000 === 7 ? ' the code is ZEBRA9931' : '';
      ingest.ingestMessage({
        content: (n % 2 ? assistantText(r) : userText(r)) + secret,
        role: n % 2 ? 'assistant' : 'user',
        sessionId: `conv_${n % SCOPES}`,
        scope: `telegram:${n % SCOPES}`,
        eventTime: new Date(start + n * 60_000),
      });
    }
    const db = index.database!;
    const t0 = performance.now();
    const rows = findMatching(db, 'telegram:7', (t) => /zebra9931/i.test(t));
    const t1 = performance.now();
    eraseMemories(db, rows);
    const t2 = performance.now();
    let last = performance.now();
    let stall = 0;
    const tick = setInterval(() => {
      const now = performance.now();
      stall = Math.max(stall, now - last);
      last = now;
    }, 5);
    await index.scrubFreedSpace();
    clearInterval(tick);
    stall = Math.max(stall, performance.now() - last);
    const t3 = performance.now();
    return {
      [`find in one chat (1,000 of ${N.toLocaleString('en-US')} rows), ${rows.length} hits`]: `${(t1 - t0).toFixed(1)} ms`,
      'delete rows (with FTS, entity links)': `${(t2 - t1).toFixed(1)} ms`,
      'scrub in a worker: FTS optimize + VACUUM + WAL truncate': `${((t3 - t2) / 1000).toFixed(2)} s`,
      'longest event-loop stall during the scrub (timer every 5 ms)': `${stall.toFixed(1)} ms`,
    };
  } finally {
    index.close();
    await ws.cleanup();
  }
}
