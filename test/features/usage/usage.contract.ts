/**
 * What every UsageStore (src/features/usage/usage.ts) must do, whatever keeps the counts: run by
 * sqlite-usage.test.ts against SqliteUsageStore; another implementation adds one call. What the
 * LLM client, the daily budget, /status, the memory page's chart, the report and purge rely on:
 * one row per day × chat × kind, summed call by call, after a restart too; the daemon's own
 * estimates counted in the row and said apart; days in the configured zone; a group's budget
 * summing its topics and nothing else; a chat erased leaves no row and no byte.
 */
import assert from 'node:assert/strict';
import { sumUsage, type UsageItem, type UsageStore } from '../../../src/features/usage/usage.js';
import { collect, type Portable } from '../../../src/storage/portable.js';
import { contractTest, loadsTheSame, type StoreHarness } from '../../helpers/stores.js';

/** The zone the harness is made in: Auckland is 13 hours ahead of UTC in March. */
export const USAGE_CONTRACT_TZ = 'Pacific/Auckland';

const AT = new Date('2026-03-02T09:00:00Z'); // 22:00 in Auckland, 2 March
const DAY = '2026-03-02';
const NEXT = new Date('2026-03-02T12:00:00Z'); // 01:00 in Auckland, 3 March
const usage = (promptTokens: number, completionTokens: number, cachedTokens = 0) => ({ promptTokens, cachedTokens, completionTokens });
const figures = (r: { calls: number; promptTokens: number; cachedTokens: number; completionTokens: number }) => [
  r.calls,
  r.promptTokens,
  r.cachedTokens,
  r.completionTokens,
];

export type PortableUsageStore = UsageStore & Portable<UsageItem>;

