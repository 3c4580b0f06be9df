/** A real daemon (createApp, fake LLM) with a few chats of memory, and its memory page on a free port. */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot, type TestBot } from '../helpers/app.js';
import { startMemoryPage, type MemoryPage } from '../../src/web/server.js';

export const TOKEN = 'test-page-token-0123456789';
export const MEMORY = '## About\n- The user is called Ada.\n- Ada keeps bees in Lisbon.\n';

export interface PageBot {
  bot: TestBot;
  page: MemoryPage;
  memoryFile: string;
  close(): Promise<void>;
}

export async function startPageBot(): Promise<PageBot> {
  const bot = await startTestBot({
    prepare: async (ws) => {
      await mkdir(path.join(ws, 'memory', 'test:1'), { recursive: true });
      await writeFile(path.join(ws, 'memory', 'test:1', 'MEMORY.md'), MEMORY);
    },
  });
  await bot.send('1', 'My honey sells at the Saturday market in Lisbon');
  await bot.send('1', 'look: <script>alert("pwned")</script><img src=x onerror=alert(1)>');
  await bot.send('2', 'a secret of chat two about zeppelins');
  const page = await startMemoryPage(bot.app.services, bot.logs.log, { token: TOKEN, host: '127.0.0.1', port: 0 });
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
