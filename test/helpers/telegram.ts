/**
 * Telegram for tests: the `telegram-test-api` Bot API emulator on 127.0.0.1, behind a small
 * proxy the bot talks to (TELEGRAM_API_ROOT = the proxy). The proxy records every Bot API call
 * and lets a test answer one the way real Telegram sometimes does — 429 with retry_after, a
 * 400 "can't parse entities", a 5xx, a dropped connection after the message was delivered, a
 * getUpdates that never returns, a repeated update — while the real telegraf client and the
 * emulator do everything else. It also stands in for the methods the emulator lacks:
 * sendMessageDraft, getChatMember (setChatMember says who is an admin), sendDocument and getFile.
 * A user can press the bot's buttons (`press`: the emulator's own callback queries).
 *
 * Also: `startTelegramBot` builds the real daemon (createApp) on a temp workspace with the fake
 * LLM and a started TelegramChannel, like test/helpers/app.ts does for the bare app.
 */
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
// The package's main entry replaces module.exports, which TypeScript cannot type; its class module can be.
import { TelegramServer } from 'telegram-test-api/lib/telegramServer.js';
import { createApp, type App } from '../../src/app/app.js';
import { TelegramChannel, type TelegramTuning } from '../../src/channels/telegram/channel.js';
import { loadTelegramConfig, type TelegramConfig } from '../../src/channels/telegram/settings.js';
import { startFakeLlm, type FakeLlm, type Responder } from './fake-llm.js';
import { captureLog, tempDir, testConfig, type CapturedLog } from './workspace.js';
import { waitFor } from './wait.js';

export const TEST_TOKEN = '123456789:AAtest-token-for-the-emulator_0001';

export interface ProxyCall {
  method: string;
  body: any;
  at: number;
  /** How many calls of this method came before this one. */
  index: number;
}

/**
 * What the proxy does with one call. Nothing (undefined) = pass it to the emulator. With
 * `forward: true` the emulator sees the call first (a message is delivered) and then the
 * rest of the plan decides what the bot gets back.
 */
export interface ProxyPlan {
  forward?: boolean;
  status?: number;
  json?: unknown;
  /** Never answer. */
  hang?: boolean;
  /** Cut the connection instead of answering. */
  destroy?: boolean;
  delayMs?: number;
  /** getUpdates: change the emulator's result (e.g. repeat an update). */
  transform?: (json: any) => any;
}

export type Interceptor = (call: ProxyCall) => ProxyPlan | undefined;

export interface BotMessage {
  chatId: string;
  /** The message_id Telegram gave it (what a reply to it, or a button under it, names). */
  messageId: number;
  text: string;
  parseMode: string | undefined;
  raw: any;
}

export interface EmuUser {
  userId: number;
  chatId: number;
  say(text: string, extra?: Record<string, unknown>): Promise<void>;
  /** A message with no text (sticker, voice, …): `extra` gives its fields. */
  send(extra: Record<string, unknown>): Promise<void>;
  /** Presses a button of the bot's (an inline keyboard's callback_data) under its message `messageId`: a callback_query update. */
  press(data: string, messageId: number): Promise<void>;
}

export interface TelegramEmulator {
  server: TelegramServer;
  token: string;
  /** Point the bot here (the recording proxy). */
  apiRoot: string;
  /** The emulator itself. */
  emulatorUrl: string;
  calls: ProxyCall[];
  callsOf(method: string): ProxyCall[];
  intercept(method: string, fn: Interceptor): void;
  clearIntercepts(): void;
  /**
   * A file the bot can fetch: the emulator has no getFile, so the proxy answers getFile for
   * this id and serves the bytes at `/file/bot<token>/<filePath>`, as Telegram does.
   */
  addFile(fileId: string, content: Buffer, filePath?: string, opts?: { announcedSize?: number }): void;
  /**
   * A user's standing in a group, as getChatMember reports it (the emulator has no getChatMember:
   * the proxy answers it). Anyone not set here is a plain `member`.
   */
  setChatMember(chatId: number | string, userId: number, status: 'creator' | 'administrator' | 'member' | 'restricted' | 'left' | 'kicked'): void;
  user(opts: { userId: number; chatId?: number; firstName?: string; userName?: string; type?: string; chatTitle?: string }): EmuUser;
  /** What the bot sent, in order (all chats, or one). */
  botMessages(chatId?: number | string): BotMessage[];
  waitForBotMessages(chatId: number | string, count: number, timeoutMs?: number): Promise<BotMessage[]>;
  close(): Promise<void>;
}

