/**
 * Embeddings on: vectors are computed off the hot path (batched, cached by content hash), stored
 * in sqlite-vec, and a message that shares no word with the question is found through KNN.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { SqliteMemoryIndex } from '../../../src/index/sqlite-memory-index.js';
import { Embedder } from '../../../src/index/upkeep/embeddings.js';
import { IndexingService } from '../../../src/index/ingest.js';
import { LlmClient } from '../../../src/llm/client.js';
import { silentLogger } from '../../../src/core/log.js';
import { startFakeLlm, type Responder } from '../../helpers/fake-llm.js';
import { captureLog, tempDir, testConfig } from '../../helpers/workspace.js';
import { createMemoryIndexTools } from '../../../src/features/memory-access/memory-index.js';
import { FileMemoryService } from '../../../src/memory/file-memory.js';
import type { ToolContext } from '../../../src/tools/types.js';

const DIMS = 4;
/** A toy embedding: axis 0 = pets, 1 = music, 2 = food, 3 = anything else. */
function toyVector(text: string): number[] {
  const t = text.toLowerCase();
  const v = [
    /(kitten|cat|pet|dog|puppy|animal)/.test(t) ? 1 : 0,
    /(cello|guitar|instrument|music)/.test(t) ? 1 : 0,
    /(pasta|food|dinner|eat)/.test(t) ? 1 : 0,
    0.05,
  ];
  return v;
}
const embeddings: Responder = (req) => {
  const inputs: string[] = Array.isArray(req.body.input) ? req.body.input : [req.body.input];
  return {
    json: {
      object: 'list',
      model: 'toy',
      data: inputs.map((s, index) => ({ object: 'embedding', index, embedding: toyVector(s) })),
      usage: { prompt_tokens: 1, total_tokens: 1 },
    },
  };
};

test("with embeddings, a message with none of the question's words is found by vector search; vectors are cached by content", async () => {
  const llm = await startFakeLlm(embeddings);
  const ws = await tempDir();
  try {
    const config = testConfig({ OPENAI_BASE_URL: llm.url, WORKSPACE_DIR: ws.dir });
    const index = new SqliteMemoryIndex(path.join(ws.dir, 'memory.db'), silentLogger());
    const embedder = new Embedder(new LlmClient(config, silentLogger()), index, 'toy-embed', DIMS, silentLogger());
    embedder.init();
    assert.ok(embedder.active, 'sqlite-vec loaded and the vector table created');
    const ingest = new IndexingService(index, embedder);
    const say = (content: string, i: number) =>
      ingest.ingestMessage({ content, role: 'user', speaker: 'Ann', sessionId: 's1', scope: 'c:1', eventTime: new Date(2026, 0, i), sourceMessageId: `m${i}` });
    say('We brought home a kitten from the shelter and named her Pepper', 1);
    say('Lovely weather for a walk today', 2);
    say('Trying a new pasta recipe tonight', 3);
    say('Lovely weather for a walk today', 4); // same text: one embedding, from the cache
    await embedder.flush();
    const embedCalls = llm.requests.filter((r) => r.path.endsWith('/embeddings'));
    assert.equal(embedCalls.length, 1, 'one batch for all four messages');
    assert.equal(embedCalls[0]!.body.input.length, 3, 'the repeated text is embedded once');

    const question = 'Which animal lives with Ann?';
    const without = index.search(question, { scope: 'c:1', limit: 3 });
    assert.ok(!without.some((r) => r.sourceMessageIds.includes('m1')), 'no shared word: text search alone does not find it');
    const vector = await embedder.embedQuery(question);
    assert.ok(vector, 'the question is embedded');
    const withVec = index.search(question, { scope: 'c:1', limit: 3, vector });
    assert.equal(withVec[0]?.sourceMessageIds[0], 'm1', JSON.stringify(withVec.map((r) => r.content)));
    assert.deepEqual(index.search(question, { scope: 'c:2', limit: 3, vector }), [], 'vectors respect the chat scope too');
    index.close();
  } finally {
    await llm.close();
    await ws.cleanup();
  }
});

