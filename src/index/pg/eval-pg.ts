/**
 * The retrieval eval on PostgreSQL (`npm run memory -- eval FILE --compare` with DATABASE_URL):
 * each conversation is written through a PgMemoryIndex into the database, then searched in a
 * second one whose cache is rebuilt from the database alone — so the figures are those of what
 * PostgreSQL holds, beside the embedded ones.
 *
 * As in the embedded eval, each conversation is alone in its index (full-text statistics count
 * one conversation). It all happens in a schema of its own, made for the run and dropped after:
 * the database's own memory is not read or touched.
 */
import { randomBytes } from 'node:crypto';
import { silentLogger } from '../../core/log.js';
import { Database } from '../../storage/pg/database.js';
import { migrate } from '../../storage/pg/migrate.js';
import {
  closeAll,
  compareOn,
  ingestConversation,
  splitConversations,
  type CompareReport,
  type EvalDataset,
  type EvalSplit,
  type PreparedConversation,
} from '../eval.js';
import { PgMemoryIndex } from './pg-memory-index.js';

/** The URL with the connections' search_path set to `schema`. */
function inSchema(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}

export async function runComparePg(url: string, data: EvalDataset, ks: number[], split: EvalSplit = 'all'): Promise<CompareReport> {
  const log = silentLogger();
  const schema = `membot_eval_${randomBytes(6).toString('hex')}`;
  const admin = new Database({ url, poolSize: 1, log });
  await admin.query(`CREATE SCHEMA ${schema}`);
  const db = new Database({ url: inSchema(url, schema), poolSize: 4, log });
  const prepared: PreparedConversation[] = [];
  try {
    await migrate(db, { log });
    for (const conv of splitConversations(data.conversations, split)) {
      await db.query('TRUNCATE memory_rows, memory_sessions, memory_meta, memory_vectors, memory_changes');
      const writer = await PgMemoryIndex.open({ db, log });
      const scope = ingestConversation(writer, conv);
      await writer.shutdown();
      const index = await PgMemoryIndex.open({ db, log, follow: false });
      prepared.push({ id: conv.id, index, scope, questions: conv.questions });
    }
    return compareOn(prepared, ks);
  } finally {
    closeAll(prepared);
    await db.close();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`).catch(() => undefined);
    await admin.close();
  }
}
