/**
 * Through the real Telegram channel (telegraf against the Bot API emulator): the channel says
 * which chats are groups (kept in the inbox journal too), and MCP tools follow — offered to the owner in a private chat, not in
 * a group the server does not list.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startTelegramBot } from '../helpers/telegram.js';
import { tempDir } from '../helpers/workspace.js';
import { until } from '../helpers/reminders.js';
import { startHttpMcpServer } from '../fixtures/mcp-server.js';
import { promptKind, type RecordedRequest } from '../helpers/fake-llm.js';

const OWNER = 111;
const GROUP = -1009;

const mcpTools = (req: RecordedRequest): string[] =>
  ((req.body.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name).filter((n) => n.includes('__'));

test('a Telegram group gets no MCP tools unless listed; the private chat does', async () => {
  const web = await startHttpMcpServer();
  const dir = await tempDir('membot-mcp-');
  const file = path.join(dir.dir, 'mcp.json');
  await writeFile(file, JSON.stringify({ servers: { web: { url: web.url, tools: ['forecast'] } } }));
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER), TELEGRAM_ALLOWED_GROUPS: String(GROUP), MCP_CONFIG: file } });
  try {
    await until(() => bot.app.parts.mcp!.get('web')!.state.kind === 'connected', 10_000, 'web connected');
    await bot.tg.user({ userId: OWNER, chatId: OWNER, firstName: 'Owner' }).say('hello');
    await bot.tg.waitForBotMessages(OWNER, 1);
    await bot.tg.user({ userId: OWNER, chatId: GROUP, type: 'supergroup', chatTitle: 'Team', firstName: 'Owner' }).say('@TestNameBot hello all');
    await bot.tg.waitForBotMessages(GROUP, 1);
    const [inPrivate, inGroup] = bot.llm.chatRequests().filter((r) => promptKind(r) === 'chat');
    assert.deepEqual(mcpTools(inPrivate!), ['web__forecast']);
    assert.deepEqual(mcpTools(inGroup!), []);
    // The channel says so itself, and the journal keeps it for a message recovered after a restart.
    const journaled = (await readFile(path.join(bot.workspace, 'inbox.jsonl'), 'utf8'))
      .split('\n')
      .filter((l) => l.includes('"t":"in"'))
      .map((l) => JSON.parse(l).msg);
    assert.deepEqual(
      journaled.map((m) => [m.chatId, m.chat?.kind]),
      [
        [String(OWNER), 'private'],
        [String(GROUP), 'group'],
      ],
    );
  } finally {
    await bot.close();
    await web.close();
    await dir.cleanup();
  }
});
