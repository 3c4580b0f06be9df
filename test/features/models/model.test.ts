/**
 * /model (issue 28, item 2) through the real daemon: the list LLM_MODELS allows, a switch that
 * the next request goes out with (to the model's own server when it has one), kept across /new
 * and a restart, the chat's context limit and tokenizer taken from the catalogue for that model,
 * /status naming it, and a group member refused in one line with nothing changed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot, type TestBot } from '../../helpers/app.js';
import { startFakeLlm, text } from '../../helpers/fake-llm.js';
import { tempDir } from '../../helpers/workspace.js';
import { mainTs, runCli } from '../../helpers/child.js';

const MODELS = { LLM_MODEL: 'gpt-4o-mini', LLM_MODELS: 'gpt-4o-mini,gpt-4.1,gpt-4' };

async function sessionMeta(bot: TestBot, chat: string) {
  await bot.app.parts.sessions.flush();
  return JSON.parse(await readFile(path.join(bot.workspace, 'sessions', `test:${chat}.json`), 'utf8')).metadata;
}

test('/model lists the allowed models with the one in use marked; /model <name> switches this chat, and the next request asks it', async () => {
  const bot = await startTestBot({ env: MODELS, responder: (req) => text(`answered by ${req.body.model}`) });
  try {
    const [list] = await bot.send('1', '/model');
    assert.equal(
      list,
      [
        'Models for this chat (✓ = in use):',
        '✓ gpt-4o-mini (default) — 50,000 tokens · reads images',
        '• gpt-4.1 — 50,000 tokens · reads images',
        '• gpt-4 — 8,192 tokens · text only',
        'Switch with /model <name>; /model default goes back to gpt-4o-mini.',
      ].join('\n'),
    );
    assert.equal(bot.llm.chatRequests().length, 0, 'a command never reaches the model');
    const [switched] = await bot.send('1', '/model GPT-4.1');
    assert.equal(switched, 'Switched this chat to gpt-4.1 (50,000 tokens · reads images). Your next message is answered by it.');
    assert.equal((await sessionMeta(bot, '1')).model, 'gpt-4.1', 'written to the session file at once');
    assert.deepEqual(await bot.send('1', 'hello'), ['answered by gpt-4.1']);
    assert.deepEqual(await bot.send('2', 'hello'), ['answered by gpt-4o-mini'], 'another chat keeps the default');
    assert.equal(await bot.send('1', '/model gpt-4.1').then((r) => r[0]), 'This chat already uses gpt-4.1.');
    const [unknown] = await bot.send('1', '/model gpt-5-ultra');
    assert.equal(unknown, 'There is no model "gpt-5-ultra" here, so nothing changed. Choose one of: gpt-4o-mini, gpt-4.1, gpt-4.');
    assert.equal((await sessionMeta(bot, '1')).model, 'gpt-4.1');
    await bot.send('1', '/model default');
    assert.equal((await sessionMeta(bot, '1')).model, undefined, 'back to LLM_MODEL: nothing stored');
    assert.deepEqual(await bot.send('1', 'again'), ['answered by gpt-4o-mini']);
  } finally {
    await bot.close();
  }
});

test("the chat's model sets its context limit and tokenizer (catalogue); /status shows it", async () => {
  const bot = await startTestBot({ env: MODELS, runtimeConfig: { compaction: { maxContextTokens: 200_000 } } });
  try {
    await bot.send('1', 'hello there');
    const before = (await bot.send('1', '/status full'))[0]!;
    assert.match(before, /^Context: [\d,]+ \/ 128,000 tokens/m);
    assert.match(before, /^Tokenizer: exact \(o200k_base\)$/m);
    assert.match(before, /^Model: gpt-4o-mini \(summaries: gpt-4o-mini\) · reads images$/m);
    await bot.send('1', '/model gpt-4');
    const after = (await bot.send('1', '/status full'))[0]!;
    assert.match(after, /^Context: [\d,]+ \/ 8,192 tokens/m);
    assert.match(after, /^Tokenizer: exact \(cl100k_base\)$/m);
    assert.match(after, /^Model: gpt-4 \(chosen with \/model; default gpt-4o-mini\) \(summaries: gpt-4o-mini\) · text only$/m);
    assert.match(after, /^Last answer by gpt-4o-mini$/m, 'the last answer was written before the switch');
  } finally {
    await bot.close();
  }
});

test('the choice outlasts /new and a restart of the daemon; a model no longer offered falls back to LLM_MODEL', async () => {
  const llm = await startFakeLlm((req) => text(`answered by ${req.body.model}`));
  const ws = await tempDir();
  try {
    // The real daemon on the terminal, piped: one run, then another on the same workspace.
    const daemon = (input: string, env: Record<string, string> = MODELS) =>
      runCli(mainTs, [], { OPENAI_BASE_URL: llm.url, WORKSPACE_DIR: ws.dir, LOG_LEVEL: 'silent', ...env }, input);
    const first = await daemon('/model gpt-4\nremember this\n/new\nafter new\n');
    assert.equal(first.code, 0, first.stderr);
    // (/new's consolidation gets "answered by …", no JSON: the save fails and /new says so.)
    assert.match(first.stdout, /answered by gpt-4\nSession cleared[^\n]*\n(Nothing was lost[^\n]*\n)?answered by gpt-4\n$/, first.stdout);
    const second = await daemon('after restart\n');
    assert.equal(second.stdout, 'answered by gpt-4\n', 'the next run answers with the chosen model');
    // The operator drops gpt-4 from LLM_MODELS: the chat is answered by the default, and /model says why.
    const fewer = await daemon('still there?\n/model\n', { LLM_MODEL: 'gpt-4o-mini', LLM_MODELS: 'gpt-4.1' });
    assert.match(fewer.stdout, /^answered by gpt-4o-mini$/m);
    assert.match(fewer.stdout, /^✓ gpt-4o-mini \(default\)/m);
    assert.match(fewer.stdout, /^gpt-4, chosen earlier, is no longer offered, so this chat uses gpt-4o-mini\.$/m);
  } finally {
    await llm.close();
    await ws.cleanup();
  }
});

test('a model with its own server (LLM_MODELS name=URL): after /model the requests go there, never to the default server', async () => {
  const local = await startFakeLlm((req) => text(`local ${req.body.model}`));
  const bot = await startTestBot({ env: { LLM_MODELS: `llama3=${local.url}` } });
  try {
    await bot.send('1', '/model llama3');
    assert.deepEqual(await bot.send('1', 'hi'), ['local llama3']);
    assert.equal(bot.llm.chatRequests().length, 0);
    assert.equal(local.chatRequests().length, 1);
    const [list] = await bot.send('1', '/model');
    assert.ok(!list!.includes(local.url) && !list!.includes('127.0.0.1'), 'the server is never shown in the chat');
  } finally {
    await bot.close();
    await local.close();
  }
});

test('in a group /model is for managers: a member gets one line and nothing changes; an owner may', async () => {
  const bot = await startTestBot({ env: MODELS });
  try {
    const group = { chat: { kind: 'group' as const, name: 'Team' } };
    const [refused] = await bot.send('-100200', '/model gpt-4', { ...group, role: 'member', userId: '5' });
    assert.equal(refused, "Only the bot's owner can use /model in this group, so nothing was done. Ask them if it is needed.");
    const [listRefused] = await bot.send('-100200', '/model', { ...group, role: 'member', userId: '5' });
    assert.equal(listRefused, refused, 'the list too: it would show the setup to everyone');
    assert.equal(bot.app.parts.sessions.get('test:-100200')?.metadata.model, undefined);
    const [ok] = await bot.send('-100200', '/model gpt-4', { ...group, role: 'owner', userId: '7' });
    assert.match(ok!, /^Switched this chat to gpt-4 /);
    // A member's short /status names the model the group now uses.
    const [status] = await bot.send('-100200', '/status', { ...group, role: 'member', userId: '5' });
    assert.match(status!, /^Model: gpt-4 · text only$/m);
  } finally {
    await bot.close();
  }
});
