// Questions derived from what the fact kinds planted: before/after and "how long between"
// questions over pairs of dated events, and "what do we know about X" questions over named
// entities (with a few follow-up mentions placed in later sessions).

import type { PlanCtx } from './ctx.js';
import type { EntityDef, EventDef, Part, QDraft, QTemplate } from './types.js';
import { dateText, pair, qd } from './kit.js';
import { daysBetween, who, type Who } from './util.js';

export function temporalPairs(c: PlanCtx, events: readonly EventDef[], want: number): QDraft[] {
  const r = c.r;
  const pairs: [EventDef, EventDef][] = [];
  for (let i = 0; i < events.length; i++)
    for (let j = i + 1; j < events.length; j++) {
      const a = events[i];
      const b = events[j];
      if (!a || !b || Math.abs(daysBetween(a.date, b.date)) < 3) continue;
      pairs.push(a.date < b.date ? [a, b] : [b, a]);
    }
  const uses = new Map<string, number>();
  const out: QDraft[] = [];
  const w3 = who(c.p, true);
  for (const [a, b] of r.shuffle(pairs)) {
    if (out.length >= want) break;
    if ((uses.get(a.tag) ?? 0) >= 2 || (uses.get(b.tag) ?? 0) >= 2) continue;
    uses.set(a.tag, (uses.get(a.tag) ?? 0) + 1);
    uses.set(b.tag, (uses.get(b.tag) ?? 0) + 1);
    const days = daysBetween(a.date, b.date);
    const facts = `${a.past(w3)} on ${dateText(a.date)}; ${b.past(w3)} on ${dateText(b.date)}`;
    const form = r.int(0, a.precise && b.precise ? 3 : 1);
    let q: QTemplate[];
    let answer: string;
    if (form === 0) {
      const [x, y] = r.chance(0.5) ? [a, b] : [b, a];
      q = [(w: Who) => `Did ${w.subj} ${x.base(w)} before or after ${w.pr} ${y.past(w)}?`];
      answer = `${x === a ? 'before' : 'after'} (${facts})`;
    } else if (form === 1) {
      const [x, y] = r.chance(0.5) ? [a, b] : [b, a];
      q = [(w: Who) => `What did ${w.subj} do first: ${x.base(w)} or ${y.base(w)}?`, (w: Who) => `Which came first for ${w.obj}: ${x.ger(w)} or ${y.ger(w)}?`];
      answer = `${a.base(w3)} (${facts})`;
    } else if (form === 2) {
      q = [(w: Who) => `How many days after ${a.ger(w)} did ${w.subj} ${b.base(w)}?`];
      answer = `${days} days (${facts})`;
    } else {
      q = [(w: Who) => `How long before ${b.ger(w)} did ${w.subj} ${a.base(w)}?`];
      answer = `${days} days, about ${Math.round(days / 7)} week${Math.round(days / 7) === 1 ? '' : 's'} (${facts})`;
    }
    out.push(qd('temporal', [a.tag, b.tag], answer, ...q));
  }
  return out;
}

/** Replies to follow-up mentions, by the mood of the news. */
const ACKS = {
  bad: ['Oh no! Hopefully it sorts itself out soon.', "Ah, that's a pain.", "Ha, there's always something!", "Oof. Fingers crossed it's short-lived."],
  good: ['Oh lovely!', "That's great news!", 'Ha, brilliant.', 'Aw, love that.', 'How exciting!', 'Well done them!'],
};
const BAD = /\b(lost|overweight|slipped|drilling|sock|chaos|quiet|hard again|send help|mouse|away)\b/i;

/** Entity questions for up to `want` entities (priority ones first), with 1–2 follow-ups each. */
export function entityQuestions(c: PlanCtx, ents: readonly EntityDef[], want: number): { parts: Part[]; qs: QDraft[] } {
  const r = c.r;
  const ordered = [...ents.filter((e) => e.priority), ...r.shuffle(ents.filter((e) => !e.priority))];
  const parts: Part[] = [];
  const qs: QDraft[] = [];
  for (const e of ordered.slice(0, want)) {
    const infos: string[] = [];
    const later = e.after < c.n ? e.after / (c.n - 1) : 1;
    const n = e.after < c.n ? Math.min(e.follow.length, r.int(1, 2)) : 0;
    for (const f of r.sample(e.follow, n)) {
      const s = c.one(later, 1);
      if (s <= e.after) continue;
      parts.push(pair(c, s, f.text, f.reply ?? r.pick(BAD.test(f.text) ? ACKS.bad : ACKS.good), c.tag(`ent-${e.key}`)));
      infos.push(f.info);
    }
    const q = qd('entity', [], [e.about, ...infos].join('; '), ...e.q);
    q.key = e.key;
    qs.push(q);
  }
  return { parts, qs };
}
