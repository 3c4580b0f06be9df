/** The forget/purge journal in files (`forgetting/`, `purging/`): the ChangeJournal contract (journal.contract.ts). */
import { describe } from 'node:test';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { PrivacyJournal } from '../../../src/features/privacy/journal.js';
import { silentLogger } from '../../../src/core/log.js';
import { ensureDir } from '../../../src/storage/atomic.js';
import { fileHarness } from '../../helpers/stores.js';
import { journalContract, type JournalHarness, type Rec } from './journal.contract.js';

describe('PrivacyJournal (files) meets the ChangeJournal contract', () =>
  journalContract(async (): Promise<JournalHarness> => {
    let dir = '';
    const h = await fileHarness(async (d) => {
      dir = path.join(d, 'forgetting');
      return new PrivacyJournal<Rec>(dir, silentLogger());
    });
    return {
      ...h,
      plant: async (text) => {
        await ensureDir(dir);
        await writeFile(path.join(dir, `${randomBytes(6).toString('hex')}.json`), text);
      },
    };
  }));
