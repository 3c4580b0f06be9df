/**
 * DAILY_TOKEN_BUDGET: tokens (prompt + completion, answers and background together, from
 * usage.db) one chat may use per day in TZ — a group with forum topics as a whole: its topics
 * share one budget (core/group.ts), so opening topics does not multiply it. Off when unset or 0.
 * A chat that has used it gets one
 * line instead of an answer — its message is saved, never sent to the model — and its background
 * calls (summaries, consolidation, nightly facts and reflection) are refused by the LLM client
 * until the day ends. The bot's owners as each channel's settings list them (TELEGRAM_ALLOWED_USERS)
 * are exempt on that channel unless DAILY_TOKEN_BUDGET_EXEMPT_ALLOWED_USERS=false; embeddings, batched across chats, are not paused.
 */
import { addDays, differenceInMinutes } from 'date-fns';
import { TZDate } from '@date-fns/tz';
import type { InboundMessage } from '../../core/message.js';
import { isTopic } from '../../core/group.js';
import type { UsageStore } from './usage.js';
import type { UsageAccount } from '../../llm/accounting.js';
import { LRUCache } from 'lru-cache';

const fmt = (n: number) => n.toLocaleString('en-US');

export class TokenBudget {
  /** Per channel, its exempt users' ids and lower-case usernames. */
  private readonly exemptUsers: Map<string, Set<string>>;
  /** Chats whose latest sender was exempt: their background work is not paused either. */
  private readonly exemptChats = new LRUCache<string, boolean>({ max: 10_000 });

  constructor(
    private readonly usage: UsageStore,
    readonly limit: number | undefined,
    exemptUsers: Readonly<Record<string, readonly string[]>>,
    private readonly timezone: string,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.exemptUsers = new Map(Object.entries(exemptUsers).map(([channel, users]) => [channel, new Set(users.map((u) => u.toLowerCase()))]));
  }

  get enabled(): boolean {
    return this.limit !== undefined && this.limit > 0;
  }

  isExempt(msg: Pick<InboundMessage, 'channel' | 'userId' | 'username'>): boolean {
    const exempt = this.exemptUsers.get(msg.channel);
    if (!exempt || exempt.size === 0) return false;
    return exempt.has(msg.userId) || (msg.username !== undefined && exempt.has(msg.username.toLowerCase()));
  }

  /** Tokens the chat used today — for a forum topic, its whole group (what the budget counts). */
  async usedToday(chat: string): Promise<number> {
    return (await this.usage.groupDay(chat, this.usage.dayOf(this.now()))).total;
  }

  private async exhausted(chat: string): Promise<boolean> {
    return this.enabled && (await this.usedToday(chat)) >= this.limit!;
  }

  /** True when this message must not reach the model. Remembers whether the chat's sender is exempt. */
  async blocks(chat: string, msg: Pick<InboundMessage, 'channel' | 'userId' | 'username'>): Promise<boolean> {
    if (!this.enabled) return false;
    const exempt = this.isExempt(msg);
    this.exemptChats.set(chat, exempt);
    return !exempt && (await this.exhausted(chat));
  }

  /** For the LLM client: background calls of a chat over its budget are refused. */
  async pausesBackground(account: UsageAccount): Promise<boolean> {
    if (!this.enabled || account.kind === 'answer' || account.kind === 'embeddings' || account.chat === '*') return false;
    if (this.exemptChats.get(account.chat)) return false;
    return this.exhausted(account.chat);
  }

  /**
   * The one line the user gets: the budget, what was used, what it meant (`outcome`) and when it
   * resets. `lead` goes before it when something other than a message was refused (/compact).
   */
  async refusal(chat: string, outcome = 'so your message was saved but not sent to the model', lead = ''): Promise<string> {
    const now = this.now();
    const local = new TZDate(now.getTime(), this.timezone);
    const midnight = new TZDate(local.getFullYear(), local.getMonth(), local.getDate(), 0, 0, 0, this.timezone);
    const minutes = Math.max(1, differenceInMinutes(addDays(midnight, 1), now));
    const wait = minutes >= 60 ? `${Math.floor(minutes / 60)} h ${minutes % 60} min` : `${minutes} min`;
    const who = isTopic(chat) ? 'this group (its topics together)' : 'this chat';
    const spent = `${who} has used its daily budget of ${fmt(this.limit!)} tokens (${fmt(await this.usedToday(chat))} today)`;
    return `${lead ? `${lead}${spent}` : `${spent[0]!.toUpperCase()}${spent.slice(1)}`}, ${outcome}. The budget resets at midnight (${this.timezone}), in ${wait}.`;
  }
}
