// Builds the retrieval-evaluation dataset (format: /work/shared/docs/retrieval-eval.md) and
// writes test/fixtures/retrieval/dataset.json. Deterministic: a seeded PRNG per persona,
// no network, no dependencies. Run: npx tsx scripts/retrieval-dataset/generate.ts [--out file.json]

import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { assemble, type Message, type Planted } from './assemble.js';
import { fillerCorpus, makeCtx, makeTimeline, occursIn } from './ctx.js';
import { entityQuestions, temporalPairs } from './derive.js';
import { DATE_KINDS } from './facts-dates.js';
import { MULTIHOP_KINDS } from './facts-multihop.js';
import { NAME_KINDS } from './facts-names.js';
import { PARA_KINDS_1 } from './facts-para1.js';
import { PARA_KINDS_2 } from './facts-para2.js';
import { PREF_KINDS } from './facts-prefs.js';
import { TEMPORAL_KINDS } from './facts-temporal.js';
import { PERSONAS, type PersonaSetup } from './personas.js';
import type { EntityDef, EventDef, Kind, QDraft } from './types.js';
import { cap, daysBetween, Rng, who } from './util.js';

export interface Question {
  question: string;
  evidence: string[];
  category: string;
  answer: string;
}
export interface Conversation {
  id: string;
  messages: Message[];
  questions: Question[];
}
interface Built {
  conv: Conversation;
  /** Messages that carry or surround planted facts (the rest is filler). */
  planted: number;
}

/** Questions per conversation and category. */
const QUOTA: Record<string, number> = {
  'preference-update': 7,
  'multi-hop': 8,
  date: 9,
  name: 12,
  paraphrase: 23,
  temporal: 7,
  entity: 7,
};
/** Planning order: kinds that need several well-spaced sessions go first. */
const PLAN: readonly [string, readonly Kind[], number][] = [
  ['date', DATE_KINDS.filter((k) => k.id === 'trip'), 1], // first: the trip blocks its days for everything else
  ['preference-update', PREF_KINDS, QUOTA['preference-update'] ?? 0],
  ['multi-hop', MULTIHOP_KINDS, QUOTA['multi-hop'] ?? 0],
  ['date', DATE_KINDS.filter((k) => k.id !== 'trip'), QUOTA.date ?? 0],
  ['name', NAME_KINDS, QUOTA.name ?? 0],
  ['paraphrase', [...PARA_KINDS_1, ...PARA_KINDS_2], QUOTA.paraphrase ?? 0],
  ['temporal', TEMPORAL_KINDS, 2], // the rest of the temporal quota comes from event pairs
];
const MIN_MESSAGES = 360;
const MAX_MESSAGES = 590;
const ENTITY_MAX_EVIDENCE = 4;

function buildConversation(p: PersonaSetup, seed: number, corpus: string): Built {
  const r = new Rng(seed);
  const sessions = makeTimeline(p, r.fork('timeline'));
  const c = makeCtx(p, sessions, r.fork('plan'), corpus);
  const planted: Planted[] = [];
  const drafts: QDraft[] = [];
  const events: EventDef[] = [];
  const ents: EntityDef[] = [];
  const groups = new Set<string>();
  const count = (cat: string) => drafts.filter((d) => d.cat === cat).length;

  for (const [cat, kinds, want] of PLAN) {
    const list = c.r.shuffle(kinds);
    let added = 0;
    for (const k of list) {
      if ((cat === 'temporal' ? added : count(cat)) >= want) break;
      const gs = (k.group ?? k.id).split(',');
      if (gs.some((g) => groups.has(g))) continue;
      const out = k.plan(c);
      if (!out) continue;
      gs.forEach((g) => groups.add(g));
      for (const part of out.parts) planted.push({ kind: k.id, part });
      drafts.push(...out.qs);
      events.push(...(out.events ?? []));
      ents.push(...(out.entities ?? []));
      added += out.qs.filter((q) => q.cat === cat).length;
    }
  }
  drafts.push(...temporalPairs(c, events, (QUOTA.temporal ?? 0) - count('temporal')));
  const ent = entityQuestions(c, ents, QUOTA.entity ?? 0);
  for (const part of ent.parts) planted.push({ kind: 'entity', part });
  drafts.push(...ent.qs);

  const { messages, ids, planted: plantedIds } = assemble(p, sessions, planted, c, r.fork('assemble'));
  if (messages.length < MIN_MESSAGES || messages.length > MAX_MESSAGES) throw new Error(`${messages.length} messages`);
  const byId = new Map(messages.map((m) => [m.id, m]));
  const pos = new Map(messages.map((m, i) => [m.id, i]));

  const qr = r.fork('questions');
  const seen = new Set<string>();
  const questions: Question[] = [];
  for (const d of drafts) {
    let evidence: string[];
    if (d.key) {
      const key = d.key;
      const hits = messages.filter((m) => occursIn(m.text.toLowerCase(), key));
      const stray = hits.find((m) => !plantedIds.has(m.id));
      if (stray) throw new Error(`entity ${key} also occurs in filler ${stray.id}`);
      const chosen = [...hits.filter((m) => m.role === 'user'), ...hits.filter((m) => m.role === 'assistant')];
      evidence = chosen
        .slice(0, ENTITY_MAX_EVIDENCE)
        .map((m) => m.id)
        .sort((a, b) => (pos.get(a) ?? 0) - (pos.get(b) ?? 0));
    } else {
      evidence = d.ev.map((tag) => {
        const id = ids.get(tag);
        if (!id) throw new Error(`unresolved evidence tag ${tag}`);
        if (byId.get(id)?.role !== 'user') throw new Error(`evidence ${id} is not a user message`);
        return id;
      });
    }
    evidence.sort((a, b) => (pos.get(a) ?? 0) - (pos.get(b) ?? 0));
    if (evidence.length === 0) throw new Error(`no evidence for ${d.cat} question (${d.answer})`);
    if (d.cat === 'name' && !evidence.some((id) => occursIn(byId.get(id)?.text.toLowerCase() ?? '', d.answer)))
      throw new Error(`name answer ${d.answer} not in its evidence`);
    // Third person by name or second person; avoid repeating a question text.
    const third = qr.chance(0.55);
    const options = qr.shuffle(d.q).flatMap((q) => [third, !third].map((t) => cap(q(who(p, t)))));
    const text = options.find((t) => !seen.has(t));
    if (!text) continue;
    seen.add(text);
    questions.push({ question: text, evidence, category: d.cat, answer: d.answer });
  }
  return { conv: { id: p.id, messages, questions }, planted: plantedIds.size };
}

