/**
 * The whole daemon under load, the LLM stubbed on loopback to answer at once:
 *  - pipeline overhead per turn (wall time of a turn minus the time inside LLM calls) at
 *    sessions of 10, 1,000 and 10,000 messages;
 *  - sustained turns per second and latency with 100 chats sending at once;
 *  - ContextBuilding with an 8 KB MEMORY.md, 7 days of notes and a large index.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createApp, type App } from '../../src/app/app.js';
import { silentLogger } from '../../src/core/log.js';
import { textReply } from '../../src/core/channel.js';
import { makeMessage } from '../../src/sessions/model.js';
import type { FileSessionStore } from '../../src/sessions/file-store.js';
import type { InboundMessage } from '../../src/core/message.js';
import { IndexingService } from '../../src/index/ingest.js';
import { startLlmProcess } from './llm-process.js';
import { tempDir, testConfig } from '../../test/helpers/workspace.js';
import { rng, userText, assistantText } from './text.js';
import { SqliteMemoryIndex } from '../../src/index/sqlite-memory-index.js';
import { Database } from '../../src/storage/pg/database.js';
import { migrate } from '../../src/storage/pg/migrate.js';

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]!;
const f = (n: number) => n.toFixed(2);

let seq = 0;
export function msg(chatId: string, t: string, at = new Date()): InboundMessage {
  return { channel: 'bench', chatId, userId: chatId, userName: `user${chatId}`, text: t, messageId: String(++seq), receivedAt: at };
}

/** `runtimeConfig`: the workspace's runtime-config.json (default: no compaction, to keep sizes fixed). */
export async function setup(indexSize: number, runtimeConfig: unknown = { compaction: { maxContextTokens: 10_000_000 } }, opts: { databaseUrl?: string } = {}) {
  const llm = await startLlmProcess('Sure, noted. Here is a short answer to that.');
  const ws = await tempDir('membot-bench-pipe-');
  if (opts.databaseUrl) await storeRuntimeConfig(opts.databaseUrl, runtimeConfig);
  else {
    await mkdir(path.join(ws.dir, 'preferences'), { recursive: true });
    await writeFile(path.join(ws.dir, 'preferences', 'runtime-config.json'), JSON.stringify(runtimeConfig));
  }
  const config = testConfig({
    OPENAI_BASE_URL: llm.url,
    WORKSPACE_DIR: ws.dir,
    LLM_MODEL: 'gpt-4.1',
    MAX_CONCURRENT_TURNS: '100',
    ...(opts.databaseUrl ? { DATABASE_URL: opts.databaseUrl } : {}),
  });
  const app = await createApp(config, silentLogger());
  let llmMs = 0;
  const chat = app.parts.llm.chat.bind(app.parts.llm);
  app.parts.llm.chat = async (o) => {
    const t0 = performance.now();
    try {
      return await chat(o);
    } finally {
      llmMs += performance.now() - t0;
    }
  };
  if (indexSize > 0) {
    // Other chats' history, through the live ingest path, in batches of one transaction each.
    const r = rng(9);
    const ingest = new IndexingService(app.parts.index);
    // In PostgreSQL mode the index writes its local cache, one transaction per message, and the
    // database behind it; the fill waits until everything is there.
    const db = app.parts.index instanceof SqliteMemoryIndex ? app.parts.index.database! : undefined;
    const batch = (fn: () => void) => (db ? db.transaction(fn) : fn);
    for (let i = 0; i < indexSize; i += 5000) {
      batch(() => {
        for (let j = i; j < Math.min(indexSize, i + 5000); j++) {
          // 100 chats share the index; the measured chat holds 1 % of it.
          ingest.ingestMessage({
            content: j % 2 ? assistantText(r) : userText(r),
            role: j % 2 ? 'assistant' : 'user',
            speaker: 'x',
            sessionId: `old${j % 500}`,
            scope: j % 100 === 0 ? 'bench:ctx' : `bench:other${j % 100}`,
            eventTime: new Date(Date.UTC(2025, 0, 1) + j * 1000),
            sourceMessageId: String(j),
          });
        }
      })();
    }
    await app.parts.index.persisted();
  }
  return {
    app,
    ws,
    llmTime: () => llmMs,
    resetLlm: () => (llmMs = 0),
    async close() {
      await app.stop();
      await llm.close();
      await ws.cleanup();
    },
  };
}

/** Stores the runtime settings in the database of `url` (migrated first), as the owner would before a start. */
async function storeRuntimeConfig(url: string, settings: unknown): Promise<void> {
  const db = new Database({ url, poolSize: 1, log: silentLogger() });
  try {
    await migrate(db, { log: silentLogger() });
    await db.query('UPDATE runtime_config SET settings = $1, version = version + 1', [JSON.stringify(settings)]);
  } finally {
    await db.close();
  }
}

