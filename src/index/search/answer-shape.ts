/**
 * What kind of answer a question asks for, and whether a message holds one: "when…" wants a
 * time ("yesterday", "last Sunday", "at 7pm", a date), "where…" a place (a name after "in", "at",
 * "to", "from"…), "how long…" a duration ("three days", "all night"). A message that holds
 * that kind of thing is more likely the answer than one that only shares the subject's words —
 * the answer-type match of classic question answering: general English, nothing of a dataset.
 */

export type AnswerShape = 'time' | 'place' | 'duration';

const ASKS_TIME =
  /^\s*(?:when\b|since when\b|how long ago\b|(?:(?:in|at|on|by|during)\s+)?(?:what|which)\s+(?:time|day|date|month|year|week|weekend|season)\b)/i;
const ASKS_PLACE =
  /^\s*(?:where\b|(?:(?:in|to|at|from)\s+)?(?:what|which)\s+(?:places?|cit(?:y|ies)|countr(?:y|ies)|towns?|restaurants?|states?|destinations?|locations?)\b)/i;

const WEEKDAY = '(?:mon|tues|wednes|thurs|fri|satur|sun)day';
const MONTH = '(?:january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)';
const TIME = new RegExp(
  [
    '\\b(?:today|tonight|yesterday|tomorrow|ago|earlier|recently|lately)\\b',
    `\\b(?:this|last|next|on)\\s+(?:morning|afternoon|evening|night|week|weekend|month|year|${WEEKDAY})\\b`,
    `\\b${WEEKDAY}s?\\b`,
    `\\b\\d{1,2}(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH}\\b`,
    `\\b${MONTH}\\s+\\d{1,2}\\b`,
    '\\b\\d{1,2}(?::\\d{2})?\\s?(?:am|pm)\\b',
    '\\b\\d{1,2}:\\d{2}\\b',
    '\\b(?:19|20)\\d{2}\\b',
  ].join('|'),
  'i',
);
/** A capitalized word after a preposition of place: "in Miami", "to Turks and Caicos", "at Lauduree". */
const PLACE = /\b(?:in|at|to|from|near|visit(?:ed|ing)?|around)\s+(?:the\s+)?\p{Lu}[\p{L}'’-]+/u;

const ASKS_DURATION = /^\s*(?:for\s+)?how long\b(?!\s+ago)/i;
const DURATION =
  /\b(?:\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|twelve|few|couple(?: of)?|several|many)\s+(?:more\s+)?(?:minutes?|hours?|days?|nights?|weeks?|months?|years?)\b|\ball (?:day|night|week|weekend|month|year)\b/i;

export function askedFor(question: string): AnswerShape | undefined {
  if (ASKS_DURATION.test(question)) return 'duration';
  if (ASKS_TIME.test(question)) return 'time';
  if (ASKS_PLACE.test(question)) return 'place';
  return undefined;
}

export function holds(shape: AnswerShape, text: string): boolean {
  return shape === 'time' ? TIME.test(text) : shape === 'place' ? PLACE.test(text) : DURATION.test(text);
}
