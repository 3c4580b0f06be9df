/**
 * Hybrid search over the index (seed 003 "Search"), always inside one scope. Candidates come
 * from stemmed BM25 over this scope's words (fts.ts), messages written on a date the question
 * names, the replies to the best text hits and the turns around them, entity links and vectors
 * (when embeddings are on);
 * each candidate is then scored by rank.ts from what is known about it — how well its words
 * match, whether its speaker is the person the question names, whether it was said on that
 * date, whether it answers a message that matches, whether the turns around it match too.
 *
 * The lists are read by candidates.ts; the shapes asked and answered are in result.ts.
 */
import type { Db } from '../store/db.js';
import type { MemoryRow } from '../store/repository.js';
import { analyze } from '../store/query.js';
import { datesIn } from './dates.js';
import { askedFor, holds } from './answer-shape.js';
import { withOtherForms } from './irregular.js';
import { DEFAULT_WEIGHTS, rank, type Candidate } from './rank.js';
import { SpeakerNames } from './speakers.js';
import { SqliteCandidates } from './candidates.js';
import { toResult, type Row, type SearchOptions, type SearchResult } from './result.js';
import { STALE_WEIGHT, Superseded, asksAboutBefore, correctedAt, rankBelow } from './superseded.js';
import type { Correction } from '../store/facts.js';

/** How many of the best hits are checked for old values (the rest are far below any limit asked). */
const STALE_POOL = 100;

/** Text matches read per query: enough for the replies and neighbours of the best ones. */
const TEXT_CANDIDATES = 100;

export class HybridSearch {
  private readonly read: SqliteCandidates;
  readonly speakers: SpeakerNames;

  constructor(db: Db, vectorTable: () => boolean) {
    this.read = new SqliteCandidates(db, vectorTable);
    this.speakers = new SpeakerNames(db, (scope, word) => this.read.wordUses(scope, word));
  }

  /**
   * The eval's baseline (shared/datasets/README.md), nothing else: porter-stemmed FTS5 over
   * single messages, the question's words minus function words OR-ed, `ORDER BY bm25`. The
   * scoped table is that index (the prefix only keeps chats apart; df counts this chat's
   * messages).
   */
  bm25Only(query: string, opts: SearchOptions): MemoryRow[] {
    return this.read.bm25Only(query, opts);
  }