/** Runs one turn; returns when the reply was handed to the channel (ms since `t0`), if any. */
export async function turn(app: App, m: InboundMessage, t0 = performance.now()): Promise<number | undefined> {
  let replied: number | undefined;
  await app.handle(
    m,
    textReply(async () => {
      replied ??= performance.now() - t0;
    }),
  );
  return replied;
}

/** 100 chats sending 30 messages each at once: turns per second and turn latency. */
export async function sustainedLoad(app: App, r: () => number): Promise<string> {
  const chats = 100;
  const perChat = 30;
  const lat: number[] = [];
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: chats }, async (_, c) => {
      for (let i = 0; i < perChat; i++) {
        const s = performance.now();
        await turn(app, msg(`load${c}`, userText(r)));
        lat.push(performance.now() - s);
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  return `${((chats * perChat) / secs).toFixed(0)} turns/s; turn latency p50 ${f(pct(lat, 50))} ms, p99 ${f(pct(lat, 99))} ms`;
}

export async function benchPipeline(full = false): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const r = rng(5);
  {
    const b = await setup(0);
    for (const size of [10, 1000, 10_000]) {
      const chatId = `size${size}`;
      const s = await b.app.parts.sessions.getOrCreate('bench', chatId);
      s.messages = Array.from({ length: size }, (_, i) => makeMessage(i % 2 ? 'assistant' : 'user', i % 2 ? assistantText(r) : userText(r)));
      await (b.app.parts.sessions as FileSessionStore).save(s);
      const n = size >= 10_000 ? 60 : 200;
      const over: number[] = [];
      const toReply: number[] = [];
      for (let i = 0; i < n + 10; i++) {
        b.resetLlm();
        const t0 = performance.now();
        const replied = await turn(b.app, msg(chatId, userText(r)), t0);
        if (i >= 10) {
          over.push(performance.now() - t0 - b.llmTime());
          toReply.push(replied! - b.llmTime());
        }
        s.messages.splice(0, 2); // keep the session at its size
      }
      const label = `session of ${size.toLocaleString('en-US')} messages (${n} turns)`;
      out[`pipeline overhead per turn (accepted → every system done), ${label}`] =
        `p50 ${f(pct(over, 50))} ms, p95 ${f(pct(over, 95))} ms, p99 ${f(pct(over, 99))} ms`;
      out[`  of which before the reply (accepted → reply handed to the channel), ${label}`] =
        `p50 ${f(pct(toReply, 50))} ms, p95 ${f(pct(toReply, 95))} ms, p99 ${f(pct(toReply, 99))} ms`;
    }
    await b.close();
  }
  {
    const b = await setup(0);
    out['sustained load: 100 chats × 30 turns at once'] = `${await sustainedLoad(b.app, r)} (LLM stub included)`;
    await b.close();
  }
  {
    const size = full ? 1_000_000 : 100_000;
    const b = await setup(size);
    const files = b.app.parts.memory.forChat('bench', 'ctx');
    await files.writeMemory(
      Array.from({ length: 120 }, (_, i) => `- Fact ${i}: ${userText(r).slice(0, 50)}`)
        .join('\n')
        .slice(0, 8192),
    );
    const today = new Date();
    for (let d = 0; d <= 7; d++) {
      const day = new Date(today.getTime() - d * 86_400_000).toISOString().slice(0, 10);
      for (let i = 0; i < 30; i++)
        await files.appendNote(
          day,
          `[${String(8 + (i % 12)).padStart(2, '0')}:00] User: ${userText(r).slice(0, 120)} | Assistant: ${assistantText(r).slice(0, 200)}`,
        );
    }
    const ctx: number[] = [];
    for (let i = 0; i < 110; i++) {
      await turn(b.app, msg('ctx', userText(r)));
      const t = b.app.parts.stats.lastTurn('bench:ctx')!.timings.find((x) => x.system === 'ContextBuilding')!;
      if (i >= 10) ctx.push(t.ms);
    }
    out[`ContextBuilding: 8 KB MEMORY.md, 8 days of notes, index of ${size.toLocaleString('en-US')} memories over 100 chats (100 turns)`] =
      `p50 ${f(pct(ctx, 50))} ms, p95 ${f(pct(ctx, 95))} ms`;
    await b.close();
  }
  // Streamed answers through the Telegram channel: time to the first visible text (bench/stream.ts).
  Object.assign(out, await (await import('./stream.js')).benchStream());
  return out;
}
