/**
 * What every MemoryIndex (src/index/memory-index.ts) promises its callers — the tools, the
 * prompt's # Relevant Memory, /forget and purge, the memory page, the nightly jobs. Run against
 * today's SqliteMemoryIndex by memory-index.test.ts; another implementation (PostgreSQL) adds
 * one call there. Behaviour only: no file, table or SQL is looked at, and no ranking score is
 * compared — only that an exact match comes first and that nothing of another scope comes back.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EpisodeInput, MemoryIndex } from '../../src/index/memory-index.js';
import type { IndexItem } from '../../src/index/portable-index.js';
import type { Portable } from '../../src/storage/portable.js';
import { assertMovesWhole, byJson } from '../helpers/portable.js';
import { registerSecret } from '../../src/core/log.js';

export interface MemoryIndexHandle {
  store: MemoryIndex;
  /** Closes the store and opens the same stored data again (a restart). */
  reopen(): Promise<MemoryIndex>;
  /** What is stored, as it moves between the modes; the store is closed first (`reopen` opens it again). */
  portable(): Promise<Portable<IndexItem>>;
  cleanup(): Promise<void>;
}

const A = 'contract:A';
const B = 'contract:B';
const T0 = Date.parse('2026-03-02T09:00:00Z');
const MINUTE = 60_000;

