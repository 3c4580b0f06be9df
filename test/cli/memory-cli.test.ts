/**
 * `npm run memory -- …` as a user runs it: `eval` on a dataset in the shared format prints the
 * JSON line of shared/docs/retrieval-eval.md, `--k` changes the cut-offs, bad arguments exit 2
 * with a usage line, and `search --json` prints a JSON array from one chat's memory.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SqliteMemoryIndex } from '../../src/index/sqlite-memory-index.js';
import { silentLogger } from '../../src/core/log.js';
import { tempDir } from '../helpers/workspace.js';
import { memoryCli } from '../helpers/child.js';

const msg = (id: string, speaker: string, text: string, timestamp: string) => ({
  id,
  speaker,
  role: speaker === 'Bot' ? 'assistant' : 'user',
  text,
  timestamp,
});

const DATASET = {
  conversations: [
    {
      id: 'c1',
      messages: [
        msg('D1:1', 'Ann', 'I adopted a cat called Miso last week', '2024-05-08T13:56:00Z'),
        msg('D1:2', 'Bot', 'Congratulations! How is Miso settling in?', '2024-05-08T13:56:00Z'),
        msg('D1:3', 'Ann', 'She hides under the sofa most of the day', '2024-05-08T13:57:00Z'),
        msg('D1:4', 'Bot', 'Give her time, cats need a few days.', '2024-05-08T13:57:00Z'),
        msg('D2:1', 'Ann', 'My sister Dana is visiting from Lisbon in June', '2024-05-20T09:00:00Z'),
        msg('D2:2', 'Bot', 'How lovely, what are your plans?', '2024-05-20T09:00:00Z'),
        msg('D2:3', 'Ann', 'We will hike in the Alps together', '2024-05-20T09:01:00Z'),
      ],
      questions: [
        { question: "What is the name of Ann's cat?", evidence: ['D1:1'], category: 1 },
        { question: 'Where does Dana live?', evidence: ['D2:1'], category: 1 },
        { question: 'Where will Ann and her sister hike?', evidence: ['D2:3'], category: 2 },
      ],
    },
    {
      id: 'c2',
      messages: [
        msg('D1:1', 'Tom', 'I started learning the piano in January', '2024-02-01T18:00:00Z'),
        msg('D1:2', 'Bot', 'Great choice!', '2024-02-01T18:00:00Z'),
        msg('D1:3', 'Tom', 'My teacher is called Mr Okafor', '2024-02-01T18:01:00Z'),
      ],
      questions: [
        { question: 'Which instrument is Tom learning?', evidence: ['D1:1'], category: 1 },
        { question: 'Who teaches Tom the piano?', evidence: ['D1:1', 'D1:3'], category: 'multi' },
      ],
    },
  ],
};

async function withDataset<T>(fn: (file: string, dir: string) => Promise<T>): Promise<T> {
  const ws = await tempDir();
  try {
    const file = path.join(ws.dir, 'dataset.json');
    await writeFile(file, JSON.stringify(DATASET));
    return await fn(file, ws.dir);
  } finally {
    await ws.cleanup();
  }
}

test('eval --json prints exactly the documented keys, recall in [0, 1], growing with k', async () => {
  await withDataset(async (file, dir) => {
    const [json, plain] = await Promise.all([memoryCli(['eval', file, '--json'], { WORKSPACE_DIR: dir }), memoryCli(['eval', file], { WORKSPACE_DIR: dir })]);
    assert.equal(json.code, 0, json.stderr);
    const lines = json.stdout.trim().split('\n');
    assert.equal(lines.length, 1, 'one JSON line on stdout');
    const out = JSON.parse(lines[0]!) as Record<string, number>;
    assert.deepEqual(Object.keys(out), ['questions', 'recall@5', 'recall@10', 'recall@20', 'p50_ms', 'p95_ms']);
    assert.equal(out.questions, 5);
    for (const k of ['recall@5', 'recall@10', 'recall@20']) {
      assert.equal(typeof out[k], 'number');
      assert.ok(out[k]! >= 0 && out[k]! <= 1, `${k} = ${out[k]}`);
    }
    assert.ok(out['recall@5']! <= out['recall@10']! && out['recall@10']! <= out['recall@20']!);
    // Tiny conversations whose questions share a word with their evidence: all found in 20.
    assert.equal(out['recall@20'], 1);
    assert.ok(out.p50_ms! >= 0 && out.p95_ms! >= out.p50_ms!);
    // Nothing of the eval reaches the workspace's own memory.
    assert.equal(existsSync(path.join(dir, 'memory.db')), false);

    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, /5 questions/);
    assert.match(plain.stdout, /^recall@5: \d+(\.\d)?%$/m);
    assert.match(plain.stdout, /^search latency p50 [\d.]+ ms, p95 [\d.]+ ms$/m);
  });
});

test('eval --k 1,3 changes the keys', async () => {
  await withDataset(async (file) => {
    const r = await memoryCli(['eval', file, '--k', '1,3', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as Record<string, number>;
    assert.deepEqual(Object.keys(out), ['questions', 'recall@1', 'recall@3', 'p50_ms', 'p95_ms']);
    assert.ok(out['recall@1']! >= 0 && out['recall@1']! <= out['recall@3']! && out['recall@3']! <= 1);
  });
});

test('eval --compare: baseline beside default from one run, per category, with latency and what # Relevant Memory injects', async () => {
  await withDataset(async (file) => {
    const [table, json] = await Promise.all([memoryCli(['eval', file, file, '--compare']), memoryCli(['eval', file, '--compare', '--json'])]);
    assert.equal(table.code, 0, table.stderr);
    assert.equal(
      table.stdout.match(/^\| .*, all conversations \| questions \| baseline @5 \| baseline @10 \| baseline @20 \| default @5/gm)?.length,
      2,
      'one table per file',
    );
    assert.match(table.stdout, /^\| \*\*all\*\* \| 5 \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \([+−][\d.]+\)/m);
    assert.match(table.stdout, /^\| search latency \| \| p50 [\d.]+ ms, p95 [\d.]+ ms/m);
    assert.match(table.stdout, /- with the bar: +\d+ lines, \d+ evidence/);
    assert.equal(json.code, 0, json.stderr);
    const out = JSON.parse(json.stdout) as { split: string; baseline: Record<string, unknown>; default: Record<string, unknown>; relevantMemory: unknown };
    assert.equal(out.split, 'all');
    for (const side of [out.baseline, out.default]) assert.equal(side.questions, 5);
    assert.ok(out.relevantMemory);
  });
});

test('eval and unknown commands: bad arguments exit 2 with a usage line', async () => {
  await withDataset(async (file, dir) => {
    const env = { WORKSPACE_DIR: dir };
    const cases: Array<{ args: string[]; err: RegExp }> = [
      { args: ['eval'], err: /usage: npm run memory -- <command>[\s\S]*eval <dataset\.json>/ },
      { args: ['eval', file, '--k', 'abc', '--json'], err: /--k takes whole numbers like 5,10,20/ },
      { args: ['eval', file, '--mode', 'fuzzy'], err: /--mode hybrid or bm25/ },
      { args: ['eval', file, '--split', 'half'], err: /--split all, tune or report/ },
      { args: ['frobnicate'], err: /usage: npm run memory -- <command>/ },
    ];
    const results = await Promise.all(cases.map((c) => memoryCli(c.args, env)));
    results.forEach((r, i) => {
      assert.equal(r.code, 2, `${cases[i]!.args.join(' ')}: exit ${r.code} ${r.stderr}`);
      assert.match(r.stderr, cases[i]!.err, cases[i]!.args.join(' '));
      assert.equal(r.stdout, '', 'nothing on stdout');
    });
  });
});

test('search and run-job: a missing query or an unknown job exits 2 with a usage line', async () => {
  const ws = await tempDir();
  try {
    const env = { WORKSPACE_DIR: ws.dir };
    const [noQuery, badJob] = await Promise.all([memoryCli(['search', '--json'], env), memoryCli(['run-job', 'nap'], env)]);
    for (const [name, r] of [
      ['search', noQuery],
      ['run-job nap', badJob],
    ] as const) {
      assert.match(r.stderr, /search needs a query|run-job takes one of: enrichment, consolidation, decay, reflection/, name);
      assert.equal(r.code, 2, `${name}: exit ${r.code}`);
    }
  } finally {
    await ws.cleanup();
  }
});

test('search "<q>" --chat test:1 --json prints a JSON array of that chat\'s results', async () => {
  const ws = await tempDir();
  try {
    const index = new SqliteMemoryIndex(path.join(ws.dir, 'memory.db'), silentLogger());
    const base = { role: 'user' as const, speaker: 'Ann', sessionId: 'conv-1', eventTime: new Date('2026-01-02T10:00:00Z') };
    index.saveEpisode({ ...base, scope: 'test:1', content: 'My cat is called Miso', sourceMessageId: '501' });
    index.saveEpisode({ ...base, scope: 'test:1', sessionId: 'conv-3', content: 'I like rainy days' });
    index.saveEpisode({ ...base, scope: 'test:2', sessionId: 'conv-2', content: 'My cat is called Felix', sourceMessageId: '777' });
    index.close();
    const env = { WORKSPACE_DIR: ws.dir };
    const [one, none] = await Promise.all([
      memoryCli(['search', 'cat called', '--chat', 'test:1', '--json'], env),
      memoryCli(['search', 'cat called', '--chat', 'test:3', '--json'], env),
    ]);
    assert.equal(one.code, 0, one.stderr);
    const results = JSON.parse(one.stdout) as Array<Record<string, any>>;
    assert.ok(Array.isArray(results));
    assert.deepEqual(
      results.map((r) => r.content),
      ['My cat is called Miso'],
      "not chat 2's Felix, not the unrelated message",
    );
    assert.equal(results[0]!.kind, 'episode');
    assert.equal(results[0]!.speaker, 'Ann');
    assert.equal(results[0]!.date, '2026-01-02T10:00:00.000Z');
    assert.deepEqual(results[0]!.sourceMessageIds, ['501']);
    assert.equal(typeof results[0]!.score, 'number');
    assert.equal(none.code, 0, none.stderr);
    assert.deepEqual(JSON.parse(none.stdout), []);
  } finally {
    await ws.cleanup();
  }
});
