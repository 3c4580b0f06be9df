// A compact way to write "something with a name" facts: the user mentions a relative, pet,
// colleague or place by name once; the question asks for the name; the thing can later
// become an entity ("What do we know about Dana?") with follow-up mentions.

import type { Ctx, EntityDef, FactOut, Kind, Part, QTemplate } from './types.js';
import { pair, pick2, qd } from './kit.js';
import { ABROAD, PET_NAMES, RESTAURANTS, STREETS, UK_TOWNS } from './personas.js';
import { MONTHS, who, type Who } from './util.js';

export type G = 'f' | 'm';

export interface NamedSpec {
  id: string;
  group?: string;
  /** Gender of a person; 'any' picks one. Ignored when `pool` is given. */
  g?: G | 'any';
  /** Value pool for non-person names (pets, places...). */
  pool?: readonly string[];
  /** Pick-one list substituted for {X} (e.g. species), before anything else. */
  xs?: readonly string[];
  intro: readonly string[];
  bot: readonly string[];
  q: readonly QTemplate[];
  /** "Maya's sister" — third person description used in answers. */
  about: (w: Who, x: string) => string;
  /** Entity questions; {N} is replaced by the name. */
  eq?: readonly string[];
  follow?: readonly { text: string; info: string; reply?: string }[];
  /** Mentions of someone else's similar thing: [user, bot], {M} = another name from the same pool. */
  distract?: readonly (readonly [string, string])[];
  /** Where in the timeline the intro goes. */
  lo?: number;
  hi?: number;
}

/** Replace {KEY} placeholders; unknown keys are an error. */
export function fill(tpl: string, vars: Record<string, string>): string {
  return tpl.replace(/\{([A-Za-z]+)\}/g, (all, k: string) => {
    const v = vars[k];
    if (v === undefined) throw new Error(`unfilled ${all} in: ${tpl}`);
    return v;
  });
}

export function pronouns(g: G): Record<string, string> {
  return g === 'f' ? { he: 'she', He: 'She', his: 'her', him: 'her', His: 'Her' } : { he: 'he', He: 'He', his: 'his', him: 'him', His: 'His' };
}

export function entityQs(eq: readonly string[], key: string): QTemplate[] {
  return eq.map((tpl) => (w: Who) => fill(tpl, { N: key, subj: w.subj, has: w.has, poss: w.poss, Has: w.has.charAt(0).toUpperCase() + w.has.slice(1) }));
}

export const PERSON_EQ = ['What do we know about {N}?', 'Who is {N}?', 'Tell me about {N}.', 'What {has} said about {N}?'];
export const THING_EQ = ['What do we know about {N}?', 'Tell me about {N}.', 'What {has} said about {N}?'];

export function named(spec: NamedSpec): Kind {
  const k: Kind = {
    id: spec.id,
    cat: 'name',
    plan(c: Ctx): FactOut | null {
      const r = c.r;
      const g: G = spec.g === 'f' || spec.g === 'm' ? spec.g : r.chance(0.5) ? 'f' : 'm';
      const x = spec.xs ? r.pick(spec.xs) : '';
      const name = spec.pool ? c.take(spec.pool) : c.name(g);
      const vars: Record<string, string> = { ...pronouns(g), N: name, X: x, F: c.friend(), C: c.coworker() };
      const s = c.one(spec.lo ?? 0, spec.hi ?? 0.6);
      const tag = c.tag(spec.id);
      const [iu, ib] = pick2(c, spec.intro, spec.bot);
      const parts: Part[] = [pair(c, s, fill(iu, vars), fill(ib, vars), tag)];
      if (spec.distract && r.chance(0.7)) {
        const other = spec.pool ? c.take(spec.pool) : c.name(g);
        const [u, b] = r.pick(spec.distract);
        parts.push(pair(c, c.one(0, 1), fill(u, { ...vars, M: other }), fill(b, { ...vars, M: other }), undefined, false));
      }
      const entities: EntityDef[] = [];
      if (spec.follow?.length) {
        entities.push({
          key: name,
          after: s,
          about: spec.about(who(c.p, true), x),
          q: entityQs(spec.eq ?? (spec.pool ? THING_EQ : PERSON_EQ), name),
          follow: spec.follow.map((f) => ({ ...f, text: fill(f.text, vars), info: fill(f.info, vars) })),
        });
      }
      const qs = [qd('name', [tag], name, ...spec.q.map((q) => (w: Who) => fill(q(w), { X: x })))];
      return { parts, qs, entities };
    },
  };
  if (spec.group) k.group = spec.group;
  return k;
}

export interface VarOpts {
  g?: G | 'any';
  xs?: readonly string[];
  ys?: readonly string[];
}

/**
 * Values for every placeholder that occurs in `text`: {N} a new person's name, {P} a place
 * abroad, {T} a UK town, {R} a restaurant, {S} a street, {Pet} a pet name, {X}/{Y} picks
 * from xs/ys, {Mon} a month a few months after the start, {kin} aunt/uncle, and pronouns.
 */
export function makeVars(c: Ctx, text: string, o: VarOpts): Record<string, string> {
  const has = (k: string) => text.includes(`{${k}}`);
  const g: G = o.g === 'f' || o.g === 'm' ? o.g : c.r.chance(0.5) ? 'f' : 'm';
  return {
    ...pronouns(g),
    N: has('N') ? c.name(g) : '',
    P: has('P') ? c.take(ABROAD) : '',
    T: has('T') ? c.take(UK_TOWNS) : '',
    R: has('R') ? c.take(RESTAURANTS) : '',
    S: has('S') ? c.take(STREETS) : '',
    Pet: has('Pet') ? c.take(PET_NAMES) : '',
    X: o.xs ? c.r.pick(o.xs) : '',
    Y: o.ys ? c.r.pick(o.ys) : '',
    kin: c.p.gender === 'f' ? '«auntie|aunt»' : 'uncle',
    Mon: MONTHS[(c.date(1).getUTCMonth() + c.r.int(3, 6)) % 12] ?? 'May',
  };
}