export function memoryIndexContract(name: string, make: () => Promise<MemoryIndexHandle>): void {
  const with_ = async (fn: (h: MemoryIndexHandle, say: (content: string, o?: Partial<EpisodeInput>) => string) => Promise<void> | void) => {
    const h = await make();
    let n = 0;
    const say = (content: string, o: Partial<EpisodeInput> = {}): string => {
      const id = h.store.saveEpisode({
        content,
        role: 'user',
        speaker: 'Ann',
        sessionId: 's1',
        scope: A,
        eventTime: new Date(T0 + n * MINUTE),
        sourceMessageId: `m${++n}`,
        ...o,
      });
      assert.ok(id, `saved: ${content}`);
      return id;
    };
    try {
      assert.equal(h.store.enabled, true, 'a fresh store is on');
      await fn(h, say);
    } finally {
      await h.cleanup();
    }
  };
  const t = (title: string, fn: Parameters<typeof with_>[0]) => test(`${name} › ${title}`, () => with_(fn));

  t('a saved message is found in its scope, the exact match first, saying who, when, which conversation and which message', (h, say) => {
    say('My cat Miso likes sleeping in the garden');
    const id = say('We booked the flight to Lisbon for the ninth of March', { speaker: 'Ben', sessionId: 's2' });
    say('The dentist moved the appointment to Friday');
    const [first] = h.store.search('flight to Lisbon', { scope: A, limit: 5 });
    assert.ok(first, 'found');
    assert.equal(first.id, id);
    assert.equal(first.kind, 'episode');
    assert.equal(first.content, 'We booked the flight to Lisbon for the ninth of March');
    assert.equal(first.speaker, 'Ben');
    assert.equal(first.role, 'user');
    assert.equal(first.sessionId, 's2');
    assert.equal(first.date, new Date(T0 + MINUTE).toISOString());
    assert.deepEqual(first.sourceMessageIds, ['m2']);
    assert.ok(h.store.search('Lisbon', { scope: A, limit: 1 }).length <= 1, 'the limit holds');
  });

  t("risk: one chat's memory reaches another's prompt — a scope never finds another scope's memories, even word for word", (h, say) => {
    const mine = say('The spare key is under the blue flowerpot', { scope: A });
    h.store.saveFacts([{ content: 'The user keeps the spare key under the blue flowerpot', scope: A }]);
    h.store.saveReflection('Ann worries about the spare key', A, [mine]);
    say('Dana Whitaker fixed the spare key lock', { scope: A, sourceMessageId: 'a-dana' });
    say('Our office plant needs water on Mondays', { scope: B, sessionId: 'sB' });
    for (const q of ['spare key under the blue flowerpot', 'spare key', 'flowerpot', 'Dana Whitaker']) {
      for (const r of [...h.store.search(q, { scope: B, limit: 50 }), ...h.store.searchBm25(q, { scope: B, limit: 50 })]) {
        assert.doesNotMatch(r.content, /key|flowerpot|Dana/, `B's search for "${q}" returned A's "${r.content}"`);
      }
    }
    assert.equal(h.store.entityInfo('Dana Whitaker', B), null);
    assert.equal(h.store.latestReflection(B), undefined);
    assert.equal(h.store.hasEpisode(B, 'a-dana', 'user'), false);
    assert.deepEqual(h.store.stats(B).byKind, { episode: 1 });
    assert.deepEqual(h.store.browse!.facts(B, 50), []);
    assert.ok(h.store.browse!.everything(B).every((r) => !/key|flowerpot|Dana/.test(r.content)));
    assert.ok(h.store.browse!.entities(B, 50).every((e) => !/Dana/.test(e.name)));
    assert.deepEqual(
      h.store.erase!.matching(B, (text) => text.includes('key')),
      [],
    );
    // A's own view is whole.
    assert.equal(h.store.search('spare key under the blue flowerpot', { scope: A, limit: 5 })[0]?.id, mine);
    assert.equal(h.store.entityInfo('Dana Whitaker', A)?.name, 'Dana Whitaker');
  });

  t('risk: ids of another chat are honoured — a fact is read, corrected and confirmed only in its own scope', (h) => {
    const [fact] = h.store.saveFacts([{ content: 'The user is allergic to peanuts', scope: A }]);
    assert.ok(fact && !fact.duplicateOf);
    assert.equal(h.store.getFact(fact.id, B), undefined);
    assert.equal(h.store.correctFact(fact.id, B, 'The user is allergic to nothing'), null);
    assert.equal(h.store.confirmFact(fact.id, B), false);
    assert.deepEqual(h.store.getFact(fact.id, A), { id: fact.id, content: 'The user is allergic to peanuts', confidence: 1, valid: true });
    assert.deepEqual(
      h.store.search('allergic to nothing', { scope: A }).map((r) => r.id),
      [fact.id],
      'the refused correction saved nothing',
    );
  });

  t('hasEpisode tells a stored message from one that is not (by scope, message id and role)', (h, say) => {
    say('hello there', { sourceMessageId: '41', role: 'user' });
    assert.equal(h.store.hasEpisode(A, '41', 'user'), true);
    assert.equal(h.store.hasEpisode(A, '41', 'assistant'), false);
    assert.equal(h.store.hasEpisode(A, '42', 'user'), false);
    assert.equal(h.store.hasEpisode(B, '41', 'user'), false);
  });

  t('facts: a fact saved twice (any case, in one batch or later) is kept once, the second naming the first', (h) => {
    const first = h.store.saveFacts([
      { content: 'The user plays the violin.', scope: A },
      { content: 'the user plays the violin', scope: A },
    ]);
    assert.equal(first.length, 1);
    const [again] = h.store.saveFacts([{ content: 'The user plays the violin', scope: A }]);
    assert.equal(again?.duplicateOf, first[0]!.id);
    const [elsewhere] = h.store.saveFacts([{ content: 'The user plays the violin', scope: B }]);
    assert.ok(elsewhere && !elsewhere.duplicateOf, 'the same words in another scope are another fact');
    assert.equal(h.store.stats(A).byKind.fact, 1);
    assert.equal(h.store.search('violin', { scope: A, kinds: ['fact'] }).length, 1);
  });

  t('correct_fact: the old fact is retired and no longer found, the replacement is', (h) => {
    const [old] = h.store.saveFacts([{ content: 'The user lives in Porto', scope: A }]);
    const replacement = h.store.correctFact(old!.id, A, 'The user moved to Valencia in May');
    assert.ok(replacement && replacement !== old!.id);
    assert.equal(h.store.getFact(old!.id, A)?.valid, false);
    assert.equal(h.store.getFact(replacement, A)?.content, 'The user moved to Valencia in May');
    assert.deepEqual(
      h.store.search('where does the user live Porto Valencia', { scope: A, kinds: ['fact'] }).map((r) => r.id),
      [replacement],
    );
    assert.equal(h.store.correctFact(old!.id, A, 'The user lives in Rome'), null, 'a retired fact is not corrected twice');
    assert.equal(h.store.confirmFact(old!.id, A), false, 'nor confirmed');
    assert.equal(h.store.confirmFact(replacement, A), true);
    assert.equal(h.store.confirmFact('fact_unknown', A), false);
  });

  t(
    'facts change: a correction names the value that holds now (through a chain), search marks and ranks a message of the old value below it, a question about before finds the old fact; all after a reopen',
    async (h, say) => {
      const said = say('My sister Marta lives in Porto');
      const [porto] = h.store.saveFacts([{ content: 'Marta lives in Porto', scope: A }]);
      const braga = h.store.correctFact(porto!.id, A, 'Marta lives in Braga')!;
      const lisbon = h.store.correctFact(braga, A, 'Marta lives in Lisbon')!;
      const [other] = h.store.saveFacts([{ content: 'The user plays chess on Sundays', scope: A }]);
      assert.ok(other);
      const check = (store: MemoryIndex) => {
        assert.deepEqual(
          store.corrections(A).map((c) => [c.id, c.old, c.currentId, c.current]),
          [
            [porto!.id, 'Marta lives in Porto', lisbon, 'Marta lives in Lisbon'],
            [braga, 'Marta lives in Braga', lisbon, 'Marta lives in Lisbon'],
          ],
        );
        assert.ok(store.corrections(A).every((c) => c.until >= c.since));
        assert.deepEqual(store.corrections(B), [], 'nothing of another scope');
        const now = store.search('where does Marta live', { scope: A });
        assert.equal(now[0]?.id, lisbon, JSON.stringify(now));
        const old = now.find((r) => r.id === said);
        assert.equal(old?.correctedBy?.id, lisbon, 'the old message is found, marked with the current value');
        assert.ok(!now.some((r) => r.id === porto!.id || r.id === braga), 'retired facts are no hit for the present');
        const before = store.search('where did Marta live before', { scope: A, kinds: ['fact'] });
        assert.deepEqual(new Set(before.map((r) => r.id)), new Set([porto!.id, braga, lisbon]));
        assert.equal(before.find((r) => r.id === porto!.id)?.correctedBy?.content, 'Marta lives in Lisbon');
      };
      check(h.store);
      check(await h.reopen());
    },
  );

  t('search keeps to the asked kinds and leaves out the excluded conversation', (h, say) => {
    say('I take the train to Vienna on Sunday', { sessionId: 'current' });
    const older = say('The train to Vienna was late last time', { sessionId: 'earlier' });
    const [fact] = h.store.saveFacts([{ content: 'The user travels to Vienna by train', scope: A }]);
    assert.deepEqual(
      h.store.search('train Vienna', { scope: A, excludeSessionId: 'current', kinds: ['episode'] }).map((r) => r.id),
      [older],
    );
    assert.deepEqual(
      h.store.search('train Vienna', { scope: A, kinds: ['fact'] }).map((r) => r.id),
      [fact!.id],
    );
  });

  t('any query text is safe: search syntax, punctuation, nothing at all, very long — results or none, never an error', (h, say) => {
    say('Dana and I talked about NEAR-term plans: AND, OR, NOT were the options');
    const queries = [
      '"',
      '"unbalanced',
      'cat*',
      '* OR *',
      'NEAR(cat garden)',
      '-cat',
      'content:cat',
      '(',
      ')(',
      'AND OR NOT',
      "'; DROP TABLE x; --",
      '',
      '   ',
      '🙂',
      'x'.repeat(5000),
    ];
    for (const q of queries) {
      assert.ok(Array.isArray(h.store.search(q, { scope: A })), `search ${JSON.stringify(q.slice(0, 20))}`);
      assert.ok(Array.isArray(h.store.searchBm25(q, { scope: A })));
    }
    assert.ok(h.store.search('NEAR-term plans', { scope: A }).length > 0, 'the characters are read as text');
  });

  t('an empty scope: no memories, no reflection, empty listings', (h) => {
    assert.deepEqual(h.store.search('anything at all', { scope: 'contract:empty' }), []);
    assert.equal(h.store.latestReflection('contract:empty'), undefined);
    assert.deepEqual(h.store.stats('contract:empty').byKind, {});
    assert.equal(h.store.stats('contract:empty').latest, null);
    assert.deepEqual(h.store.browse!.everything('contract:empty'), []);
    assert.deepEqual(h.store.browse!.dailyCounts('contract:empty'), []);
    assert.equal(h.store.meta('contract-unknown-key'), undefined);
  });

  t('ordering: a scope listed in event order, facts live first and newest first, the reflection of a scope', (h, say) => {
    say('third said', { eventTime: new Date(T0 + 3 * MINUTE) });
    say('first said', { eventTime: new Date(T0 + MINUTE) });
    say('second said', { eventTime: new Date(T0 + 2 * MINUTE) });
    assert.deepEqual(
      h.store.browse!.everything(A).map((r) => r.content),
      ['first said', 'second said', 'third said'],
    );
    const [f1] = h.store.saveFacts([{ content: 'The user likes early trains', scope: A }]);
    h.store.saveFacts([{ content: 'The user owns a red bicycle', scope: A }]);
    h.store.correctFact(f1!.id, A, 'The user prefers night trains now');
    const facts = h.store.browse!.facts(A, 10);
    assert.deepEqual(
      facts.map((f) => f.retired === null),
      [true, true, false],
      'live facts before the retired one',
    );
    assert.equal(facts[2]!.content, 'The user likes early trains');
    assert.ok(h.store.saveReflection('The user travels by train and bicycle', A, []));
    assert.equal(h.store.latestReflection(A)?.content, 'The user travels by train and bicycle');
  });

  t('risk: a forgotten memory stays findable — what /forget erases is found by nothing, before and after a restart', async (h, say) => {
    const gone = say('My new PIN is about Tobermory harbour');
    const kept = say('The weather in Oban was fine');
    h.store.saveFacts([{ content: 'The user mentioned Tobermory once', scope: A }]);
    say('Tobermory appears here too', { scope: B });
    const matches = (text: string) => /tobermory/i.test(text);
    const rows = h.store.erase!.matching(A, matches);
    assert.equal(rows.length, 2);
    assert.ok(rows.some((r) => r.id === gone));
    assert.equal(h.store.erase!.memoriesAndEntities(rows, A, matches) >= 2, true);
    await h.store.scrubFreedSpace();
    const nothing = (store: MemoryIndex) => {
      assert.deepEqual(store.search('Tobermory harbour PIN', { scope: A }), []);
      assert.deepEqual(store.searchBm25('Tobermory', { scope: A }), []);
      assert.equal(store.entityInfo('Tobermory', A), null);
      assert.equal(store.hasEpisode(A, 'm1', 'user'), false);
      assert.ok(store.browse!.everything(A).every((r) => !matches(r.content)));
      assert.deepEqual(store.erase!.matching(A, matches), []);
      assert.equal(store.search('weather in Oban', { scope: A })[0]?.id, kept, 'the rest stays');
      assert.equal(store.search('Tobermory', { scope: B }).length, 1, "another scope's words are its own");
    };
    nothing(h.store);
    nothing(await h.reopen());
  });

  t('purge of a scope: nothing of it is left or listed, every other scope is untouched', async (h, say) => {
    say('Alpha chat remembers the lighthouse', { scope: A });
    h.store.saveFacts([{ content: 'Alpha likes lighthouses', scope: A }]);
    h.store.markConsolidated('s1', A);
    say('Beta chat remembers the lighthouse too', { scope: B, sessionId: 'sB' });
    assert.deepEqual(new Set(h.store.erase!.scopes()), new Set([A, B]));
    assert.equal(h.store.erase!.scope(A).memories, 2);
    const nothing = (store: MemoryIndex) => {
      assert.deepEqual(store.erase!.scopes(), [B]);
      assert.deepEqual(store.search('lighthouse', { scope: A }), []);
      assert.deepEqual(store.browse!.everything(A), []);
      assert.deepEqual(store.stats(A).byKind, {});
      assert.equal(store.search('lighthouse', { scope: B }).length, 1);
    };
    nothing(h.store);
    nothing(await h.reopen());
  });

  t('what is stored survives a close and reopen: messages, facts and their corrections, reflections, metadata, consolidation marks', async (h, say) => {
    const ep = say('The boat leaves Mallaig at seven', { sessionId: 'old' });
    say('and a newer conversation', { sessionId: 'new', eventTime: new Date(T0 + 60 * MINUTE) });
    const [fact] = h.store.saveFacts([{ content: 'The user sails from Mallaig', scope: A }]);
    const fixed = h.store.correctFact(fact!.id, A, 'The user sails from Oban');
    h.store.confirmFact(fixed!, A);
    h.store.saveReflection('Sailing matters to the user', A, [ep]);
    h.store.setMeta('contract_key', 'v1');
    assert.deepEqual(
      h.store.jobs!.pendingConsolidations().map((p) => p.session_id),
      ['old'],
      'the conversation the user left waits for consolidation',
    );
    h.store.markConsolidated('old', A);
    const store = await h.reopen();
    assert.equal(store.enabled, true);
    assert.equal(store.search('boat Mallaig seven', { scope: A })[0]?.id, ep);
    assert.equal(store.hasEpisode(A, 'm1', 'user'), true);
    assert.equal(store.getFact(fact!.id, A)?.valid, false);
    assert.deepEqual(store.getFact(fixed!, A), { id: fixed, content: 'The user sails from Oban', confidence: 1, valid: true });
    assert.equal(store.latestReflection(A)?.content, 'Sailing matters to the user');
    assert.equal(store.meta('contract_key'), 'v1');
    assert.deepEqual(store.jobs!.pendingConsolidations(), [], 'a consolidated conversation is not done again');
    assert.deepEqual(
      store.jobs!.sessionEpisodes('old').map((e) => e.id),
      [ep],
    );
    store.setMeta('contract_key', 'v2');
    assert.equal(store.meta('contract_key'), 'v2', 'metadata is replaced, not added');
  });

  t('risk: a key or token said in a chat is kept in the index — a registered secret is never stored', (h, say) => {
    const secret = `contract-secret-${Math.random().toString(36).slice(2)}-XYZ`;
    registerSecret(secret);
    say(`the deploy key is ${secret} keep it safe`);
    h.store.saveFacts([{ content: `The user's deploy key is ${secret}`, scope: A }]);
    const texts = [...h.store.browse!.everything(A).map((r) => r.content), ...h.store.search('deploy key', { scope: A }).map((r) => r.content)];
    assert.ok(texts.length >= 2);
    for (const text of texts) assert.ok(!text.includes(secret), text);
  });

  t('entities: a name said in a chat has a profile there, with the memories that mention it, newest first', (h, say) => {
    say('I met Dana Whitaker at the climbing gym');
    const newer = say('Dana Whitaker lent me her rope', { eventTime: new Date(T0 + 30 * MINUTE) });
    const info = h.store.entityInfo('dana whitaker', A);
    assert.ok(info);
    assert.equal(info.name, 'Dana Whitaker');
    assert.equal(info.memories.length, 2);
    assert.equal(info.memories[0]!.id, newer);
    assert.equal(h.store.entityInfo('dana whitaker', A, 1)?.memories.length, 1, 'the limit holds');
    assert.equal(h.store.entityInfo('Nobody Known', A), null);
  });

  t(
    'moving between modes: every row, fact, mark, metadata and vector, dumped and loaded into a fresh index, is the same there, and search finds the same',
    async (h, say) => {
      const ep = say('The boat leaves Mallaig at seven', { sessionId: 'old' });
      say('Dana Whitaker sails the boat to Oban', { sessionId: 'new', eventTime: new Date(T0 + 60 * MINUTE), speaker: 'Bob' });
      say('the ferry to Mallaig is late again', { scope: B });
      const [fact] = h.store.saveFacts([{ content: 'The user sails from Mallaig', scope: A }]);
      const fixed = h.store.correctFact(fact!.id, A, 'The user sails from Oban');
      h.store.confirmFact(fixed!, A);
      h.store.saveReflection('Sailing matters to the user', A, [ep]);
      h.store.markConsolidated('old', A);
      if (h.store.vecLoaded) {
        h.store.setMeta('embedding_dimensions', '4');
        h.store.vectors!.create(4);
        h.store.vectors!.store([{ id: ep, vector: Buffer.from(new Float32Array([0.5, 0.5, 0.5, 0.5]).buffer) }]);
      }
      const queries = ['boat Mallaig', 'Oban', 'sailing', 'ferry late'];
      const found = (store: MemoryIndex) => [A, B].flatMap((scope) => queries.map((q) => store.search(q, { scope })));
      const before = found(h.store);
      const entity = h.store.entityInfo('dana whitaker', A);

      const fresh = await make();
      try {
        const items = await assertMovesWhole(await h.portable(), await fresh.portable(), byJson);
        const kinds = (k: string) => items.filter((i) => k in i).length;
        assert.deepEqual(
          [kinds('memory'), kinds('session'), kinds('vector')],
          [6, 3, h.store.vecLoaded ? 1 : 0],
          'memories (the retired fact too), marks of each conversation, vectors',
        );
        await (await fresh.portable()).load((await h.portable()).dump());
        const there = await fresh.reopen();
        assert.deepEqual(found(there), before, 'the same results, in the same order, with the same scores');
        // Entities are derived from the text: linked again the same way, under ids of their own.
        const withoutId = (info: ReturnType<MemoryIndex['entityInfo']>) => ({ ...info!, id: undefined });
        assert.deepEqual(withoutId(there.entityInfo('dana whitaker', A)), withoutId(entity), 'entities linked again from the text');
        assert.equal(there.getFact(fact!.id, A)?.valid, false, 'a retired fact stays retired');
        assert.deepEqual(there.jobs!.pendingConsolidations(), [], 'a consolidated conversation is not done again');
      } finally {
        await fresh.cleanup();
      }
    },
  );
}
