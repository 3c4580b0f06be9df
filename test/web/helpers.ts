/** A real daemon (createApp, fake LLM) with a few chats of memory (named as a channel names them), and its memory page on a free port. */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot, type TestBot } from '../helpers/app.js';
import { startMemoryPage, type MemoryPage } from '../../src/web/server.js';
import type { PageDeps } from '../../src/web/data.js';

export const TOKEN = 'test-page-token-0123456789';
export const MEMORY = '## About\n- The user is called Ada.\n- Ada keeps bees in Lisbon.\n';

export interface PageBot {
  bot: TestBot;
  page: MemoryPage;
  memoryFile: string;
  close(): Promise<void>;
}

/** What the page is given from a test bot, as main.ts gives it from the daemon. */
export function pageDeps(bot: TestBot): PageDeps {
  return { ...bot.app.parts, workspaceDir: bot.config.workspaceDir, memoryScope: bot.config.memoryScope };
}

export async function startPageBot(): Promise<PageBot> {
  const bot = await startTestBot({
    prepare: async (ws) => {
      await mkdir(path.join(ws, 'memory', 'test:1'), { recursive: true });
      await writeFile(path.join(ws, 'memory', 'test:1', 'MEMORY.md'), MEMORY);
    },
  });
  const ada = { chat: { kind: 'private', name: 'Ada Lovelace' } } as const;
  await bot.send('1', 'My honey sells at the Saturday market in Lisbon', ada);
  await bot.send('1', 'look: <script>alert("pwned")</script><img src=x onerror=alert(1)>', ada);
  // A hostile name: shown as its characters, never as markup.
  await bot.send('2', 'a secret of chat two about zeppelins', { chat: { kind: 'group', name: '<img src=x onerror=alert(2)> Zeppelin\u202e fans' } });
  const page = await startMemoryPage(pageDeps(bot), bot.logs.log, { token: TOKEN, host: '127.0.0.1', port: 0 });
  return {
    bot,
    page,
    memoryFile: path.join(bot.workspace, 'memory', 'test:1', 'MEMORY.md'),
    async close() {
      await page.close();
      await bot.close();
    },
  };
}

/** The page's JSON API as a script calls it (token, the page's own Origin); `confirmed` runs a preview, then the change with its token. */
export function pageApi(t: PageBot) {
  const headers = { authorization: `Bearer ${TOKEN}`, origin: t.page.url.slice(0, -1), 'content-type': 'application/json' };
  const call = (method: 'PUT' | 'POST', p: string, body: Record<string, unknown>) =>
    fetch(`${t.page.url}api/${p}`, { method, headers, body: JSON.stringify(body) });
  return {
    call,
    async confirmed(method: 'PUT' | 'POST', p: string, body: Record<string, unknown>): Promise<Response> {
      const preview = await call(method, p, body);
      if (!preview.ok) return preview;
      const { confirm } = (await preview.json()) as { confirm: string | null };
      return call(method, p, { ...body, confirm });
    },
  };
}
