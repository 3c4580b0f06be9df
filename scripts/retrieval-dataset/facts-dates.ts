// "date" questions ("When did X …?"): the day is said relative to the message ("yesterday",
// "on Saturday", "on the 14th") so the answer needs the message and its timestamp. Every
// dated fact also becomes an event for the temporal before/after questions.

import type { Ctx, EntityDef, FactOut, Kind, Part, QTemplate } from './types.js';
import { dateAnswer, ev, futureWhen, pair, pastWhen, pick2, qd, v, type When } from './kit.js';
import { entityQs, fill, pronouns } from './named.js';
import { ABROAD, BANDS, COMPANIES } from './personas.js';
import { addDays, daysBetween, weekday, type Who } from './util.js';

interface DatedSpec {
  id: string;
  group?: string;
  dir: 'past' | 'future';
  /** The event only happens Monday–Friday (a first day at work, an interview). */
  weekdays?: boolean;
  range: [number, number];
  /** Extra placeholders: B = band, Co = company, X = pick from xs. */
  xs?: readonly string[];
  user: readonly string[];
  bot: readonly string[];
  q: readonly QTemplate[];
  base: QTemplate;
  past: QTemplate;
  ger: QTemplate;
}

const fillPair = ([u, b]: [string, string], vars: Record<string, string>): [string, string] => [fill(u, vars), fill(b, vars)];

function dated(spec: DatedSpec): Kind {
  const k: Kind = {
    id: spec.id,
    cat: 'date',
    plan(c: Ctx): FactOut | null {
      let s = 0;
      let w: When | undefined;
      for (let attempt = 0; attempt < 8 && !w; attempt++) {
        s = c.one(0.05, 0.95);
        const x = spec.dir === 'past' ? pastWhen(c, s, spec.range[0], spec.range[1]) : futureWhen(c, s, spec.range[0], spec.range[1]);
        const wd = x.date.getUTCDay();
        if ((!spec.weekdays || (wd >= 1 && wd <= 5)) && c.claim(x.date)) w = x;
      }
      if (!w) return null;
      const vars: Record<string, string> = {
        ...pronouns(c.p.gender),
        when: w.phrase,
        X: spec.xs ? c.r.pick(spec.xs) : '',
        B: /\{B\}/.test(spec.user.join()) ? c.take(BANDS) : '',
        Co: /\{Co\}/.test(spec.user.join()) ? c.take(COMPANIES) : '',
      };
      const tag = c.tag(spec.id);
      const f =
        (q: QTemplate): QTemplate =>
        (who: Who) =>
          fill(q(who), vars);
      return {
        parts: [pair(c, s, ...fillPair(pick2(c, spec.user, spec.bot), vars), tag)],
        qs: [qd('date', [tag], dateAnswer(c, s, w), ...spec.q.map(f))],
        events: [ev(tag, w.date, f(spec.base), f(spec.past), f(spec.ger), w.precise)],
      };
    },
  };
  if (spec.group) k.group = spec.group;
  return k;
}

