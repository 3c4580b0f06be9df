/**
 * What every MemoryService (src/memory/service.ts) — with the MemoryFiles and MemoryVersions it
 * hands out (files.ts, versions.ts) — must do, whatever keeps the memory: run by
 * file-memory.test.ts against FileMemoryService and service.pg.test.ts against PgMemoryService.
 * What callers rely on: MEMORY.md, daily notes
 * and history read back as written, after a restart too; concurrent changes never lose each
 * other; every change of MEMORY.md is a version, so undo and restore work; one chat's memory
 * never reaches another's; a key never reaches the memory; a name out of the memory is refused;
 * what a store dumps (storage/portable.ts) loads into a fresh one as the same memory.
 */
import assert from 'node:assert/strict';
import type { MemoryService } from '../../src/memory/service.js';
import type { MemoryItem } from '../../src/memory/portable.js';
import { collect, type Portable } from '../../src/storage/portable.js';
import { MAX_VERSIONS, restoreMemory, undoMemory } from '../../src/memory/versions.js';
import { isAppError } from '../../src/core/errors.js';
import { registerSecret } from '../../src/core/log.js';
import { contractTest, type StoreHarness } from '../helpers/stores.js';

const pathEscape = (err: unknown): boolean => isAppError(err, 'storage.path_escape');

export type PortableMemory = MemoryService & Portable<MemoryItem>;

/**
 * A memory with something of every kind: two chats and the folder's own ('global'), MEMORY.md
 * with versions (an undo among them), a refusal, notes (one with a NUL byte, CRLF and emoji),
 * history in two months.
 */
export async function fillMemory(m: MemoryService, global: MemoryService): Promise<void> {
  for (const chatId of ['1', '-100:7']) {
    const files = m.forChat('test', chatId);
    await files.writeMemory(`- lives in Lyon (${chatId})`);
    await files.appendMemory('likes tea', 'Preferences');
    await undoMemory(files);
    await files.versions.noteRefusal({ at: '2026-03-01T09:00:00.000Z', source: 'consolidation', prior: 10, dropped: 6 });
    await files.appendNote('2026-03-01', '[09:00] User: a\u0000b | Assistant: 🐝 ok', false);
    await files.syncNote('2026-03-01');
    await files.appendNote('2026-03-02', '[10:00] User: c\r\nd | Assistant: e');
    await files.appendHistory('Talked about tea.', new Date('2026-02-27T10:00:00Z'));
    await files.appendHistory('Talked about Lyon.', new Date('2026-03-02T10:00:00Z'));
  }
  await global.forChat('test', '9').writeMemory('- one memory for all');
}