test('a corrected fact is embedded too, a memory embedded again replaces its vector, and a failed store is logged without stopping later ones', async () => {
  const llm = await startFakeLlm(embeddings);
  const ws = await tempDir();
  const logs = captureLog();
  try {
    const config = testConfig({ OPENAI_BASE_URL: llm.url, WORKSPACE_DIR: ws.dir });
    const index = new SqliteMemoryIndex(path.join(ws.dir, 'memory.db'), silentLogger());
    const embedder = new Embedder(new LlmClient(config, silentLogger()), index, 'toy-embed', DIMS, logs.log);
    embedder.init();
    const tools = createMemoryIndexTools(index, new FileMemoryService(ws.dir, 'chat'), embedder);
    const tool = (name: string) => tools.find((t) => t.name === name)!;
    const ctx: ToolContext = {
      chat: { channel: 'test', chatId: '1', group: false, manages: true },
      conversationId: 'conv-1',
      log: silentLogger(),
      signal: new AbortController().signal,
    };

    const saved = await tool('remember_fact').execute({ fact: 'Ann plays the cello on Sundays' }, ctx);
    const oldId = /Saved as (fact_[0-9a-f]+)/.exec(saved)?.[1];
    assert.ok(oldId, saved);
    const corrected = await tool('correct_fact').execute({ id: oldId, new_content: 'Ann adopted a kitten called Pepper' }, ctx);
    const newId = /(fact_[0-9a-f]+) saved/.exec(corrected)?.[1];
    assert.ok(newId, corrected);
    await embedder.flush();

    // "Which animal…" shares no word with the corrected fact: only its vector can find it.
    const question = 'Which animal lives there?';
    const vector = await embedder.embedQuery(question);
    const hits = index.search(question, { scope: 'test:1', limit: 3, vector });
    assert.equal(hits[0]?.id, newId, JSON.stringify(hits.map((h) => h.content)));

    // The same memory embedded again (vec0 refuses INSERT OR REPLACE on a key it holds).
    embedder.enqueue(newId, 'Ann adopted a kitten called Pepper');
    await embedder.flush();
    assert.equal(index.search(question, { scope: 'test:1', limit: 3, vector })[0]?.id, newId);
    assert.ok(!logs.text().includes('storing embeddings failed'), logs.text());

    // The vector table gone behind the embedder's back: that batch is logged, the next one lands.
    index.vectors!.drop();
    embedder.enqueue(newId, 'Ann adopted a kitten called Pepper');
    await embedder.flush();
    assert.match(logs.text(), /storing embeddings failed/);
    index.vectors!.create(DIMS);
    const ingest = new IndexingService(index, embedder);
    ingest.ingestMessage({
      content: 'Our puppy chewed the sofa',
      role: 'user',
      speaker: 'Ann',
      sessionId: 's1',
      scope: 'test:1',
      eventTime: new Date(2026, 0, 5),
      sourceMessageId: 'm5',
    });
    await embedder.flush();
    const after = index.search('Which animal lives there?', { scope: 'test:1', limit: 3, vector });
    assert.ok(
      after.some((h) => h.sourceMessageIds.includes('m5')),
      'embeddings after the failure still land',
    );
    index.close();
  } finally {
    await llm.close();
    await ws.cleanup();
  }
});

/** Unit vectors at a known cosine to the question's [1, 0, 0, 0]. */
const AT_ANGLE: Record<string, number[]> = {
  'Ann repaired the bicycle chain': [0.8, 0.6, 0, 0],
  'Ann baked bread for the neighbours': [0.3, Math.sqrt(1 - 0.09), 0, 0],
};
const angled: Responder = (req) => {
  const inputs: string[] = Array.isArray(req.body.input) ? req.body.input : [req.body.input];
  return {
    json: {
      object: 'list',
      model: 'toy',
      data: inputs.map((s, index) => ({ object: 'embedding', index, embedding: AT_ANGLE[s] ?? [0, 0, 0, 1] })),
      usage: { prompt_tokens: 1, total_tokens: 1 },
    },
  };
};

