/** Deterministic, realistic-looking chat text for benchmarks (no dataset, no network). */

export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NAMES = ['Anna', 'Ben', 'Chloe', 'Dmitri', 'Elena', 'Farid', 'Grace', 'Hiro', 'Ines', 'Jonas', 'Kemal', 'Lena', 'Marco', 'Nadia', 'Oskar', 'Priya'];
const PLACES = ['Berlin', 'Lisbon', 'Kyoto', 'Toronto', 'Nairobi', 'Oslo', 'Lima', 'Seoul', 'Porto', 'Denver'];
const TOPICS = [
  'the quarterly report',
  'my running plan',
  'a pasta recipe',
  'the new laptop',
  'our garden',
  'the flight on Friday',
  'a bug in the parser',
  'the dentist appointment',
  'a birthday present',
  'the book club',
  'my Spanish lessons',
  'the rent increase',
  'the team offsite',
  'a weekend hike',
  'the database migration',
  "my sister's wedding",
];
const OPENERS = [
  'Can you help me with',
  'I was thinking about',
  'Quick question about',
  'Remind me about',
  'What do you think of',
  'I need ideas for',
  'Update on',
];
const TAILS = [
  'I want to finish it before {day}.',
  'Maybe {name} can join us in {place}.',
  'It costs about {n} euros, is that a lot?',
  'Last time it took {n} minutes.',
  'The deadline moved to {day}.',
  'I talked to {name} yesterday and they agreed.',
  'Could we plan it for {day} morning?',
  'Please keep it short, I am on my phone.',
];
const DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const REPLIES = [
  'Sure! Here is a simple plan: start with the essentials, then add details once the basics work.',
  'Good idea. I would check with {name} first, then book something in {place} for {day}.',
  'That sounds reasonable. {n} is within the usual range; compare two or three options before deciding.',
  'Here are three suggestions:\n1. Keep a short list.\n2. Do the hardest part first.\n3. Review it on {day}.',
  'Noted. I will remember that {name} prefers {place} and that the deadline is {day}.',
];

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)]!;
}

function fill(r: () => number, s: string): string {
  return s
    .replace(/\{name\}/g, () => pick(r, NAMES))
    .replace(/\{place\}/g, () => pick(r, PLACES))
    .replace(/\{day\}/g, () => pick(r, DAYS))
    .replace(/\{n\}/g, () => String(Math.floor(r() * 500) + 5));
}

export function userText(r: () => number): string {
  return `${pick(r, OPENERS)} ${pick(r, TOPICS)}? ${fill(r, pick(r, TAILS))}`;
}

export function assistantText(r: () => number): string {
  return fill(r, pick(r, REPLIES));
}

export function query(r: () => number): string {
  return `${pick(r, ['what did I say about', 'when is', 'who joins', 'how much was'])} ${pick(r, TOPICS)} ${pick(r, NAMES)}`;
}
