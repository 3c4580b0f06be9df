// "temporal" kinds of their own: something done repeatedly, and the question asks when it
// last happened (evidence: the latest mention only — the earlier ones are near-misses).

import type { Ctx, FactOut, Kind, Part, QTemplate } from './types.js';
import { dateAnswer, pair, pastWhen, qd, type When } from './kit.js';
import { fill } from './named.js';

interface RecurSpec {
  id: string;
  group?: string;
  /** One template per mention, used in order (shuffled); {when} = "yesterday", "on Saturday"... */
  user: readonly string[];
  bot: readonly string[];
  q: readonly QTemplate[];
}

function recur(spec: RecurSpec): Kind {
  const k: Kind = {
    id: spec.id,
    cat: 'temporal',
    plan(c: Ctx): FactOut | null {
      const k = c.r.chance(0.5) ? 3 : 2;
      const ss = c.seq(k, 0.05, 0.98, 5);
      if (!ss) return null;
      const order = c.r.shuffle(spec.user.map((_, i) => i));
      const texts = order.map((i) => spec.user[i] ?? '');
      const bots = order.map((i) => spec.bot[i] ?? 'Nice!');
      const parts: Part[] = [];
      const tags: string[] = [];
      let last: { s: number; w: When } | undefined;
      for (const [i, s] of ss.entries()) {
        let w: When | undefined;
        for (let a = 0; a < 6 && !w; a++) {
          const x = pastWhen(c, s, 0, 2);
          if (c.claim(x.date)) w = x;
        }
        if (!w) return null;
        const tag = c.tag(spec.id);
        tags.push(tag);
        parts.push(pair(c, s, fill(texts[i % texts.length] ?? '', { when: w.phrase }), bots[i % bots.length] ?? 'Nice!', tag));
        last = { s, w };
      }
      const tag = tags[tags.length - 1];
      if (!last || !tag) return null;
      return { parts, qs: [qd('temporal', [tag], dateAnswer(c, last.s, last.w), ...spec.q)] };
    },
  };
  if (spec.group) k.group = spec.group;
  return k;
}

export const TEMPORAL_KINDS: readonly Kind[] = [
  recur({
    id: 'cinema',
    user: [
      'Went to the cinema {when}, saw the new «Pixar|horror|sci-fi» film',
      'Cinema trip {when} — the seats recline now, dangerous',
      'Caught a late showing at the cinema {when}, nearly fell asleep',
    ],
    bot: ['Nice! Was it worth the big screen?', 'Ha, reclining seats are a trap.', 'The late showing struggle is real.'],
    q: [(w) => `When did ${w.subj} last go to the cinema?`, (w) => `What was the date of ${w.poss} most recent cinema trip?`],
  }),
  recur({
    id: 'grandma',
    group: 'grandma',
    user: [
      'Visited Grandma {when}, she beat me at rummy again',
      "Popped in to see Grandma {when}, she's on good form",
      'Took Grandma out for lunch {when}, she ordered two puddings',
    ],
    bot: ['She sounds like a card shark!', "Lovely to hear she's well.", 'Two puddings — a woman who knows what she wants.'],
    q: [(w) => `When did ${w.subj} last visit ${w.prPoss} grandma?`, (w) => `When was the most recent time ${w.subj} saw ${w.prPoss} grandmother?`],
  }),
  recur({
    id: 'lido',
    group: 'swim',
    user: ['Lido swim {when}, absolutely freezing but glorious', 'Did thirty lengths at the lido {when}', 'Dragged myself to the lido {when}, so glad I did'],
    bot: ['Cold water is so good for the mood!', 'Thirty lengths is a solid swim.', 'The hardest part is getting there.'],
    q: [(w) => `When did ${w.subj} last swim at the lido?`, (w) => `What was the date of ${w.poss} latest lido swim?`],
  }),
  recur({
    id: 'market',
    group: 'market',
    user: [
      "Went to the farmers' market {when}, came back with far too much cheese",
      "Farmers' market run {when} — the bread man remembered me",
      "Popped to the farmers' market {when} for eggs and left with a plant",
    ],
    bot: ["There's no such thing as too much cheese.", "You're a regular now!", 'Classic market mission creep.'],
    q: [(w) => `When did ${w.subj} last go to the farmers' market?`, (w) => `What day was ${w.poss} most recent farmers' market trip?`],
  }),
  recur({
    id: 'dadcall',
    group: 'dadcall',
    user: [
      "Long call with Dad {when}, he's building a shed",
      'Rang Dad {when}, the shed is "nearly finished" again',
      'Dad called {when} to show me the shed on video. It has a porch',
    ],
    bot: ['A shed project is a wonderful thing.', 'Sheds are never truly finished.', "A porch! That's a luxury shed."],
    q: [(w) => `When did ${w.subj} last speak to ${w.prPoss} dad?`, (w) => `When was ${w.poss} most recent phone call with ${w.prPoss} father?`],
  }),
  recur({
    id: 'bouldering',
    group: 'gym',
    user: [
      'Went bouldering after work {when}, hands are shredded',
      'Bouldering session {when}, finally topped the purple route',
      'Quick bouldering session {when}, mostly fell off things',
    ],
    bot: ['Shredded hands are a badge of honour.', 'Yes! That must have felt great.', 'Falling off is part of climbing.'],
    q: [(w) => `When did ${w.subj} last go bouldering?`, (w) => `What was the date of ${w.poss} latest climbing session?`],
  }),
];