for (const table of ['new (cosine)', 'made before cosine (L2)'] as const) {
  test(`a hit's similarity is the cosine of the embeddings, in a ${table} vector table`, async () => {
    const llm = await startFakeLlm(angled);
    const ws = await tempDir();
    const logs = captureLog();
    try {
      const config = testConfig({ OPENAI_BASE_URL: llm.url, WORKSPACE_DIR: ws.dir });
      const index = new SqliteMemoryIndex(path.join(ws.dir, 'memory.db'), silentLogger());
      // What Embedder.init created until 2026-11-23: vec0's default distance, L2.
      if (table !== 'new (cosine)') index.database!.exec(`CREATE VIRTUAL TABLE vec_memories USING vec0(memory_id TEXT PRIMARY KEY, embedding float[${DIMS}])`);
      const embedder = new Embedder(new LlmClient(config, silentLogger()), index, 'toy-embed', DIMS, logs.log);
      embedder.init();
      assert.deepEqual(index.vectors!.layout(), table === 'new (cosine)' ? { metric: 'cosine', partitioned: true } : { metric: 'l2', partitioned: false });
      assert.equal(/reindex --embeddings/.test(logs.text()), table !== 'new (cosine)', 'an old table is pointed out once, with the way to rebuild it');
      const ingest = new IndexingService(index, embedder);
      Object.keys(AT_ANGLE).forEach((content, i) =>
        ingest.ingestMessage({
          content,
          role: 'user',
          speaker: 'Ann',
          sessionId: 's1',
          scope: 'c:1',
          eventTime: new Date(2026, 0, i + 1),
          sourceMessageId: `m${i}`,
        }),
      );
      await embedder.flush();
      const hits = index.search('what happened lately', { scope: 'c:1', limit: 5, vector: new Float32Array([1, 0, 0, 0]) });
      const sim = Object.fromEntries(hits.map((h) => [h.content, h.similarity ?? 0]));
      // Reading 1 − L2 distance as the similarity gave 0.37 and 0: every pair below cosine 0.5 counted nothing.
      assert.ok(Math.abs(sim['Ann repaired the bicycle chain']! - 0.8) < 1e-3, JSON.stringify(sim));
      assert.ok(Math.abs(sim['Ann baked bread for the neighbours']! - 0.3) < 1e-3, JSON.stringify(sim));
      if (table !== 'new (cosine)') {
        // What the log line advises (`memory reindex --embeddings`): rebuilt as the new kind, from the cache.
        const before = llm.requests.filter((r) => r.path.endsWith('/embeddings')).length;
        embedder.reset();
        for (const h of hits) embedder.enqueue(h.id, h.content);
        await embedder.flush();
        assert.deepEqual(index.vectors!.layout(), { metric: 'cosine', partitioned: true });
        assert.equal(llm.requests.filter((r) => r.path.endsWith('/embeddings')).length, before, 'no text embedded again');
        const again = index.search('what happened lately', { scope: 'c:1', limit: 5, vector: new Float32Array([1, 0, 0, 0]) });
        assert.deepEqual(
          again.map((h) => Number(h.similarity?.toFixed(3))),
          [0.8, 0.3],
        );
      }
      index.close();
    } finally {
      await llm.close();
      await ws.cleanup();
    }
  });
}

/** Chat A: 200 messages pointing almost where the question does; chat B: one, at cosine 0.5. */
const crowded: Responder = (req) => {
  const inputs: string[] = Array.isArray(req.body.input) ? req.body.input : [req.body.input];
  const vec = (s: string) => (s.startsWith('note ') ? [1, Number(s.slice(5)) / 1000, 0, 0] : [0.5, Math.sqrt(0.75), 0, 0]);
  return {
    json: {
      object: 'list',
      model: 'toy',
      data: inputs.map((s, index) => ({ object: 'embedding', index, embedding: vec(s) })),
      usage: { prompt_tokens: 1, total_tokens: 1 },
    },
  };
};

/** A file index with the toy embedder on, answered by `responder`; everything closed after `fn`. */
async function withEmbeddings(responder: Responder, fn: (t: { index: SqliteMemoryIndex; embedder: Embedder; dir: string }) => Promise<void>): Promise<void> {
  const llm = await startFakeLlm(responder);
  const ws = await tempDir();
  const index = new SqliteMemoryIndex(path.join(ws.dir, 'memory.db'), silentLogger());
  try {
    const config = testConfig({ OPENAI_BASE_URL: llm.url, WORKSPACE_DIR: ws.dir });
    const embedder = new Embedder(new LlmClient(config, silentLogger()), index, 'toy-embed', DIMS, silentLogger());
    embedder.init();
    await fn({ index, embedder, dir: ws.dir });
  } finally {
    index.close();
    await llm.close();
    await ws.cleanup();
  }
}

