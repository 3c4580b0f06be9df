/** Builds a real daemon (createApp) on a temp workspace and a fake LLM, plus a reply recorder. */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createApp, type App, type AppOptions } from '../../src/app.js';
import type { InboundMessage } from '../../src/pipeline/turn.js';
import { startFakeLlm, type FakeLlm, type Responder } from './fake-llm.js';
import { captureLog, tempDir, testConfig, type CapturedLog } from './workspace.js';

export interface TestBot {
  app: App;
  llm: FakeLlm;
  logs: CapturedLog;
  workspace: string;
  /** Replies per chat id, in the order they were sent. */
  replies: Map<string, string[]>;
  /** Sends a message as `chatId` and waits until it is fully handled and its session file written; returns the replies it produced. */
  send(chatId: string, text: string, extra?: Partial<InboundMessage>): Promise<string[]>;
  close(): Promise<void>;
}

export async function startTestBot(
  opts: { responder?: Responder; env?: Record<string, string>; runtimeConfig?: unknown; prepare?: (workspace: string) => Promise<void>; appOptions?: AppOptions } = {},
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
  let msgSeq = 0;
  return {
    app,
    llm,
    logs,
    workspace: ws.dir,
    replies,
    async send(chatId, text, extra = {}) {
      const got: string[] = [];
      await app.handle(
        { channel: 'test', chatId, userId: `u-${chatId}`, userName: 'Tester', text, messageId: String(++msgSeq), receivedAt: new Date(), ...extra },
        async (reply) => {
          got.push(reply);
          const list = replies.get(chatId) ?? [];
          list.push(reply);
          replies.set(chatId, list);
        },
      );
      // Session files are rewritten in the background (sessions/wal.ts); tests read them.
      await app.services.sessions.flush();
      return got;
    },
    async close() {
      await app.stop();
      await llm.close();
      await ws.cleanup();
    },
  };
}
