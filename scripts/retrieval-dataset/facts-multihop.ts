// "multi-hop" questions: the answer needs two messages — either two messages apart in one
// exchange ("My sister is moving next month." … "She got a job in Lisbon.") or in different
// sessions, linked by a name ("my friend Kemi" … weeks later "Kemi is running Berlin").

import type { Ctx, FactOut, Kind, Part, QTemplate } from './types.js';
import { cap, chain, pair, qd } from './kit.js';
import { fill, makeVars, type G } from './named.js';
import { who } from './util.js';

interface MhSpec {
  id: string;
  group?: string;
  g?: G | 'any';
  /** Pick-one lists for {X} and {Y}. */
  xs?: readonly string[];
  ys?: readonly string[];
  /** [user, bot, user, bot] in one session; the two user messages are the evidence. */
  chain?: readonly string[];
  /** Two [user, bot] exchanges in different sessions. */
  split?: readonly [readonly [string, string], readonly [string, string]];
  q: readonly QTemplate[];
  answer: string;
}

function mh(spec: MhSpec): Kind {
  const k: Kind = {
    id: spec.id,
    cat: 'multi-hop',
    plan(c: Ctx): FactOut | null {
      const all = [...(spec.chain ?? []), ...(spec.split ?? []).flat(), ...spec.q.map((q) => q(who(c.p, true))), spec.answer].join(' ');
      const vars = makeVars(c, all, spec);
      const f = (t: string) => fill(t, vars);
      const ta = c.tag(`${spec.id}-a`);
      const tb = c.tag(`${spec.id}-b`);
      const parts: Part[] = [];
      const useChain = spec.chain && (!spec.split || c.r.chance(0.5));
      if (useChain && spec.chain) {
        const s = c.one(0.03, 0.97);
        const p = chain(c, s, spec.chain.map(f).map(cap), { 0: ta, 2: tb });
        const first = p.turns[0];
        if (first) first.text = c.lead(first.text);
        parts.push(p);
      } else if (spec.split) {
        const ss = c.seq(2, 0.02, 0.98, 3);
        if (!ss) return null;
        const [[u1, b1], [u2, b2]] = spec.split;
        parts.push(pair(c, ss[0] ?? 1, f(u1), f(b1), ta), pair(c, ss[1] ?? 1, f(u2), f(b2), tb));
      } else return null;
      const q = spec.q.map(
        (t): QTemplate =>
          (w) =>
            f(t(w)),
      );
      return { parts, qs: [qd('multi-hop', [ta, tb], f(spec.answer), ...q)] };
    },
  };
  if (spec.group) k.group = spec.group;
  return k;
}

