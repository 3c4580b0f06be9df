// "preference-update" questions: a preference stated, then changed (once or twice) weeks
// later. The question asks for the current one (evidence: the latest statement); some ask
// about the change itself (evidence: the two statements around it).

import type { Ctx, FactOut, Kind, Part, QDraft, QTemplate } from './types.js';
import { pair, pick2, qd, v } from './kit.js';
import { fill } from './named.js';
import { ABROAD } from './personas.js';
import type { Who } from './util.js';

interface PrefSpec {
  id: string;
  group?: string;
  values: readonly string[];
  /** Use values in the given order (a progression) instead of a random sample. */
  ordered?: boolean;
  /** Values come from a shared pool through ctx.take (unique in the conversation). */
  take?: boolean;
  first: readonly string[];
  firstBot: readonly string[];
  /** {A} old value, {B} new value. */
  change: readonly string[];
  changeBot: readonly string[];
  /** Questions for the current value. */
  now: readonly QTemplate[];
  /** Questions for the previous value; {B} = the value it changed to. */
  before: readonly QTemplate[];
}

function pref(spec: PrefSpec): Kind {
  const k: Kind = {
    id: spec.id,
    cat: 'preference-update',
    plan(c: Ctx): FactOut | null {
      const stages = c.r.chance(0.3) ? 3 : 2;
      const ss = c.seq(stages, 0.03, 0.97, 7);
      if (!ss) return null;
      const vals = spec.take
        ? Array.from({ length: stages }, () => c.take(spec.values))
        : spec.ordered
          ? spec.values.slice(0, stages)
          : c.r.sample(spec.values, stages);
      if (vals.length < stages) return null;
      const tags = ss.map(() => c.tag(spec.id));
      const parts: Part[] = ss.map((s, i) => {
        const vars = { A: vals[i === 0 ? 0 : i - 1] ?? '', B: vals[i] ?? '' };
        const [u, b] = i === 0 ? [spec.first, spec.firstBot] : [spec.change, spec.changeBot];
        const [pu, pb] = pick2(c, u, b);
        return pair(c, s, fill(pu, vars), fill(pb, vars), tags[i]);
      });
      const last = stages - 1;
      const cur = vals[last] ?? '';
      const prev = vals[last - 1] ?? '';
      const qs: QDraft[] = [qd('preference-update', [tags[last] ?? ''], `${cur} (changed from ${vals.slice(0, last).join(', then ')})`, ...spec.now)];
      if (c.r.chance(0.45)) {
        const bq = spec.before.map(
          (q): QTemplate =>
            (w: Who) =>
              fill(q(w), { B: cur }),
        );
        qs.push(qd('preference-update', [tags[last - 1] ?? '', tags[last] ?? ''], `${prev}, before switching to ${cur}`, ...bq));
      }
      return { parts, qs };
    },
  };
  if (spec.group) k.group = spec.group;
  return k;
}

