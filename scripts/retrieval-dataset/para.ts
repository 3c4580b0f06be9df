// The "paraphrase" kind builder: one planted message, and questions worded so that they
// share (almost) no words with the answer ("I started lessons on the cello" →
// "Which instrument is X learning?").

import type { Ctx, FactOut, Kind, QTemplate } from './types.js';
import { pair, pick2, qd } from './kit.js';
import { fill, makeVars, type G } from './named.js';
import { who } from './util.js';

export interface ParaSpec {
  id: string;
  /** Comma-separated exclusion groups. */
  group?: string;
  g?: G | 'any';
  xs?: readonly string[];
  ys?: readonly string[];
  user: readonly string[];
  bot: readonly string[];
  q: readonly QTemplate[];
  answer: string;
  /** Optional someone-else's-version distractor [user, bot], same placeholders plus fresh ones. */
  distract?: readonly (readonly [string, string])[];
}

export function para(spec: ParaSpec): Kind {
  const k: Kind = {
    id: spec.id,
    cat: 'paraphrase',
    plan(c: Ctx): FactOut | null {
      const all = [...spec.user, ...spec.bot, ...spec.q.map((q) => q(who(c.p, true))), spec.answer].join(' ');
      const vars = makeVars(c, all, spec);
      const f = (t: string) => fill(t, vars);
      const s = c.one(0.03, 0.97);
      const tag = c.tag(spec.id);
      const [pu, pb] = pick2(c, spec.user, spec.bot);
      const parts = [pair(c, s, f(pu), f(pb), tag)];
      if (spec.distract && c.r.chance(0.5)) {
        const [u, b] = c.r.pick(spec.distract);
        const dv = { ...makeVars(c, u + b, spec), F: c.friend(), C: c.coworker() };
        parts.push(pair(c, c.one(0, 1), fill(u, dv), fill(b, dv), undefined, false));
      }
      const q = spec.q.map(
        (t): QTemplate =>
          (w) =>
            f(t(w)),
      );
      return { parts, qs: [qd('paraphrase', [tag], f(spec.answer), ...q)] };
    },
  };
  if (spec.group) k.group = spec.group;
  return k;
}
