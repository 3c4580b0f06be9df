/**
 * Token counting for budgets, compaction and /status.
 *
 * - exact: the model's own BPE (gpt-tokenizer: o200k_base for gpt-4o/4.1/5/o-series,
 *   cl100k_base for older), with OpenAI's chat framing (3 tokens per message, 3 to prime the
 *   reply) and the cookbook's accounting for function definitions.
 * - estimate: models with no known tokenizer; characters / 3.5 as in seed 001.
 * - images: what the model's catalogue entry says one costs (llm/vision.ts), in both modes.
 *
 * Counts are cached by message object (a WeakMap, so they go with the session) and by content
 * for other text (a Map keyed by a private copy of the string, bounded by entries and by
 * characters; see `remember`).
 */
import { LRUCache } from 'lru-cache';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { Encoding } from './catalogue.js';
import { loadBpeRanks } from './bpe-ranks.js';
import { imagePartTokens } from './vision.js';

export type TokenizerMode = 'exact' | 'estimate';

export interface TokenCounter {
  readonly mode: TokenizerMode;
  readonly encoding: Encoding | null;
  countText(text: string): number;
  countMessages(messages: ChatCompletionMessageParam[]): number;
  countTools(tools: ChatCompletionTool[]): number;
}

/**
 * Tokens of a request's system parts: the system prompt, and the per-message system message
 * (`# Relevant Memory`) with its message overhead when there is one. What /status records per
 * turn and what compaction sets aside for them.
 */
export function promptTokens(tokens: Pick<TokenCounter, 'countText'>, systemPrompt: string, turnPrompt: string): number {
  return tokens.countText(systemPrompt) + (turnPrompt ? tokens.countText(turnPrompt) + PER_MESSAGE + 1 : 0);
}

const PER_MESSAGE = 3;
const REPLY_PRIMING = 3;
/** Strings counted recently (prompt lines, tool texts); messages are cached by object instead. */
const CACHE_LIMIT = 20_000;
/** Characters all cached keys may hold together (at most 8 MB even for two-byte text). */
const CACHE_CHARS = 4_000_000;
/** A text longer than this is counted every time: one such text would push out thousands of lines. */
const CACHE_MAX_KEY = CACHE_CHARS / 8;

/**
 * A copy of `text` that does not share memory with a longer string. V8 represents a substring
 * (slice, split, a regex match) as a view into its parent and keeps the whole parent alive:
 * a 60-character line cut out of a 70 KB prompt held on to the prompt, once per turn, and one
 * long chat grew to gigabytes. Concatenating builds a fresh string; slicing that one keeps
 * only it (one character longer than the text) alive.
 */
function detached(text: string): string {
  return ` ${text}`.slice(1);
}

/** The text a message contributes, the way the chat format serializes it. */
function messageParts(m: ChatCompletionMessageParam): string[] {
  const parts: string[] = [m.role];
  if (typeof m.content === 'string') parts.push(m.content);
  else if (Array.isArray(m.content)) {
    for (const p of m.content) if ('text' in p && typeof p.text === 'string') parts.push(p.text);
  }
  if ('name' in m && typeof m.name === 'string') parts.push(m.name);
  if (m.role === 'assistant' && m.tool_calls) {
    for (const c of m.tool_calls) if (c.type === 'function') parts.push(c.function.name, c.function.arguments);
  }
  if (m.role === 'tool') parts.push(m.tool_call_id);
  return parts;
}

/** What the images of a message cost (recorded when each part was made: llm/vision.ts). */
function imagesIn(m: ChatCompletionMessageParam): number {
  if (!Array.isArray(m.content)) return 0;
  let n = 0;
  for (const p of m.content) if (p.type === 'image_url') n += imagePartTokens(p);
  return n;
}

abstract class BaseCounter implements TokenCounter {
  abstract readonly mode: TokenizerMode;
  abstract readonly encoding: Encoding | null;
  /** Recently counted texts, bounded by entries and by characters; the least recently used leave first. */
  private readonly cache = new LRUCache<string, number>({ max: CACHE_LIMIT, maxSize: CACHE_CHARS, sizeCalculation: (_n, text) => Math.max(1, text.length) });
  /**
   * Counts by message object (stored messages map to one request object each, see
   * llm/messages.ts): freed with their session, so the string cache can stay small.
   */
  private readonly perMessage = new WeakMap<ChatCompletionMessageParam, number>();
  protected abstract raw(text: string): number;

  countText(text: string): number {
    if (text.length === 0) return 0;
    const hit = this.cache.get(text);
    if (hit !== undefined) return hit;
    const n = this.raw(text);
    // Under a detached copy: a slice of a big text would keep the whole text alive.
    if (text.length <= CACHE_MAX_KEY) this.cache.set(detached(text), n);
    return n;
  }

