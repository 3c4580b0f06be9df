/**
 * Whether a user's message asks the bot to remember something, and what: "remember that my cat
 * is called Miso" → "My cat is called Miso." (RememberRequest 35 keeps it as a fact when the
 * model did not). Only explicit requests count — a lead-in at the start of a sentence
 * ("remember…", "don't forget…", "note that…", "keep in mind…", "save this:…", and the same in
 * a few other languages), or "…, remember that." at the end. A question is not a request:
 * "do you remember my cat?", "remember my cat?", "remember when we met?" keep nothing; "can you
 * remember that my cat is Miso?" is a request (the "that" says what to keep). "Remember to…" and
 * "don't forget to…" ask for a reminder, not a fact, and are left to the model.
 */

/** The words kept at most; longer ones are cut on a word (the message itself stays in the notes and the index). */
export const FACT_MAX_CHARS = 500;

/** What a message asks to keep: its own words, or ("remember that." alone) the user's message before it. */
export type RememberAsk = { words: string } | { previous: true };

// Lookarounds instead of \b: \b knows ASCII letters only, and the lead-ins include Cyrillic.
const END = String.raw`(?=$|[\s,:;.!?—–-])`;
const POLITE = String.raw`(?:(?:ok(?:ay)?|hey|so|and|also|oh|btw|bot)[,!]?\s+)*(?:(?:please|pls|plz|kindly)[,!]?\s+)?`;
const ASK = String.raw`(?:(?:(?:can|could|would|will)\s+you|i\s+(?:want|need)\s+you\s+to|i'?d\s+like\s+you\s+to|you\s+should)\s+(?:please\s+)?)`;
/** English verbs that may take their object straight away ("remember my wife's name is Ann"). */
const BARE = String.raw`(?:remember|memori[sz]e|don'?t\s+forget|do\s+not\s+forget|never\s+forget|(?:keep|bear)(?:\s+(?:this|that|it))?\s+in\s+mind)`;
/** Lead-ins that need "that", "this:" or a colon before the words ("note that…", "save this: …"). */
const JOINED = [
  String.raw`(?:make|take)\s+(?:a\s+)?note(?:\s+of)?`,
  String.raw`note(?:\s+down)?`,
  String.raw`(?:save|store|keep)(?:\s+(?:this|it))?(?:\s+(?:to|in|into)\s+(?:your\s+|my\s+)?memory)?`,
  String.raw`add(?:\s+(?:this|that))?\s+to\s+(?:your\s+)?memory`,
  String.raw`write\s+(?:this\s+|that\s+)?down`,
  // de, es, fr, pt, it, ru: the imperative and its "that" (a question there is another word: "¿recuerdas…?").
  String.raw`merk(?:e)?\s+dir|vergiss\s+nicht|denk\s+daran`,
  String.raw`recuerda|acuérdate\s+de|no\s+olvides|no\s+te\s+olvides\s+de|apunta|anota`,
  String.raw`souviens-toi|rappelle-toi|retiens|n'oublie\s+pas`,
  String.raw`lembra(?:-te)?|lembre-se|não\s+esque(?:ç|c)as?|anote`,
  String.raw`ricorda(?:ti)?|non\s+dimenticare|tieni\s+a\s+mente|annota`,
  String.raw`запомни(?:те)?|не\s+забудь(?:те)?|учти(?:те)?|имей(?:те)?\s+в\s+виду`,
].join('|');
/** What joins a lead-in to its words. */
const THAT = String.raw`(?:[,:]?\s*(?:that|this|dass|que|qu'|de\s+que|che|что)${END}|\s*[:—–-])`;
/** A lead-in with nothing after it but "that", "this" or "it": the words are before it, or in the message before. */
const BACK = String.raw`(?:that|this|it|das|esto|eso|ça|cela|isso|isto|questo|это)?(?:\s+please)?\s*[.!]*\s*$`;

