/**
 * Scoring of search candidates: one weighted sum of what is known about each message, so the
 * weights can be learned on the tune halves of the dev sets (scripts/tune-search.ts) instead
 * of set by hand. Every signal is general — words, speakers, dates, turn order — and none
 * reads a dataset.
 */
import type { MemoryRow } from '../store/repository.js';

export interface Candidate {
  row: MemoryRow;
  /**
   * The row's rowid, the last tie-break: memory ids are random, so without it equal scores
   * (messages of one batch share a time) came out in a different order on every run.
   */
  rid: number;
  /** BM25 of the message over the best BM25 of the query (0..1). */
  text: number;
  /** BM25 of the message as FTS5 gives it (not normalized). */
  bm25: number;
  /** 1 when the message was written on a date the question names. */
  date: number;
  /** The text score of a message this one follows within two turns (it may answer it). */
  reply: number;
  /** Share of the question's entities the message is linked to (0..1). */
  entity: number;
  /** Cosine similarity of the embeddings (0..1), when vectors are on. */
  vector: number;
  /** BM25 for the words the best hits share (pseudo-relevance feedback), over its best (0..1). */
  prf: number;
  /** 1 when the message holds the kind of thing the question asks for (a time for "when", a place for "where"). */
  shape: number;
}

export interface RankWeights {
  text: number;
  /** Added when the message's speaker is a person the question names. */
  speaker: number;
  /** Drop speaker names from the words searched (they match greetings to that person). */
  speakerTermDropped: boolean;
  date: number;
  /** Added when the message holds what the question asks for: a time for "when…", a place for "where…" (answer-shape.ts). */
  shape: number;
  /** Date credit of a message written the day after a named day (0: none). */
  dateNext: number;
  /** The named speakers' messages of a named day join as candidates even without a shared word. */
  dateSpeaker: boolean;
  reply: number;
  /** How many of the best text hits bring their following turns in. */
  replySeeds: number;
  /** Only a turn by someone else counts as an answer. */
  replyOtherSpeaker: boolean;
  /** Text matches among the turns around the message (a conversation about the subject). */
  context: number;
  /** Turns on each side that count as around. */
  contextWindow: number;
  /** Subtracted when the message is itself a question. */
  question: number;
  entity: number;
  vector: number;
  /** Newest first among the best text hits: a statement made again later wins. */
  recency: number;
  recencyPool: number;
  prf: number;
  /** How many of the best text hits feed the expansion. */
  prfDocs: number;
  /** Longer messages say more: log of the word count, saturating at 64 words. */
  length: number;
  /** Factor for the assistant's own words (memory questions are mostly about the user's). */
  assistant: number;
  /** How many of the best text hits bring the turns around them in as candidates (0: none). */
  aroundSeeds: number;
  /** Turns on each side of such a hit that are brought in. */
  aroundWindow: number;
  /**
   * An assistant turn answering a user turn that matches: this much of the user turn's text
   * score, not scaled down like the assistant's own words (the answer to what was asked).
   */
  pair: number;
  /** Look for the other forms of an irregular verb too ("buy" → "bought"; irregular.ts). */
  irregular: boolean;
  /** Leave out the words that frame a question rather than name its subject (query.ts FRAMING_WORDS). */
  framing: boolean;
  /**
   * Result diversification: subtracted, per hit already ranked above within `diversityWindow`
   * turns of the same session, so one passage cannot fill the whole list when the answer is
   * spread over several days.
   */
  diversity: number;
  diversityWindow: number;
}

/**
 * Learned on the tune halves of realtalk.json, beam-100k.json and the own set by
 * `npx tsx scripts/tune-search.ts … --split tune --ascent`, then on realtalk and beam-100k
 * again with `--floor-weight 10` for the signals of the second pass (docs/BENCHMARKS.md).
 */
export const DEFAULT_WEIGHTS: RankWeights = {
  text: 1,
  speaker: 0.8,
  speakerTermDropped: true,
  date: 0.5,
  shape: 0.2,
  dateNext: 1,
  dateSpeaker: true,
  reply: 0.1,
  replySeeds: 10,
  replyOtherSpeaker: false,
  context: 0.1,
  contextWindow: 5,
  question: 0,
  entity: 0.2,
  vector: 1,
  recency: 0,
  recencyPool: 20,
  prf: 0,
  prfDocs: 5,
  length: 0,
  assistant: 0.3,
  aroundSeeds: 20,
  aroundWindow: 5,
  pair: 0.2,
  framing: true,
  irregular: true,
  diversity: 0,
  diversityWindow: 10,
};

export interface Ranked {
  row: MemoryRow;
  rid: number;
  score: number;
  bm25: number;
  vector: number;
  /** The signals that raised this hit (text, date, reply, context, entity, vector, feedback, recent, speaker): why it ranked. */
  lists: string[];
}

function isQuestion(text: string): boolean {
  return /\?\s*$/.test(text);
}

/** 0..1: the log of the number of words, 1 from 1,024 words on. */
export function lengthPrior(text: string): number {
  let words = 0;
  for (const _ of text.matchAll(/[\p{L}\p{N}]+/gu)) if (++words >= 1024) break;
  return Math.log2(1 + words) / Math.log2(1025);
}

