/**
 * What a group member may not do by command they may not do through the model either (issue
 * 25 item 1): the tools matching /memory and /reminders cancel — memory_read, memory_rewrite,
 * cancel_scheduled — are not offered to a member in a group, and a call to one is refused
 * without running. The owner (and anyone in a private chat) keeps them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot } from '../helpers/app.js';
import { lastUserText, text, toolCalls, type RecordedRequest, type Responder } from '../helpers/fake-llm.js';

const offered = (req: RecordedRequest): string[] => ((req.body.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name);
const lastTool = (req: RecordedRequest): string | undefined => {
  const m = (req.body.messages as Array<{ role: string; content: string }>).at(-1);
  return m?.role === 'tool' ? m.content : undefined;
};

/** "call <tool> <json>" calls it; then the answer quotes the result. */
const model: Responder = (req) => {
  const result = lastTool(req);
  if (result !== undefined) return text(`result: ${result}`);
  const m = /^call (\S+)(?: (.+))?$/s.exec(lastUserText(req));
  return m ? toolCalls([{ name: m[1]!, args: m[2] ? JSON.parse(m[2]) : {} }]) : text('ok');
};

const GROUP = '-1001';
const member = { role: 'member', chat: { kind: 'group', name: 'Team' } } as const;
const owner = { role: 'owner', chat: { kind: 'group', name: 'Team' } } as const;

test('a group member asking the model: memory_read, memory_rewrite and cancel_scheduled are not offered, and a call is refused without running', async () => {
  const bot = await startTestBot({ responder: model });
  try {
    const inADay = new Date(Date.now() + 86_400_000).toISOString();
    assert.ok((await bot.app.parts.reminders.schedule('test', GROUP, { at: inADay, text: 'team standup' })).ok);
    const memoryFile = path.join(bot.workspace, 'memory', `test:${GROUP}`, 'MEMORY.md');
    await bot.app.parts.memory.forChat('test', GROUP).writeMemory('- The launch code is 4711.\n', 'test');

    await bot.send(GROUP, 'hello', member);
    const names = offered(bot.llm.chatRequests().at(-1)!);
    for (const t of ['memory_read', 'memory_rewrite', 'cancel_scheduled']) assert.ok(!names.includes(t), `${t} is not offered to a member`);
    assert.ok(names.includes('list_scheduled') && names.includes('search_memory'), 'the others are');

    const [cancel] = await bot.send(GROUP, 'call cancel_scheduled {"id":1}', member);
    assert.match(cancel!, /result: Error: cancel_scheduled is for the bot's owner \(or a group admin\) in this group/);
    assert.equal((await bot.app.parts.reminders.list('test', GROUP)).length, 1, 'the reminder stays');
    const [read] = await bot.send(GROUP, 'call memory_read {}', member);
    assert.doesNotMatch(read!, /4711/);
    const [rewrite] = await bot.send(GROUP, 'call memory_rewrite {"section":"Launch","content":"gone"}', member);
    assert.match(rewrite!, /not done/);
    assert.equal(await readFile(memoryFile, 'utf8'), '- The launch code is 4711.\n', 'MEMORY.md unchanged');

    // The owner in the same group keeps them.
    await bot.send(GROUP, 'hello', owner);
    assert.ok(offered(bot.llm.chatRequests().at(-1)!).includes('cancel_scheduled'));
    const [byOwner] = await bot.send(GROUP, 'call memory_read {}', owner);
    assert.match(byOwner!, /4711/);
  } finally {
    await bot.close();
  }
});

test('risk: a group member reads MEMORY.md or an old version word for word through notes_read — refused, and the words never reach the model', async () => {
  const bot = await startTestBot({ responder: model });
  try {
    const files = bot.app.parts.memory.forChat('test', GROUP);
    // Version 2 keeps a line the rewrite after it took out; MEMORY.md now holds other words.
    await files.writeMemory('- The launch code is 4711.\n', 'test');
    await files.writeMemory('- Standup is at nine in room Bellatrix.\n', 'test');
    assert.match((await files.readVersion(2)) ?? '', /4711/, 'the old words are kept in versions/2.md');
    await files.appendHistory('The team planned the Orion release.');

    for (const file of ['MEMORY.md', 'versions/1.md', 'versions/2.md', './MEMORY.md']) {
      const before = bot.llm.chatRequests().length;
      const [reply] = await bot.send(GROUP, `call notes_read ${JSON.stringify({ file })}`, member);
      const next = bot.llm.chatRequests().slice(before).at(-1)!;
      assert.ok(lastTool(next) !== undefined && !/Bellatrix/.test(lastTool(next)!), `${file}: MEMORY.md's words are not in the tool result`);
      assert.ok(!JSON.stringify(next.body).includes('4711'), `${file}: the removed words reach no part of the next request`);
      assert.match(reply!, /result: Error: refused — notes_read reads daily notes/, file);
    }
    // What notes_read is for still works for a member: the history log.
    const [history] = await bot.send(GROUP, 'call notes_read {"file":"HISTORY.md"}', member);
    assert.match(history!, /Orion release/);
    // The owner reads MEMORY.md with memory_read, not notes_read.
    const [byOwner] = await bot.send(GROUP, 'call notes_read {"file":"MEMORY.md"}', owner);
    assert.match(byOwner!, /read with memory_read/);
  } finally {
    await bot.close();
  }
});
