/**
 * The intake journal in PostgreSQL: the Inbox contract (inbox.contract.ts) against PgInbox on a
 * throwaway cluster — a kill cuts the store's connections (what was committed stays) — then what
 * it must do that the file never had to: keep the order of a burst of accepts, and leave no byte
 * of an erased or redacted chat in the table's pages.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PgInbox } from '../../src/queue/inbox-pg.js';
import type { InboundMessage } from '../../src/core/message.js';
import { silentLogger } from '../../src/core/log.js';
import type { Database } from '../../src/storage/pg/database.js';
import { startPg, type PgCluster } from '../helpers/pg.js';
import { pgHarness } from '../helpers/pg-stores.js';
import type { StoreHarness } from '../helpers/stores.js';
import { inboxContract } from './inbox.contract.js';

let cluster: PgCluster;
before(async () => {
  cluster = await startPg();
});
after(() => cluster?.stop());

/**
 * Whether any page of the inbox table or its TOAST table holds `text`, dead row versions included
 * (pageinspect): what "no byte left" means for a row PostgreSQL deleted.
 */
async function pagesHold(db: Database, text: string): Promise<boolean> {
  await db.query('CREATE EXTENSION IF NOT EXISTS pageinspect');
  const { rows: tables } = await db.query<{ name: string }>(
    "SELECT c.oid::regclass::text AS name FROM pg_class c WHERE c.oid = 'inbox'::regclass OR c.oid = (SELECT reltoastrelid FROM pg_class WHERE oid = 'inbox'::regclass)",
  );
  let seen = '';
  for (const { name } of tables) {
    const { rows } = await db.query<{ n: string }>("SELECT pg_relation_size($1) / current_setting('block_size')::int AS n", [name]);
    for (let i = 0; i < Number(rows[0]!.n); i++) {
      const { rows: page } = await db.query<{ raw: Buffer }>('SELECT get_raw_page($1, $2) AS raw', [name, i]);
      seen += page[0]!.raw.toString('utf8');
    }
  }
  return seen.toLowerCase().includes(text.toLowerCase());
}

/** pgHarness with `holds`: the pages of the table, read through the newest store's database. */
async function harness(now?: () => number): Promise<StoreHarness<PgInbox>> {
  let newest: Database | undefined;
  const h = await pgHarness(
    cluster,
    async (db) => {
      newest = db;
      return new PgInbox(db, silentLogger(), now);
    },
    (inbox) => inbox.shutdown(),
  );
  return { ...h, holds: (text) => pagesHold(newest!, text) };
}

describe('PgInbox meets the Inbox contract', () => inboxContract(() => harness()));

function message(chatId: string, words: string, messageId: string): InboundMessage {
  return { channel: 'test', chatId, userId: `u-${chatId}`, userName: 'Tester', text: words, messageId, receivedAt: new Date('2026-11-20T10:00:00Z') };
}

test('risk: accepts written side by side on several connections come back out of order — a burst is found in the order it was accepted', async () => {
  const h = await harness();
  try {
    const words = Array.from({ length: 40 }, (_, i) => `message ${i}`);
    const accepted = words.map((w, i) => h.store.accept(message(String(i % 3), w, String(i))));
    await Promise.all(accepted.map((a) => a.durable));
    const after = await h.crash();
    assert.deepEqual(
      (await after.unfinished()).entries.map((e) => e.msg.text),
      words,
    );
  } finally {
    await h.cleanup();
  }
});

test('risk: /forget rewrites a row but PostgreSQL keeps its old version in the page — no byte of the redacted words is left in the table', async () => {
  const h = await harness();
  try {
    const mine = h.store.accept(message('1', 'the alarm code is QUINCE93', '1'));
    const theirs = h.store.accept(message('2', 'the weather is fine', '2'));
    await Promise.all([mine.durable, theirs.durable]);
    assert.equal(await h.holds!('QUINCE93'), true, 'kept before');
    const words = { test: (t: string) => t.includes('QUINCE93'), redact: (t: string) => t.replaceAll('QUINCE93', '****') };
    assert.equal(await h.store.redact('test', '1', words), true);
    assert.equal(await h.holds!('QUINCE93'), false, 'no byte of the words left');
    assert.equal(await h.holds!('the weather is fine'), true, "the other chat's entry is as it was");
    const after = await h.crash();
    assert.deepEqual(
      (await after.unfinished()).entries.map((e) => e.msg.text),
      ['the alarm code is ****', 'the weather is fine'],
    );
  } finally {
    await h.cleanup();
  }
});

test('risk: closed entries pile up in the table for ever — a day after they closed they are deleted, and open ones stay', async () => {
  let clock = Date.now();
  const h = await harness(() => clock);
  try {
    const old = h.store.accept(message('1', 'answered long ago', '1'));
    const open = h.store.accept(message('1', 'still waiting', '2'));
    await Promise.all([old.durable, open.durable]);
    await h.store.done(old.id);
    clock += 25 * 3600_000;
    const next = h.store.accept(message('2', 'a day later', '3'));
    await next.durable;
    await h.store.done(next.id);
    assert.deepEqual(
      await h.store.erase([{ channel: 'test', chatId: '1' }]),
      ['1 entry of the inbox journal in the inbox table'],
      'the closed one was deleted already',
    );
    assert.deepEqual(
      await h.store.erase([{ channel: 'test', chatId: '2' }]),
      ['1 entry of the inbox journal in the inbox table'],
      'closed within the day: kept',
    );
  } finally {
    await h.cleanup();
  }
});