export function rank(cands: Candidate[], speakers: ReadonlySet<string>, w: RankWeights): Ranked[] {
  const context = new Map<Candidate, number>();
  if (w.context !== 0) {
    const bySession = new Map<string, Candidate[]>();
    for (const c of cands) {
      if (c.text <= 0 || c.row.seq === null || !c.row.session_id) continue;
      const list = bySession.get(c.row.session_id) ?? [];
      list.push(c);
      bySession.set(c.row.session_id, list);
    }
    for (const c of cands) {
      if (c.row.seq === null || !c.row.session_id) continue;
      let sum = 0;
      for (const o of bySession.get(c.row.session_id) ?? []) {
        const d = Math.abs(o.row.seq! - c.row.seq);
        if (o !== c && d <= w.contextWindow) sum += o.text * (1 - d / (w.contextWindow + 1));
      }
      context.set(c, Math.min(1, sum));
    }
  }
  const recency = new Map<Candidate, number>();
  if (w.recency !== 0) {
    const pool = cands
      .filter((c) => c.text > 0 && c.row.source_role !== 'assistant')
      .sort((a, b) => b.text - a.text || b.rid - a.rid)
      .slice(0, w.recencyPool)
      .sort((a, b) => b.row.event_time - a.row.event_time);
    pool.forEach((c, i) => recency.set(c, 1 - i / pool.length));
  }
  // The user turn each assistant turn answers: the turn right before it in the same session.
  const asked = new Map<Candidate, number>();
  if (w.pair !== 0) {
    const at = new Map<string, Candidate>();
    for (const c of cands) if (c.row.seq !== null && c.row.session_id) at.set(`${c.row.session_id}\u0000${c.row.seq}`, c);
    for (const c of cands) {
      if (c.row.source_role !== 'assistant' || c.row.seq === null || !c.row.session_id) continue;
      const prev = at.get(`${c.row.session_id}\u0000${c.row.seq - 1}`);
      if (prev && prev.row.source_role !== 'assistant' && prev.text > 0) asked.set(c, prev.text);
    }
  }
  const out: Ranked[] = cands.map((c) => {
    let s =
      w.text * c.text +
      w.date * c.date +
      w.reply * c.reply +
      w.context * (context.get(c) ?? 0) +
      w.entity * c.entity +
      w.vector * c.vector +
      w.prf * c.prf +
      w.shape * c.shape +
      w.recency * (recency.get(c) ?? 0) +
      (w.length !== 0 ? w.length * lengthPrior(c.row.content) : 0);
    if (speakers.size > 0 && c.row.speaker && speakers.has(c.row.speaker)) s += w.speaker;
    if (isQuestion(c.row.content)) s -= w.question;
    if (c.row.source_role === 'assistant') s = s * w.assistant + w.pair * (asked.get(c) ?? 0);
    // A fact's confidence scales its score: a superseded fact (0.3) ranks below its replacement.
    s *= 0.5 + 0.5 * Math.max(0, Math.min(1, c.row.confidence ?? 1));
    const lists = (
      [
        ['text', c.text],
        ['date', w.date * c.date],
        ['reply', w.reply * c.reply],
        ['context', w.context * (context.get(c) ?? 0)],
        ['entity', w.entity * c.entity],
        ['vector', w.vector * c.vector],
        ['feedback', w.prf * c.prf],
        ['shape', w.shape * c.shape],
        ['recent', w.recency * (recency.get(c) ?? 0)],
        ['answer', w.pair * (asked.get(c) ?? 0)],
        ['speaker', speakers.size > 0 && c.row.speaker && speakers.has(c.row.speaker) ? w.speaker : 0],
      ] as Array<[string, number]>
    )
      .filter(([, v]) => v > 0)
      .map(([name]) => name);
    return { row: c.row, rid: c.rid, score: s, bm25: c.bm25, vector: c.vector, lists };
  });
  out.sort((a, b) => b.score - a.score || b.row.event_time - a.row.event_time || b.rid - a.rid);
  return w.diversity > 0 ? diversify(out, w.diversity, w.diversityWindow) : out;
}

/** How many of the best hits are re-ordered for diversity (the rest keep their order below them). */
const DIVERSE_POOL = 60;

/**
 * Greedy re-ranking (in the manner of maximal marginal relevance): each next hit is the one
 * with the best score less `weight` for every hit already picked near it in its session.
 */
export function diversify(ranked: Ranked[], weight: number, window: number): Ranked[] {
  const pool = ranked.slice(0, DIVERSE_POOL);
  const picked: Ranked[] = [];
  const near = (a: Ranked, b: Ranked) =>
    a.row.session_id !== null && a.row.session_id === b.row.session_id && a.row.seq !== null && b.row.seq !== null && Math.abs(a.row.seq - b.row.seq) <= window;
  while (pool.length > 0) {
    let best = 0;
    let bestScore = -Infinity;
    pool.forEach((c, i) => {
      let s = c.score;
      for (const p of picked) if (near(c, p)) s -= weight;
      if (s > bestScore) [best, bestScore] = [i, s];
    });
    picked.push(pool.splice(best, 1)[0]!);
  }
  return [...picked, ...ranked.slice(DIVERSE_POOL)];
}