export function memoryContract(make: (scope: 'chat' | 'global') => Promise<StoreHarness<PortableMemory>>): void {
  const it = contractTest(() => make('chat'));
  const itGlobal = contractTest(() => make('global'));

  it('MEMORY.md is empty at first, reads back as written (with a final newline) after a restart, and an unchanged write changes nothing', async (h) => {
    const files = h.store.forChat('test', '1');
    assert.equal(await files.readMemory(), '');
    assert.equal(await files.writeMemory('# Prefs\n- likes tea'), true);
    assert.equal(await files.readMemory(), '# Prefs\n- likes tea\n');
    assert.equal(await files.writeMemory('# Prefs\n- likes tea\n'), false);
    const again = await h.crash();
    assert.equal(await again.forChat('test', '1').readMemory(), '# Prefs\n- likes tea\n');
  });

  it('appendMemory adds one list item, under its section when asked (made when missing); rewriteSection replaces only that body', async (h) => {
    const files = h.store.forChat('test', '1');
    await files.appendMemory('lives in Lyon\nand works in Geneva');
    await files.appendMemory('likes tea', 'Preferences');
    await files.appendMemory('likes green tea', 'preferences');
    assert.equal(await files.readMemory(), '- lives in Lyon and works in Geneva\n\n## Preferences\n- likes tea\n- likes green tea\n');
    await files.rewriteSection('Preferences', '- drinks coffee now');
    await files.rewriteSection('Work', '- remote');
    assert.equal(await files.readMemory(), '- lives in Lyon and works in Geneva\n\n## Preferences\n- drinks coffee now\n\n## Work\n- remote\n');
  });

  it('every change of MEMORY.md is a version made by its source, newest first, the text it replaced kept too; no change makes none', async (h) => {
    const files = h.store.forChat('test', '1');
    assert.deepEqual(await files.versions.list(), []);
    assert.equal(await files.changeMemory('consolidation', () => null), false);
    assert.equal(await files.changeMemory('consolidation', (cur) => cur), false);
    assert.deepEqual(await files.versions.list(), []);

    assert.equal(await files.changeMemory('consolidation', () => '- likes tea\n- likes milk\n'), true);
    await files.changeMemory('tool memory_rewrite', () => '- likes tea\n');
    const list = await files.versions.list();
    assert.deepEqual(
      list.slice(0, 2).map((v) => [v.source, v.added, v.removed]),
      [
        ['tool memory_rewrite', 0, 1],
        ['consolidation', 2, 0],
      ],
    );
    assert.equal(await files.versions.read(list[0]!.n), '- likes tea\n');
    assert.equal(await files.readVersion(list[1]!.n), '- likes tea\n- likes milk\n');
    assert.equal(await files.versions.read(list.at(-1)!.n), '', 'the text before the first change');
    assert.ok(list.every((v, i) => i === 0 || v.n < list[i - 1]!.n));
    assert.equal(await files.versions.read(9999), undefined);
    assert.equal(await files.readVersion(9999), undefined);

    const again = (await h.crash()).forChat('test', '1');
    assert.deepEqual(await again.versions.list(), list);
  });

  it('undo takes back the newest change as a new version, again walks further back; restore brings any kept version back', async (h) => {
    const files = h.store.forChat('test', '1');
    for (const text of ['- one\n', '- one\n- two\n', '- one\n- two\n- three\n']) await files.changeMemory('consolidation', () => text);
    const first = await undoMemory(files);
    assert.ok(first.ok);
    assert.equal(await files.readMemory(), '- one\n- two\n');
    assert.equal((await files.versions.list())[0]!.source, `undo #${first.undid!.n}`);
    assert.ok((await undoMemory(files)).ok);
    assert.equal(await files.readMemory(), '- one\n');

    const three = (await files.versions.list()).find(
      (v) => v.added === 1 && v.source === 'consolidation' && v.bytes === Buffer.byteLength('- one\n- two\n- three\n'),
    );
    assert.ok(three);
    const restored = await restoreMemory(files, three.n);
    assert.ok(restored.ok);
    assert.equal(await files.readMemory(), '- one\n- two\n- three\n');
    assert.equal((await files.versions.list())[0]!.source, `restore #${three.n}`);
    assert.equal((await restoreMemory(files, 9999)).ok, false);
  });

  it(`only the last ${MAX_VERSIONS} versions are kept`, async (h) => {
    const files = h.store.forChat('test', '1');
    for (let i = 0; i < MAX_VERSIONS + 2; i++) await files.changeMemory('consolidation', () => `- fact ${i}\n`);
    const list = await files.versions.list();
    assert.equal(list.length, MAX_VERSIONS);
    assert.equal(await files.versions.read(list[0]!.n), `- fact ${MAX_VERSIONS + 1}\n`);
    assert.equal(await files.versions.read(list.at(-1)!.n - 1), undefined, 'an older one is gone');
  });

  it('concurrent changes never lose each other: in one store, and in two over the same memory (two processes)', async (h) => {
    const other = await h.reopen();
    const [a, b] = [h.store.forChat('test', '1'), other.forChat('test', '1')];
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).appendMemory(`fact ${i}`)));
    const lines = (await a.readMemory()).trim().split('\n').sort();
    assert.deepEqual(lines, Array.from({ length: 20 }, (_, i) => `- fact ${i}`).sort());
  });

  it('daily notes: lines come back in order, one per append, whole under concurrency; the notes are listed oldest first; synced lines survive a kill', async (h) => {
    const files = h.store.forChat('test', '1');
    await files.appendNote('2026-03-02', '[09:00] User: b | Assistant: c');
    await files.appendNote('2026-03-01', '[10:00] User: a | Assistant: b');
    await files.appendNote('2026-03-01', '[11:00] User: 😀 | Assistant: ok', false);
    await files.syncNote('2026-03-01');
    await files.syncNote('2026-01-01'); // a note that is not there: nothing to do
    await Promise.all(Array.from({ length: 50 }, (_, i) => files.appendNote('2026-03-03', `[12:00] line ${i}`)));

    const again = (await h.crash()).forChat('test', '1');
    const first = '[10:00] User: a | Assistant: b\n[11:00] User: 😀 | Assistant: ok\n';
    assert.equal(await again.readNote('2026-03-01'), first);
    assert.equal(await again.readNote('2026-02-28'), '');
    const many = (await again.readNote('2026-03-03')).split('\n').filter(Boolean);
    assert.deepEqual([...many].sort(), Array.from({ length: 50 }, (_, i) => `[12:00] line ${i}`).sort());
    assert.deepEqual(await again.listNotes(), [
      { date: '2026-03-01', bytes: Buffer.byteLength(first) },
      { date: '2026-03-02', bytes: Buffer.byteLength('[09:00] User: b | Assistant: c\n') },
      { date: '2026-03-03', bytes: Buffer.byteLength(`${many.join('\n')}\n`) },
    ]);
  });

  it('an append to a note whose text lost its final newline puts one newline first, once, whoever appends; a change after appends keeps them', async (h) => {
    const other = await h.reopen();
    await h.store.forChat('test', '1').update('2026-03-04.md', () => '[08:00] written whole, no newline');
    await Promise.all(['a', 'b', 'c', 'd'].map((x, i) => (i % 2 ? h.store : other).forChat('test', '1').appendNote('2026-03-04', `[09:00] ${x}`)));
    const files = h.store.forChat('test', '1');
    const [head, ...rest] = (await files.readNote('2026-03-04')).split('\n');
    assert.equal(head, '[08:00] written whole, no newline');
    assert.deepEqual(rest.sort(), ['', '[09:00] a', '[09:00] b', '[09:00] c', '[09:00] d']);
    assert.equal(await files.update('2026-03-04.md', (cur) => cur.replace('whole', 'again')), true);
    await files.appendNote('2026-03-04', '[10:00] e');
    const text = await (await h.crash()).forChat('test', '1').readNote('2026-03-04');
    assert.match(text, /^\[08:00\] written again, no newline\n(\[09:00\] [a-d]\n){4}\[10:00\] e\n$/);
  });

  it("history: each entry goes to HISTORY.md and to its month's file; notes_read reads notes and history, nothing else", async (h) => {
    const files = h.store.forChat('test', '1');
    await files.appendHistory('First summary.', new Date('2026-02-10T09:00:00Z'));
    await files.appendHistory('Second summary.\n', new Date('2026-03-05T09:00:00Z'));
    await files.appendNote('2026-03-05', '[09:00] User: a | Assistant: b');
    await files.writeMemory('- secret-ish fact');
    assert.equal(await files.readHistory(), '## 2026-02-10T09:00:00.000Z\nFirst summary.\n\n## 2026-03-05T09:00:00.000Z\nSecond summary.\n\n');
    assert.equal(await files.readNoteOrHistory('HISTORY-2026-02.md'), '## 2026-02-10T09:00:00.000Z\nFirst summary.\n\n');
    assert.equal(await files.readNoteOrHistory('HISTORY.md'), await files.readHistory());
    assert.equal(await files.readNoteOrHistory('2026-03-05.md'), '[09:00] User: a | Assistant: b\n');
    for (const name of ['MEMORY.md', 'versions/1.md', '../MEMORY.md', '2026-03-05', 'HISTORY-2026-2.md', '/etc/passwd'])
      assert.equal(await files.readNoteOrHistory(name), undefined, name);
  });

  it('search finds a keyword in notes and monthly history, whatever its case, newest first, at most the limit', async (h) => {
    const files = h.store.forChat('test', '1');
    await files.appendNote('2026-02-20', '[10:00] User: set up Docker | Assistant: done');
    await files.appendNote('2026-03-01', '[11:00] User: nothing here | Assistant: ok');
    await files.appendNote('2026-03-01', '[12:00] User: docker compose? | Assistant: yes');
    await files.appendHistory('Migrated the DoCkEr host.', new Date('2026-01-15T09:00:00Z'));
    await files.writeMemory('- docker in MEMORY.md is not a note');
    assert.deepEqual(
      (await files.search('DOCKER')).map((x) => [x.date, x.source, x.line]),
      [
        ['2026-03-01', 'note', '[12:00] User: docker compose? | Assistant: yes'],
        ['2026-02-20', 'note', '[10:00] User: set up Docker | Assistant: done'],
        ['2026-01-15', 'history', 'Migrated the DoCkEr host.'],
      ],
    );
    assert.equal((await files.search('docker', 2)).length, 2);
    assert.deepEqual(await files.search('kubernetes'), []);
    assert.deepEqual(await files.search('   '), []);
  });

  it('a key never reaches the memory: not in MEMORY.md, a note, the history or a version', async (h) => {
    const key = 'sk-contract-0123456789abcdef';
    registerSecret(key);
    const files = h.store.forChat('test', '1');
    await files.writeMemory(`- api key is ${key}`);
    await files.appendMemory(`second copy ${key}`);
    await files.appendNote('2026-03-01', `[09:00] User: my key ${key} | Assistant: noted`);
    await files.appendHistory(`The user shared ${key}.`, new Date('2026-03-01T09:00:00Z'));
    const again = (await h.crash()).forChat('test', '1');
    const seen = [
      await again.readMemory(),
      await again.readNote('2026-03-01'),
      await again.readHistory(),
      await again.readNoteOrHistory('HISTORY-2026-03.md'),
      ...(await Promise.all((await again.versions.list()).map((v) => again.versions.read(v.n)))),
      JSON.stringify(await again.search('key')),
    ].join('\n');
    assert.ok(!seen.includes(key), seen);
    assert.match(seen, /\[redacted\]/);
  });

  it("chats never see each other's memory, whatever their ids look like; the scope key names the chat", async (h) => {
    const chats: Array<[string, string]> = [
      ['test', '1'],
      ['test', '2'],
      ['other', '1'],
      ['console', '../../x'],
      ['console', 'x'],
      ['console', '..'],
    ];
    for (const [channel, chatId] of chats) {
      const files = h.store.forChat(channel, chatId);
      await files.writeMemory(`- memory of ${channel} ${chatId}`);
      await files.appendNote('2026-03-01', `[09:00] note of ${channel} ${chatId}`);
    }
    const again = await h.crash();
    for (const [channel, chatId] of chats) {
      const files = again.forChat(channel, chatId);
      assert.equal(await files.readMemory(), `- memory of ${channel} ${chatId}\n`);
      assert.equal(await files.readNote('2026-03-01'), `[09:00] note of ${channel} ${chatId}\n`);
      assert.deepEqual(
        (await files.search('note of')).map((x) => x.line),
        [`[09:00] note of ${channel} ${chatId}`],
      );
      assert.equal(again.scopeKey(channel, chatId), `${channel}:${chatId}`);
    }
    assert.equal(again.scope, 'chat');
  });

  itGlobal('with MEMORY_SCOPE=global every chat shares one memory, under one scope key', async (h) => {
    await h.store.forChat('test', '1').writeMemory('- shared fact');
    await h.store.forChat('other', '2').appendNote('2026-03-01', '[09:00] from another chat');
    const again = await h.crash();
    assert.equal(await again.forChat('console', 'x').readMemory(), '- shared fact\n');
    assert.equal(await again.forChat('test', '1').readNote('2026-03-01'), '[09:00] from another chat\n');
    assert.deepEqual([again.scope, again.scopeKey('test', '1'), again.scopeKey('other', '2')], ['global', 'global', 'global']);
  });

  it('a change that changes nothing leaves no file behind: no note listed, nothing kept, nothing to move', async (h) => {
    const files = h.store.forChat('test', '1');
    assert.equal(await files.update('2026-03-09.md', () => null), false);
    assert.equal(await files.update('HISTORY.md', (cur) => cur), false);
    assert.deepEqual(await files.listNotes(), []);
    assert.deepEqual(await files.footprint(), { bytes: 0, mtime: 0 });
    assert.equal(await h.store.isEmpty(), true);
  });

  it('a name that leads out of the memory is refused (storage.path_escape), and nothing is written', async (h) => {
    const files = h.store.forChat('test', '1');
    for (const name of ['../escape.md', '../../escape.md', '/tmp/escape.md', 'a/../../escape.md'])
      await assert.rejects(
        files.update(name, () => 'x'),
        pathEscape,
        name,
      );
    await assert.rejects(files.readNote('../../2026-03-01'), pathEscape);
    await assert.rejects(files.appendNote('../2026-03-01', 'x'), pathEscape);
    assert.equal(await h.store.forChat('test', '2').readMemory(), '');
    assert.deepEqual(await files.listNotes(), []);
  });

  it('redact takes the lines out of every kept version', async (h) => {
    const files = h.store.forChat('test', '1');
    await files.changeMemory('consolidation', () => '- locker code 4711\n- likes tea\n');
    await files.changeMemory('consolidation', () => '- likes tea\n- locker code 4711 (old)\n');
    await files.changeMemory('forget', () => '- likes tea\n');
    assert.equal(await files.versions.redact((l) => l.includes('4711')), 2);
    const texts = await Promise.all((await files.versions.list()).map((v) => files.versions.read(v.n)));
    assert.ok(texts.every((t) => t !== undefined && !t.includes('4711')));
    assert.ok(texts.some((t) => t?.includes('likes tea')));
    assert.equal(await files.versions.redact((l) => l.includes('4711')), 0);
  });

  it("the rewrite guard's refusals are counted, the last one kept, across a restart", async (h) => {
    const files = h.store.forChat('test', '1');
    assert.deepEqual(await files.versions.refusals(), { count: 0 });
    await files.versions.noteRefusal({ at: '2026-03-01T09:00:00.000Z', source: 'consolidation', prior: 10, dropped: 6 });
    await files.versions.noteRefusal({ at: '2026-03-02T09:00:00.000Z', source: 'tool memory_rewrite', prior: 8, dropped: 5 });
    const again = (await h.crash()).forChat('test', '1');
    assert.deepEqual(await again.versions.refusals(), {
      count: 2,
      last: { at: '2026-03-02T09:00:00.000Z', source: 'tool memory_rewrite', prior: 8, dropped: 5 },
    });
  });

  it('countLines and redact find and mark the words in the notes and the history (MEMORY.md is only counted); footprint measures what is kept', async (h) => {
    const files = h.store.forChat('test', '1');
    await files.writeMemory('- locker code 4711\n- likes tea');
    await files.appendNote('2026-03-01', '[09:00] the code is 4711');
    await files.appendHistory('Ann gave her code 4711.', new Date('2026-03-01T10:00:00Z'));
    const has = (l: string) => l.includes('4711');
    assert.deepEqual(await files.countLines(has), { memory: 1, notes: 1, history: 1 });
    assert.ok((await files.footprint()).bytes > 0);
    assert.deepEqual(await h.store.forChat('test', 'none').footprint(), { bytes: 0, mtime: 0 });
    const words = { test: has, redact: (t: string) => t.replaceAll('4711', '[x]') };
    assert.ok((await files.redact(words)).length >= 2, 'the note and the history files changed');
    assert.deepEqual(await files.redact(words), [], 'nothing left to change');
    assert.equal(await files.readNote('2026-03-01'), '[09:00] the code is [x]\n');
    assert.match(await files.readHistory(), /Ann gave her code \[x\]\./);
    assert.deepEqual(await files.countLines(has), { memory: 1, notes: 0, history: 0 }, 'MEMORY.md changes through changeMemory only');
  });

  it("erase takes a chat's own memory for good and no other chat's; chats names those kept", async (h) => {
    for (const chatId of ['1', '2']) {
      await h.store.forChat('test', chatId).writeMemory(`- code PLUM${chatId}`);
      await h.store.forChat('test', chatId).appendNote('2026-03-01', `[09:00] PLUM${chatId}`);
    }
    const keys = async (m: MemoryService) => (await m.chats()).map((x) => `${x.channel}:${x.chatId}`).sort();
    assert.deepEqual(await keys(h.store), ['test:1', 'test:2']);
    assert.ok((await h.store.erase('test', '1')).length > 0, 'it says what it deleted');
    assert.deepEqual(await h.store.erase('test', '1'), [], 'nothing left to delete');
    const again = await h.crash();
    assert.deepEqual(await keys(again), ['test:2']);
    assert.equal(await again.forChat('test', '1').readMemory(), '');
    assert.equal(await again.forChat('test', '2').readMemory(), '- code PLUM2\n');
    if (h.holds) assert.equal(await h.holds('PLUM1'), false, 'no byte of the erased memory left');
  });

  itGlobal('with one memory for every chat, erase deletes nothing and no chat has a memory of its own', async (h) => {
    await h.store.forChat('test', '1').writeMemory('- shared');
    assert.deepEqual(await h.store.chats(), []);
    assert.deepEqual(await h.store.erase('test', '1'), []);
    assert.equal(await h.store.forChat('test', '2').readMemory(), '- shared\n');
  });

  it('dump → load into a fresh store → dump gives the same items, and the same memory: texts, versions, undo, refusals', async (h) => {
    const global = await make('global');
    const fresh = await make('chat');
    try {
      assert.equal(await h.store.isEmpty(), true);
      await fillMemory(h.store, global.store);
      assert.equal(await h.store.isEmpty(), false);
      // The memory of one store, then of the other with MEMORY_SCOPE=global ('global' sorts first).
      const items = [...(await collect(global.store.dump())), ...(await collect(h.store.dump()))];
      assert.deepEqual([...new Set(items.map((i) => i.scope))], ['global', 'test:-100:7', 'test:1']);
      assert.ok(items.some((i) => i.kind === 'version' && i.text !== undefined));

      assert.equal(await fresh.store.isEmpty(), true);
      const again = async function* () {
        yield* items;
      };
      assert.equal(await fresh.store.load(again()), items.length);
      assert.deepEqual(await collect(fresh.store.dump()), items);
      const [from, to] = [h.store.forChat('test', '-100:7'), fresh.store.forChat('test', '-100:7')];
      assert.equal(await to.readMemory(), await from.readMemory());
      assert.equal(await to.readNote('2026-03-01'), '[09:00] User: a\u0000b | Assistant: 🐝 ok\n');
      assert.deepEqual(await to.versions.list(), await from.versions.list());
      assert.deepEqual(await to.versions.refusals(), await from.versions.refusals());
      assert.deepEqual(await to.listNotes(), await from.listNotes());
      assert.deepEqual((await fresh.store.chats()).map((c) => `${c.channel}:${c.chatId}`).sort(), ['test:-100:7', 'test:1']);
      // The loaded versions go on numbering after the moved ones, and undo walks back through them.
      await to.changeMemory('consolidation', () => '- moved\n');
      assert.equal((await to.versions.list())[0]!.n, (await from.versions.list())[0]!.n + 1);
      assert.ok((await undoMemory(to)).ok);
      assert.equal(await to.readMemory(), await from.readMemory());

      await fresh.store.clear();
      assert.equal(await fresh.store.isEmpty(), true);
      assert.deepEqual(await collect(fresh.store.dump()), []);
      assert.equal(await fresh.store.forChat('test', '1').readMemory(), '');
    } finally {
      await global.cleanup();
      await fresh.cleanup();
    }
  });
}
