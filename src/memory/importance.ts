/**
 * Importance scoring for truncation when no summary can be had (seed 004, "Importance Scoring
 * Algorithm" and "Smart Pruning"). Messages are grouped into exchanges — a user message and
 * everything up to the next user message — so a user message, its answer and any tool calls
 * between them are kept or dropped together, and a tool result never loses its call.
 */
import type { SessionMessage } from '../sessions/model.js';

export interface Unit {
  /** Indices into the message list, ascending. */
  indices: number[];
  score: number;
  /** Never dropped by score: directives, errors and the corrections that follow them. */
  protected: boolean;
}

const DIRECTIVE = /\b(always|never|don'?t|do not|must|make sure|remember|from now on|please use|i prefer|i want you to|call me)\b/i;
const ERROR = /\b(error|exception|failed|failure|traceback|stack trace|crash(ed)?|bug)\b/i;
const CORRECTION = /\b(actually|correction|i meant|that'?s wrong|that is wrong|not what i|no,|wrong)\b/i;
const CASUAL = /^(hi|hello|hey|thanks|thank you|thx|ok|okay|cool|great|nice|lol|bye|good (morning|night))\b[\s!.?]*$/i;

export function isDirective(text: string): boolean {
  return DIRECTIVE.test(text);
}

/** Score of one message, 0..1. `fromEnd` is its distance from the end of the list (1 = last). */
export function scoreMessage(m: SessionMessage, fromEnd: number, now = Date.now()): number {
  if (m.role === 'system') return 1;
  let s = 0.5;
  if (m.toolCalls && m.toolCalls.length > 0) s += 0.3;
  if (m.role === 'tool') s += 0.2;
  if (m.role === 'user' && DIRECTIVE.test(m.content)) s += 0.2;
  if (ERROR.test(m.content)) s += 0.3;
  if (CORRECTION.test(m.content)) s += 0.2;
  if (CASUAL.test(m.content.trim())) s -= 0.2;
  const days = (now - Date.parse(m.timestamp)) / 86_400_000;
  if (Number.isFinite(days) && days > 0) s -= 0.1 * Math.floor(days);
  if (fromEnd <= 5) s += 0.4;
  else if (fromEnd <= 10) s += 0.2;
  else if (fromEnd <= 20) s += 0.1;
  return Math.max(0, Math.min(1, s));
}

/** Groups non-system messages into exchanges and scores each (the mean of its messages). */
export function buildUnits(messages: SessionMessage[], now = Date.now()): Unit[] {
  const units: Unit[] = [];
  let current: number[] = [];
  const flush = () => {
    if (current.length > 0) units.push(scoreUnit(messages, current, now));
    current = [];
  };
  messages.forEach((m, i) => {
    if (m.role === 'system') return;
    if (m.role === 'user') flush();
    current.push(i);
  });
  flush();
  // An error followed by a correction is kept as a pair: the correction is what the model must
  // not forget, and it makes no sense without the error it corrects.
  for (let i = 0; i + 1 < units.length; i++) {
    const a = units[i]!.indices.map((k) => messages[k]!.content).join('\n');
    const b = units[i + 1]!.indices.map((k) => messages[k]!.content).join('\n');
    if (ERROR.test(a) && CORRECTION.test(b)) {
      units[i]!.protected = true;
      units[i + 1]!.protected = true;
    }
  }
  return units;
}

function scoreUnit(messages: SessionMessage[], indices: number[], now: number): Unit {
  const n = messages.length;
  const scores = indices.map((i) => scoreMessage(messages[i]!, n - i, now));
  const first = messages[indices[0]!]!;
  return {
    indices,
    score: scores.reduce((a, b) => a + b, 0) / scores.length,
    protected: first.role === 'user' && isDirective(first.content),
  };
}

/**
 * Chooses units to drop, lowest score first (oldest first on ties), until the dropped units'
 * `cost` adds up to `excess`. Protected units go last, oldest first, and only when
 * `allowProtected` (a hard token limit) — otherwise they stay whatever the excess.
 */
export function chooseDrops(units: Unit[], cost: (u: Unit) => number, excess: number, allowProtected: boolean): Set<number> {
  const dropped = new Set<number>();
  const order = units
    .map((u, pos) => ({ u, pos }))
    .sort((a, b) => Number(a.u.protected) - Number(b.u.protected) || (a.u.protected ? a.pos - b.pos : a.u.score - b.u.score || a.pos - b.pos));
  let freed = 0;
  for (const { u } of order) {
    if (freed >= excess) break;
    if (u.protected && !allowProtected) break;
    for (const i of u.indices) dropped.add(i);
    freed += cost(u);
  }
  return dropped;
}
