/**
 * Polling by several processes of one bot (src/cluster/gates.ts pollGate, polling.ts `gate`):
 * Telegram answers 409 Conflict to a second getUpdates while one is held, so one process at a
 * time polls — the one holding the polling lease — and when it dies another takes over within
 * the lease time. The stand-in holds each getUpdates a moment, as Telegram's long poll does, and
 * answers 409 to one that arrives meanwhile.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Telegram } from 'telegraf';
import type { Update } from 'telegraf/types';
import { Poller } from '../../../src/channels/telegram/polling.js';
import { Leases } from '../../../src/cluster/leases.js';
import { POLLING_LEASE, pollGate } from '../../../src/cluster/gates.js';
import { ProcessRegistry } from '../../../src/cluster/registry.js';
import { silentLogger } from '../../../src/core/log.js';
import { startPg, type PgCluster } from '../../helpers/pg.js';
import { killDatabase, migratedDatabase, testDatabase } from '../../helpers/pg-stores.js';
import { startTelegramEmulator, TEST_TOKEN } from '../../helpers/telegram.js';
import { waitFor } from '../../helpers/wait.js';

let cluster: PgCluster;
before(async () => {
  cluster = await startPg();
});
after(() => cluster?.stop());

const HOLD_MS = 150;

test('risk: two processes poll one bot and Telegram answers 409 — one polls (the lease holder); when it is killed the other polls within the lease time', async () => {
  const tg = await startTelegramEmulator();
  let heldUntil = 0;
  let conflicts = 0;
  tg.intercept('getUpdates', () => {
    const now = Date.now();
    if (now < heldUntil) {
      conflicts++;
      return { status: 409, json: { ok: false, error_code: 409, description: 'Conflict: terminated by other getUpdates request' } };
    }
    heldUntil = now + HOLD_MS;
    return { forward: true, delayMs: HOLD_MS };
  });
  const url = await migratedDatabase(cluster);
  const procs = await Promise.all(
    ['a', 'b'].map(async () => {
      const db = testDatabase(url);
      const registry = await ProcessRegistry.start(db, { leaseMs: 1_500, version: 'test', log: silentLogger(), beatMs: 300 });
      const leases = new Leases(db, registry.id, 1_500);
      registry.onBeat(async () => void (await leases.renewAll()));
      const got: string[] = [];
      const poller = new Poller({
        telegram: new Telegram(TEST_TOKEN, { apiRoot: tg.apiRoot }),
        log: silentLogger(),
        onUpdates: async (updates: Update[]) => {
          for (const u of updates) if ('message' in u && u.message && 'text' in u.message) got.push(u.message.text);
        },
        tuning: { pollTimeoutSec: 1, emptyPollDelayMs: 0, watchdogIntervalMs: 60_000, baseDelayMs: 20, maxDelayMs: 100 },
        gate: pollGate(leases, silentLogger()),
      });
      return { db, registry, leases, got, poller };
    }),
  );
  const user = tg.user({ userId: 1001 });
  try {
    for (const p of procs) p.poller.start();
    await user.say('one');
    await waitFor(() => procs.some((p) => p.got.includes('one')), 10_000, 'a poller to take "one"');
    // A few more polls with both running: still only one polls.
    const polls = tg.callsOf('getUpdates').length;
    await waitFor(() => tg.callsOf('getUpdates').length >= polls + 5, 10_000, 'more polls');
    assert.equal(conflicts, 0, 'no second poller while the holder lives');
    const holder = procs.find((p) => p.leases.holds(POLLING_LEASE))!;
    const other = procs.find((p) => p !== holder)!;
    assert.ok(holder.got.includes('one'), 'the lease holder polled it');

    // kill -9 of the holder: its poll dies with it, its connections are cut, its heartbeat stops.
    await holder.poller.stop();
    await killDatabase(holder.db, url);
    await user.say('two');
    await waitFor(() => other.got.includes('two'), 15_000, 'the other process to poll and take "two"');
    assert.ok(other.leases.holds(POLLING_LEASE));
    assert.equal(conflicts, 0, 'the takeover came after the dead poller, never beside it');
  } finally {
    for (const p of procs) await p.poller.stop();
    await procs.find((p) => p.leases.holds(POLLING_LEASE))?.registry.stop();
    for (const p of procs) await p.db.close().catch(() => undefined);
    await tg.close();
  }
});