export function usageStoreContract(make: (timezone: string) => Promise<StoreHarness<PortableUsageStore>>): void {
  const it = contractTest(() => make(USAGE_CONTRACT_TZ));

  it('a clean stop loses no call: every call recorded before close is there at the next start, none twice', async (h) => {
    for (let i = 0; i < 50; i++) h.store.record({ chat: `test:${i % 3}`, kind: i % 2 ? 'answer' : 'summary' }, usage(10, 1, 2), AT, 'm');
    await h.store.close();
    const again = await h.reopen();
    assert.deepEqual(sumUsage(await again.rows()).calls, 50);
    assert.deepEqual(figures(sumUsage(await again.rows({ chat: 'test:0' }))), [17, 170, 34, 17]);
    assert.equal((await again.byModel('test:1', DAY))[0]!.calls, 17);
  });

  it('moving: dump, then load into an empty store, gives the same items, fractions and every column kept; clear empties it', async (h) => {
    h.store.record({ chat: 'test:ünï 🐝', kind: 'answer' }, { ...usage(1000, 50, 600), estimated: true }, AT, 'big-model');
    h.store.record({ chat: 'test:1', kind: 'transcription' }, { ...usage(0, 40), audioSeconds: 12.345 }, AT);
    h.store.record({ chat: '*', kind: 'embeddings' }, usage(77, 0), NEXT);
    await h.store.flush();
    const items = await collect(h.store.dump());
    assert.deepEqual(
      items.map((i) => i.table),
      ['daily', 'daily', 'daily', 'models'],
    );
    const fresh = await make(USAGE_CONTRACT_TZ);
    try {
      await loadsTheSame(fresh.store, items);
      assert.deepEqual(await fresh.store.rows(), await h.store.rows());
      await fresh.store.clear();
      assert.equal(await fresh.store.isEmpty(), true);
      assert.deepEqual(await fresh.store.chats(), []);
    } finally {
      await fresh.cleanup();
    }
  });

  it('calls add up in one row per day, chat and kind, days in the configured zone, oldest day first; they are there after a restart, and after a kill once flushed', async (h) => {
    assert.equal(h.store.dayOf(AT), DAY);
    assert.equal(h.store.dayOf(NEXT), '2026-03-03', 'past midnight in the zone, whatever UTC says');
    h.store.record({ chat: 'test:1', kind: 'answer' }, usage(1000, 50, 600), AT);
    h.store.record({ chat: 'test:1', kind: 'answer' }, usage(500, 10, 0), AT);
    h.store.record({ chat: 'test:1', kind: 'summary' }, usage(200, 20), AT);
    h.store.record({ chat: 'test:1', kind: 'answer' }, usage(7, 3), NEXT);
    h.store.record({ chat: 'test:2', kind: 'answer' }, usage(1, 1), AT);
    const want = [
      [DAY, 'test:1', 'answer', 2, 1500, 600, 60],
      [DAY, 'test:1', 'summary', 1, 200, 0, 20],
      [DAY, 'test:2', 'answer', 1, 1, 0, 1],
      ['2026-03-03', 'test:1', 'answer', 1, 7, 0, 3],
    ];
    const read = async (s: UsageStore) => (await s.rows()).map((r) => [r.day, r.chat, r.kind, ...figures(r)]);
    assert.deepEqual(await read(h.store), want);
    await h.store.close();
    const again = await h.reopen();
    assert.deepEqual(await read(again), want);
    again.record({ chat: 'test:2', kind: 'answer' }, usage(1, 1), AT);
    await again.flush();
    const after = await h.crash();
    assert.deepEqual((await after.rows({ chat: 'test:2' })).map(figures), [[2, 2, 0, 2]]);
  });

  it('rows are picked by days (inclusive) and by chat', async ({ store }) => {
    for (const [day, chat] of [
      ['2026-03-01', 'test:1'],
      ['2026-03-02', 'test:1'],
      ['2026-03-03', 'test:1'],
      ['2026-03-02', 'test:2'],
    ] as const)
      store.record({ chat, kind: 'answer' }, usage(1, 1), new Date(`${day}T00:00:00Z`));
    const days = async (opts: Parameters<UsageStore['rows']>[0]) => (await store.rows(opts)).map((r) => `${r.day} ${r.chat}`);
    assert.deepEqual(await days({ since: '2026-03-02', until: '2026-03-02' }), ['2026-03-02 test:1', '2026-03-02 test:2']);
    assert.deepEqual(await days({ since: '2026-03-02', chat: 'test:1' }), ['2026-03-02 test:1', '2026-03-03 test:1']);
    assert.deepEqual(await days({ until: '2026-03-01' }), ['2026-03-01 test:1']);
    assert.deepEqual(await days({ chat: 'test:3' }), []);
  });

  it("a call without the server's figures is counted from the daemon's estimate, in the same row, and said apart; audio seconds add up", async ({ store }) => {
    store.record({ chat: 'test:1', kind: 'answer' }, usage(1000, 50), AT);
    store.record({ chat: 'test:1', kind: 'answer' }, { ...usage(300, 20), estimated: true }, AT);
    store.record({ chat: 'test:1', kind: 'transcription' }, { ...usage(0, 40), audioSeconds: 12.5 }, AT);
    store.record({ chat: 'test:1', kind: 'transcription' }, { ...usage(0, 10), audioSeconds: 2.5 }, AT);
    const [answer, speech] = await store.rows();
    assert.deepEqual([...figures(answer!), answer!.estimatedCalls, answer!.estimatedTokens], [2, 1300, 0, 70, 1, 320]);
    assert.deepEqual([speech!.kind, speech!.calls, speech!.audioSeconds, speech!.estimatedCalls], ['transcription', 2, 15, 0]);
  });

  it('figures that are no count (negative, fractional, not a number) are kept as whole non-negative numbers', async ({ store }) => {
    store.record({ chat: 'test:1', kind: 'answer' }, { promptTokens: -5, cachedTokens: Number.NaN, completionTokens: 2.6, audioSeconds: -1 }, AT);
    const [row] = await store.rows();
    assert.deepEqual([...figures(row!), row!.audioSeconds], [1, 0, 0, 3, 0]);
  });

  it('a day of one chat: all calls, answers only, background only', async ({ store }) => {
    store.record({ chat: 'test:1', kind: 'answer' }, usage(1000, 50, 600), AT);
    store.record({ chat: 'test:1', kind: 'consolidation' }, usage(200, 20), AT);
    store.record({ chat: 'test:1', kind: 'facts' }, usage(100, 10), AT);
    store.record({ chat: 'test:1', kind: 'answer' }, usage(9, 9), NEXT);
    const d = await store.day('test:1', DAY);
    assert.deepEqual([d.all.calls, d.all.total, d.all.cachedTokens], [3, 1380, 600]);
    assert.deepEqual([d.answers.calls, d.answers.total], [1, 1050]);
    assert.deepEqual([d.background.calls, d.background.total], [2, 330]);
    assert.deepEqual((await store.day('test:2', DAY)).all, sumUsage([]));
  });

  it("the budget's sum: a group's day is its own and its forum topics' together, not a group whose id merely starts the same, nor another channel's", async ({
    store,
  }) => {
    store.record({ chat: 'test:-100123', kind: 'answer' }, usage(100, 1), AT);
    store.record({ chat: 'test:-100123:5', kind: 'answer' }, usage(200, 2), AT);
    store.record({ chat: 'test:-100123:7', kind: 'summary' }, usage(300, 3), AT);
    store.record({ chat: 'test:-1001234:5', kind: 'answer' }, usage(4000, 4), AT);
    store.record({ chat: 'other:-100123', kind: 'answer' }, usage(5000, 5), AT);
    store.record({ chat: 'test:-100123', kind: 'answer' }, usage(6000, 6), NEXT);
    assert.equal((await store.groupDay('test:-100123', DAY)).total, 606);
    assert.equal((await store.groupDay('test:-100123:5', DAY)).total, 606, 'a topic counts for its whole group');
    assert.equal((await store.groupDay('test:-1001234:5', DAY)).total, 4004);
    assert.equal((await store.groupDay('test:42', DAY)).total, 0);
    assert.equal((await store.groupDay('test:-100123', '2026-03-03')).total, 6006);
  });

  it('per model: the calls of a day by the model that answered, most tokens first; a call no model is named for is in the rows only', async ({ store }) => {
    store.record({ chat: 'test:1', kind: 'answer' }, usage(100, 10), AT, 'small-model');
    store.record({ chat: 'test:1', kind: 'answer' }, usage(1000, 100), AT, 'big-model');
    store.record({ chat: 'test:1', kind: 'summary' }, usage(50, 5), AT, 'small-model');
    store.record({ chat: 'test:1', kind: 'answer' }, usage(9, 9), AT);
    store.record({ chat: 'test:2', kind: 'answer' }, usage(1, 1), AT, 'small-model');
    assert.deepEqual(
      (await store.byModel('test:1', DAY)).map((m) => [m.model, m.calls, m.total]),
      [
        ['big-model', 1, 1100],
        ['small-model', 2, 165],
      ],
    );
    assert.deepEqual(await store.byModel('test:1', '2026-03-03'), []);
    assert.equal(sumUsage(await store.rows({ chat: 'test:1' })).calls, 4);
  });

  it("two stores over the same counts (two processes) lose none of each other's calls", async (h) => {
    const other = await h.reopen();
    for (let i = 0; i < 20; i++) (i % 2 ? h.store : other).record({ chat: 'test:1', kind: 'answer' }, usage(10, 1), AT, 'm');
    // A process reads its own calls at once; another's once that one has flushed them.
    await other.flush();
    assert.deepEqual((await h.store.rows()).map(figures), [[20, 200, 0, 20]]);
    assert.equal((await h.store.byModel('test:1', DAY))[0]!.calls, 20);
    await other.close();
  });

  it('chats lists every chat with a row; erasing one takes its rows (per model too), leaves the others, and leaves no byte of it', async (h) => {
    h.store.record({ chat: 'test:SECRET-ZEBRA-4471', kind: 'answer' }, usage(10, 1), AT, 'm');
    h.store.record({ chat: 'test:SECRET-ZEBRA-4471', kind: 'summary' }, usage(10, 1), AT);
    h.store.record({ chat: 'test:2', kind: 'answer' }, usage(10, 1), AT, 'm');
    h.store.record({ chat: '*', kind: 'embeddings' }, usage(10, 0), AT);
    assert.deepEqual((await h.store.chats()).sort(), ['*', 'test:2', 'test:SECRET-ZEBRA-4471']);
    if (h.holds) assert.equal(await h.holds('SECRET-ZEBRA-4471'), true, 'kept before');
    assert.equal(await h.store.deleteChat('test:SECRET-ZEBRA-4471'), 3);
    assert.deepEqual(await h.store.rows({ chat: 'test:SECRET-ZEBRA-4471' }), []);
    assert.deepEqual(await h.store.byModel('test:SECRET-ZEBRA-4471', DAY), []);
    assert.deepEqual((await h.store.chats()).sort(), ['*', 'test:2']);
    assert.equal(await h.store.deleteChat('test:SECRET-ZEBRA-4471'), 0);
    if (h.holds) assert.equal(await h.holds('SECRET-ZEBRA-4471'), false, 'no byte left');
    const after = await h.crash();
    assert.deepEqual((await after.rows({ chat: 'test:2' })).map(figures), [[1, 10, 0, 1]]);
    assert.equal((await after.byModel('test:2', DAY)).length, 1);
  });
}
