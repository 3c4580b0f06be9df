/**
 * `npm run memory -- purge` with DATABASE_URL: the same purge on the database's stores — every
 * trace of the chat gone from every store the state lives in, another chat's kept — and refused,
 * with nothing deleted, when the database does not answer.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { runChatCommand } from '../../src/cli/memory-chat.js';
import { STORES } from '../../src/cli/migrate.js';
import { silentLogger } from '../../src/core/log.js';
import { collect } from '../../src/storage/portable.js';
import { startTestBot } from '../helpers/app.js';
import { echoResponder, lastUserText, toolCalls, text, type Responder } from '../helpers/fake-llm.js';
import { startPg, type PgCluster } from '../helpers/pg.js';
import { testDatabase } from '../helpers/pg-stores.js';
import { tempDir, testConfig } from '../helpers/workspace.js';

let cluster: PgCluster;
before(async () => {
  cluster = await startPg();
});
after(() => cluster?.stop());

/** Every item of every store in the database (what a move would carry), as JSON text per store. */
async function everything(url: string): Promise<Map<string, string>> {
  const db = testDatabase(url);
  const ws = await tempDir();
  const out = new Map<string, string>();
  try {
    for (const pair of STORES) {
      const store = await pair.postgres({ workspaceDir: ws.dir, memoryScope: 'chat', db, log: silentLogger() });
      out.set(store.portableName, JSON.stringify(await collect(store.dump())));
      await store.close?.();
    }
  } finally {
    await db.close();
    await ws.cleanup();
  }
  return out;
}

const holding = (all: Map<string, string>, word: string) => [...all.entries()].filter(([, items]) => items.includes(word)).map(([name]) => name);

test('purge --chat with DATABASE_URL: no trace of the chat left in any store of the database; another chat kept', async () => {
  const url = await cluster.createDatabase();
  // "remember …" saves a fact too; "remind …" schedules a reminder.
  const responder: Responder = (req, i) => {
    if (req.body.messages.at(-1)?.role === 'tool') return text('done');
    const said = lastUserText(req);
    if (said.startsWith('remember ')) return toolCalls([{ name: 'remember_fact', args: { fact: said.slice(9) } }]);
    if (said.startsWith('remind '))
      return toolCalls([{ name: 'schedule_message', args: { text: said.slice(7), at: new Date(Date.now() + 36e5).toISOString() } }]);
    return echoResponder(req, i);
  };
  const bot = await startTestBot({ responder, env: { DATABASE_URL: url } });
  try {
    await bot.send('1', 'the lighthouse keeper is called Ines');
    await bot.send('1', 'remember the lighthouse needs paint');
    await bot.send('1', 'remind me to call the lighthouse');
    await bot.send('2', 'the windmill turns at dawn');
    await bot.app.stop();
  } finally {
    await bot.llm.close();
  }
  const before = await everything(url);
  assert.ok(holding(before, 'lighthouse').length >= 4, `the chat's words are in the database: ${holding(before, 'lighthouse')}`);

  const out: string[] = [];
  const config = testConfig({ WORKSPACE_DIR: bot.workspace, DATABASE_URL: url });
  const code = await runChatCommand('purge', ['--chat', 'test:1'], config, silentLogger(), { out: (l) => out.push(l), err: (l) => out.push(l) });
  assert.equal(code, 0, out.join('\n'));
  assert.match(out.join('\n'), /^Purged test:1\. Deleted:/m);

  const after = await everything(url);
  assert.deepEqual(holding(after, 'lighthouse'), [], "no store of the database holds the chat's words");
  assert.deepEqual(holding(after, 'test:1"'), [], 'nor the chat');
  assert.ok(holding(after, 'windmill').length > 0, 'the other chat is kept');
  await bot.close().catch(() => undefined);
});

test('purge with DATABASE_URL on a database that does not answer: refused in one line, nothing deleted, no password shown', async () => {
  const ws = await tempDir();
  try {
    const out: string[] = [];
    const config = testConfig({ WORKSPACE_DIR: ws.dir, DATABASE_URL: 'postgres://membot:s3cret-pw@127.0.0.1:9/membot' });
    const code = await runChatCommand('purge', ['--chat', 'test:1'], config, silentLogger(), { out: (l) => out.push(l), err: (l) => out.push(l) });
    assert.equal(code, 1);
    assert.match(out.join('\n'), /^purge: .* — nothing was deleted\.$/m);
    assert.doesNotMatch(out.join('\n'), /s3cret-pw/);
  } finally {
    await ws.cleanup();
  }
});
