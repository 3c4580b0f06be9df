/**
 * Reply context: when a user answers an earlier message ("what did you mean by this?"), the
 * model needs the message being answered. Its text (or caption, or the part the user
 * highlighted with Telegram's quote feature) is put in front of the user's words, cut to
 * QUOTE_LIMIT characters and marked as a quote, so the model reads it as context the user
 * pointed at, not as something the user typed. It stays in the user's message (user role)
 * and so in the session: the exchange still makes sense when read back later.
 */
import type { Message } from 'telegraf/types';
import type { BotIdentity } from './inbound.js';

/** Characters of the quoted message kept (the question is about it, not a copy of it). */
export const QUOTE_LIMIT = 500;

export interface QuotedMessage {
  /** Who wrote it: "you" (the bot itself) or the sender's name. */
  author: string;
  text: string;
}

/** The message this one replies to, if it has readable text. */
export function quotedMessage(m: Message & Record<string, any>, bot: BotIdentity): QuotedMessage | undefined {
  const r = m.reply_to_message as (Message & Record<string, any>) | undefined;
  // Telegram's own partial quote (the user selected part of the message) wins over the whole.
  const partial: unknown = m.quote?.text;
  const whole: unknown = r?.text ?? r?.caption;
  const raw = typeof partial === 'string' && partial.trim() ? partial : typeof whole === 'string' ? whole : '';
  if (!r || raw.trim() === '') return undefined;
  const from = r.from as { id: number; first_name?: string; last_name?: string; username?: string } | undefined;
  const author =
    from?.id === bot.id ? 'you' : [from?.first_name, from?.last_name].filter(Boolean).join(' ') || (from?.username ? `@${from.username}` : 'someone');
  return { author, text: cut(raw.trim(), QUOTE_LIMIT) };
}

/** The user's text with the quote in front, as the model and the session see it. */
export function withQuote(text: string, quote: QuotedMessage | undefined): string {
  // A command stays a command: "/new" sent as a reply must still start a new conversation.
  if (!quote || text.startsWith('/')) return text;
  const body = quote.text
    .split('\n')
    .map((l) => `> ${l}`)
    .join('\n');
  return `[Quoting a message by ${quote.author}]\n${body}\n\n${text}`;
}

function cut(text: string, limit: number): string {
  if (text.length <= limit) return text;
  let end = limit;
  // Never split a surrogate pair.
  if (/[\uD800-\uDBFF]/.test(text[end - 1] ?? '')) end--;
  return `${text.slice(0, end)}…`;
}
