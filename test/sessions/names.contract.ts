/**
 * What every ChatNames (src/sessions/names.ts) must do, whatever keeps the names: run by
 * names.test.ts against FileChatNames. What a caller relies on: a name noted is there (after a
 * restart once flushed), a name not said again keeps the one before, a topic names its group,
 * and what is kept is one plain short line — names are user-controlled text.
 */
import assert from 'node:assert/strict';
import { MAX_NAME_CHARS, type ChatNames } from '../../src/sessions/names.js';
import type { ChatLabel } from '../../src/core/message.js';
import { contractTest, type StoreHarness } from '../helpers/stores.js';
import { assertMovesWhole, byJson } from '../helpers/portable.js';

export function chatNamesContract(make: () => Promise<StoreHarness<ChatNames>>): void {
  const it = contractTest(make);

  it('a name noted is there at once and after a restart; a topic names its group', async (h) => {
    h.store.note('telegram', '42', { kind: 'private', name: 'Ada Lovelace' });
    h.store.note('telegram', '-100:7', { kind: 'topic', name: 'Honey sales', group: { chatId: '-100', name: 'Beekeepers' } });
    assert.deepEqual(h.store.get('telegram:42'), { kind: 'private', name: 'Ada Lovelace' });
    await h.store.flush();

    const again = await h.reopen();
    assert.deepEqual(again.get('telegram:42'), { kind: 'private', name: 'Ada Lovelace' });
    assert.deepEqual(again.get('telegram:-100:7'), { kind: 'topic', name: 'Honey sales', parent: 'telegram:-100' });
    assert.deepEqual(again.get('telegram:-100'), { kind: 'group', name: 'Beekeepers' });
    assert.equal(again.get('telegram:43'), undefined);
  });

  it('a name not said again keeps the one seen before; a new one replaces it, after a restart too', async (h) => {
    h.store.note('telegram', '-100:7', { kind: 'topic', name: 'Honey sales', group: { chatId: '-100', name: 'Beekeepers' } });
    h.store.note('telegram', '-100:7', { kind: 'topic', group: { chatId: '-100' } });
    assert.deepEqual(h.store.get('telegram:-100:7'), { kind: 'topic', name: 'Honey sales', parent: 'telegram:-100' });
    assert.deepEqual(h.store.get('telegram:-100'), { kind: 'group', name: 'Beekeepers' });
    h.store.note('telegram', '42', { kind: 'private', name: 'Ada Lovelace' });
    h.store.note('telegram', '42', { kind: 'private', name: 'Ada King' });
    await h.store.flush();

    const again = await h.reopen();
    assert.equal(again.get('telegram:-100:7')?.name, 'Honey sales');
    assert.equal(again.get('telegram:42')?.name, 'Ada King');
  });

  it('what is kept is one plain short line: control, invisible and bidi characters go, spaces collapse, the length is capped', async (h) => {
    h.store.note('test', '1', { kind: 'private', name: 'Ada\u0000\u202e\u200b Love\nlace\t ' });
    h.store.note('test', '2', { kind: 'group', name: '🐝'.repeat(200) });
    h.store.note('test', '3', { kind: 'private', name: ' \u0007 \u2066 ' });
    await h.store.flush();

    const again = await h.reopen();
    assert.deepEqual(again.get('test:1'), { kind: 'private', name: 'Ada Love lace' });
    const long = again.get('test:2')!.name!;
    assert.equal([...long].length, MAX_NAME_CHARS);
    assert.ok(long.endsWith('…'));
    assert.deepEqual(again.get('test:3'), { kind: 'private' }, 'nothing visible: the kind alone');
  });

  it('nothing is kept for a label that is missing or of an unknown kind', async (h) => {
    h.store.note('test', '1', undefined);
    h.store.note('test', '2', { kind: 'channel', name: 'News' } as unknown as ChatLabel);
    await h.store.flush();
    const again = await h.reopen();
    assert.deepEqual([h.store.get('test:1'), h.store.get('test:2'), again.get('test:1'), again.get('test:2')], [undefined, undefined, undefined, undefined]);
  });

  it('many chats noted at once are all there after a restart', async (h) => {
    for (let i = 0; i < 20; i++) h.store.note('test', String(i), { kind: 'private', name: `Person ${i}` });
    await h.store.flush();
    const again = await h.reopen();
    for (let i = 0; i < 20; i++) assert.equal(again.get(`test:${i}`)?.name, `Person ${i}`);
  });

  it("erase forgets a chat's name for good and keeps the others'", async (h) => {
    h.store.note('test', '1', { kind: 'private', name: 'Plumbob Quill' });
    h.store.note('test', '2', { kind: 'private', name: 'Kiwi Keeper' });
    await h.store.flush();
    assert.ok((await h.store.erase(['test:1'])).length > 0, 'it says what it deleted');
    assert.deepEqual(await h.store.erase(['test:1']), [], 'nothing left to delete');
    assert.equal(h.store.get('test:1'), undefined);
    const again = await h.reopen();
    assert.equal(again.get('test:1'), undefined);
    assert.equal(again.get('test:2')?.name, 'Kiwi Keeper');
    if (h.holds) assert.equal(await h.holds('Plumbob'), false, 'no byte of the name left');
  });

  it('moving between modes: the names, dumped and loaded into a fresh store, are the same there; clear empties it', async (h) => {
    h.store.note('telegram', '42', { kind: 'private', name: 'Ada Lovelace' });
    h.store.note('telegram', '-100:7', { kind: 'topic', name: 'Honey sales', group: { chatId: '-100', name: 'Beekeepers' } });
    h.store.note('telegram', '43', { kind: 'private' });
    await h.store.flush();
    const fresh = await make();
    try {
      const items = await assertMovesWhole(h.store.portable(), fresh.store.portable(), byJson);
      assert.deepEqual(byJson(items), [
        { chat: 'telegram:-100', kind: 'group', name: 'Beekeepers' },
        { chat: 'telegram:-100:7', kind: 'topic', name: 'Honey sales', parent: 'telegram:-100' },
        { chat: 'telegram:42', kind: 'private', name: 'Ada Lovelace' },
        { chat: 'telegram:43', kind: 'private' },
      ]);
      await fresh.store.portable().load(h.store.portable().dump());
      const there = await fresh.reopen();
      assert.deepEqual(there.get('telegram:-100:7'), { kind: 'topic', name: 'Honey sales', parent: 'telegram:-100' });
    } finally {
      await fresh.cleanup();
    }
  });
}