const trip: Kind = {
  id: 'trip',
  cat: 'date',
  group: 'trip',
  plan(c: Ctx): FactOut | null {
    let a = 0;
    let b = -1;
    let go = futureWhen(c, 1);
    let len = 0;
    let back = go.date;
    for (let attempt = 0; attempt < 12 && b < 0; attempt++) {
      a = c.one(0.1, 0.55);
      go = futureWhen(c, a, 2, 9);
      len = c.r.int(4, 9);
      back = addDays(go.date, len);
      b = c.sessionOnOrAfter(addDays(back, 1));
      if (b >= 0 && daysBetween(back, c.date(b)) > 3) b = -1;
    }
    if (b < 0 || !c.claim(go.date)) return null;
    c.block(addDays(go.date, 1), back);
    c.reserve(b);
    const place = c.take(ABROAD);
    const other = c.take(ABROAD);
    const gap = daysBetween(back, c.date(b));
    const backPhrase = gap <= 0 ? 'this morning' : gap === 1 ? 'last night' : `on ${weekday(back)}`;
    const ta = c.tag('trip-go');
    const tb = c.tag('trip-back');
    const parts: Part[] = [
      pair(
        c,
        a,
        `«Booked it|It's booked|Done, flights booked» — we fly to ${place} ${go.phrase}! ${len} nights, «can't wait|first proper holiday in ages»`,
        '«How exciting!|Amazing!» Do you have a plan yet, or are you going to wander and eat?',
        ta,
      ),
      pair(
        c,
        b,
        `Back from ${place}! Got in ${backPhrase}, «still unpacking|jet-lagged but happy|washing machine already on»`,
        'Welcome back! What was the highlight?',
        tb,
      ),
      pair(
        c,
        c.one(0, 1),
        `${c.coworker()} just got back from a «work trip|stag do|week away» in ${other}, says the trip was «chaos|brilliant»`,
        '«Ha, sounds eventful.|Nice — always good to hear a trip went well.»',
        undefined,
        false,
      ),
    ];
    const trip = () => `fly to ${place}`;
    const ent: EntityDef = {
      key: place,
      after: b,
      priority: true,
      about: `${c.p.name}'s ${len}-night trip to ${place} (flew out ${go.date.toISOString().slice(0, 10)})`,
      q: entityQs(['Tell me about the trip to {N}.', 'What do we know about {poss} trip to {N}?', 'What happened on the {N} trip?'], place),
      follow: [
        {
          text: `Still dreaming about the food in ${place}. Nothing here compares`,
          info: 'the food was memorable',
          reply: 'Food memories are the best holiday souvenirs.',
        },
        {
          text: `Finally printed some photos from ${place} for the fridge`,
          info: 'photos printed for the fridge',
          reply: 'Lovely — printed photos get looked at so much more.',
        },
        {
          text: `Lost my sunglasses somewhere in ${place}, I've only just noticed`,
          info: 'lost sunglasses there',
          reply: 'Oh no — a sacrifice to the holiday gods.',
        },
      ],
    };
    return {
      parts,
      qs: [
        qd(
          'date',
          [ta],
          dateAnswer(c, a, go),
          (w) => `When did ${w.subj} fly to ${place}?`,
          (w) => `What day did ${w.poss} trip to ${place} start?`,
        ),
        qd(
          'temporal',
          [ta, tb],
          `${len} nights (out ${go.date.toISOString().slice(0, 10)}, back ${back.toISOString().slice(0, 10)})`,
          (w) => `How long was ${w.poss} trip to ${place}?`,
          (w) => `How many nights was ${w.subj} away in ${place}?`,
        ),
      ],
      events: [
        ev(
          ta,
          go.date,
          trip,
          () => `flew to ${place}`,
          () => `flying to ${place}`,
        ),
      ],
      entities: [ent],
    };
  },
};