/** sendMessageDraft as the Bot API documents it: a private chat, a non-zero draft id, 1–4096 characters. */
function draftStandIn(body: any): ProxyPlan {
  const bad = (description: string): ProxyPlan => ({ status: 400, json: { ok: false, error_code: 400, description: `Bad Request: ${description}` } });
  if (!Number.isInteger(body?.chat_id) || body.chat_id <= 0) return bad('chat_id must be a private chat');
  if (!Number.isInteger(body?.draft_id) || body.draft_id === 0) return bad('draft_id must be non-zero');
  if (typeof body?.text !== 'string' || body.text.length === 0 || body.text.length > 4096) return bad('text must be 1-4096 characters');
  return { json: { ok: true, result: true } };
}

/** getChatMember as the Bot API answers it: the user and their status in the chat. */
function memberStandIn(body: any, members: Map<string, string>): ProxyPlan {
  const status = members.get(`${body?.chat_id}:${body?.user_id}`) ?? 'member';
  return { json: { ok: true, result: { status, user: { id: Number(body?.user_id), is_bot: false, first_name: `User${body?.user_id}` } } } };
}

/** sendDocument as the Bot API answers it (the emulator has none); the upload is recorded as the call's body. */
function documentStandIn(index: number): ProxyPlan {
  return {
    json: {
      ok: true,
      result: {
        message_id: 90_000 + index,
        date: Math.floor(Date.now() / 1000),
        chat: { id: 0, type: 'private' },
        document: { file_id: `doc${index}`, file_unique_id: `udoc${index}` },
      },
    },
  };
}

export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** The tests' one polling wait (helpers/wait.ts), under the name the Telegram tests import. */

async function startEmulatorServer(): Promise<TelegramServer> {
  // The emulator reads `port: 0` as "use 9000", so pick a free port first (and retry on a race).
  for (let attempt = 1; ; attempt++) {
    const server = new TelegramServer({ port: await freePort(), host: '127.0.0.1', storeTimeout: 600 });
    try {
      await server.start();
      return server;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 5) throw err;
    }
  }
}

export interface EmulatorOptions {
  /**
   * getUpdates as Telegram does it: an update stays until a later call confirms it with an
   * offset above its id (the emulator forgets an update once it has been read). For a program
   * that looks at updates without taking them (npm run setup waiting for the owner's message).
   */
  keepUntilConfirmed?: boolean;
}

