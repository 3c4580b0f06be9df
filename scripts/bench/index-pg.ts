/**
 * `npm run bench -- index-pg`: the memory index in PostgreSQL mode (src/index/pg/) at 100k
 * episodes, beside `index` (the embedded SQLite index) — the same generated history through the
 * same live ingest path, the same 500 searches. A throwaway cluster with fsync on (a production
 * server's settings, not the tests'), in a temp folder, removed at the end.
 *
 * Figures: ingest per message (the local cache's write; PostgreSQL is written behind it), how
 * long after the last message everything is in PostgreSQL, search latency, then a second
 * process with an empty cache (a fresh WORKSPACE_DIR): how long its start takes to rebuild the
 * cache from the database, and its searches — which must find exactly what the first one found.
 */
import path from 'node:path';
import { PgMemoryIndex } from '../../src/index/pg/pg-memory-index.js';
import { IndexingService } from '../../src/index/ingest.js';
import { silentLogger } from '../../src/core/log.js';
import { Database } from '../../src/storage/pg/database.js';
import { migrate } from '../../src/storage/pg/migrate.js';
import { startPg } from '../../test/helpers/pg.js';
import { tempDir } from '../../test/helpers/workspace.js';
import { rng } from './text.js';
import { load, messages, pct, timeIngest, timeSearches } from './index.js';

/** BENCH_INDEX_EPISODES: a smaller run to try the bench out; figures are at the default. */
const EPISODES = Number(process.env.BENCH_INDEX_EPISODES ?? 100_000);

export async function benchIndexPg(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const cluster = await startPg({ durable: true });
  const ws = await tempDir('membot-bench-index-pg-');
  const log = silentLogger();
  const url = await cluster.createDatabase();
  const dbs: Database[] = [];
  const open = async (cacheFile: string) => {
    const db = new Database({ url, poolSize: 4, log });
    dbs.push(db);
    return PgMemoryIndex.open({ db, log, cacheFile });
  };
  try {
    out['load average (1 / 5 / 15 min) at start'] = load();
    const admin = new Database({ url, poolSize: 1, log });
    dbs.push(admin);
    await migrate(admin, { log });
    const first = await open(path.join(ws.dir, 'first.db'));
    const r = rng(3);
    const gen = messages(new IndexingService(first), r);
    const ing = timeIngest(gen.next, EPISODES);
    const t0 = performance.now();
    await first.settle();
    out[`ingest at ${EPISODES.toLocaleString('en-US')} episodes, live path (one transaction each in the local cache)`] =
      `p50 ${pct(ing.lat, 50).toFixed(3)} ms, p99 ${pct(ing.lat, 99).toFixed(3)} ms (on CPU ${(ing.cpuShare * 100).toFixed(0)} % of the wall time)`;
    out['written to PostgreSQL after the last message'] = `${((performance.now() - t0) / 1000).toFixed(1)} s more`;
    // The same query stream for both processes: a copy of the generator's state after the messages.
    const queries = rng(11);
    const firstSearch = timeSearches(first, queries);
    out[`search at ${EPISODES.toLocaleString('en-US')} episodes (500 queries, 100 chats, default ranking)`] = firstSearch.line;

    const t1 = performance.now();
    const second = await open(path.join(ws.dir, 'second.db'));
    out['a second process with an empty cache: start (rebuild from PostgreSQL)'] = `${((performance.now() - t1) / 1000).toFixed(1)} s`;
    const secondSearch = timeSearches(second, rng(11));
    const same = firstSearch.found.filter((ids, i) => ids === secondSearch.found[i]).length;
    out['its search'] = `${secondSearch.line}; same results as the first process for ${same} of ${firstSearch.found.length} queries`;
    const size = await admin.query<{ bytes: string }>('SELECT pg_database_size(current_database())::text AS bytes');
    out['database size'] = `${(Number(size.rows[0]!.bytes) / 2 ** 20).toFixed(1)} MiB`;
    out['load average at the end'] = load();
    second.close();
    first.close();
  } finally {
    for (const db of dbs) await db.close().catch(() => undefined);
    await cluster.stop();
    await ws.cleanup();
  }
  return out;
}
