/**
 * The memory page's HTTP server (fastify): one static page + script, and JSON APIs over
 * MemoryPageData. Security model (docs/memory-page.md, "Security model"):
 * - every request needs the token: `/?token=` once (it becomes an HttpOnly SameSite=Strict
 *   cookie, and the browser is sent to `/` so the token leaves the address bar), then the cookie,
 *   or `Authorization: Bearer <token>` for scripts; anything else is 401;
 * - the Host header must name this server (a DNS-rebinding page cannot borrow the cookie);
 * - state-changing requests also need an Origin of this server and a JSON body (no form can
 *   post cross-site without a preflight we never grant);
 * - a chat is only ever one of the listed chats, mapped to its folder by MemoryService (ids are
 *   encoded, so no parameter can name a path); every text is escaped by the page (textContent),
 *   and a strict Content-Security-Policy forbids inline script as a second line of defence.
 * Edits go through MemoryFiles.update (locked, atomic, versioned), ForgetService and
 * MemoryIndex.confirmFact/correctFact: the same code paths as the chat commands and tools; a
 * held memory write is approved or rejected through PendingApprovals, as `/memory approve` does.
 * Saving MEMORY.md and forgetting run only after their preview (a one-use token, confirm.ts).
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import cookie from '@fastify/cookie';
import type { Logger } from '../core/log.js';
import { isAppError, type ErrorCode } from '../core/errors.js';
import { MEMORY_FILE, withNewline } from '../memory/files.js';
import { MemoryPageData, hashText, type ChatSummary, type PageDeps } from './data.js';
import { sameToken } from './token.js';
import { MIN_FORGET_CHARS } from '../features/privacy/forget.js';
import { PAGE_HTML, PAGE_JS } from './page.js';
import { Confirmations } from './confirm.js';
import { lineDiff } from './diff.js';
import { allowedHosts, pageAddress } from './address.js';

export const COOKIE = 'membot_page';
const BODY_LIMIT = 2 * 1024 * 1024;
/** The correct_fact tool's bounds for a fact's text. */
const FACT_MIN_CHARS = 3;
const FACT_MAX_CHARS = 1000;

export interface MemoryPageOptions {
  token: string;
  host: string;
  /** MEMORY_PAGE_ORIGIN: the addresses it is also opened at (behind a TLS proxy). */
  origins?: readonly string[];
  /** 0: the OS picks (tests). */
  port: number;
}

export interface MemoryPage {
  url: string;
  close(): Promise<void>;
}

class Conflict extends Error {}

const STALE_MEMORY =
  'Not saved: MEMORY.md changed since you opened it (the bot or another edit wrote it). Reload to see the new text, then make your edit again.';
const NEEDS_PREVIEW = 'Preview first: send the same request without "confirm", then again with "confirm" set to the token the preview gave.';
const STALE_PREVIEW =
  'Nothing changed: this preview has run out (already used, older than 10 minutes, or made before a restart) or does not match the request. Preview again.';

const UNREADABLE = new Set<ErrorCode>(['storage.not_a_file', 'storage.path_escape', 'storage.read_timeout']);