test("vector search finds a chat's own memory when another chat holds hundreds of nearer ones (one partition per chat)", () =>
  withEmbeddings(crowded, async ({ index, embedder }) => {
    const ingest = new IndexingService(index, embedder);
    for (let i = 0; i < 200; i++)
      ingest.ingestMessage({
        content: `note ${i}`,
        role: 'user',
        sessionId: 'sa',
        scope: 'c:A',
        eventTime: new Date(2026, 0, 1, 0, i),
        sourceMessageId: `a${i}`,
      });
    ingest.ingestMessage({
      content: 'Bob fixed the roof',
      role: 'user',
      sessionId: 'sb',
      scope: 'c:B',
      eventTime: new Date(2026, 0, 2),
      sourceMessageId: 'b1',
    });
    await embedder.flush();
    // A table of one list for all chats took the 180 nearest of every chat before the chat filter: chat B's one vector was not among them.
    const hits = index.search('what happened lately', { scope: 'c:B', limit: 3, vector: new Float32Array([1, 0, 0, 0]) });
    assert.deepEqual(
      hits.map((h) => [h.content, Number(h.similarity?.toFixed(3))]),
      [['Bob fixed the roof', 0.5]],
    );
  }));

test('during the scrub after a /forget, remember_fact waits instead of dropping the fact, and a held message is embedded once written', () =>
  withEmbeddings(embeddings, async ({ index, embedder, dir }) => {
    const ingest = new IndexingService(index, embedder);
    const tools = createMemoryIndexTools(index, new FileMemoryService(dir, 'chat'), embedder);
    const ctx: ToolContext = {
      chat: { channel: 'test', chatId: '1', group: false, manages: true },
      conversationId: 'conv-1',
      log: silentLogger(),
      signal: new AbortController().signal,
    };
    const scrub = index.scrubFreedSpace();
    assert.equal(
      ingest.ingestMessage({
        content: 'Our puppy chewed the sofa',
        role: 'user',
        speaker: 'Ann',
        sessionId: 's1',
        scope: 'test:1',
        eventTime: new Date(),
        sourceMessageId: 'm1',
      }),
      null,
      'held',
    );
    const saved = await tools.find((t) => t.name === 'remember_fact')!.execute({ fact: 'Ann adopted a kitten called Pepper' }, ctx);
    assert.match(saved, /^Saved as fact_/);
    await scrub;
    await embedder.flush();
    const found = index
      .search('Which animal lives there?', { scope: 'test:1', limit: 5, vector: await embedder.embedQuery('Which animal lives there?') })
      .map((h) => h.content);
    assert.deepEqual(found.sort(), ['Ann adopted a kitten called Pepper', 'Our puppy chewed the sofa']);
  }));

test('a memory forgotten while its text is being embedded leaves no vector of it, in the cache or the vector table', () =>
  withEmbeddings(
    (req, i) => ({ ...(embeddings(req, i) as object), delayMs: 300 }),
    async ({ index, embedder }) => {
      const ingest = new IndexingService(index, embedder);
      const id = ingest.ingestMessage({
        content: 'My locker code is kitten 4471',
        role: 'user',
        speaker: 'Ann',
        sessionId: 's1',
        scope: 'test:1',
        eventTime: new Date(),
        sourceMessageId: 'm1',
      })!;
      const flushing = embedder.flush();
      // /forget while the embedding request is out.
      index.erase!.memoriesAndEntities([{ id, content: 'My locker code is kitten 4471' }], 'test:1', (t) => /4471/.test(t));
      await flushing;
      const db = index.database!;
      assert.equal((db.prepare('SELECT COUNT(*) AS n FROM embedding_cache').get() as { n: number }).n, 0, 'no cached vector of the forgotten text');
      assert.equal((db.prepare('SELECT COUNT(*) AS n FROM vec_memories').get() as { n: number }).n, 0, 'no vector row for it');
    },
  ));
