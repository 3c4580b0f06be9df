/**
 * What every ReminderStore (src/features/reminders/store.ts) must do, whatever keeps the
 * reminders: run by sqlite-store.test.ts against SqliteReminderStore; another implementation adds
 * one call. What the service, the tools, /reminders, the CLI, /forget and purge rely on: a
 * reminder reads back whole after a restart; an occurrence is claimed once only — by a second
 * store over the same state too, and after a kill, where the claim is still open for the next
 * start to settle; the limits count a chat, or a group with its topics; chats never see each
 * other's reminders; a chat erased leaves nothing, not a byte.
 */
import assert from 'node:assert/strict';
import type { Reminder, ReminderItem, ReminderStore } from '../../../src/features/reminders/store.js';
import { collect, type Portable } from '../../../src/storage/portable.js';
import { contractTest, loadsTheSame, type StoreHarness } from '../../helpers/stores.js';

const HOUR = 3_600_000;
/** Now, to the hour: delivery records are kept a while after they are finished (as of today's clock). */
const T0 = Math.floor(Date.now() / HOUR) * HOUR;

/** A reminder of `chat` (`channel:chatId`) due at `dueAt`, as the service adds one. */
function reminder(chat: string, text: string, dueAt: number, repeat: string | null = null): Omit<Reminder, 'id'> {
  const at = chat.indexOf(':');
  return { chat, channel: chat.slice(0, at), chatId: chat.slice(at + 1), text, dueAt, repeat, timezone: 'Europe/Berlin', createdAt: T0 - HOUR };
}

const texts = (rs: readonly { text: string }[]): string[] => rs.map((r) => r.text);

export type PortableReminderStore = ReminderStore & Portable<ReminderItem>;