const LEAD = new RegExp(String.raw`^${POLITE}(?:${ASK})?(?:(?<bare>${BARE})|(?:${JOINED}))${END}(?<join>${THAT})?\s*`, 'iu');
/** The lead-in was asked as a question ("can you remember that…?"). */
const ASKED = new RegExp(String.raw`^${POLITE}${ASK}`, 'iu');
/** Nothing after the lead-in but "that", "this" or "it". */
const ONLY_BACK = new RegExp(`^${BACK}`, 'iu');
/** "…, remember that." / "… — please note this!" at the end of the message. */
const TAIL = new RegExp(String.raw`(?:^|[,;.!—–-])\s*(?:please\s+)?(?:${BARE}|${JOINED})\s+(?:that|this|it)(?:\s+please)?\s*[.!]*\s*$`, 'iu');
/** Recall, not a request: "remember when…", "remember what I said", "don't forget to…" (a reminder). */
const NOT_A_FACT = /^(?:when|what|who|whom|whose|where|why|how|which|if|whether|to)(?=$|[\s,.!?])/iu;

/** Where sentences start: the message's start, after a line break or a sentence's end, after a tag like "[Voice message, transcribed]". */
function sentenceStarts(text: string): number[] {
  const starts = [0];
  const tag = /^\[[^\]\n]{1,80}\]\s*/.exec(text);
  if (tag) starts.push(tag[0].length);
  for (const m of text.matchAll(/[.!?…\n]+\s*/g)) starts.push(m.index + m[0].length);
  return [...new Set(starts)].filter((i) => i < text.length);
}

/** The words up to the first sentence that is a question after the first (a request then a question about it). */
function withoutLaterQuestions(words: string): string {
  const m = /^[\s\S]*?[.!…\n](?=\s*[^.!?…\n]*\?)/u.exec(words);
  return m && m[0].trim().length > 0 ? m[0] : words;
}

/** One fact from the user's words: trimmed, a capital first letter, at most FACT_MAX_CHARS (cut on a word). */
export function asFact(words: string): string {
  let text = words.replace(/\s+/g, ' ').trim();
  text = text.replace(/(?:[,\s]+(?:please|thanks|thank you))+[.!]*$/iu, '').trim();
  if (text.length > FACT_MAX_CHARS) {
    const cut = text.slice(0, FACT_MAX_CHARS - 1);
    const space = cut.lastIndexOf(' ');
    text = `${(space > FACT_MAX_CHARS / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:]+$/u, '')}…`;
  }
  return text.charAt(0).toLocaleUpperCase() + text.slice(1);
}

/** The message's request to remember something, or undefined when it makes none. */
export function rememberAsk(text: string): RememberAsk | undefined {
  const message = text.trim();
  if (message === '' || message.startsWith('/')) return undefined;
  for (const start of sentenceStarts(message)) {
    const rest = message.slice(start);
    const lead = LEAD.exec(rest);
    if (!lead) continue;
    const joined = lead.groups!.join !== undefined;
    // "note my…", "save the file" are not requests: those verbs need "that", "this:" or a colon.
    if (!lead.groups!.bare && !joined && !ONLY_BACK.test(rest.slice(lead[0].length))) continue;
    let words = rest.slice(lead[0].length).replace(/^[\s,:;—–-]+/u, '');
    if (!joined && NOT_A_FACT.test(words)) continue;
    if (ONLY_BACK.test(words)) {
      // "My cat is Miso. Remember that!" — the words are before it; alone, they are in the message before.
      const before = message.slice(0, start).trim();
      if (!before) return { previous: true };
      return before.endsWith('?') ? undefined : fact(before);
    }
    words = withoutLaterQuestions(words);
    // A question unless it was asked as one ("can you remember that…?") with "that" or a colon.
    if (words.trim().endsWith('?')) {
      if (!(joined && ASKED.test(rest))) continue;
      words = words.trim().replace(/\?+$/u, '');
    }
    return fact(words);
  }
  const tail = TAIL.exec(message);
  if (tail) {
    const before = message.slice(0, tail.index).trim();
    if (before && !before.endsWith('?')) return fact(before);
  }
  return undefined;
}

/** A fact says something of something: two words at least ("remember me", "remember him" keep nothing). */
function fact(words: string): RememberAsk | undefined {
  const text = asFact(words);
  return text.split(/\s+/u).filter((w) => /[\p{L}\p{N}]/u.test(w)).length >= 2 ? { words: text } : undefined;
}
