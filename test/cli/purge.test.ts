/**
 * `npm run memory -- purge --chat …` (in-process, the function the CLI runs): after two chats
 * talked, consolidated and exported, purging one leaves no byte of it in the workspace — session,
 * log and journal lines, memory folder, memory.db rows, exports, pairing on request — and the
 * other chat's files are byte-identical and its memories still found.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot } from '../helpers/app.js';
import { echoResponder, promptKind, text, type Responder } from '../helpers/fake-llm.js';
import { runChatCommand } from '../../src/cli/memory-chat.js';
import { silentLogger } from '../../src/core/log.js';
import { filesContaining, filesMatching, testConfig } from '../helpers/workspace.js';
import { memoryCli, startDaemonChild } from '../helpers/child.js';
import { SqliteMemoryIndex } from '../../src/index/sqlite-memory-index.js';
import { FilePairingStore, pairingFile } from '../../src/channels/telegram/pairing-file.js';
import { SqliteUsageStore } from '../../src/features/usage/sqlite-usage.js';
import { SqliteReminderStore } from '../../src/features/reminders/sqlite-store.js';
import { FilePendingWrites } from '../../src/memory/pending-file.js';

const responder: Responder = (req, i) => {
  if (promptKind(req) !== 'consolidation') return echoResponder(req, i);
  const prompt = String(req.body.messages[0].content);
  const word = /PLUM11|KIWI22/.exec(prompt)?.[0] ?? 'nothing';
  return text(
    JSON.stringify({
      history_entry: `[2026-03-10 12:00] Talked about ${word}.`,
      memory_update: `- The code word is ${word}.`,
      facts: [`The code word is ${word}.`],
    }),
  );
};

async function snapshot(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile())
      out.set(
        path.relative(dir, path.join(e.parentPath ?? (e as any).path, e.name)),
        (await readFile(path.join(e.parentPath ?? (e as any).path, e.name))).toString('base64'),
      );
  }
  return out;
}

test('purge --chat deletes every trace of one chat and touches no other chat', async () => {
  const bot = await startTestBot({ responder });
  const ws = bot.workspace;
  try {
    for (const [chat, word, name] of [
      ['1', 'PLUM11', 'Plumbob Quill'],
      ['2', 'KIWI22', 'Kiwi Keeper'],
    ] as const) {
      await bot.send(chat, `my code word is ${word}`, { chat: { kind: 'private', name } });
      await bot.send(chat, '/new');
      await bot.send(chat, `again: ${word}`);
      await bot.send(chat, '/export');
    }
    const inADay = new Date(Date.now() + 86_400_000).toISOString();
    for (const chat of ['1', '2'])
      assert.ok((await bot.app.parts.reminders.schedule('test', chat, { at: inADay, text: `say ${chat === '1' ? 'PLUM11' : 'KIWI22'}` })).ok);
    // A memory write held for approval in each chat (made after an MCP tool's output).
    for (const [chat, word] of [
      ['1', 'PLUM11'],
      ['2', 'KIWI22'],
    ] as const) {
      const now = new Date();
      await FilePendingWrites.inWorkspace(ws).hold({
        id: `pw_0000000${chat}`,
        scope: `test:${chat}`,
        channel: 'test',
        chatId: chat,
        group: false,
        conversationId: 'c',
        tool: 'remember_fact',
        args: JSON.stringify({ fact: `The code word is ${word}` }),
        after: ['fx__read_page'],
        heldAt: now.toISOString(),
        expiresAt: new Date(now.getTime() + 86_400_000).toISOString(),
      });
    }
    await new FilePairingStore(pairingFile(ws)).approve(
      ((await new FilePairingStore(pairingFile(ws)).request({ userId: '1', chatId: '1' })) as { code: string }).code,
    );
    await bot.app.stop();
    assert.ok((await filesContaining(ws, 'PLUM11')).length >= 6);
    assert.ok((await filesContaining(ws, 'Plumbob Quill')).includes('sessions.names.json'), "the chat's name was kept");
    assert.ok((await filesContaining(ws, 'PLUM11')).includes('why/test:1.json'), 'what an answer was built from (/why) was kept');
    const otherMemory = await snapshot(path.join(ws, 'memory', 'test:2'));
    const otherSession = await readFile(path.join(ws, 'sessions', 'test:2.json'));
    const otherExports = await snapshot(path.join(ws, 'exports', 'test:2'));

    // A damaged memory.db set aside earlier: never opened again, so purge names it instead.
    await writeFile(path.join(ws, 'memory.db.corrupt-2026-01-01T00-00-00Z'), 'damaged');
    const out: string[] = [];
    const code = await runChatCommand('purge', ['--chat', 'test:1', '--pairing'], testConfig({ WORKSPACE_DIR: ws }), silentLogger(), {
      out: (l) => out.push(l),
      err: (l) => out.push(l),
    });
    assert.equal(code, 0, out.join('\n'));
    const printed = out.join('\n');
    assert.match(printed, /^Purged test:1\. Deleted:/);
    assert.match(printed, /session file sessions\/test:1\.json/);
    assert.match(printed, /memory folder memory\/test:1\//);
    assert.match(printed, /\d+ memories in memory\.db/);
    assert.match(printed, /exports exports\/test:1\//);
    assert.match(printed, /1 reminder\(s\) in schedules\.db/);
    assert.match(printed, /1 memory write\(s\) held for approval \(test:1\)/);
    assert.match(printed, /\d+ record\(s\) of what answers were built from \(why\/\)/);
    assert.match(printed, /Not deleted: pairing \(only Telegram chats are paired\)/);
    assert.match(printed, /Not deleted: memory\.db\.corrupt-2026-01-01T00-00-00Z \(a damaged database set aside: it may hold this chat's words; delete it\)/);

    assert.deepEqual(await filesContaining(ws, 'PLUM11'), [], 'no byte of chat 1 left');
    assert.deepEqual(await filesContaining(ws, 'Plumbob'), [], 'nor of its name');
    assert.match(printed, /its name in sessions\.names\.json/);
    assert.ok((await filesContaining(ws, 'Kiwi Keeper')).includes('sessions.names.json'), 'the other chat keeps its name');
    assert.deepEqual(await filesContaining(ws, 'test:1'), [], 'not even its id');
    assert.deepEqual(await snapshot(path.join(ws, 'memory', 'test:2')), otherMemory, "the other chat's memory folder is byte-identical");
    assert.deepEqual(await readFile(path.join(ws, 'sessions', 'test:2.json')), otherSession);
    assert.deepEqual(
      (await FilePendingWrites.inWorkspace(ws).list('test:2')).map((w) => w.id),
      ['pw_00000002'],
      "the other chat's held write stays",
    );
    assert.deepEqual(await snapshot(path.join(ws, 'exports', 'test:2')), otherExports);
    const index = new SqliteMemoryIndex(path.join(ws, 'memory.db'), silentLogger());
    try {
      assert.ok(
        index.search('code word', { scope: 'test:2', limit: 5 }).some((h) => /KIWI22/.test(h.content)),
        "the other chat's memories are still found",
      );
      assert.equal(index.search('code word', { scope: 'test:1', limit: 5 }).length, 0);
    } finally {
      index.close();
    }
  } finally {
    await bot.llm.close();
    await rm(ws, { recursive: true, force: true });
  }
});

test('purge of a Telegram chat takes back its pairing on request; a running daemon blocks purge', async () => {
  const bot = await startTestBot();
  const ws = bot.workspace;
  try {
    await bot.app.stop();
    const store = new FilePairingStore(pairingFile(ws));
    const req = (await store.request({ userId: '555', chatId: '555' })) as { code: string };
    await store.approve(req.code);
    const out: string[] = [];
    const io = { out: (l: string) => out.push(l), err: (l: string) => out.push(l) };
    const config = testConfig({ WORKSPACE_DIR: ws });
    assert.equal(await runChatCommand('purge', ['--chat', 'telegram:555', '--pairing'], config, silentLogger(), io), 0);
    assert.match(out.join('\n'), /Telegram pairing of user 555/);
    assert.equal(await store.isApproved('555'), false);

    // A daemon holding the workspace (a live process whose command line names main.ts): refused, nothing deleted.
    await writeFile(path.join(ws, 'sessions', 'telegram:555.json'), '{}');
    const daemon = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)', 'main.ts'], { stdio: 'ignore' });
    try {
      await writeFile(path.join(ws, 'daemon.pid'), `${daemon.pid}\n`);
      out.length = 0;
      assert.equal(await runChatCommand('purge', ['--chat', 'telegram:555'], config, silentLogger(), io), 1);
      assert.match(out.join('\n'), /^purge: another daemon \(pid \d+\) is already using .*stop it first/);
      assert.equal(await readFile(path.join(ws, 'sessions', 'telegram:555.json'), 'utf8'), '{}');
    } finally {
      daemon.kill();
    }
  } finally {
    await bot.llm.close();
    await rm(ws, { recursive: true, force: true });
  }
});

test('purge --chat telegram:<group> takes the group and every forum topic of it, and says how many topics; a topic alone takes only that topic; other groups are untouched', async () => {
  // Each chat says its own code word; consolidation puts it in MEMORY.md and memory.db.
  const chats: Array<[string, string]> = [
    ['-100123', 'FIG44'], // the group's General topic
    ['-100123:5', 'PLUM11'],
    ['-100123:7', 'PEAR33'],
    ['-100123:9', 'DATE66'],
    ['-100456', 'KIWI22'], // another group
    ['-1001234:5', 'LIME55'], // a group whose id starts with the same digits
  ];
  const wordIn = (s: string) => chats.map(([, w]) => w).find((w) => s.includes(w)) ?? 'nothing';
  const consolidating: Responder = (req, i) => {
    if (promptKind(req) !== 'consolidation') return echoResponder(req, i);
    const word = wordIn(String(req.body.messages[0].content));
    return text(
      JSON.stringify({
        history_entry: `[2026-03-10 12:00] Talked about ${word}.`,
        memory_update: `- The code word is ${word}.`,
        facts: [`The code word is ${word}.`],
      }),
    );
  };
  const bot = await startTestBot({ responder: consolidating });
  const ws = bot.workspace;
  const tg = { channel: 'telegram', userId: '301' };
  try {
    for (const [chat, word] of chats) {
      await bot.send(chat, `my code word is ${word}`, tg);
      await bot.send(chat, '/new', { ...tg, role: 'owner' });
      await bot.send(chat, `again: ${word}`, tg);
      await bot.send(chat, '/export', { ...tg, role: 'owner' });
      assert.ok((await bot.app.parts.reminders.schedule('telegram', chat, { at: new Date(Date.now() + 86_400_000).toISOString(), text: `say ${word}` })).ok);
    }
    await bot.app.stop();
    const others = ['memory', 'sessions', 'exports'].flatMap((d) =>
      ['telegram:-100456', 'telegram:-1001234%3A5'].map((k) => path.join(ws, d, d === 'sessions' ? `${k}.json` : k)),
    );
    const before = await Promise.all(
      others.map((p) =>
        readFile(p).then(
          (b) => b.toString('base64'),
          () => snapshot(p),
        ),
      ),
    );

    const purge = async (chat: string) => {
      const out: string[] = [];
      const code = await runChatCommand('purge', ['--chat', chat], testConfig({ WORKSPACE_DIR: ws }), silentLogger(), {
        out: (l) => out.push(l),
        err: (l) => out.push(l),
      });
      assert.equal(code, 0, out.join('\n'));
      return out.join('\n');
    };
    // One topic: only that topic goes.
    const one = await purge('telegram:-100123:9');
    assert.match(one, /^Purged telegram:-100123:9\. Deleted:/);
    assert.deepEqual(await filesContaining(ws, 'DATE66'), []);
    assert.ok((await filesContaining(ws, 'PLUM11')).length >= 4, 'the other topics are still there');

    // The group: its General topic and its two remaining topics.
    const all = await purge('telegram:-100123');
    assert.match(all, /^Purged telegram:-100123 and its 2 forum topics \(5, 7\)\. Deleted:/);
    assert.match(all, /session file sessions\/telegram:-100123%3A5\.json/);
    assert.match(all, /memory folder memory\/telegram:-100123%3A7\//);
    assert.match(all, /3 reminder\(s\) in schedules\.db/);
    assert.match(all, /\d+ row\(s\) of token usage in usage\.db/);
    for (const word of ['FIG44', 'PLUM11', 'PEAR33']) assert.deepEqual(await filesContaining(ws, word), [], `no byte of ${word} left`);
    assert.deepEqual(await filesMatching(ws, /-100123(?!\d)/), [], "not even the group's id");

    const after = await Promise.all(
      others.map((p) =>
        readFile(p).then(
          (b) => b.toString('base64'),
          () => snapshot(p),
        ),
      ),
    );
    assert.deepEqual(after, before, "the other groups' sessions, memory folders and exports are byte-identical");
    const index = new SqliteMemoryIndex(path.join(ws, 'memory.db'), silentLogger());
    try {
      for (const [scope, word] of [
        ['telegram:-100456', 'KIWI22'],
        ['telegram:-1001234:5', 'LIME55'],
      ]) {
        assert.ok(
          index.search('code word', { scope: scope!, limit: 5 }).some((h) => h.content.includes(word!)),
          `${scope} keeps its memories`,
        );
      }
    } finally {
      index.close();
    }
    const usage = new SqliteUsageStore(path.join(ws, 'usage.db'), 'UTC');
    try {
      assert.deepEqual([...new Set((await usage.rows()).map((r) => r.chat))].sort(), ['telegram:-100456', 'telegram:-1001234:5'].sort());
    } finally {
      usage.close();
    }
    const reminders = new SqliteReminderStore(path.join(ws, 'schedules.db'), silentLogger());
    try {
      const left: number[] = [];
      for (const c of ['telegram:-100123', 'telegram:-100123:5', 'telegram:-100456', 'telegram:-1001234:5']) left.push((await reminders.pending(c)).length);
      assert.deepEqual(left, [0, 0, 1, 1]);
    } finally {
      reminders.close();
    }
  } finally {
    await bot.llm.close();
    await rm(ws, { recursive: true, force: true });
  }
});

/** Two chats that talked, consolidated and each set a reminder; the daemon stopped. */
async function twoChats(): Promise<{ ws: string; closeLlm: () => Promise<void> }> {
  const bot = await startTestBot({ responder });
  for (const [chat, word] of [
    ['1', 'PLUM11'],
    ['2', 'KIWI22'],
  ] as const) {
    await bot.send(chat, `my code word is ${word}`);
    await bot.send(chat, '/new');
    assert.ok((await bot.app.parts.reminders.schedule('test', chat, { at: new Date(Date.now() + 86_400_000).toISOString(), text: `say ${word}` })).ok);
  }
  await bot.app.stop();
  return { ws: bot.workspace, closeLlm: () => bot.llm.close() };
}