export const PREF_KINDS: readonly Kind[] = [
  pref({
    id: 'coffee',
    values: ['oat flat whites', 'black americanos', 'iced lattes', 'cortados', 'chai lattes', 'decaf cappuccinos'],
    first: ["I'm «completely|properly» hooked on {A} at the moment", 'My usual coffee order is {A}, every single morning'],
    firstBot: ['Good choice! Do you make them at home or buy them on the way?', 'A solid daily ritual.'],
    change: ["Gone off {A}, I'm all about {B} now", 'New coffee order: {B}. Gone right off {A}'],
    changeBot: ['A change is as good as a rest! {B} it is.', 'Ha, tastes change. Your barista will need updating.'],
    now: [(w) => `What's ${w.poss} usual coffee order these days?`, (w) => `What coffee ${w.does} order now?`],
    before: [(w) => `What coffee did ${w.subj} drink before switching to {B}?`, (w) => `What was ${w.poss} coffee order before {B}?`],
  }),
  pref({
    id: 'exercise',
    group: 'exercise',
    values: ['spin classes', 'weightlifting', 'rowing', 'cycling', 'boxing', 'HIIT classes'],
    first: ['My main exercise at the moment is {A}, «three times a week|most mornings»', 'Doing loads of {A} lately, feel great for it'],
    firstBot: ["That's a great routine. Consistency is everything.", "Love that. Any goals you're working towards?"],
    change: ["I've «dropped|quit» {A} and taken up {B} instead", "Bit of a switch: I'm doing {B} instead of {A} now. Much more fun"],
    changeBot: ['Variety is good for you! How are you finding it?', 'Good move — how are you finding {B} so far?'],
    now: [(w) => `What's ${w.poss} main form of exercise now?`, (w) => `What workout ${w.does} do these days?`],
    before: [(w) => `What exercise did ${w.subj} do before taking up {B}?`],
  }),
  pref({
    id: 'show',
    take: true,
    values: [
      'Slow Horses',
      'The Bear',
      'Severance',
      'Happy Valley',
      'The Traitors',
      'Shrinking',
      'Ted Lasso',
      'Fleabag',
      'Succession',
      'Detectorists',
      'Shogun',
    ],
    first: ['Currently obsessed with {A}, watched «three|four» episodes last night', "Have you heard of {A}? It's my new favourite show"],
    firstBot: ['Binge-watching is a valid hobby. What do you like about it?', "I've heard great things! What hooked you?"],
    change: ['Gave up on {A}, it got «silly|so slow». {B} is my new obsession', 'Started {B} and forgot {A} even exists'],
    changeBot: ['Ha, the fickle viewer! {B} gets great reviews.', "That's the sign of a good show."],
    now: [(w) => `What TV show ${w.is} hooked on at the moment?`, (w) => `Which series ${w.is} watching now?`],
    before: [(w) => `What show was ${w.subj} into before {B}?`],
  }),
  pref({
    id: 'diet',
    group: 'diet',
    ordered: true,
    values: ['pescatarian', 'vegetarian', 'vegan'],
    first: ["I've been {A} since «the new year|last autumn» — fish is the one thing I can't give up", "Food update: I'm {A} now, fish but no meat"],
    firstBot: ["That's a nice balance. Lots of good recipes out there.", 'Sounds sustainable — fish keeps it easy when eating out.'],
    change: ["I've stopped eating fish too, so I'm properly {B} now", 'Going fully {B} from this week, the {A} phase is over'],
    changeBot: ['Big step! Want some recipe ideas?', 'Good for you. B12 is the one to watch.'],
    now: [(w) => `What diet ${w.does} follow now?`, (w) => `What ${w.does} eat these days — is there anything ${w.pr} ${v(w, 'avoids', 'avoid')}?`],
    before: [(w) => `What was ${w.poss} diet before ${w.pr} went {B}?`],
  }),
  pref({
    id: 'commute',
    group: 'commute',
    values: ['by bus', 'by bike', 'on foot', 'by train', 'on the tram'],
    first: ['I go to work {A} at the moment, about 25 minutes door to door', 'My commute is {A} these days, not too bad'],
    firstBot: ['25 minutes is pretty decent!', 'A manageable commute makes such a difference.'],
    change: ["I've switched to going in {B} instead of {A}", 'New commute: {B}. Done with going {A}'],
    changeBot: ['Nice! How does it compare?', 'Good change — does it save time?'],
    now: [(w) => `How ${w.does} get to work now?`, (w) => `What's ${w.poss} commute like these days?`],
    before: [(w) => `How did ${w.subj} commute before switching to going {B}?`],
  }),
  pref({
    id: 'music',
    values: ['jazz', '80s synth-pop', 'Afrobeats', 'folk', 'drum and bass', 'country', 'bossa nova'],
    first: ["I'm listening to «so much|loads of» {A} lately", 'My work playlist is wall-to-wall {A} at the moment'],
    firstBot: ['Great choice for focus. Any favourite artists?', 'Ha, a committed playlist! Nice.'],
    change: ["My {A} phase is over, it's all {B} now", "Weirdly I've gone off {A} — {B} on repeat instead"],
    changeBot: ['Musical phases are the best. {B} is a fun one!', 'Tastes shift! Want some {B} recommendations?'],
    now: [(w) => `What music ${w.is} into at the moment?`, (w) => `What kind of music ${w.does} listen to lately?`],
    before: [(w) => `What music was ${w.subj} into before {B}?`],
  }),
  pref({
    id: 'lunch',
    values: [
      'the Vietnamese place by the station',
      'the falafel stall on the market',
      'the ramen bar near the office',
      'the Polish deli',
      'the salad place in the arcade',
    ],
    first: ['My lunch spot at the moment is {A}, I go almost every day', 'Lunch was {A} again. I have a problem'],
    firstBot: ["If it's good, it's good!", 'When you find a good lunch place you stick to it.'],
    change: ['Abandoned {A} for {B}, no regrets', 'New lunch place: {B}. Sorry {A}'],
    changeBot: ['Ha, a lunch-spot breakup. {B} must be good.', 'Sounds like an upgrade.'],
    now: [(w) => `Where ${w.does} usually go for lunch now?`, (w) => `What's ${w.poss} current lunch spot?`],
    before: [(w) => `Where did ${w.subj} usually get lunch before {B}?`],
  }),
  pref({
    id: 'reading',
    group: 'reading',
    values: ['crime novels', 'science fiction', 'historical fiction', 'memoirs', 'fantasy', 'nature writing'],
    first: ['I only seem to read {A} these days', "Can't get enough of {A} at the moment, just finished another one"],
    firstBot: ['Nothing wrong with a favourite genre!', 'Ooh, a reading streak. Any standouts?'],
    change: ["I've gone right off {A} — can't stop reading {B} now", "Switched from {A} to {B} and I'm loving it"],
    changeBot: ['A genre switch can reignite reading. Enjoy!', 'Nice change of scenery.'],
    now: [(w) => `What kind of books ${w.does} read these days?`, (w) => `What genre ${w.is} into now?`],
    before: [(w) => `What did ${w.subj} mostly read before {B}?`],
  }),
  pref({
    id: 'worktime',
    group: 'exercise-time',
    values: ['first thing in the morning', 'at lunchtime', 'in the evening'],
    first: ["I've been working out {A}, it fits best with work", 'Training {A} at the moment, fits round work better'],
    firstBot: ["Whatever time you'll actually stick to is the right time.", 'Fitting it round work is the whole battle.'],
    change: ["Switched my workouts to {B}, {A} wasn't working any more", 'Training {B} now instead of {A}'],
    changeBot: ['Makes sense — routines need to fit your life.', 'Good adjustment!'],
    now: [(w) => `When ${w.does} usually work out now?`, (w) => `What time of day ${w.does} exercise these days?`],
    before: [(w) => `When did ${w.subj} usually work out before switching to {B}?`],
  }),
  pref({
    id: 'tea',
    values: ["builder's tea", 'green tea', 'rooibos', 'Earl Grey', 'peppermint tea'],
    first: ["I drink gallons of {A}, it's a problem", "{A}, all day, every day. That's my personality"],
    firstBot: ['Ha, there are worse vices!', 'A strong personality trait.'],
    change: ['Switched from {A} to {B}, trying to cut caffeine', "Gone off {A}. It's {B} now, pot by the desk"],
    changeBot: ["Good swap if you're cutting caffeine.", 'A whole pot by the desk — committed!'],
    now: [(w) => `What tea ${w.does} drink now?`, (w) => `What's ${w.poss} go-to hot drink at the moment?`],
    before: [(w) => `What did ${w.subj} drink before switching to {B}?`],
  }),
  pref({
    id: 'holiday',
    group: 'holiday',
    take: true,
    values: ABROAD,
    first: ["We're thinking of going to {A} in the summer, anyone been?", 'Summer holiday plan: {A}. Probably. Maybe'],
    firstBot: ['Lovely choice! How long are you thinking?', "Ha, a firm maybe. It's a great place."],
    change: ["Change of plan — we're doing {B} this summer instead of {A}", 'Scrapped {A}, flights were silly money. {B} it is'],
    changeBot: ['Good call, {B} will be lovely too.', 'Sensible. {B} is a great alternative.'],
    now: [(w) => `Where ${w.is} planning to go this summer?`, (w) => `What's ${w.poss} summer holiday destination?`],
    before: [(w) => `Where was ${w.subj} originally going to go this summer, before choosing {B}?`],
  }),
  pref({
    id: 'hobby',
    group: 'craft',
    values: ['knitting', 'watercolour painting', 'sourdough baking', 'chess', 'jigsaw puzzles', 'crochet'],
    first: ["My new hobby is {A}, I'm weirdly into it", "Spent the whole evening on {A} again, it's so relaxing"],
    firstBot: ['Love a slightly obsessive hobby!', "It's great to have something absorbing that isn't a screen."],
    change: ["I've put the {A} aside, {B} is the new thing", "Phase over: no more {A}, it's all {B} now"],
    changeBot: ['New hobby energy! Enjoy.', 'Ha, fair enough. How are you finding {B}?'],
    now: [(w) => `What's ${w.poss} current hobby?`, (w) => `What ${w.does} do to relax these days?`],
    before: [(w) => `What hobby did ${w.subj} have before {B}?`],
  }),
];
