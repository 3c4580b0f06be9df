/**
 * The real checks behind `npm run setup` (and the Telegram one of `npm run doctor`): the LLM
 * answers with this key and model (GET /models, then a 1-token chat call through the openai
 * SDK), Telegram knows the bot token (getMe through telegraf, at TELEGRAM_API_ROOT when set),
 * and the owner's id from the first private message the bot receives.
 *
 * Each failure is one line for the user, keeping "the remote said no" (key refused, unknown
 * model, token refused) apart from "could not reach it". Secrets are never part of a line.
 *
 * The owner's message is only looked at: getUpdates is called without an offset, which confirms
 * nothing, so Telegram keeps the update and the daemon answers it at its first start (it keeps
 * its own record of handled updates, workspace/telegram/updates.json, which setup never touches).
 */
import { Telegram } from 'telegraf';
import type { Update, UserFromGetMe } from 'telegraf/types';
import { LlmClient } from '../llm/client.js';
import { toLlmError, type LlmError } from '../llm/errors.js';
import { NO_API_KEY } from '../config/env.js';
import { scrubSecrets, silentLogger } from '../core/log.js';
import { isAbort, isTelegramError } from '../channels/telegram/errors.js';

export const OPENAI_URL = 'https://api.openai.com/v1';

export interface LlmTarget {
  baseUrl: string | undefined;
  apiKey: string | undefined;
  model: string;
  timeoutMs: number;
}

export type LlmCheck = { ok: true; ms: number; models: string[] | undefined } | { ok: false; problem: string };

function clientFor(t: LlmTarget): LlmClient {
  return new LlmClient(
    { openaiApiKey: t.apiKey || NO_API_KEY, openaiBaseUrl: t.baseUrl, model: t.model, modelBalanced: t.model, llmTimeoutMs: t.timeoutMs, llmMaxRetries: 0 },
    silentLogger(),
  );
}

/** The models the server lists; undefined when it offers no list (404 and the like). A refused key or an unreachable server is a problem. */
export async function listModels(t: LlmTarget): Promise<{ models: string[] | undefined } | { problem: string }> {
  try {
    const page = await clientFor(t).sdk.models.list({ timeout: t.timeoutMs, maxRetries: 0 });
    return { models: page.data.map((m) => m.id).sort() };
  } catch (err) {
    const e = toLlmError(err, false);
    if (e.kind === 'unreachable' || e.status === 401 || e.status === 403) return { problem: llmProblem(e, t) };
    return { models: undefined };
  }
}

/** The model answers a 1-token request with this key: proof the three settings work together. */
export async function checkLlm(t: LlmTarget, models?: string[]): Promise<LlmCheck> {
  const started = Date.now();
  try {
    await clientFor(t).chat({ messages: [{ role: 'user', content: 'Reply with: ok' }], maxTokens: 1, retries: 0, timeoutMs: t.timeoutMs });
  } catch (err) {
    const e = toLlmError(err, false);
    // An odd 200 (no choice for a 1-token request) still proves the server, the key and the model.
    if (e.code !== 'llm.bad_response') return { ok: false, problem: llmProblem(e, t, models) };
  }
  return { ok: true, ms: Date.now() - started, models };
}

export function llmWhere(t: Pick<LlmTarget, 'baseUrl'>): string {
  return t.baseUrl ?? OPENAI_URL;
}

function llmProblem(e: LlmError, t: LlmTarget, models?: string[]): string {
  const where = llmWhere(t);
  if (e.code === 'llm.timeout') return `no answer from ${where} within ${Math.round(t.timeoutMs / 1000)} s — check the server's load and the URL`;
  if (e.kind === 'unreachable') return `could not reach ${where}${networkReason(e)} — check the URL (most end in /v1) and that the server runs`;
  if (e.status === 401 || e.status === 403) return `key refused (${e.status}) by ${where} — check the API key`;
  if (e.status === 404) {
    const offers = models?.length
      ? ` — it offers: ${models.slice(0, 12).join(', ')}${models.length > 12 ? ', …' : ''}`
      : ' — check the model name, and the URL (most end in /v1)';
    return `${where} has no model "${t.model}" (404)${offers}`;
  }
  if (e.code === 'llm.rate_limited') return `${where} is rate limiting this key (429) — wait a minute, or check the plan or quota`;
  return scrubSecrets(`${where} refused the test request: ${e.message}`);
}

