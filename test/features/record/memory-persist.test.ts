/**
 * MemoryPersist (50): a note that cannot be written never touches the reply (seed 001 "Error
 * Handling": logged as a warning, the pipeline goes on), and memory.enabled=false turns the
 * whole memory layer off.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot, type TestBot } from '../../helpers/app.js';
import { lastUserText, text } from '../../helpers/fake-llm.js';

const memDir = (bot: TestBot, chatId: string): string => path.join(bot.workspace, 'memory', `test:${chatId}`);
const AT = new Date('2026-03-10T12:00:00Z');

function persistWarnings(bot: TestBot): Array<Record<string, any>> {
  return bot.logs.lines().filter((l) => l.level === 40 && l.system === 'MemoryPersist');
}

test('a note that cannot be written (a file where the memory folder should be): reply unchanged, warning logged, next message works', async () => {
  const answer = 'Here is **my** answer\nover two lines.';
  const bot = await startTestBot({ responder: () => text(answer) });
  try {
    // As root, chmod does not stop writes: a plain file where the folder belongs does.
    await mkdir(path.join(bot.workspace, 'memory'), { recursive: true });
    await writeFile(memDir(bot, '5'), 'not a folder');

    const replies = await bot.send('5', 'hello', { receivedAt: AT });
    assert.deepEqual(replies, [answer], 'the user gets the model reply, not an apology');
    const warnings = persistWarnings(bot);
    assert.equal(warnings.length, 1, 'one warning from MemoryPersist');
    assert.match(warnings[0]!.msg, /MemoryPersist failed after the reply/);
    assert.ok(!bot.logs.lines().some((l) => l.level >= 50), 'nothing logged at error level');

    const session = JSON.parse(await readFile(path.join(bot.workspace, 'sessions', 'test:5.json'), 'utf8'));
    assert.deepEqual(
      session.messages.map((m: any) => [m.role, m.content]),
      [
        ['user', 'hello'],
        ['assistant', answer],
      ],
    );

    // The next message (the obstacle still there) is answered the same way.
    assert.deepEqual(await bot.send('5', 'still there?', { receivedAt: AT }), [answer]);
    assert.equal(persistWarnings(bot).length, 2);

    // Once the obstacle is gone, notes are written again (no stale lock, nothing wedged).
    await rm(memDir(bot, '5'));
    assert.deepEqual(await bot.send('5', 'and now?', { receivedAt: AT }), [answer]);
    const note = await readFile(path.join(memDir(bot, '5'), '2026-03-10.md'), 'utf8');
    assert.equal(note, '[12:00] User: and now? | Assistant: Here is **my** answer over two lines.\n');
  } finally {
    await bot.close();
  }
});

test('the write fails only after the prompt was built (folder replaced mid-turn): reply unchanged, warning logged', async () => {
  let bot: TestBot | undefined;
  let sabotage = true;
  bot = await startTestBot({
    responder: async (req) => {
      // While the model "thinks", the memory folder is swapped for a file: only the write fails.
      if (sabotage) {
        await rm(memDir(bot!, '6'), { recursive: true, force: true });
        await writeFile(memDir(bot!, '6'), 'blocker');
      }
      return text(`answer to ${lastUserText(req)}`);
    },
  });
  try {
    await mkdir(memDir(bot, '6'), { recursive: true });
    await writeFile(path.join(memDir(bot, '6'), 'MEMORY.md'), '- likes tea\n');
    assert.deepEqual(await bot.send('6', 'first', { receivedAt: AT }), ['answer to first']);
    assert.match(String(bot.llm.chatRequests()[0]!.body.messages[0].content), /likes tea/);
    assert.equal(persistWarnings(bot).length, 1);
    assert.equal((await stat(memDir(bot, '6'))).isFile(), true, 'the note did not go anywhere else');

    sabotage = false;
    await rm(memDir(bot, '6'));
    assert.deepEqual(await bot.send('6', 'second', { receivedAt: AT }), ['answer to second']);
    assert.equal(await readFile(path.join(memDir(bot, '6'), '2026-03-10.md'), 'utf8'), '[12:00] User: second | Assistant: answer to second\n');
  } finally {
    await bot.close();
  }
});

test('a failed turn (LLM error) writes no note', async () => {
  const bot = await startTestBot({ responder: () => ({ status: 400, json: { error: { message: 'bad request' } } }) });
  try {
    const [reply] = await bot.send('7', 'hello', { receivedAt: AT });
    assert.match(reply!, /Sorry, something went wrong/);
    await assert.rejects(readFile(path.join(memDir(bot, '7'), '2026-03-10.md'), 'utf8'), { code: 'ENOENT' });
  } finally {
    await bot.close();
  }
});

test('memory.enabled=false: no note is written and no # Memory is sent', async () => {
  const bot = await startTestBot();
  try {
    await mkdir(path.join(bot.workspace, 'preferences'), { recursive: true });
    await writeFile(path.join(bot.workspace, 'preferences', 'runtime-config.json'), JSON.stringify({ memory: { enabled: false } }));
    await mkdir(memDir(bot, '8'), { recursive: true });
    await writeFile(path.join(memDir(bot, '8'), 'MEMORY.md'), '- the user is called Ada\n');
    await writeFile(path.join(memDir(bot, '8'), '2026-03-09.md'), '[10:00] User: x | Assistant: y\n');

    assert.deepEqual(await bot.send('8', 'hello', { receivedAt: AT }), ['echo: hello']);
    assert.deepEqual(await bot.send('8', 'again', { receivedAt: AT }), ['echo: again']);
    for (const req of bot.llm.chatRequests()) {
      const system = String(req.body.messages[0].content);
      assert.ok(!system.includes('# Memory'), 'no memory block');
      assert.ok(!system.includes('Ada'), 'MEMORY.md not sent');
    }
    assert.deepEqual((await readdir(memDir(bot, '8'))).sort(), ['2026-03-09.md', 'MEMORY.md'], 'no note file written');
    const [status] = await bot.send('8', '/status full');
    assert.match(status!, /Memory block: empty/);
    assert.match(status!, /MemoryPersist skipped/);
  } finally {
    await bot.close();
  }
});
