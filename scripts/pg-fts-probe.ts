// `npx tsx scripts/pg-fts-probe.ts ../shared/datasets/realtalk.json ../shared/datasets/beam-100k.json`:
// PostgreSQL's own full-text ranking (ts_rank, ts_rank_cd over to_tsvector('english')) beside
// SQLite FTS5's bm25 on the retrieval eval's plain baseline — one row per message, the question's
// words minus function words, OR-ed — on the same conversations, in one run, on a throwaway
// cluster (test/helpers/pg.ts). Recall@5/10/20 over every question, and each query's time. It is
// why the memory index keeps its search in a local SQLite cache in PostgreSQL mode
// (docs/postgres.md, "The memory index").
import Database from 'better-sqlite3';
import pg from 'pg';
import { readFileSync } from 'node:fs';
import { startPg } from '../test/helpers/pg.js';
import { FUNCTION_WORDS, tokenize } from '../src/index/store/query.js';

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: npx tsx scripts/pg-fts-probe.ts DATASET.json...  (e.g. ../shared/datasets/realtalk.json)');
  process.exit(2);
}
const cluster = await startPg();
const url = await cluster.createDatabase('probe');
const client = new pg.Client({ connectionString: url });
await client.connect();
const K = [5, 10, 20];
try {
  for (const f of files) {
    const data = JSON.parse(readFileSync(f, 'utf8')) as {
      conversations: Array<{ id: string; messages: Array<{ id: string; text: string }>; questions: Array<{ question: string; evidence: string[] }> }>;
    };
    const sums: Record<string, number[]> = { fts5: [0, 0, 0], pg_rank: [0, 0, 0], pg_rank_cd: [0, 0, 0] };
    let n = 0;
    const times: Record<string, number[]> = { fts5: [], pg_rank: [], pg_rank_cd: [] };
    for (const c of data.conversations) {
      const db = new Database(':memory:');
      db.exec("CREATE VIRTUAL TABLE m USING fts5(mid UNINDEXED, text, tokenize='porter unicode61')");
      const ins = db.prepare('INSERT INTO m (mid, text) VALUES (?, ?)');
      for (const msg of c.messages) ins.run(msg.id, msg.text);
      await client.query('DROP TABLE IF EXISTS m; CREATE TABLE m (mid text, text text, tsv tsvector)');
      for (let i = 0; i < c.messages.length; i += 500) {
        const part = c.messages.slice(i, i + 500);
        await client.query(`INSERT INTO m (mid, text, tsv) SELECT a, b, to_tsvector('english', b) FROM unnest($1::text[], $2::text[]) AS t(a, b)`, [
          part.map((x) => x.id),
          part.map((x) => x.text),
        ]);
      }
      await client.query('CREATE INDEX ON m USING gin (tsv)');
      for (const q of c.questions) {
        const words = [...new Set(tokenize(q.question).filter((w) => !FUNCTION_WORDS.has(w)))].filter((w) => /^[\p{L}\p{N}]+$/u.test(w));
        if (words.length === 0) continue;
        n++;
        const ev = new Set(q.evidence);
        const score = (ids: string[], key: string) =>
          K.forEach((k, i) => {
            sums[key]![i]! += ids.slice(0, k).filter((x) => ev.has(x)).length / ev.size;
          });
        let t = performance.now();
        const match = words.map((w) => `"${w}"`).join(' OR ');
        score(
          (db.prepare('SELECT mid FROM m WHERE m MATCH ? ORDER BY bm25(m) LIMIT 20').all(match) as Array<{ mid: string }>).map((r) => r.mid),
          'fts5',
        );
        times.fts5!.push(performance.now() - t);
        for (const [key, fn] of [
          ['pg_rank', 'ts_rank'],
          ['pg_rank_cd', 'ts_rank_cd'],
        ] as const) {
          t = performance.now();
          const r = await client.query(
            `WITH q AS (SELECT to_tsquery('english', string_agg(quote_literal(x), ' | ')) AS q FROM unnest($1::text[]) x WHERE numnode(plainto_tsquery('english', x)) > 0)
             SELECT mid FROM m, q WHERE tsv @@ q.q ORDER BY ${fn}(tsv, q.q) DESC LIMIT 20`,
            [words],
          );
          score(
            r.rows.map((x: { mid: string }) => x.mid),
            key,
          );
          times[key]!.push(performance.now() - t);
        }
      }
      db.close();
    }
    const p = (a: number[], q: number) => a.sort((x, y) => x - y)[Math.floor(q * (a.length - 1))]!.toFixed(2);
    console.log(`${f.split('/').pop()}: ${n} questions`);
    for (const key of Object.keys(sums))
      console.log(
        `  ${key.padEnd(11)} recall@5 ${((sums[key]![0]! / n) * 100).toFixed(1)}  @10 ${((sums[key]![1]! / n) * 100).toFixed(1)}  @20 ${((sums[key]![2]! / n) * 100).toFixed(1)}   p50 ${p(times[key]!, 0.5)} ms p95 ${p(times[key]!, 0.95)} ms`,
      );
  }
} finally {
  await client.end();
  await cluster.stop();
}