export async function startTelegramEmulator(token = TEST_TOKEN, opts: EmulatorOptions = {}): Promise<TelegramEmulator> {
  const server = await startEmulatorServer();
  /** Updates read from the emulator and not yet confirmed (keepUntilConfirmed). */
  let held: Array<{ update_id: number }> = [];
  const emulatorUrl = server.config.apiURL;
  const calls: ProxyCall[] = [];
  const interceptors = new Map<string, Interceptor[]>();
  const sockets = new Set<net.Socket>();
  const files = new Map<string, { fileId: string; content: Buffer; announcedSize: number }>();
  const members = new Map<string, string>();

  const proxy = http.createServer((req, res) => {
    const download = /^\/file\/bot([^/]+)\/(.+)$/.exec(req.url ?? '');
    if (download) {
      const f = download[1] === token ? files.get(decodeURIComponent(download[2]!)) : undefined;
      calls.push({ method: 'file', body: { path: download[2] }, at: Date.now(), index: calls.filter((c) => c.method === 'file').length });
      res.writeHead(f ? 200 : 404, { 'content-type': 'application/octet-stream' });
      res.end(f ? f.content : 'Not Found');
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks);
      const method = /\/bot[^/]+\/([A-Za-z]+)/.exec(req.url ?? '')?.[1] ?? '?';
      let body: any;
      try {
        body = raw.length ? JSON.parse(raw.toString('utf8')) : {};
      } catch {
        body = raw.toString('utf8');
      }
      const call: ProxyCall = { method, body, at: Date.now(), index: calls.filter((c) => c.method === method).length };
      calls.push(call);
      let plan: ProxyPlan | undefined;
      for (const fn of interceptors.get(method) ?? []) {
        plan = fn(call);
        if (plan) break;
      }
      // Methods the emulator lacks: stand in for them, checking what Telegram checks.
      if (!plan && method === 'sendMessageDraft') plan = draftStandIn(body);
      if (!plan && method === 'getChatMember') plan = memberStandIn(body, members);
      if (!plan && method === 'sendDocument') plan = documentStandIn(call.index);
      const forward = plan === undefined || plan.forward === true || (plan.status === undefined && plan.json === undefined && !plan.hang && !plan.destroy);
      let status = 200;
      let text = '';
      try {
        if (forward) {
          const r = await fetch(`${emulatorUrl}${req.url}`, {
            method: req.method ?? 'POST',
            headers: { 'content-type': String(req.headers['content-type'] ?? 'application/json') },
            ...(req.method === 'GET' ? {} : { body: raw }),
          });
          status = r.status;
          text = await r.text();
        }
      } catch (err) {
        status = 502;
        text = JSON.stringify({ ok: false, error_code: 502, description: `proxy: ${String(err)}` });
      }
      if (opts.keepUntilConfirmed && method === 'getUpdates' && forward && status === 200) {
        held.push(...((JSON.parse(text) as { result?: Array<{ update_id: number }> }).result ?? []));
        if (typeof body?.offset === 'number') held = held.filter((u) => u.update_id >= body.offset);
        text = JSON.stringify({ ok: true, result: held.slice(0, typeof body?.limit === 'number' ? body.limit : 100) });
      }
      if (plan?.transform) text = JSON.stringify(plan.transform(JSON.parse(text)));
      if (plan?.delayMs) await new Promise((r) => setTimeout(r, plan!.delayMs));
      if (plan?.hang) return;
      if (plan?.destroy) {
        req.socket.destroy();
        return;
      }
      if (plan?.status !== undefined || plan?.json !== undefined) {
        status = plan.status ?? 200;
        text = JSON.stringify(plan.json ?? {});
      }
      if (res.destroyed) return;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(text);
    });
  });
  proxy.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const apiRoot = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

  const botMessages = (chatId?: number | string): BotMessage[] =>
    server.storage.botMessages
      .filter(
        (m: { botToken: string; message: unknown }) => m.botToken === token && (chatId === undefined || String((m.message as any).chat_id) === String(chatId)),
      )
      .map((m: { message: unknown; messageId: number }) => ({
        chatId: String((m.message as any).chat_id),
        messageId: m.messageId,
        text: String((m.message as any).text),
        parseMode: (m.message as any).parse_mode,
        raw: m.message,
      }));

  return {
    server,
    token,
    apiRoot,
    emulatorUrl,
    calls,
    callsOf: (method) => calls.filter((c) => c.method === method),
    intercept(method, fn) {
      const list = interceptors.get(method) ?? [];
      list.push(fn);
      interceptors.set(method, list);
    },
    clearIntercepts: () => interceptors.clear(),
    addFile(fileId, content, filePath = `voice/${fileId}.oga`, opts = {}) {
      files.set(filePath, { fileId, content, announcedSize: opts.announcedSize ?? content.length });
      const list = interceptors.get('getFile') ?? [];
      list.push((call) =>
        call.body?.file_id === fileId
          ? {
              json: {
                ok: true,
                result: { file_id: fileId, file_unique_id: `u_${fileId}`, file_size: opts.announcedSize ?? content.length, file_path: filePath },
              },
            }
          : undefined,
      );
      interceptors.set('getFile', list);
    },
    setChatMember(chatId, userId, status) {
      members.set(`${chatId}:${userId}`, status);
    },
    user(opts) {
      const chatId = opts.chatId ?? opts.userId;
      const client = server.getClient(token, {
        userId: opts.userId,
        chatId,
        firstName: opts.firstName ?? `User${opts.userId}`,
        userName: opts.userName ?? `user${opts.userId}`,
        type: (opts.type ?? 'private') as any,
        ...(opts.chatTitle ? { chatTitle: opts.chatTitle } : {}),
      });
      return {
        userId: opts.userId,
        chatId,
        async say(text, extra = {}) {
          await client.sendMessage(client.makeMessage(text, extra as any));
        },
        async send(extra) {
          const msg: any = client.makeMessage('', extra as any);
          delete msg.text;
          await client.sendMessage(msg);
        },
        async press(data, messageId) {
          await client.sendCallback(client.makeCallbackQuery(data, { message: { message_id: messageId } }));
        },
      };
    },
    botMessages,
    async waitForBotMessages(chatId, count, timeoutMs = 10_000) {
      await waitFor(() => botMessages(chatId).length >= count, timeoutMs, `${count} bot message(s) in chat ${chatId} (have ${botMessages(chatId).length})`);
      return botMessages(chatId);
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      await server.stop();
    },
  };
}