/** "(connection refused)" and the like, from the error's causes. */
function networkReason(err: unknown): string {
  const words: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ENOTFOUND: 'host not found',
    EAI_AGAIN: 'name lookup failed',
    ECONNRESET: 'connection reset',
    EHOSTUNREACH: 'host unreachable',
    ETIMEDOUT: 'timed out',
  };
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 6; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && e.code in words) return ` (${words[e.code]})`;
  }
  return '';
}

/** telegraf's Bot API client, at `apiRoot` when set (a local Bot API server, a test stand-in). */
export function telegramClient(token: string, apiRoot: string | undefined): Telegram {
  const root = apiRoot ? apiRoot.replace(/\/*$/, '/') : undefined;
  return new Telegram(token, { ...(root ? { apiRoot: root } : {}) });
}

/** A Bot API call that gives up after `timeoutMs`. */
export async function callWithin<T>(timeoutMs: number, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), timeoutMs);
  try {
    return await fn(ac.signal);
  } finally {
    clearTimeout(timer);
  }
}

export function getMe(tg: Telegram, timeoutMs: number): Promise<UserFromGetMe> {
  return callWithin(timeoutMs, (signal) => tg.callApi('getMe', {} as never, { signal: signal as never }));
}

/** Telegram refused the token (it answered), as opposed to not being reached. */
export function tokenRefused(err: unknown): boolean {
  return isTelegramError(err) && (err.code === 401 || err.code === 404);
}

export function telegramProblem(err: unknown, apiRoot: string | undefined): string {
  if (tokenRefused(err))
    return `Telegram refused the bot token (${(err as { code: number }).code}) — copy it again from @BotFather (/mybots, your bot, API Token)`;
  if (isTelegramError(err)) return scrubSecrets(`Telegram answered ${err.code}: ${err.description}`);
  return `could not reach ${apiRoot ?? 'api.telegram.org'}${networkReason(err)} — check the network, a proxy, or TELEGRAM_API_ROOT`;
}

export interface Owner {
  id: number;
  username: string | undefined;
  name: string;
}

export interface OwnerWait {
  /** Give up at this time (ms since epoch). */
  until: number;
  /** Pause between polls that brought nothing new (pending updates make Telegram answer at once). */
  gapMs: number;
  /**
   * Asked for each sender, a person's answer (it could be anyone who found the bot); false: keep
   * waiting for someone else. Messages already waiting are offered too (someone who pressed
   * Start before setup asked).
   */
  accept: (owner: Owner) => Promise<boolean>;
  /** Called once what was already waiting is known: the moment to ask for the message. */
  ready: () => void;
}

/** The sender of the first new private message, or why there is none. Confirms no update. */
export async function waitForOwner(tg: Telegram, opts: OwnerWait): Promise<{ owner: Owner } | { problem: string }> {
  const seen = new Set<number>();
  let first = true;
  while (Date.now() < opts.until) {
    const left = opts.until - Date.now();
    let updates: Update[];
    try {
      updates = await callWithin(left + 5000, (signal) =>
        tg.callApi('getUpdates', { timeout: first ? 0 : Math.max(0, Math.min(10, Math.floor(left / 1000))), limit: 100 } as never, { signal: signal as never }),
      );
    } catch (err) {
      if (isAbort(err)) break;
      if (isTelegramError(err) && err.code === 409) {
        return {
          problem:
            "another program is reading this bot's messages (a running bot? stop it first: npx pm2 stop membot), or a webhook is set — or pass --owner <your numeric user id>",
        };
      }
      return { problem: telegramProblem(err, undefined) };
    }
    const fresh = updates.filter((u) => !seen.has(u.update_id));
    for (const u of fresh) seen.add(u.update_id);
    if (first) opts.ready();
    for (const u of fresh) {
      const m = 'message' in u ? u.message : undefined;
      if (m?.chat.type !== 'private' || !m.from || m.from.is_bot) continue;
      const owner = { id: m.from.id, username: m.from.username, name: [m.from.first_name, m.from.last_name].filter(Boolean).join(' ') };
      if (await opts.accept(owner)) return { owner };
    }
    first = false;
    await new Promise((r) => setTimeout(r, Math.min(opts.gapMs, Math.max(0, opts.until - Date.now()))));
  }
  return { problem: 'no message reached the bot in time' };
}
