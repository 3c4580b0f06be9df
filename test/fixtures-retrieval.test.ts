// Format invariants of the retrieval-evaluation dataset (test/fixtures/retrieval/dataset.json,
// spec: /work/shared/docs/retrieval-eval.md), and that the committed file is exactly what the
// generator produces. Regenerate with: npx tsx scripts/retrieval-dataset/generate.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

interface Message {
  id: string;
  speaker: string;
  role: string;
  text: string;
  timestamp: string;
}
interface Question {
  question: string;
  evidence: string[];
  category: string;
  answer?: string;
}
interface Conversation {
  id: string;
  messages: Message[];
  questions: Question[];
}

const FILE = path.resolve('test/fixtures/retrieval/dataset.json');
const CATEGORIES = ['name', 'date', 'preference-update', 'multi-hop', 'paraphrase', 'temporal', 'entity'];
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;
const DAY = 86_400_000;

const raw = readFileSync(FILE, 'utf8');
const data = JSON.parse(raw) as { conversations: Conversation[] };
const convs = data.conversations;
const allQuestions = convs.flatMap((c) => c.questions);

test('dataset has at least 4 conversations with unique ids and one named user each', () => {
  assert.ok(Array.isArray(convs));
  assert.ok(convs.length >= 4, `${convs.length} conversations`);
  assert.equal(new Set(convs.map((c) => c.id)).size, convs.length, 'conversation ids are unique');
  const users = convs.map((c) => {
    const names = new Set(c.messages.filter((m) => m.role === 'user').map((m) => m.speaker));
    assert.equal(names.size, 1, `${c.id}: exactly one user speaker`);
    return [...names][0];
  });
  assert.equal(new Set(users).size, convs.length, 'a different user in every conversation');
});

test('messages: ids, roles, speakers, text and ISO 8601 timestamps', () => {
  for (const c of convs) {
    assert.ok(c.messages.length >= 350 && c.messages.length <= 600, `${c.id}: ${c.messages.length} messages`);
    const ids = new Set<string>();
    let prev = 0;
    for (const m of c.messages) {
      assert.match(m.id, /^D\d+:\d+$/, `${c.id}: id ${m.id}`);
      assert.ok(!ids.has(m.id), `${c.id}: duplicate id ${m.id}`);
      ids.add(m.id);
      assert.ok(m.role === 'user' || m.role === 'assistant', `${c.id} ${m.id}: role ${m.role}`);
      if (m.role === 'assistant') assert.equal(m.speaker, 'Bot');
      assert.ok(typeof m.speaker === 'string' && m.speaker.length > 0);
      assert.ok(typeof m.text === 'string' && m.text.trim().length > 0, `${c.id} ${m.id}: empty text`);
      assert.match(m.timestamp, ISO, `${c.id} ${m.id}: timestamp ${m.timestamp}`);
      const t = Date.parse(m.timestamp);
      assert.ok(Number.isFinite(t), `${c.id} ${m.id}: unparsable timestamp`);
      assert.ok(t >= prev, `${c.id} ${m.id}: timestamps go backwards`);
      prev = t;
    }
  }
});

test('sessions: bursts of 10–40 messages on one day, spread over 6–10 weeks; roles mostly alternate', () => {
  for (const c of convs) {
    const sessions = new Map<string, Message[]>();
    for (const m of c.messages) {
      const s = m.id.split(':')[0] ?? '';
      sessions.set(s, [...(sessions.get(s) ?? []), m]);
    }
    for (const [s, ms] of sessions) {
      assert.ok(ms.length >= 10 && ms.length <= 40, `${c.id} ${s}: ${ms.length} messages`);
      assert.equal(new Set(ms.map((m) => m.timestamp.slice(0, 10))).size, 1, `${c.id} ${s}: one day`);
      ms.forEach((m, i) => assert.equal(m.id, `${s}:${i + 1}`, `${c.id}: ids number messages within a session`));
    }
    const first = Date.parse(c.messages[0]?.timestamp ?? '');
    const last = Date.parse(c.messages[c.messages.length - 1]?.timestamp ?? '');
    const weeks = (last - first) / (7 * DAY);
    assert.ok(weeks >= 5.9 && weeks <= 10, `${c.id}: spans ${weeks.toFixed(1)} weeks`);
    let same = 0;
    for (let i = 1; i < c.messages.length; i++) if (c.messages[i]?.role === c.messages[i - 1]?.role) same++;
    assert.ok(same / c.messages.length < 0.05, `${c.id}: ${same} consecutive same-role messages`);
  }
});

test('questions: evidence ids exist, categories known, at least 300 in total', () => {
  assert.ok(allQuestions.length >= 300, `${allQuestions.length} questions`);
  for (const c of convs) {
    const byId = new Map(c.messages.map((m) => [m.id, m]));
    const texts = new Set<string>();
    for (const q of c.questions) {
      assert.ok(typeof q.question === 'string' && q.question.trim().length > 0);
      assert.ok(!texts.has(q.question), `${c.id}: duplicate question "${q.question}"`);
      texts.add(q.question);
      assert.ok(CATEGORIES.includes(q.category), `${c.id}: category ${q.category}`);
      assert.ok(Array.isArray(q.evidence) && q.evidence.length > 0, `${c.id}: no evidence for "${q.question}"`);
      assert.equal(new Set(q.evidence).size, q.evidence.length, `${c.id}: repeated evidence id`);
      for (const id of q.evidence) assert.ok(byId.has(id), `${c.id}: evidence ${id} of "${q.question}" does not exist`);
      if (q.category === 'entity') assert.ok(q.evidence.length <= 4, `${c.id}: entity evidence ≤ 4`);
      else for (const id of q.evidence) assert.equal(byId.get(id)?.role, 'user', `${c.id}: ${id} is a user message`);
      if (q.category === 'multi-hop') assert.ok(q.evidence.length >= 2, `${c.id}: multi-hop needs two messages`);
    }
  }
});

test('question mix: every category, 25–35% paraphrase, third and second person', () => {
  const count = (cat: string) => allQuestions.filter((q) => q.category === cat).length;
  for (const cat of CATEGORIES) assert.ok(count(cat) >= 20, `${cat}: ${count(cat)} questions`);
  const share = count('paraphrase') / allQuestions.length;
  assert.ok(share >= 0.25 && share <= 0.35, `paraphrase share ${share.toFixed(3)}`);
  for (const c of convs) {
    const user = c.messages.find((m) => m.role === 'user')?.speaker ?? '';
    const third = c.questions.filter((q) => q.question.includes(user)).length;
    const second = c.questions.filter((q) => /\b(I|my|me)\b/.test(q.question)).length;
    assert.ok(third >= 10 && second >= 10, `${c.id}: ${third} by name, ${second} in second person`);
  }
});

test('the dataset stays small (< 3 MB)', () => {
  assert.ok(Buffer.byteLength(raw) < 3 * 1024 * 1024);
});

test('the committed dataset is exactly what the deterministic generator writes', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'retrieval-dataset-'));
  try {
    const out = path.join(dir, 'dataset.json');
    const res = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/retrieval-dataset/generate.ts', '--out', out], {
      encoding: 'utf8',
    });
    assert.equal(res.status, 0, res.stderr);
    assert.equal(readFileSync(out, 'utf8'), raw, 'regenerate with: npx tsx scripts/retrieval-dataset/generate.ts');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