export interface TelegramTestBot {
  tg: TelegramEmulator;
  llm: FakeLlm;
  app: App;
  channel: TelegramChannel;
  logs: CapturedLog;
  workspace: string;
  telegramConfig: TelegramConfig & { botToken: string };
  /** A second channel on the same workspace (a restart), started with the same app. */
  restartChannel(): Promise<TelegramChannel>;
  /** The session file of `telegram:{chatId}` as on disk, once pending rewrites are written. */
  sessionFile(chatId: string | number): Promise<any>; // raw JSON, as the tests read it
  close(): Promise<void>;
}

/** Short timings so tests do not wait for production patience. */
export const FAST_TUNING: Partial<TelegramTuning> = {
  pollTimeoutSec: 1,
  emptyPollDelayMs: 20,
  watchdogIntervalMs: 100,
  stallAfterMs: 1500,
  typingIntervalMs: 200,
  sendTimeoutMs: 5000,
  baseDelayMs: 20,
  maxDelayMs: 100,
};

export async function startTelegramBot(
  opts: { responder?: Responder; env?: Record<string, string>; tuning?: Partial<TelegramTuning>; tg?: TelegramEmulator; workspace?: string } = {},
): Promise<TelegramTestBot> {
  const tg = opts.tg ?? (await startTelegramEmulator());
  const llm = await startFakeLlm(opts.responder);
  const ws = opts.workspace ? { dir: opts.workspace, cleanup: async () => undefined } : await tempDir();
  const logs = captureLog();
  const env = { TELEGRAM_BOT_TOKEN: tg.token, TELEGRAM_API_ROOT: tg.apiRoot, ...opts.env };
  const config = testConfig({ OPENAI_BASE_URL: llm.url, WORKSPACE_DIR: ws.dir, ...env });
  const { telegram, problems } = loadTelegramConfig(env);
  if (problems.length) throw new Error(`bad telegram test config: ${problems.join('; ')}`);
  const telegramConfig = { ...telegram, botToken: telegram.botToken! };
  const app = await createApp(config, logs.log);
  const makeChannel = () =>
    new TelegramChannel({
      telegram: telegramConfig,
      workspaceDir: ws.dir,
      log: logs.log,
      commands: app.commands.list(),
      media: app.parts.media,
      tuning: { ...FAST_TUNING, ...opts.tuning },
      sharedMemory: config.memoryScope === 'global',
      streaming: config.streaming,
      groupAdminsManage: config.groupAdminsManage,
    });
  let channel = makeChannel();
  await channel.start((msg, reply) => app.handle(msg, reply));
  const bot: TelegramTestBot = {
    tg,
    llm,
    app,
    channel,
    logs,
    workspace: ws.dir,
    async sessionFile(chatId) {
      await app.parts.sessions.flush();
      return JSON.parse(await readFile(path.join(ws.dir, 'sessions', `telegram:${chatId}.json`), 'utf8'));
    },
    telegramConfig,
    async restartChannel() {
      await channel.stop();
      channel = makeChannel();
      bot.channel = channel;
      await channel.start((msg, reply) => app.handle(msg, reply));
      return channel;
    },
    async close() {
      await channel.stop();
      await app.stop();
      await llm.close();
      if (!opts.tg) await tg.close();
      await ws.cleanup();
    },
  };
  return bot;
}

/**
 * The emulator forgets an update once it has handed it out; real Telegram hands it out again
 * until a later getUpdates confirms it with a higher offset. This adds that behaviour. Returns
 * the text messages confirmed that way (taken by the bot), with their chat.
 */
export function redeliverUntilConfirmed(tg: TelegramEmulator): Map<string, number> {
  const pending: any[] = [];
  const taken = new Map<string, number>();
  tg.intercept('getUpdates', (call) => ({
    forward: true,
    transform: (json: any) => {
      const offset = Number(call.body?.offset ?? 0);
      for (const u of json?.result ?? []) pending.push(u);
      while (pending.length > 0 && offset > 0 && pending[0].update_id < offset) {
        const u = pending.shift();
        if (u.message?.text) taken.set(u.message.text, u.message.chat.id);
      }
      return { ...json, result: pending.slice(0, 100) };
    },
  }));
  return taken;
}