function build(p: PersonaSetup, corpus: string): Built {
  let last: unknown;
  for (let attempt = 0; attempt < 30; attempt++) {
    try {
      return buildConversation(p, p.seed + attempt * 7919, corpus);
    } catch (e) {
      last = e;
      if (process.env.DATASET_DEBUG) console.error(`${p.id} attempt ${attempt}: ${String(e)}`);
    }
  }
  throw new Error(`could not build ${p.id}: ${String(last)}`);
}

/** Pretty enough to read and diff: one message / question per line. */
function serialise(convs: readonly Conversation[]): string {
  const lines: string[] = ['{', '  "conversations": ['];
  convs.forEach((c, ci) => {
    lines.push('    {', `      "id": ${JSON.stringify(c.id)},`, '      "messages": [');
    c.messages.forEach((m, i) => lines.push(`        ${JSON.stringify(m)}${i < c.messages.length - 1 ? ',' : ''}`));
    lines.push('      ],', '      "questions": [');
    c.questions.forEach((q, i) => lines.push(`        ${JSON.stringify(q)}${i < c.questions.length - 1 ? ',' : ''}`));
    lines.push('      ]', `    }${ci < convs.length - 1 ? ',' : ''}`);
  });
  lines.push('  ]', '}', '');
  return lines.join('\n');
}

function main(): void {
  const corpus = fillerCorpus();
  const built = PERSONAS.map((p) => build(p, corpus));
  const convs = built.map((b) => b.conv);
  const i = process.argv.indexOf('--out');
  const out =
    i > 0 && process.argv[i + 1]
      ? path.resolve(process.argv[i + 1] ?? '')
      : path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../test/fixtures/retrieval/dataset.json');
  mkdirSync(path.dirname(out), { recursive: true });
  const json = serialise(convs);
  JSON.parse(json); // sanity
  writeFileSync(out, json);

  const cats = new Map<string, number>();
  console.log(`wrote ${path.relative(process.cwd(), out)} (${(json.length / 1024).toFixed(0)} KB)`);
  console.log(`conversations: ${convs.length}`);
  for (const { conv: c, planted } of built) {
    const first = c.messages[0]?.timestamp ?? '';
    const last = c.messages[c.messages.length - 1]?.timestamp ?? '';
    const sessions = new Set(c.messages.map((m) => m.id.split(':')[0])).size;
    const days = daysBetween(new Date(first.slice(0, 10)), new Date(last.slice(0, 10)));
    const speaker = c.messages.find((m) => m.role === 'user')?.speaker ?? '?';
    console.log(
      `  ${c.id} (${speaker}): ${c.messages.length} messages, ${sessions} sessions over ${days} days, ${c.questions.length} questions, ${(100 - (100 * planted) / c.messages.length).toFixed(0)}% filler`,
    );
    for (const q of c.questions) cats.set(q.category, (cats.get(q.category) ?? 0) + 1);
  }
  const total = [...cats.values()].reduce((a, b) => a + b, 0);
  console.log(`questions: ${total}`);
  for (const [cat, n] of [...cats].sort((a, b) => b[1] - a[1]))
    console.log(`  ${cat.padEnd(18)} ${String(n).padStart(4)}  (${((100 * n) / total).toFixed(1)}%)`);
}

main();
