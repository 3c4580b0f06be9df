/** Builds a real daemon (createApp) on a temp workspace and a fake LLM, plus a reply recorder. */
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tmpdir } from 'node:os';
import { FileSessionStore } from '../../src/sessions/file-store.js';
import type { Session } from '../../src/sessions/model.js';
import type { SessionWriter } from '../../src/sessions/writer.js';
import { silentLogger } from '../../src/core/log.js';
import { createApp, type App, type AppOptions } from '../../src/app/app.js';
import type { InboundMessage } from '../../src/core/message.js';
import { startFakeLlm, type FakeLlm, type Responder } from './fake-llm.js';
import { captureLog, tempDir, testConfig, type CapturedLog } from './workspace.js';
import type { Config } from '../../src/config/env.js';
import { textReply } from '../../src/core/channel.js';

export interface TestBot {
  app: App;
  /** The settings it was built with. */
  config: Config;
  llm: FakeLlm;
  logs: CapturedLog;
  workspace: string;
  /** Replies per chat id, in the order they were sent. */
  replies: Map<string, string[]>;
  /** The ids the replies went out as (`bot-1`, …), per chat id, in the same order: what a reply to one names (`replyTo`). */
  sent: Map<string, string[]>;
  /** Sends a message as `chatId` and waits until it is fully handled and its session file written; returns the replies it produced. */
  send(chatId: string, text: string, extra?: Partial<InboundMessage>): Promise<string[]>;
  close(): Promise<void>;
}

export async function startTestBot(
  opts: {
    responder?: Responder;
    env?: Record<string, string>;
    runtimeConfig?: unknown;
    prepare?: (workspace: string) => Promise<void>;
    appOptions?: AppOptions;
  } = {},
): Promise<TestBot> {
  const llm = await startFakeLlm(opts.responder);
  const ws = await tempDir();
  const logs = captureLog();
  const config = testConfig({ OPENAI_BASE_URL: llm.url, WORKSPACE_DIR: ws.dir, ...opts.env });
  if (opts.runtimeConfig !== undefined) {
    await mkdir(path.join(ws.dir, 'preferences'), { recursive: true });
    await writeFile(path.join(ws.dir, 'preferences', 'runtime-config.json'), JSON.stringify(opts.runtimeConfig));
  }
  await opts.prepare?.(ws.dir);
  const app = await createApp(config, logs.log, opts.appOptions);
  const replies = new Map<string, string[]>();
  const sent = new Map<string, string[]>();
  let msgSeq = 0;
  let sentSeq = 0;
  return {
    app,
    config,
    llm,
    logs,
    workspace: ws.dir,
    replies,
    sent,
    async send(chatId, text, extra = {}) {
      const got: string[] = [];
      const ids: string[] = [];
      await app.handle(
        // A private chat of its user, who owns it (extra.role says otherwise).
        {
          channel: 'test',
          chatId,
          userId: `u-${chatId}`,
          userName: 'Tester',
          text,
          messageId: String(++msgSeq),
          receivedAt: new Date(),
          role: 'owner',
          ...extra,
        },
        {
          ...textReply(async (reply) => {
            got.push(reply);
            const list = replies.get(chatId) ?? [];
            list.push(reply);
            replies.set(chatId, list);
            const id = `bot-${++sentSeq}`;
            ids.push(id);
            sent.set(chatId, [...(sent.get(chatId) ?? []), id]);
          }),
          // A channel that knows the ids its messages went out as (Telegram does).
          sent: ids,
        },
      );
      // Session files are rewritten in the background (sessions/wal.ts); tests read them.
      await app.parts.sessions.flush();
      return got;
    },
    async close() {
      await app.stop();
      await llm.close();
      await ws.cleanup();
    },
  };
}

/**
 * The bot's session store as today's implementation: what a test reads beyond the SessionStore
 * interface (a session still in memory, a session's file, a direct save). The app's parts type
 * it as the interface.
 */
export function fileSessions(bot: { app: App }): FileSessionStore {
  return bot.app.parts.sessions as FileSessionStore;
}

/** The bot's loaded session of a chat (`test:<chatId>`), asserting it exists: the state a turn left behind. */
export function loadedSession(bot: TestBot, chatId: string) {
  const s = fileSessions(bot).get(`test:${chatId}`);
  assert.ok(s, `session test:${chatId} is loaded`);
  return s;
}

/**
 * A writer for a session that no test ever commits: for building a `Turn` by hand. The store's
 * folder is never created, so nothing reaches the disk.
 */
export function unsavedWriter(session: Session): SessionWriter {
  return new FileSessionStore(path.join(tmpdir(), 'membot-never-written'), silentLogger()).writer(session);
}