export const DATE_KINDS: readonly Kind[] = [
  trip,
  dated({
    id: 'newjob',
    group: 'employer',
    dir: 'past',
    range: [0, 3],
    weekdays: true,
    user: [
      "«Started|Began» my new job {when}, «still learning everyone's names|so many passwords to set up|the coffee machine alone was worth it»",
      'First day at the new job was {when}. Survived! Everyone seems «nice|friendly enough»',
    ],
    bot: ['Congratulations on the new job! The first week is always a blur.', "Well done! Give it a few weeks and it'll feel normal."],
    q: [(w) => `When did ${w.subj} start ${w.prPoss} new job?`, (w) => `What was the date of ${w.poss} first day at the new job?`],
    base: (w) => `start ${w.prPoss} new job`,
    past: (w) => `started ${w.prPoss} new job`,
    ger: (w) => `starting ${w.prPoss} new job`,
  }),
  dated({
    id: 'move',
    group: 'move',
    dir: 'past',
    range: [0, 4],
    user: ["We moved into the new flat {when}. Boxes everywhere and I can't find a single mug", 'Moving day was {when}, my back is in pieces'],
    bot: ['The eternal first-night mug hunt! Unpack the kettle box first.', 'Moving is brutal. Hope the new place feels like home soon.'],
    q: [(w) => `When did ${w.subj} move into the new flat?`, (w) => `What day did ${w.subj} move house?`],
    base: (w) => `move into ${w.prPoss} new flat`,
    past: (w) => `moved into ${w.prPoss} new flat`,
    ger: (w) => `moving into ${w.prPoss} new flat`,
  }),
  dated({
    id: 'dentist',
    group: 'dentist',
    dir: 'future',
    range: [2, 14],
    weekdays: true,
    user: ['Finally booked a dentist appointment, {when} at «9|10:30|4:15» — that filling has been bugging me', 'Dentist appointment {when}. Dreading it'],
    bot: ["Good that it's booked — much better than putting it off.", "It's usually less bad than the dread! You'll be fine."],
    q: [(w) => `When is ${w.poss} dentist appointment?`, (w) => `What day ${v(w, 'is', 'am')} ${w.subj} going to the dentist?`],
    base: () => 'go to the dentist',
    past: () => 'went to the dentist',
    ger: () => 'going to the dentist',
  }),
  dated({
    id: 'tenk',
    group: 'race',
    dir: 'past',
    range: [0, 2],
    user: ['Ran my first 10k {when}! «Just under an hour|58 minutes», legs are jelly', "Did the 10k {when}. First one ever and I didn't walk once"],
    bot: ["That's brilliant — congratulations! Rest up and stretch.", 'Huge! Not walking once is a real achievement.'],
    q: [(w) => `When did ${w.subj} run ${w.prPoss} first 10k?`, (w) => `On what day did ${w.subj} do the 10k race?`],
    base: (w) => `run ${w.prPoss} first 10k`,
    past: (w) => `ran ${w.prPoss} first 10k`,
    ger: (w) => `running ${w.prPoss} first 10k`,
  }),
  dated({
    id: 'drivingtest',
    group: 'driving',
    dir: 'past',
    range: [0, 1],
    user: ['PASSED MY DRIVING TEST {when}!!! Third time lucky', 'I passed my driving test {when}, only two minors'],
    bot: ["CONGRATULATIONS! That's huge — where are you driving first?", 'Only two minors — amazing! Well done.'],
    q: [(w) => `When did ${w.subj} pass ${w.prPoss} driving test?`, (w) => `What day did ${w.subj} pass the driving test?`],
    base: (w) => `pass ${w.prPoss} driving test`,
    past: (w) => `passed ${w.prPoss} driving test`,
    ger: (w) => `passing ${w.prPoss} driving test`,
  }),
  dated({
    id: 'gig',
    group: 'gig',
    dir: 'future',
    range: [5, 30],
    user: ['Got tickets to see {B} {when}! They never tour', 'Just bought tickets for {B} at the Academy, {when}'],
    bot: ['Amazing! Do you know the setlist yet?', 'Great shout — small venues are the best for gigs.'],
    q: [(w) => `When is the {B} gig ${w.subj} ${v(w, 'has', 'have')} tickets for?`, (w) => `What date ${v(w, 'is', 'am')} ${w.subj} seeing {B}?`],
    base: () => 'see {B} live',
    past: () => 'saw {B} live',
    ger: () => 'seeing {B} live',
  }),
  dated({
    id: 'cousinwedding',
    group: 'cousinwedding',
    dir: 'past',
    range: [1, 6],
    user: ["My cousin's wedding was {when}, danced until 2am", "Still recovering from my cousin's wedding {when}. Best ceilidh ever"],
    bot: ['Sounds like a great wedding! How are the feet?', 'Ceilidhs are the best — and the most exhausting.'],
    q: [(w) => `When was ${w.poss} cousin's wedding?`, (w) => `What day did ${w.subj} go to ${w.prPoss} cousin's wedding?`],
    base: (w) => `go to ${w.prPoss} cousin's wedding`,
    past: (w) => `went to ${w.prPoss} cousin's wedding`,
    ger: (w) => `going to ${w.prPoss} cousin's wedding`,
  }),
  dated({
    id: 'parents',
    group: 'parents',
    dir: 'future',
    range: [1, 10],
    user: ['Mum and Dad arrive {when} for the weekend, need to tidy everything', 'My parents are coming to stay {when}. Hiding the takeaway menus'],
    bot: ['Ha, the pre-parents tidy. Anything fun planned with them?', 'Classic. Are you cooking for them?'],
    q: [(w) => `When are ${w.poss} parents coming to stay?`, (w) => `What day do ${w.poss} parents arrive for their visit?`],
    base: (w) => `have ${w.prPoss} parents to stay`,
    past: (w) => `had ${w.prPoss} parents to stay`,
    ger: (w) => `having ${w.prPoss} parents to stay`,
  }),
  dated({
    id: 'interview',
    group: 'employer',
    dir: 'future',
    range: [2, 12],
    weekdays: true,
    user: ["I've got an interview at {Co} {when}! Senior role", 'Interview with {Co} is {when}, second round'],
    bot: ['Exciting! Want to run through some likely questions?', "Second round is a great sign. You've got this."],
    q: [(w) => `When is ${w.poss} interview with {Co}?`, (w) => `What date is ${w.poss} job interview?`],
    base: (w) => `have ${w.prPoss} interview at {Co}`,
    past: (w) => `had ${w.prPoss} interview at {Co}`,
    ger: (w) => `having ${w.prPoss} interview at {Co}`,
  }),
  dated({
    id: 'birthday',
    group: 'birthday',
    dir: 'future',
    range: [1, 20],
    user: ["It's my birthday {when}, not doing anything big, just dinner", "Birthday {when}! Thirty-«two|four|six», don't remind me"],
    bot: ['Happy early birthday! Dinner sounds perfect.', 'Ha, happy early birthday! Age is just a number.'],
    q: [(w) => `When is ${w.poss} birthday?`, (w) => `On what date ${w.does} celebrate ${w.prPoss} birthday?`],
    base: (w) => `celebrate ${w.prPoss} birthday`,
    past: (w) => `celebrated ${w.prPoss} birthday`,
    ger: (w) => `celebrating ${w.prPoss} birthday`,
  }),
  dated({
    id: 'newcar',
    group: 'car',
    dir: 'past',
    range: [0, 2],
    user: [
      'Picked up the new car {when}! It still has that new-car smell',
      'Collected our new car {when}, a second-hand «Golf|Corolla|Octavia», very sensible',
    ],
    bot: ['Congrats! Enjoy the new car smell while it lasts.', "Sensible is good! Hopefully it's reliable too."],
    q: [(w) => `When did ${w.subj} get the new car?`, (w) => `What day did ${w.subj} collect ${w.prPoss} new car?`],
    base: (w) => `pick up ${w.prPoss} new car`,
    past: (w) => `picked up ${w.prPoss} new car`,
    ger: (w) => `picking up ${w.prPoss} new car`,
  }),
  dated({
    id: 'exam',
    group: 'exam',
    dir: 'future',
    range: [3, 20],
    xs: ['accountancy', 'AWS certification', 'project management', 'Spanish B2'],
    user: ['My {X} exam is {when}, full revision mode now', "Booked my {X} exam — it's {when}. No backing out"],
    bot: ['Good luck! Little and often is the best way to revise.', "Committing to a date is half the battle. You'll be ready."],
    q: [(w) => `When is ${w.poss} {X} exam?`, (w) => `What day ${v(w, 'does', 'do')} ${w.subj} sit the {X} exam?`],
    base: (w) => `sit ${w.prPoss} {X} exam`,
    past: (w) => `sat ${w.prPoss} {X} exam`,
    ger: (w) => `sitting ${w.prPoss} {X} exam`,
  }),
  dated({
    id: 'haircut',
    group: 'haircut',
    dir: 'past',
    range: [0, 3],
    user: ['Got my hair cut really short {when}. Keep touching the back of my neck', 'Went to a new barber {when}, best haircut in years'],
    bot: ['A big chop is so freeing! Does it feel lighter?', 'Finding a good barber is a big deal. Keep them forever.'],
    q: [(w) => `When did ${w.subj} last get a haircut?`, (w) => `What day did ${w.subj} have ${w.prPoss} hair cut?`],
    base: (w) => `get ${w.prPoss} hair cut`,
    past: (w) => `got ${w.prPoss} hair cut`,
    ger: (w) => `getting ${w.prPoss} hair cut`,
  }),
  dated({
    id: 'anniversary',
    group: 'married',
    dir: 'future',
    range: [1, 14],
    xs: ['fifth', 'seventh', 'tenth'],
    user: ["It's our {X} anniversary {when}, I've booked a table somewhere fancy", 'Need a gift idea — {X} wedding anniversary is {when}'],
    bot: ["Lovely! Somewhere you've been before or somewhere new?", 'Something you can do together often beats a thing. An experience, maybe?'],
    q: [(w) => `When is ${w.poss} wedding anniversary?`, (w) => `What date is ${w.poss} {X} anniversary?`],
    base: (w) => `celebrate ${w.prPoss} anniversary`,
    past: (w) => `celebrated ${w.prPoss} anniversary`,
    ger: (w) => `celebrating ${w.prPoss} anniversary`,
  }),
];
