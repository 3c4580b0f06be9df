/** The forget/purge journal in PostgreSQL (`privacy_journal`, migration 060): the ChangeJournal contract (journal.contract.ts) on a throwaway cluster. */
import { after, before, describe } from 'node:test';
import { randomBytes } from 'node:crypto';
import { PgPrivacyJournal } from '../../../src/features/privacy/journal-pg.js';
import { silentLogger } from '../../../src/core/log.js';
import type { Database } from '../../../src/storage/pg/database.js';
import { startPg, type PgCluster } from '../../helpers/pg.js';
import { pgHarness } from '../../helpers/pg-stores.js';
import { journalContract, type JournalHarness, type Rec } from './journal.contract.js';

let cluster: PgCluster;
before(async () => {
  cluster = await startPg();
});
after(() => cluster?.stop());

describe('PgPrivacyJournal meets the ChangeJournal contract', () =>
  journalContract(async (): Promise<JournalHarness> => {
    let db: Database | undefined;
    const h = await pgHarness(cluster, async (d) => {
      db = d;
      return new PgPrivacyJournal<Rec>(d, 'forgetting', silentLogger());
    });
    return {
      ...h,
      plant: async (text) => {
        await db!.query("INSERT INTO privacy_journal (kind, id, record) VALUES ('forgetting', $1, $2)", [randomBytes(6).toString('hex'), text]);
      },
    };
  }));
