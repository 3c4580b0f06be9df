/**
 * What every RuntimeConfigStore (src/config/runtime.ts) promises the daemon: defaults when
 * nothing is stored, the owner's settings read at start (a bad one refused, naming its key),
 * a change in force without a restart, a bad change never applied. Run against today's
 * FileRuntimeConfigStore by runtime-store.test.ts. The store itself never writes settings: the
 * factory's `put` is the owner storing them (for the file store: editing the file).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_RUNTIME_CONFIG, type RuntimeConfig, type RuntimeConfigStore, type StoredSettings } from '../../src/config/runtime.js';
import type { Portable } from '../../src/storage/portable.js';
import { assertMovesWhole } from '../helpers/portable.js';

/** A store of the contract: read by the daemon, and moved between the modes (`npm run memory -- migrate`). */
type Store = RuntimeConfigStore & Portable<StoredSettings>;

export interface RuntimeConfigHandle {
  store: Store;
  /** Stores the settings as the owner would (JSON text); undefined takes them away. */
  put(text: string | undefined): Promise<void>;
  /** Another store on the same stored settings (a restart, or a second process). */
  another(): Promise<Store>;
  cleanup(): Promise<void>;
}

const DEFAULTS: RuntimeConfig = structuredClone(DEFAULT_RUNTIME_CONFIG);

export function runtimeConfigContract(name: string, make: () => Promise<RuntimeConfigHandle>): void {
  const t = (title: string, fn: (h: RuntimeConfigHandle) => Promise<void>) =>
    test(`${name} › ${title}`, async () => {
      const h = await make();
      try {
        await fn(h);
      } finally {
        await h.cleanup();
      }
    });

  t('nothing stored: the documented defaults, and no problem at start', async (h) => {
    assert.equal(h.store.init(), null);
    assert.deepEqual(h.store.get(), DEFAULTS);
  });

  t('stored settings are in force from the start; keys they do not name keep their defaults', async (h) => {
    await h.put(JSON.stringify({ memory: { recentDays: 3 }, compaction: { enabled: false } }));
    assert.equal(h.store.init(), null);
    assert.deepEqual(h.store.get(), {
      memory: { ...DEFAULTS.memory, recentDays: 3 },
      compaction: { ...DEFAULTS.compaction, enabled: false },
    });
  });

  t('risk: a bad setting is used anyway — at start it is refused with one line naming the key', async (h) => {
    for (const [text, key] of [
      [JSON.stringify({ memory: { recentDays: 'seven' } }), '"memory.recentDays"'],
      [JSON.stringify({ compaction: { maxContextTokens: 10 } }), '"compaction.maxContextTokens"'],
      [JSON.stringify({ memroy: { enabled: false } }), '"memroy"'],
      ['{"memory": {', 'not valid JSON'],
      ['[]', 'JSON object'],
    ] as const) {
      await h.put(text);
      const problem = (await h.another()).init();
      assert.ok(problem?.includes(key), `${text} → ${problem}`);
      assert.ok(!problem?.includes('\n'), 'one line');
    }
  });

  t('a change stored while running is in force at the next read, without a restart', async (h) => {
    assert.equal(h.store.init(), null);
    assert.equal(h.store.get().memory.enabled, true);
    await h.put(JSON.stringify({ memory: { enabled: false, recentDays: 2 } }));
    assert.equal(h.store.get().memory.enabled, false);
    assert.equal(h.store.get().memory.recentDays, 2);
    await h.put(JSON.stringify({ compaction: { keepLastMessages: 5 } }));
    assert.equal(h.store.get().compaction.keepLastMessages, 5);
    assert.equal(h.store.get().memory.enabled, true, 'keys no longer stored go back to their defaults');
    await h.put(undefined);
    assert.deepEqual(h.store.get(), DEFAULTS, 'settings taken away → defaults');
  });

  t('risk: a bad change stops the chat or applies half — the last good settings stay in force until a good change', async (h) => {
    await h.put(JSON.stringify({ memory: { enabled: false, recentDays: 2 } }));
    assert.equal(h.store.init(), null);
    await h.put(JSON.stringify({ memory: { recentDays: 'x', enabled: true } }));
    for (let i = 0; i < 3; i++) {
      assert.equal(h.store.get().memory.enabled, false, 'nothing of the bad change applies');
      assert.equal(h.store.get().memory.recentDays, 2);
    }
    await h.put(JSON.stringify({ memory: { recentDays: 9 } }));
    assert.equal(h.store.get().memory.recentDays, 9);
    assert.equal(h.store.get().memory.enabled, true);
  });

  t('the settings survive a restart and are the same for a second process', async (h) => {
    await h.put(JSON.stringify({ memory: { budgetPercent: 40 } }));
    assert.equal(h.store.init(), null);
    const other = await h.another();
    assert.equal(other.init(), null);
    assert.deepEqual(other.get(), h.store.get());
    assert.equal(other.get().memory.budgetPercent, 40);
  });

  t(
    'moving between modes: the stored text, dumped and loaded into a fresh store, is the same to the byte and in force there; clear takes it away',
    async (h) => {
      // Spacing and key order as the owner typed them, a bad key included: moved as text, never re-written.
      const text = '{ "compaction": {"keepLastMessages": 5},\n  "memory": { "recentDays": 3 } }\n';
      await h.put(text);
      const fresh = await make();
      try {
        assert.deepEqual(await assertMovesWhole(h.store, fresh.store), [{ settings: text }]);
        await fresh.store.load(h.store.dump());
        const there = await fresh.another();
        assert.equal(there.init(), null);
        assert.equal(there.get().memory.recentDays, 3);
        assert.equal(there.get().compaction.keepLastMessages, 5);
        await h.put(undefined);
        assert.equal(await h.store.isEmpty(), true, 'nothing stored: empty');
      } finally {
        await fresh.cleanup();
      }
    },
  );
}