function originMatches(req: FastifyRequest, origins: readonly string[]): boolean {
  const origin = req.headers.origin;
  if (!origin || origin === 'null') return false;
  if (origins.includes(origin)) return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

function bearer(req: FastifyRequest): string | undefined {
  const h = req.headers.authorization;
  return h?.startsWith('Bearer ') ? h.slice(7).trim() : undefined;
}

export async function startMemoryPage(deps: PageDeps, log: Logger, opts: MemoryPageOptions): Promise<MemoryPage> {
  let hosts = new Set<string>();
  const app = buildServer(deps, log, opts, () => hosts);
  await app.listen({ host: opts.host, port: opts.port });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  // Known once the port is (0: the OS picks it); until then no request is answered anyway.
  hosts = allowedHosts(opts.host, port, opts.origins ?? []);
  return { url: pageAddress(opts.host, port), close: () => app.close() };
}

function buildServer(deps: PageDeps, log: Logger, opts: MemoryPageOptions, hostsNow: () => Set<string>): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: BODY_LIMIT });
  const data = new MemoryPageData(deps);
  const confirmations = new Confirmations();
  void app.register(cookie);

  const origins = opts.origins ?? [];

  app.addHook('onRequest', async (req, reply) => {
    void reply.headers({
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
      'content-security-policy':
        "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'none'; base-uri 'none'",
    });
    if (!hostsNow().has((req.headers.host ?? '').toLowerCase())) {
      return reply.code(421).type('text/plain').send('Wrong host: open the page at the address the daemon printed.');
    }
    const url = new URL(req.url, 'http://x');
    const fromQuery = url.pathname === '/' && req.method === 'GET' ? (url.searchParams.get('token') ?? undefined) : undefined;
    if (fromQuery !== undefined && sameToken(fromQuery, opts.token)) {
      void reply.setCookie(COOKIE, opts.token, { httpOnly: true, sameSite: 'strict', path: '/' });
      return reply.redirect('/', 303);
    }
    const given = bearer(req) ?? req.cookies[COOKIE];
    if (!sameToken(given, opts.token)) {
      return reply
        .code(401)
        .type(url.pathname.startsWith('/api/') ? 'application/json' : 'text/plain')
        .send(
          url.pathname.startsWith('/api/')
            ? { error: 'Token required.' }
            : 'Token required: open the link the daemon printed at start (npm run doctor prints it again).',
        );
    }
    if (req.method !== 'GET' && req.method !== 'HEAD' && !originMatches(req, origins)) {
      return reply.code(403).send({ error: 'Refused: this change did not come from the memory page itself (Origin missing or foreign).' });
    }
    return undefined;
  });

  app.setErrorHandler((err: Error & { statusCode?: number }, _req, reply) => {
    // A memory file the bot's own readers refuse (a link out, not a regular file) or that did
    // not come within the deadline: said plainly; nothing of the file is sent.
    if (isAppError(err) && UNREADABLE.has(err.code)) {
      log.warn({ code: err.code, err: err.message }, 'memory page: a memory file could not be read');
      return reply.code(503).send({ error: `${err.message}. Nothing else is affected; fix or remove that file, then reload.` });
    }
    const code = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (code === 500) log.error({ err: err.message }, 'memory page: request failed');
    void reply.code(code).send({ error: code === 500 ? 'Something went wrong on the server; the log has the details.' : err.message });
  });

  app.get('/', async (_req, reply) => reply.type('text/html; charset=utf-8').send(PAGE_HTML));
  app.get('/app.js', async (_req, reply) => reply.type('text/javascript; charset=utf-8').send(PAGE_JS));

  /** The listed chat named by `chat`, or a 404 already sent. */
  const chatOf = async (key: unknown, reply: FastifyReply): Promise<ChatSummary | undefined> => {
    const chat = typeof key === 'string' ? await data.find(key) : undefined;
    if (!chat) void reply.code(404).send({ error: 'No such chat.' });
    return chat;
  };
  type Q = { Querystring: Record<string, string | undefined> };
  type B = { Body: Record<string, unknown> };

  app.get('/api/chats', async () => ({ chats: await data.chats() }));

  app.get<Q>('/api/chat', async (req, reply) => {
    const chat = await chatOf(req.query.chat, reply);
    if (!chat) return reply;
    return {
      chat,
      memory: await data.memory(chat),
      notes: await data.notes(chat),
      history: await data.history(chat),
      facts: data.facts(chat),
      entities: data.entities(chat),
      session: await data.session(chat),
      timeline: await data.timeline(chat),
      pending: (await deps.pending?.list(chat)) ?? [],
      index: deps.index.enabled ? 'on' : `off: ${deps.index.disabledReason ?? 'unavailable'}`,
    };
  });

  app.get<Q>('/api/usage', async (req, reply) => {
    const chat = await chatOf(req.query.chat, reply);
    if (!chat) return reply;
    return data.usage(chat);
  });

  app.get<Q>('/api/version', async (req, reply) => {
    const chat = await chatOf(req.query.chat, reply);
    if (!chat) return reply;
    const text = await data.version(chat, Number(req.query.n));
    return text === undefined ? reply.code(404).send({ error: 'No such version.' }) : { text };
  });

  app.get<Q>('/api/search', async (req, reply) => {
    const chat = await chatOf(req.query.chat, reply);
    if (!chat) return reply;
    const q = (req.query.q ?? '').trim().slice(0, 500);
    if (!q) return reply.code(400).send({ error: 'Type something to search for.' });
    return data.search(chat, q);
  });

  // Saving MEMORY.md and forgetting take two calls: the preview (nothing written) hands out a
  // token for exactly what it showed, and the change runs only with it (confirm.ts).
  app.put<B>('/api/memory', async (req, reply) => {
    const chat = await chatOf(req.body?.chat, reply);
    if (!chat) return reply;
    const { text, base, confirm } = req.body;
    if (typeof text !== 'string' || typeof base !== 'string')
      return reply.code(400).send({ error: 'Send {chat, text, base}: base is the hash of the text you loaded.' });
    const what = `memory\0${chat.key}\0${base}\0${hashText(text)}`;
    if (confirm === undefined) {
      const current = (await data.memory(chat)).text;
      if (hashText(current) !== base) return reply.code(409).send({ error: STALE_MEMORY });
      const diff = lineDiff(current, withNewline(text));
      return { preview: diff, confirm: diff.added + diff.removed > 0 ? confirmations.issue(what) : null };
    }
    if (typeof confirm !== 'string') return reply.code(400).send({ error: NEEDS_PREVIEW });
    if (!confirmations.take(confirm, what)) return reply.code(409).send({ error: STALE_PREVIEW });
    const files = deps.memory.forChat(chat.channel, chat.chatId);
    try {
      // Under MEMORY.md's lock: refused when the file is no longer the text the page loaded.
      await files.update(
        MEMORY_FILE,
        (current) => {
          if (hashText(current) !== base) throw new Conflict();
          return withNewline(text);
        },
        'memory page',
      );
    } catch (err) {
      if (err instanceof Conflict) return reply.code(409).send({ error: STALE_MEMORY });
      throw err;
    }
    return data.memory(chat);
  });

  app.post<B>('/api/forget', async (req, reply) => {
    const chat = await chatOf(req.body?.chat, reply);
    if (!chat) return reply;
    const { words, confirm } = req.body;
    if (typeof words !== 'string' || words.trim().length < MIN_FORGET_CHARS)
      return reply.code(400).send({ error: `Give at least ${MIN_FORGET_CHARS} characters to forget.` });
    const ref = { channel: chat.channel, chatId: chat.chatId };
    const what = `forget\0${chat.key}\0${words.trim().replace(/\s+/g, ' ')}`;
    if (confirm === undefined) {
      const preview = await deps.forget.preview(ref, words);
      return { preview, confirm: preview.total > 0 ? confirmations.issue(what) : null };
    }
    if (typeof confirm !== 'string') return reply.code(400).send({ error: NEEDS_PREVIEW });
    if (!confirmations.take(confirm, what)) return reply.code(409).send({ error: STALE_PREVIEW });
    const applied = await deps.forget.apply(ref, words);
    log.info({ chat: chat.key, total: applied.total }, 'memory page: forgot words');
    return { applied: { total: applied.total, counts: applied.counts, files: applied.files.length, indexOff: applied.indexOff } };
  });

  // A held memory write: approved (run as the tool would have run it) or rejected (dropped).
  app.post<B>('/api/pending', async (req, reply) => {
    const chat = await chatOf(req.body?.chat, reply);
    if (!chat) return reply;
    const { id, decision } = req.body;
    if (typeof id !== 'string' || (decision !== 'approve' && decision !== 'reject') || !deps.pending) {
      return reply.code(400).send({ error: 'Send {chat, id, decision}: decision is "approve" or "reject".' });
    }
    const ref = { channel: chat.channel, chatId: chat.chatId };
    const d = decision === 'approve' ? await deps.pending.approve(ref, id, log) : await deps.pending.reject(ref, id, log);
    if (!d.ok) return reply.code(404).send({ error: `Nothing done: ${d.reason}. Reload to see what waits.` });
    return { done: decision, result: d.result };
  });

  const indexOff = (reply: FastifyReply) =>
    reply.code(503).send({
      error: `The memory index is off (${deps.index.disabledReason ?? 'unavailable'}): facts cannot be changed now. MEMORY.md can still be edited.`,
    });

  // Confirm and correct are the confirm_fact / correct_fact tools' own calls (MemoryIndex), in the chat's scope.
  app.post<B>('/api/fact/confirm', async (req, reply) => {
    const chat = await chatOf(req.body?.chat, reply);
    if (!chat) return reply;
    const id = req.body.id;
    if (typeof id !== 'string') return reply.code(400).send({ error: 'Send {chat, id}.' });
    if (!deps.index.enabled) return indexOff(reply);
    await deps.index.whenWritable();
    const ok = deps.index.confirmFact(id, deps.memory.scopeKey(chat.channel, chat.chatId));
    return ok ? { confirmed: id } : reply.code(404).send({ error: `No active fact ${id} in this chat.` });
  });

  app.post<B>('/api/fact/correct', async (req, reply) => {
    const chat = await chatOf(req.body?.chat, reply);
    if (!chat) return reply;
    const { id, content } = req.body;
    const text = typeof content === 'string' ? content.trim() : '';
    if (typeof id !== 'string' || text.length < FACT_MIN_CHARS || text.length > FACT_MAX_CHARS) {
      return reply.code(400).send({ error: `Send {chat, id, content}: the corrected fact is ${FACT_MIN_CHARS} to ${FACT_MAX_CHARS} characters.` });
    }
    if (!deps.index.enabled) return indexOff(reply);
    // The old fact is retired (kept, marked with its end), the new one saved with `supersedes`;
    // no conversation id, so the chat's current conversation sees it in its relevant memory too.
    await deps.index.whenWritable();
    const newId = deps.index.correctFact(id, deps.memory.scopeKey(chat.channel, chat.chatId), text);
    if (!newId) return reply.code(404).send({ error: `No active fact ${id} in this chat (already corrected or retired?). Reload to see the current facts.` });
    log.info({ chat: chat.key, retired: id, saved: newId }, 'memory page: corrected a fact');
    // In PostgreSQL mode the page answers once the correction is in the database (other processes and the next start see it).
    const kept = await deps.index.persisted().then(
      () => true,
      () => false,
    );
    return kept
      ? { corrected: id, id: newId }
      : { corrected: id, id: newId, note: 'Saved here; not written to the database yet (it is not answering): written when it answers.' };
  });

  return app;
}
