// Turns the planted parts and the filler into the final message list of one conversation:
// each session gets an optional greeting, its planted blocks and filler exchanges in a
// random order, an optional goodbye, ids D<session>:<n> and minute-resolution timestamps.

import type { Session } from './ctx.js';
import { CLOSERS, FILLER, FILLER_POOLS, OPENER_REPLIES, OPENERS, type FillerExchange } from './filler.js';
import type { PersonaSetup } from './personas.js';
import type { Part, Role, Turn } from './types.js';
import { at, isoMinute, render, type Rng } from './util.js';

export interface Message {
  id: string;
  speaker: string;
  role: Role;
  text: string;
  timestamp: string;
}

export interface Planted {
  kind: string;
  part: Part;
}

export interface Assembled {
  messages: Message[];
  /** Evidence tag → message id. */
  ids: Map<string, string>;
  /** Ids of messages that came from planted parts (not filler). */
  planted: Set<string>;
}

const MAX_SESSION = 40;

/** Renders one filler exchange: roles alternate from the user unless a text starts with U> or A>. */
export function renderExchange(ex: FillerExchange, r: Rng, pools: Record<string, readonly string[]>): Turn[] {
  const vars = new Map<string, string>();
  const out: Turn[] = [];
  let prev: Role = 'assistant';
  for (const raw of ex.t) {
    let role: Role = prev === 'user' ? 'assistant' : 'user';
    let tpl = raw;
    if (raw.startsWith('U>')) [role, tpl] = ['user', raw.slice(2)];
    else if (raw.startsWith('A>')) [role, tpl] = ['assistant', raw.slice(2)];
    out.push({ role, text: render(tpl, r, vars, pools) });
    prev = role;
  }
  if (prev === 'user') out.push({ role: 'assistant', text: r.pick(['Ha, fair enough!', 'Good luck!', 'Sounds good.', 'Got it.']) });
  return out;
}

/** Deals filler exchanges without repeats until the whole list has been used. */
class Deck {
  private cards: FillerExchange[] = [];
  constructor(private r: Rng) {}
  next(): FillerExchange {
    if (this.cards.length === 0) this.cards = this.r.shuffle(FILLER);
    const c = this.cards.pop();
    if (!c) throw new Error('empty filler deck');
    return c;
  }
}

export function assemble(
  p: PersonaSetup,
  sessions: readonly Session[],
  planted: readonly Planted[],
  people: { coworkers: string[]; friends: string[]; away(d: Date): boolean },
  r: Rng,
): Assembled {
  const pools: Record<string, readonly string[]> = {
    ...FILLER_POOLS,
    city: [p.home],
    coworker: people.coworkers,
    friend: people.friends,
    team: [p.team],
    name: [p.name],
  };
  const deck = new Deck(r);
  const messages: Message[] = [];
  const ids = new Map<string, string>();
  const plantedIds = new Set<string>();

  for (const s of sessions) {
    // Planted blocks keep their relative order within one kind; otherwise they are shuffled.
    const mine = planted.filter((x) => x.part.session === s.n);
    const keys = mine.map(() => r.next());
    const byKind = new Map<string, number[]>();
    mine.forEach((x, i) => byKind.set(x.kind, [...(byKind.get(x.kind) ?? []), i]));
    for (const idx of byKind.values()) {
      const sorted = idx.map((i) => at(keys, i)).sort((a, b) => a - b);
      idx.forEach((i, j) => (keys[i] = at(sorted, j)));
    }
    const blocks: { key: number; turns: Turn[]; planted: boolean }[] = mine.map((x, i) => ({
      key: at(keys, i),
      turns: x.part.turns,
      planted: true,
    }));
    let count = blocks.reduce((n, b) => n + b.turns.length, 0);

    const head: Turn[] = [];
    const tail: Turn[] = [];
    if (r.chance(0.75)) {
      head.push({ role: 'user', text: r.pick(OPENERS[s.slot]) }, { role: 'assistant', text: render(r.pick(OPENER_REPLIES), r, new Map(), pools) });
    }
    if (r.chance(0.5)) {
      const [u, a] = r.pick(CLOSERS);
      tail.push({ role: 'user', text: u }, { role: 'assistant', text: a });
    }
    count += head.length + tail.length;
    if (count > MAX_SESSION) throw new Error(`session ${s.n} of ${p.id} has ${count} planted messages`);

    const away = people.away(s.date);
    for (let tries = 0; count < s.size && tries < 50; tries++) {
      const ex = deck.next();
      // While travelling, no small talk about the weather or walks at home.
      if (away && ex.t.some((t) => t.includes('{city}'))) continue;
      const turns = renderExchange(ex, r, pools);
      if (count + turns.length > MAX_SESSION) continue;
      blocks.push({ key: r.next(), turns, planted: false });
      count += turns.length;
    }
    blocks.sort((a, b) => a.key - b.key);

    const ordered: { turn: Turn; planted: boolean }[] = [
      ...head.map((turn) => ({ turn, planted: false })),
      ...blocks.flatMap((b) => b.turns.map((turn) => ({ turn, planted: b.planted }))),
      ...tail.map((turn) => ({ turn, planted: false })),
    ];
    let minute = s.startMin;
    ordered.forEach(({ turn, planted: isPlanted }, i) => {
      if (i > 0) minute += r.pick([0, 0, 1, 1, 1, 2, 3]);
      const d = new Date(s.date.getTime() + minute * 60_000);
      const id = `D${s.n}:${i + 1}`;
      messages.push({
        id,
        speaker: turn.role === 'user' ? p.name : 'Bot',
        role: turn.role,
        text: turn.text,
        timestamp: isoMinute(d),
      });
      if (turn.tag) {
        if (ids.has(turn.tag)) throw new Error(`duplicate tag ${turn.tag}`);
        ids.set(turn.tag, id);
      }
      if (isPlanted) plantedIds.add(id);
    });
  }
  return { messages, ids, planted: plantedIds };
}