  countMessages(messages: ChatCompletionMessageParam[]): number {
    let n = REPLY_PRIMING;
    for (const m of messages) {
      let c = this.perMessage.get(m);
      if (c === undefined) {
        c = PER_MESSAGE + imagesIn(m);
        for (const p of messageParts(m)) c += this.countText(p);
        this.perMessage.set(m, c);
      }
      n += c;
    }
    return n;
  }

  /** The OpenAI cookbook's accounting for function definitions (num_tokens_for_tools). */
  countTools(tools: ChatCompletionTool[]): number {
    if (tools.length === 0) return 0;
    const o200k = this.encoding !== 'cl100k_base';
    const funcInit = o200k ? 7 : 10;
    let n = 0;
    for (const t of tools) {
      if (t.type !== 'function') continue;
      const f = t.function;
      n += funcInit;
      n += this.countText(`${f.name}:${(f.description ?? '').replace(/\.$/, '')}`);
      const props = (f.parameters as { properties?: Record<string, { type?: string; description?: string; enum?: unknown[] }> } | undefined)?.properties ?? {};
      const keys = Object.keys(props);
      if (keys.length > 0) {
        n += 3;
        for (const k of keys) {
          const p = props[k]!;
          n += 3;
          if (Array.isArray(p.enum)) {
            n -= 3;
            for (const item of p.enum) n += 3 + this.countText(String(item));
          }
          n += this.countText(`${k}:${p.type ?? 'object'}:${(p.description ?? '').replace(/\.$/, '')}`);
        }
      }
    }
    return n + 12;
  }
}

export class EstimateCounter extends BaseCounter {
  readonly mode = 'estimate' as const;
  readonly encoding = null;
  protected raw(text: string): number {
    return Math.ceil(text.length / 3.5);
  }
}

type CountFn = (text: string, opts: { disallowedSpecial: Set<string> }) => number;

export class ExactCounter extends BaseCounter {
  readonly mode = 'exact' as const;
  constructor(
    readonly encoding: Encoding,
    private readonly count: CountFn,
  ) {
    super();
  }
  protected raw(text: string): number {
    if (text.length <= MAX_RUN) return this.bpe(text);
    // BPE work grows with the square of a piece's length, and the pre-tokenizer leaves a run of
    // letters, spaces or CJK as one piece: 200,000 of them took minutes. A run is cut into
    // pieces of MAX_RUN (each may then count a token more than the whole run would); text
    // without such runs is counted in one call, exactly.
    let n = 0;
    let start = 0;
    let runStart = 0;
    let space = isSpace(text.charCodeAt(0));
    for (let i = 1; i < text.length; i++) {
      const s = isSpace(text.charCodeAt(i));
      if (s !== space) {
        space = s;
        runStart = i;
      } else if (i - runStart >= MAX_RUN) {
        n += this.bpe(text.slice(start, i));
        start = runStart = i;
      }
    }
    return n + this.bpe(text.slice(start));
  }

  private bpe(text: string): number {
    // Special-token strings typed by a user ("<|endoftext|>") are counted as plain text, as
    // the API treats them, instead of throwing.
    return this.count(text, { disallowedSpecial: NO_SPECIAL });
  }

  /**
   * A long text (a system prompt with notes that grow every turn) is counted as the sum of its
   * lines, each cached, so only new lines cost BPE work. Exact, not an estimate: both
   * encodings' pre-tokenizers never let a chunk run past a newline into a following character
   * that is neither whitespace nor "/" (o200k's punctuation chunk may swallow "\n/"), and BPE
   * never merges across chunks — so cutting there changes nothing (tested against whole counts).
   */
  override countText(text: string): number {
    if (text.length < LONG_TEXT) return super.countText(text);
    let n = 0;
    let start = 0;
    for (let i = text.indexOf('\n'); i !== -1 && i + 1 < text.length; i = text.indexOf('\n', i + 1)) {
      const next = text.charCodeAt(i + 1);
      if (next === 0x2f || isSpace(next)) continue;
      n += super.countText(text.slice(start, i + 1));
      start = i + 1;
    }
    return n + super.countText(text.slice(start));
  }
}

/** Longest run of spaces, or of anything else, handed to the BPE as one piece. */
const MAX_RUN = 256;
const NO_SPECIAL = new Set<string>();

/** The characters /\s/ matches, by UTF-16 code. */
function isSpace(c: number): boolean {
  return (
    c === 32 ||
    (c >= 9 && c <= 13) ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** Texts at least this long are counted line by line (ExactCounter.countText). */
const LONG_TEXT = 2_000;

/** A counter for `encoding` (loads that BPE table once, see bpe-ranks.ts), or the estimate when null. */
export async function createTokenCounter(encoding: Encoding | null): Promise<TokenCounter> {
  if (encoding === null) return new EstimateCounter();
  const ranks = await loadBpeRanks(encoding);
  const { GptEncoding } = await import('gpt-tokenizer/GptEncoding');
  return new ExactCounter(encoding, GptEncoding.getEncodingApi(encoding, () => ranks).countTokens as CountFn);
}