const pendingOf = async (ws: string, chat: string) => {
  const store = new SqliteReminderStore(path.join(ws, 'schedules.db'), silentLogger());
  try {
    return (await store.chats()).includes(chat);
  } finally {
    await store.close();
  }
};

test('risk: a purge killed part-way leaves the chat half there — the next start of the daemon finishes it before anything else; so does the next purge', async () => {
  for (const finisher of ['daemon', 'purge'] as const) {
    const { ws, closeLlm } = await twoChats();
    try {
      // Killed after the reminders, session files and log lines went; memory folder and memory.db rows still there.
      const killed = await memoryCli(['purge', '--chat', 'test:1'], { WORKSPACE_DIR: ws, MEMBOT_CRASH_AT: 'purge:files' });
      assert.equal(killed.code, null, `killed mid-purge: ${killed.stdout}${killed.stderr}`);
      assert.ok((await filesContaining(ws, 'PLUM11')).length > 0, 'the kill left the chat half there');
      assert.equal(await pendingOf(ws, 'test:1'), false, 'its reminders went first');

      if (finisher === 'daemon') {
        // The terminal daemon with no input: it starts, then stops at the end of its input.
        const daemon = startDaemonChild(
          { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'sk-test-key-123456', WORKSPACE_DIR: ws, LOG_LEVEL: 'info' },
          ws,
        );
        const code = await new Promise((r) => daemon.child.once('close', r));
        assert.equal(code, 0, daemon.log());
        assert.match(daemon.log(), /a purge was cut off by the last stop; finishing it/);
      } else {
        const next = await memoryCli(['purge', '--chat', 'test:3'], { WORKSPACE_DIR: ws });
        assert.equal(next.code, 0, next.stderr);
        assert.match(next.stdout, /^Finished the purge of test:1 that an earlier run began and did not end\.\nPurged test:3\./);
      }
      assert.deepEqual(await filesContaining(ws, 'PLUM11'), [], `${finisher}: no byte of chat 1 left`);
      assert.deepEqual(await filesContaining(ws, 'test:1'), [], `${finisher}: not even its id (the purge's own record included)`);
      assert.ok((await filesContaining(ws, 'KIWI22')).length >= 4, `${finisher}: the other chat is still there`);
      assert.equal(await pendingOf(ws, 'test:2'), true);
    } finally {
      await closeLlm();
      await rm(ws, { recursive: true, force: true });
    }
  }
});