  /**
   * Pseudo-relevance feedback: words the best text hits share (in at least two of them), not
   * in the query, weighted by how rare they are in this chat.
   */
  private feedbackTerms(top: Candidate[], query: Set<string>, scope: string): string[] {
    if (top.length < 2) return [];
    const docs = new Map<string, number>();
    for (const c of top) for (const t of new Set(analyze(c.row.content).terms)) if (!query.has(t) && !/^\d+$/.test(t)) docs.set(t, (docs.get(t) ?? 0) + 1);
    const shared = [...docs]
      .filter(([, n]) => n >= 2)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 20);
    const scored = shared.flatMap(([t, n]) => {
      const m = this.read.matchQuery(scope, [t]);
      if (!m) return [];
      const df = this.read.docCount(m, 2000);
      return [{ t, s: n * Math.log(1 + 2000 / (1 + df)) }];
    });
    return scored
      .sort((a, b) => b.s - a.s)
      .slice(0, 5)
      .map((x) => x.t);
  }

  /**
   * `corrections`: the scope's corrected facts (FactTables.corrections). A hit stating an old
   * value is marked with the current one and ranked below it; a question about before also
   * finds the retired facts themselves and keeps the old value where its match puts it.
   */
  search(query: string, optsIn: SearchOptions, corrections: readonly Correction[] = []): SearchResult[] {
    const old = new Superseded(corrections);
    const before = !old.empty && asksAboutBefore(query);
    const opts = before ? { ...optsIn, superseded: corrections.map((c) => c.id) } : optsIn;
    const limit = opts.limit ?? 10;
    const w = opts.weights ?? DEFAULT_WEIGHTS;
    const q = analyze(query, w.framing);
    // A name in the question that is one of this chat's speakers says whose messages are
    // wanted; as a word it mostly matches the other person greeting them ("thanks, Ann!").
    const named = this.speakers.named(opts.scope, query);
    const terms =
      w.speakerTermDropped && named.terms.size > 0 && q.terms.some((t) => !named.terms.has(t)) ? q.terms.filter((t) => !named.terms.has(t)) : q.terms;
    // "what did Ann buy?" also looks for "bought": stemming does not join an irregular verb's forms.
    const searched = w.irregular ? withOtherForms(query, terms) : terms;
    const match = this.read.matchQuery(opts.scope, searched);
    const cands = new Map<string, Candidate>();
    const get = (row: Row): Candidate => {
      let c = cands.get(row.id);
      if (!c) {
        c = { row, rid: row.rid, text: 0, bm25: 0, date: 0, reply: 0, entity: 0, vector: 0, prf: 0, shape: 0 };
        cands.set(row.id, c);
      }
      return c;
    };
    let best = 0;
    if (match) {
      const text = this.read.text(match, opts, TEXT_CANDIDATES);
      best = text[0]?.score ?? 0;
      for (const t of text) Object.assign(get(t.row), { text: t.score / best, bm25: t.score });
      const dates = datesIn(query, () => this.read.years(opts.scope));
      if (dates.length > 0 && w.date !== 0) {
        for (const d of this.read.onDates(match, dates, named.speakers, w, opts)) {
          const c = get(d.row);
          if (d.score > 0) c.text = Math.max(c.text, d.score / Math.max(best, d.score));
          c.bm25 = Math.max(c.bm25, d.score);
          c.date = Math.max(c.date, d.on);
        }
      }
      // The next two turns of the best hits (their answers) and the turns around them, read once.
      const replySeeds = w.reply !== 0 ? w.replySeeds : 0;
      const aroundSeeds = Math.max(0, w.aroundSeeds);
      const seeds = text.slice(0, Math.max(replySeeds, aroundSeeds)).map((t) => t.row);
      const near = this.read.turnsAround(
        seeds,
        aroundSeeds > 0 ? w.aroundWindow : 0,
        Math.max(replySeeds > 0 ? 2 : 0, aroundSeeds > 0 ? w.aroundWindow : 0),
        opts,
      );
      for (const after of seeds.slice(0, replySeeds)) {
        for (const row of near(after, 0, 2)) {
          if (row.speaker === after.speaker && w.replyOtherSpeaker) continue;
          const c = get(row);
          c.reply = Math.max(c.reply, cands.get(after.id)!.text);
        }
      }
      // Document expansion at read time: the turns around the best hits join as candidates;
      // the context signal (text matches among the turns around) then decides where they rank.
      for (const s of seeds.slice(0, aroundSeeds)) for (const row of near(s, w.aroundWindow, w.aroundWindow)) get(row);
    }
    if (match && w.prf !== 0 && best > 0) {
      const expansion = this.feedbackTerms(
        [...cands.values()]
          .filter((c) => c.text > 0)
          .sort((a, b) => b.text - a.text)
          .slice(0, w.prfDocs),
        new Set(terms),
        opts.scope,
      );
      const m2 = expansion.length > 0 ? this.read.matchQuery(opts.scope, expansion) : null;
      if (m2) {
        const hits = this.read.text(m2, opts, TEXT_CANDIDATES);
        const top = hits[0]?.score ?? 1;
        for (const h of hits) get(h.row).prf = h.score / top;
      }
    }
    if (w.entity !== 0) for (const e of this.read.entityHits(q.words, opts)) get(e.row).entity = e.links;
    if (opts.vector) for (const v of this.read.vectorHits(opts.vector, opts)) get(v.row).vector = v.similarity;
    if (cands.size === 0) return [];
    const shape = w.shape !== 0 ? askedFor(query) : undefined;
    if (shape) for (const c of cands.values()) c.shape = holds(shape, c.row.content) ? 1 : 0;
    let ranked = rank([...cands.values()], named.speakers, w);
    const stale = new Map<string, Correction>();
    if (!old.empty) {
      const retired = new Map(corrections.map((c) => [c.id, c]));
      for (const r of ranked.slice(0, STALE_POOL)) {
        // A retired fact (found for a question about before) is its own correction's old value.
        const c = retired.get(r.row.id) ?? old.stated(r.row.content);
        if (c && c.currentId !== r.row.id) stale.set(r.row.id, c);
      }
      if (!before && stale.size > 0) ranked = rankBelow(ranked, (r) => stale.has(r.row.id));
    }
    return ranked.slice(0, limit).map(({ row, score, bm25, vector, lists }) => {
      const c = stale.get(row.id);
      if (!c) return { ...toResult(row, score), match: bm25, similarity: vector, lists };
      // The score it was placed by, so the scores still go down the list.
      const placed = before ? score : score * STALE_WEIGHT;
      return { ...toResult(row, placed), match: bm25, similarity: vector, lists, correctedBy: { id: c.currentId, content: c.current, date: correctedAt(c) } };
    });
  }
}
