/**
 * What every ChangeJournal (src/features/privacy/journal.ts) must do, wherever it keeps the
 * records of forgets and purges under way: run by journal.test.ts (the files of `forgetting/`)
 * and journal.pg.test.ts (PostgreSQL). What forget.ts and purge.ts rely on: a record begun is
 * found by the next start, even after a kill; an update replaces it whole (a forget's words
 * go); an ended record is gone, with no byte of its words left; one that cannot be read is
 * removed at start, not taken up.
 */
import assert from 'node:assert/strict';
import type { ChangeJournal, JournalRecord } from '../../../src/features/privacy/journal.js';
import { contractTest, type StoreHarness } from '../../helpers/stores.js';

export interface Rec extends JournalRecord {
  words?: string | undefined;
  outcome?: string | undefined;
}

export interface JournalHarness extends StoreHarness<ChangeJournal<Rec>> {
  /** Puts a record with this text beside the others, as a broken write or an older version would leave it. */
  plant(text: string): Promise<void>;
}

const WORDS = 'my-secret-words-7f3a';

export function journalContract(make: () => Promise<JournalHarness>): void {
  const it = contractTest(make);

  it('a record begun is found by the next start, even after a kill right after begin', async (h) => {
    const id = await h.store.begin({ channel: 'telegram', chatId: '42', attempt: 1, words: WORDS });
    const after = await h.crash();
    assert.deepEqual(await after.left(), [{ id, record: { channel: 'telegram', chatId: '42', attempt: 1, words: WORDS } }]);
  });

  it('records are apart: each has its own id, and ending one leaves the other', async (h) => {
    const a = await h.store.begin({ channel: 'telegram', chatId: '1', attempt: 1 });
    const b = await h.store.begin({ channel: 'telegram', chatId: '2', attempt: 1 });
    assert.notEqual(a, b);
    await h.store.end(a);
    const again = await h.reopen();
    assert.deepEqual(
      (await again.left()).map((l) => l.id),
      [b],
    );
  });

  it('an update replaces the record whole (the words go), and the end removes it with no byte of the words left', async (h) => {
    const id = await h.store.begin({ channel: 'telegram', chatId: '42', attempt: 1, words: WORDS });
    await h.store.update(id, { channel: 'telegram', chatId: '42', attempt: 2, outcome: 'finished' });
    const after = await h.crash();
    assert.deepEqual(await after.left(), [{ id, record: { channel: 'telegram', chatId: '42', attempt: 2, outcome: 'finished' } }]);
    await after.end(id);
    await after.end(id); // twice: a stop between the end and what follows it runs it again
    assert.deepEqual(await (await h.reopen()).left(), []);
    if (h.holds) assert.equal(await h.holds(WORDS), false, 'no byte of the words left');
  });

  it('a record that cannot be read is removed at start, not taken up; a record without attempts counts none', async (h) => {
    await h.plant('{"channel": "telegram", "chatId": 5');
    await h.plant('{"chatId": "5"}');
    await h.plant('{"channel": "telegram", "chatId": "6"}');
    const left = await h.store.left();
    assert.deepEqual(
      left.map((l) => l.record),
      [{ channel: 'telegram', chatId: '6', attempt: 0 }],
    );
    assert.equal((await (await h.reopen()).left()).length, 1, 'the broken ones are gone for good');
  });
}