export const MULTIHOP_KINDS: readonly Kind[] = [
  mh({
    id: 'sistermove',
    group: 'sister',
    g: 'f',
    chain: [
      'My sister is moving «abroad|away» next month. Still sinking in',
      'Oh wow, big change! Where is she going?',
      'She got a job in {P}, «at a design studio|teaching English|at the university». Mum is pretending to be fine about it',
      "That's exciting for her — and a great excuse to visit.",
    ],
    split: [
      ["My sister {N} is moving away next month, I'm gutted", "That's hard. Is it far?"],
      ['{N} has signed the lease on a flat in {P}, so the move is really happening', "It's real now! You'll have a great place to visit."],
    ],
    q: [(w) => `Where is ${w.poss} sister moving to?`, (w) => `Which city is ${w.poss} sister relocating to?`],
    answer: '{P}',
  }),
  mh({
    id: 'friendbaby',
    g: 'any',
    xs: ['Isla', 'Otto', 'Ada', 'Leo', 'Nell', 'Arlo', 'Iris', 'Ezra'],
    split: [
      ["My friend {N} just had a baby!! Everyone's healthy", 'Congratulations to them! Such lovely news.'],
      ["{N} sent photos — they've called the baby {X}. Tiny fingers", 'Lovely name! Those first photos are always so sweet.'],
    ],
    q: [(w) => `What is the name of ${w.poss} friend's new baby?`, (w) => `What did ${w.poss} friend call the baby?`],
    answer: "{X} ({N}'s baby)",
  }),
  mh({
    id: 'brotherjob',
    group: 'brother',
    g: 'm',
    xs: ['a nurse', 'a paramedic', 'a junior doctor', 'a radiographer'],
    split: [
      ['My brother {N} just started as {X}, so proud of him', "That's brilliant — a really valuable job."],
      ['{N} has a brutal commute now, the hospital is all the way over in {T}', 'Oof. Long shifts plus a long drive is tough.'],
    ],
    chain: [
      'My brother started as {X} this week',
      'Congratulations to him! Is the hospital close to where he lives?',
      "Not at all, it's in {T}, he's driving forty minutes each way",
      "That's a lot on top of long shifts. Hopefully he can move closer.",
    ],
    q: [(w) => `In which town is the hospital where ${w.poss} brother works?`, (w) => `Where does ${w.poss} brother work now?`],
    answer: 'at the hospital in {T}',
  }),
  mh({
    id: 'niecegift',
    xs: ['six', 'seven', 'eight', 'nine'],
    ys: ['a dinosaur fossil kit', 'a telescope', 'a build-your-own volcano set', 'a rock tumbler'],
    chain: [
      'My niece turns {X} on Saturday',
      'Aww! Have you sorted a present?',
      "She's obsessed with science at the moment, so I got her {Y}",
      "Perfect — she'll love that.",
    ],
    q: [(w) => `What present did ${w.subj} get for ${w.prPoss} niece?`, (w) => `What ${w.is} giving ${w.prPoss} niece for her birthday?`],
    answer: '{Y}',
  }),
  mh({
    id: 'dadbirthday',
    xs: ['60th', '65th', '70th'],
    chain: [
      "It's Dad's {X} next week and I'm in charge of dinner",
      'How lovely! Have you picked somewhere?',
      "We're taking him to {R}, he's wanted to go for years",
      "Perfect choice then — he'll be thrilled.",
    ],
    q: [(w) => `Where ${w.is} taking ${w.prPoss} dad for his birthday?`, (w) => `Which restaurant is ${w.poss} father's birthday dinner at?`],
    answer: '{R}',
  }),
  mh({
    id: 'conference',
    split: [
      ["I'm speaking at a conference «in the spring|in a couple of months» — first time ever!", "That's a big deal! What's your talk about?"],
      ["Booked my hotel for the conference. It's in {P} this year, never been", 'Great — a new city is a nice bonus for a work trip.'],
    ],
    q: [(w) => `In which city is the conference where ${w.subj} ${w.third ? 'is' : 'am'} speaking?`, (w) => `Where is the conference ${w.poss} talk is at?`],
    answer: '{P}',
  }),
  mh({
    id: 'newhire',
    group: 'newcol',
    g: 'any',
    split: [
      ['We have a new hire on the team, {N}, started on Monday', 'Nice! How are they settling in?'],
      ["{N} told me {he}'s from {P} originally, moved here last year", 'Interesting — quite a move!'],
    ],
    q: [(w) => `Where is ${w.poss} new colleague from?`, (w) => `What city does the new person on ${w.poss} team come from?`],
    answer: '{P} ({N})',
  }),
  mh({
    id: 'inlaws',
    group: 'partner',
    chain: [
      "My partner's parents are visiting next week",
      'Oh nice! Are they coming from far?',
      "Yeah, they're flying in from {P}. Long trip",
      'Hopefully they can rest up — jet lag is no joke.',
    ],
    q: [(w) => `Where are ${w.poss} partner's parents flying in from?`, (w) => `Where do ${w.poss} in-laws live?`],
    answer: '{P}',
  }),
  mh({
    id: 'neighbourjob',
    group: 'neighbour',
    g: 'any',
    xs: ['an airline pilot', 'a lighthouse keeper', 'a submarine engineer', 'a stunt double'],
    split: [
      ['Had a long chat over the fence with our neighbour {N} today', 'Nice — good neighbours make a huge difference.'],
      ['Turns out {N} used to be {X}! Forty years of stories', 'What a career! That must have been a fascinating chat.'],
    ],
    q: [(w) => `What did ${w.poss} neighbour use to do for a living?`, (w) => `What was ${w.poss} neighbour's old job?`],
    answer: '{X} ({N})',
  }),
  mh({
    id: 'friendmarathon',
    group: 'bestfriend',
    g: 'any',
    split: [
      ['My best friend {N} is staying over this weekend', 'Fun! Any plans?'],
      ["{N} is running the {P} marathon in the autumn, I'm going to cheer", "That's a great reason for a trip!"],
    ],
    q: [(w) => `Which marathon is ${w.poss} best friend running?`, (w) => `What race is ${w.poss} best friend training for?`],
    answer: 'the {P} marathon ({N})',
  }),
  mh({
    id: 'carfault',
    group: 'car-fault',
    xs: ['the clutch', 'the alternator', 'a cracked radiator', 'the starter motor'],
    ys: ['£400', '£600', '£750'],
    chain: [
      'The car broke down on the way to work «this morning|yesterday»',
      'Oh no! Are you ok? Do you know what happened?',
      "Garage just called, it's {X}. {Y}",
      "Ouch. At least it's fixable — and you know what it is now.",
    ],
    q: [(w) => `What was wrong with ${w.poss} car when it broke down?`, (w) => `What did the garage say caused ${w.poss} breakdown?`],
    answer: '{X} ({Y} repair)',
  }),
  mh({
    id: 'mumretire',
    group: 'mum',
    xs: ['a hot-air balloon ride', 'a weekend in a spa hotel', 'a pottery course', 'a new bike'],
    chain: [
      'Mum is retiring at the end of the month after thirty years',
      "That's wonderful! Are you doing something for it?",
      "We've all chipped in for {X}",
      'What a lovely present.',
    ],
    q: [(w) => `What is ${w.poss} mum getting as a retirement present?`, (w) => `What did ${w.poss} family get ${w.prPoss} mother for retiring?`],
    answer: '{X}',
  }),
  mh({
    id: 'houseoffer',
    group: 'street',
    chain: [
      'We put an offer in on a house today!',
      'Exciting! Which one did you go for?',
      'The little terrace on {S} with the green door',
      'Fingers crossed for you!',
    ],
    q: [(w) => `Which street is the house ${w.subj} made an offer on?`, (w) => `Where is the house ${w.subj} ${w.third ? 'is' : 'am'} trying to buy?`],
    answer: '{S}',
  }),
  mh({
    id: 'sisterbaby',
    group: 'sister',
    xs: ['early', 'mid', 'late'],
    chain: [
      "My sister's pregnant!! I'm going to be an {kin}",
      'Congratulations! When is the baby due?',
      "Due {X} {Mon}, she's already picked a pram",
      'Lovely — not long to wait.',
    ],
    q: [(w) => `When is ${w.poss} sister's baby due?`, (w) => `What month is the new baby in ${w.poss} family due?`],
    answer: '{X} {Mon}',
  }),
  mh({
    id: 'bossleaving',
    group: 'manager',
    g: 'any',
    chain: ['My boss is leaving!', "Oh! Do you know who's replacing them?", "{N} from the Leeds office. I've heard good things", 'That sounds promising.'],
    q: [(w) => `Who is replacing ${w.poss} boss?`, (w) => `Who will be ${w.poss} new manager?`],
    answer: '{N}',
  }),
];