export function reminderStoreContract(make: () => Promise<StoreHarness<PortableReminderStore>>): void {
  const it = contractTest(make);

  it('moving: dump, then load into an empty store, gives the same items — ids, statuses, delivery records — and ids go on from the last one handed out', async (h) => {
    const pending = await h.store.add(reminder('test:1', 'water the plants 🌱 "now"\n  two lines ', T0 + HOUR, '0 9 * * 1-5'));
    const done = await h.store.add(reminder('test:2', 'once', T0));
    await h.store.finish((await h.store.claim(done, null, T0 + 5))!, 'sent', T0 + 9);
    const open = await h.store.add(reminder('test:2', 'claimed, not sent', T0));
    await h.store.claim(open, null, T0 + 7);
    const cancelled = await h.store.add(reminder('test:1', 'cancelled', T0 + HOUR));
    await h.store.cancel('test:1', cancelled.id);
    const gone = await h.store.add(reminder('test:3', 'deleted: its id is not handed out again', T0 + HOUR));
    await h.store.deleteChat('test:3');
    const items = await collect(h.store.dump());
    assert.deepEqual(
      items.map((i) => i.type),
      ['lastId', 'reminder', 'reminder', 'reminder', 'reminder', 'delivery', 'delivery'],
    );
    const fresh = await make();
    try {
      await loadsTheSame(fresh.store, items);
      assert.deepEqual(await fresh.store.pending('test:1'), [pending]);
      assert.deepEqual(
        (await fresh.store.claimed()).map((d) => [d.reminderId, d.claimedAt]),
        [[open.id, T0 + 7]],
      );
      assert.equal(await fresh.store.claim(done, null, T0), undefined, 'a done one stays done');
      const next = await fresh.store.add(reminder('test:1', 'new', T0 + HOUR));
      assert.ok(next.id > gone.id, `a new id (${next.id}) after the last handed out (${gone.id})`);
      await fresh.store.clear();
      assert.equal(await fresh.store.isEmpty(), true);
      assert.deepEqual(await fresh.store.chats(), []);
    } finally {
      await fresh.cleanup();
    }
  });

  it('a reminder reads back whole with its id, soonest first, after a clean restart and after a kill', async (h) => {
    const later = await h.store.add(reminder('test:1', 'water the plants 🌱 "now"', T0 + 2 * HOUR, 'daily'));
    const sooner = await h.store.add(reminder('test:1', 'call the dentist', T0 + HOUR));
    assert.notEqual(later.id, sooner.id);
    assert.deepEqual(await h.store.pending('test:1'), [sooner, later]);
    await h.store.close();
    const again = await h.reopen();
    assert.deepEqual(await again.pending('test:1'), [sooner, later]);
    const third = await again.add(reminder('test:1', 'lock the door', T0 + HOUR));
    const after = await h.crash();
    assert.deepEqual(
      texts(await after.pending('test:1')),
      ['call the dentist', 'lock the door', 'water the plants 🌱 "now"'],
      'equal times: in the order added',
    );
    assert.ok(![sooner.id, later.id].includes(third.id));
  });

  it('the counts: a chat its own, a group with every forum topic of it, and nothing of a group whose id merely starts the same', async ({ store }) => {
    await store.add(reminder('test:-100123', 'general', T0 + HOUR));
    await store.add(reminder('test:-100123:5', 'topic five', T0 + HOUR));
    await store.add(reminder('test:-100123:7', 'topic seven', T0 + HOUR));
    await store.add(reminder('test:-1001234:5', 'another group', T0 + HOUR));
    await store.add(reminder('other:-100123', 'another channel', T0 + HOUR));
    assert.equal(await store.countPending('test:-100123'), 1);
    assert.equal(await store.countPending('test:-100123:5'), 1);
    assert.equal(await store.countPendingInGroup('test:-100123'), 3);
    assert.equal(await store.countPendingInGroup('test:-1001234'), 1);
    assert.equal(await store.countPendingInGroup('test:42'), 0);
    const r = (await store.pending('test:-100123:7'))[0]!;
    await store.cancel('test:-100123:7', r.id);
    assert.equal(await store.countPendingInGroup('test:-100123'), 2, 'a cancelled one no longer counts');
  });

  it("a chat cancels only its own pending reminders: another chat's id, or one already cancelled, is refused", async (h) => {
    const mine = await h.store.add(reminder('test:1', 'mine', T0 + HOUR));
    const theirs = await h.store.add(reminder('test:2', 'theirs', T0 + HOUR));
    assert.equal(await h.store.cancel('test:1', theirs.id), undefined);
    assert.deepEqual(texts(await h.store.pending('test:2')), ['theirs']);
    assert.deepEqual(await h.store.cancel('test:1', mine.id), mine);
    assert.equal(await h.store.cancel('test:1', mine.id), undefined);
    const after = await h.crash();
    assert.deepEqual(await after.pending('test:1'), []);
    assert.deepEqual(
      (await after.due(T0 + 2 * HOUR, ['test'])).map((r) => r.chat),
      ['test:2'],
      'a cancelled one is never due',
    );
  });

  it('due lists what is pending by then on the channels asked, oldest first; nextDue the soonest, leaving out the chats skipped', async ({ store }) => {
    await store.add(reminder('test:1', 'b', T0 + 2 * HOUR));
    await store.add(reminder('test:2', 'a', T0 + HOUR));
    await store.add(reminder('test:1', 'c', T0 + 3 * HOUR));
    await store.add(reminder('other:1', 'elsewhere', T0));
    assert.deepEqual(texts(await store.due(T0 + 2 * HOUR, ['test'])), ['a', 'b']);
    assert.deepEqual(texts(await store.due(T0 + 2 * HOUR, ['test', 'other'])), ['elsewhere', 'a', 'b']);
    assert.deepEqual(await store.due(T0 + 5 * HOUR, []), []);
    assert.equal(await store.nextDue(['test']), T0 + HOUR);
    assert.equal(await store.nextDue(['test'], (chat) => chat === 'test:2'), T0 + 2 * HOUR);
    assert.equal(await store.nextDue([]), undefined);
    assert.equal(await store.nextDue(['nobody']), undefined);
  });

  it('an occurrence is claimed once only: a one-time reminder is done, a repeating one moves on; a second store over the same state cannot claim it again', async (h) => {
    const once = await h.store.add(reminder('test:1', 'once', T0));
    const daily = await h.store.add(reminder('test:1', 'daily', T0, 'daily'));
    const other = await h.reopen(); // a second process
    const d = await h.store.claim(once, null, T0 + 1000);
    assert.deepEqual(d && [d.reminderId, d.dueAt, d.state, d.text, d.chat, d.claimedAt], [once.id, T0, 'claimed', 'once', 'test:1', T0 + 1000]);
    assert.equal(await h.store.claim(once, null, T0 + 2000), undefined);
    assert.equal(await other.claim(once, null, T0 + 2000), undefined);
    assert.ok(await h.store.claim(daily, T0 + 24 * HOUR, T0 + 1000));
    assert.equal(await other.claim(daily, T0 + 24 * HOUR, T0 + 2000), undefined, 'the same occurrence of a repeating one');
    assert.deepEqual(
      (await other.pending('test:1')).map((r) => [r.text, r.dueAt]),
      [['daily', T0 + 24 * HOUR]],
    );
    assert.deepEqual(texts(await other.due(T0 + HOUR, ['test'])), [], 'nothing is due again');
    assert.ok(await other.claim({ ...daily, dueAt: T0 + 24 * HOUR }, T0 + 48 * HOUR, T0 + 24 * HOUR), "the next day's occurrence is its own");
    await other.close();
  });

  it('a cancelled reminder cannot be claimed', async ({ store }) => {
    const r = await store.add(reminder('test:1', 'never', T0));
    await store.cancel('test:1', r.id);
    assert.equal(await store.claim(r, null, T0), undefined);
    assert.deepEqual(await store.claimed(), []);
  });

  it('a claim survives a kill: the next start finds it claimed, not due — once sent it is neither, and never claimed again', async (h) => {
    const r = await h.store.add(reminder('test:1', 'lock the door', T0));
    await h.store.add(reminder('other:1', 'elsewhere', T0));
    const d = (await h.store.claim(r, null, T0 + 1000))!;
    const after = await h.crash();
    assert.deepEqual(
      (await after.claimed()).map((c) => [c.reminderId, c.dueAt, c.state, c.text]),
      [[r.id, T0, 'claimed', 'lock the door']],
    );
    assert.deepEqual(await after.claimed(['other']), [], 'only the channels asked');
    assert.deepEqual(texts(await after.due(T0 + HOUR, ['test'])), []);
    assert.equal(await after.claim(r, null, T0 + 2000), undefined);
    await after.finish(d, 'sent', T0 + 3000);
    const next = await h.crash();
    assert.deepEqual(await next.claimed(), []);
    assert.deepEqual(
      (await next.deliveries('test:1')).map((x) => [x.reminderId, x.state]),
      [[r.id, 'sent']],
    );
    assert.deepEqual(await next.deliveries('test:2'), []);
  });

  it('a delivery the channel refused is finished as failed: no longer claimed, so it is not tried again', async (h) => {
    const r = await h.store.add(reminder('test:1', 'refused', T0));
    await h.store.finish((await h.store.claim(r, null, T0))!, 'failed', T0 + 1);
    const after = await h.crash();
    assert.deepEqual(await after.claimed(), []);
    assert.deepEqual(
      (await after.deliveries('test:1')).map((x) => x.state),
      ['failed'],
    );
  });

  it('chats lists every chat with a reminder or a delivery record', async ({ store }) => {
    await store.add(reminder('test:1', 'pending', T0 + HOUR));
    const r = await store.add(reminder('test:-100:5', 'delivered', T0));
    await store.finish((await store.claim(r, null, T0))!, 'sent', T0);
    assert.deepEqual((await store.chats()).sort(), ['test:-100:5', 'test:1']);
  });

  it('erasing a chat takes its reminders and delivery records, leaves other chats as they were, and leaves no byte of it', async (h) => {
    await h.store.add(reminder('test:1', 'SECRET-ZEBRA-4471 pending', T0 + HOUR));
    const sent = await h.store.add(reminder('test:1', 'SECRET-ZEBRA-4471 sent', T0));
    await h.store.finish((await h.store.claim(sent, null, T0))!, 'sent', T0);
    await h.store.add(reminder('test:1', 'SECRET-ZEBRA-4471 claimed', T0));
    await h.store.claim((await h.store.due(T0, ['test']))[0]!, null, T0);
    await h.store.add(reminder('test:2', 'other chat keeps this', T0 + HOUR));
    if (h.holds) assert.equal(await h.holds('SECRET-ZEBRA-4471'), true, 'kept before');
    assert.equal(await h.store.deleteChat('test:1'), 3);
    assert.deepEqual([await h.store.pending('test:1'), await h.store.deliveries('test:1'), await h.store.claimed()], [[], [], []]);
    assert.deepEqual(await h.store.chats(), ['test:2']);
    assert.equal(await h.store.deleteChat('test:1'), 0);
    if (h.holds) assert.equal(await h.holds('SECRET-ZEBRA-4471'), false, 'no byte left');
    const after = await h.crash();
    assert.deepEqual(texts(await after.pending('test:2')), ['other chat keeps this']);
    assert.deepEqual(await after.pending('test:1'), []);
  });

  it("/forget's words: counted and deleted in this chat's reminders of any status, with their delivery records, and in no other chat's", async (h) => {
    await h.store.add(reminder('test:1', 'buy PLUM jam', T0 + HOUR));
    const done = await h.store.add(reminder('test:1', 'plum tart', T0));
    await h.store.finish((await h.store.claim(done, null, T0))!, 'sent', T0);
    await h.store.add(reminder('test:1', 'call Ann', T0 + HOUR));
    await h.store.add(reminder('test:2', 'plum for chat two', T0 + HOUR));
    const plum = (t: string) => /plum/i.test(t);
    assert.equal(await h.store.countMatching('test:1', plum), 2);
    assert.equal(await h.store.deleteMatching('test:1', plum), 2);
    assert.equal(await h.store.countMatching('test:1', plum), 0);
    assert.equal(await h.store.deleteMatching('test:1', plum), 0);
    assert.deepEqual(texts(await h.store.pending('test:1')), ['call Ann']);
    assert.deepEqual(await h.store.deliveries('test:1'), []);
    assert.deepEqual(texts(await h.store.pending('test:2')), ['plum for chat two']);
    if (h.holds) assert.equal(await h.holds('plum tart'), false, 'no byte left');
  });

  it("chats never see each other's reminders, whatever their ids look like", async (h) => {
    const chats = ['test:1', 'test:10', 'test:1:2', 'other:1', 'test:ünï 🐝', "test:x' OR '1'='1"];
    for (const chat of chats) await h.store.add(reminder(chat, `for ${chat}`, T0 + HOUR));
    const after = await h.crash();
    for (const chat of chats) assert.deepEqual(texts(await after.pending(chat)), [`for ${chat}`], chat);
    assert.deepEqual((await after.chats()).sort(), [...chats].sort());
  });
}
