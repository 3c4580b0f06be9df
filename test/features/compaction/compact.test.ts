/**
 * The commands of the compaction issue, through the real daemon and the fake LLM:
 * `/compact [N]` (default 10, clamped 1–100, reports what it did), `/new` (consolidates first,
 * then clears, and a message sent meanwhile waits its turn), and what `/status` shows about
 * context, tokens, messages, compactions and the tokenizer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';
import { startTestBot, type TestBot, loadedSession } from '../../helpers/app.js';
import { lastUserText, memoryAwareResponder, promptKind, text, type Responder } from '../../helpers/fake-llm.js';

const CHAT = 'k';
const SESSION_ID = `test:${CHAT}`;

async function withBot(opts: Parameters<typeof startTestBot>[0], fn: (bot: TestBot) => Promise<void>): Promise<void> {
  const bot = await startTestBot({ responder: memoryAwareResponder, ...opts });
  try {
    await fn(bot);
  } finally {
    await bot.close();
  }
}

const session = (bot: TestBot) => loadedSession(bot, CHAT);

/** `n` exchanges (2n messages) with distinct words. */
async function talk(bot: TestBot, n: number, from = 0): Promise<void> {
  for (let i = from; i < from + n; i++) await bot.send(CHAT, `Note ${i}: the kettle in room ${i} is blue.`);
}

async function compact(bot: TestBot, args: string): Promise<string> {
  const replies = await bot.send(CHAT, `/compact${args ? ` ${args}` : ''}`);
  assert.equal(replies.length, 1);
  return replies[0]!;
}

const kinds = (bot: TestBot) => bot.llm.chatRequests().map(promptKind);

// ---------------------------------------------------------------------------------------------
// /compact

test('/compact with no argument keeps the last 10 and reports "N messages summarized"', () =>
  withBot({}, async (bot) => {
    await talk(bot, 15);
    const before = session(bot).messages.map((m) => m.content);
    assert.equal(before.length, 30);
    const reply = await compact(bot, '');
    assert.equal(reply, 'Compacted: 20 messages summarized, last 10 kept. Memory updated.');
    const after = session(bot).messages;
    assert.equal(after.length, 11);
    assert.equal(after[0]!.role, 'system');
    assert.ok(after[0]!.content.startsWith('[Conversation summary]\n'));
    assert.deepEqual(
      after.slice(1).map((m) => m.content),
      before.slice(-10),
    );
    assert.deepEqual(kinds(bot).slice(-2), ['consolidation', 'summary']);
    // The consolidation saw the 20 removed messages, starting with the first one.
    const consolidation = bot.llm.chatRequests().find((r) => promptKind(r) === 'consolidation')!;
    const prompt = String(consolidation.body.messages[0].content);
    assert.ok(prompt.includes('USER: Note 0: the kettle in room 0 is blue.'));
    assert.ok(prompt.includes('ASSISTANT: echo: Note 9: the kettle in room 9 is blue.'));
    assert.ok(!prompt.includes('Note 10:'), 'kept messages are not consolidated');
    assert.match(await readFile(path.join(bot.workspace, 'memory', SESSION_ID, 'MEMORY.md'), 'utf8'), /consolidated 20 messages/);
    // The session on disk is the compacted one.
    const file = JSON.parse(await readFile(path.join(bot.workspace, 'sessions', `${SESSION_ID}.json`), 'utf8'));
    assert.equal(file.messages.length, 11);
    assert.equal(file.metadata.messagesCompacted, 20);
  }));

test('/compact 3 keeps 3 plus the summary; the next message still works', () =>
  withBot({}, async (bot) => {
    await talk(bot, 6);
    const before = session(bot).messages.map((m) => m.content);
    const reply = await compact(bot, '3');
    assert.equal(reply, 'Compacted: 9 messages summarized, last 3 kept. Memory updated.');
    const after = session(bot).messages;
    assert.equal(after.length, 4);
    assert.ok(after[0]!.content.startsWith('[Conversation summary]'));
    assert.deepEqual(
      after.slice(1).map((m) => m.content),
      before.slice(-3),
    );
    assert.deepEqual(await bot.send(CHAT, 'still with me?'), ['echo: still with me?']);
  }));

test('/compact 0 is clamped to 1', () =>
  withBot({}, async (bot) => {
    await talk(bot, 3);
    const last = session(bot).messages.at(-1)!.content;
    const reply = await compact(bot, '0');
    assert.equal(reply, 'Compacted: 5 messages summarized, last 1 kept. Memory updated.');
    assert.deepEqual(
      session(bot).messages.map((m) => m.role),
      ['system', 'assistant'],
    );
    assert.equal(session(bot).messages[1]!.content, last);
  }));

test('/compact -4 is clamped to 1 as well', () =>
  withBot({}, async (bot) => {
    await talk(bot, 2);
    assert.match(await compact(bot, '-4'), /^Compacted: 3 messages summarized, last 1 kept\./);
  }));

test('/compact 500 is clamped to 100', () =>
  withBot({}, async (bot) => {
    await talk(bot, 60);
    const before = session(bot).messages.map((m) => m.content);
    assert.equal(before.length, 120);
    const reply = await compact(bot, '500');
    assert.equal(reply, 'Compacted: 20 messages summarized, last 100 kept. Memory updated.');
    assert.equal(session(bot).messages.length, 101);
    assert.deepEqual(
      session(bot)
        .messages.slice(1)
        .map((m) => m.content),
      before.slice(-100),
    );
  }));

test('/compact abc answers with a clear message and changes nothing', () =>
  withBot({}, async (bot) => {
    await talk(bot, 8);
    const before = session(bot).messages.map((m) => m.id);
    const reply = await compact(bot, 'abc');
    assert.match(reply, /\/compact abc/);
    assert.match(reply, /N must be a number of messages to keep/);
    assert.match(reply, /e\.g\. \/compact 10/);
    assert.deepEqual(
      session(bot).messages.map((m) => m.id),
      before,
    );
    assert.ok(!kinds(bot).includes('consolidation'), 'no consolidation for a bad argument');
  }));

test('/compact with nothing to compact says so and calls no LLM', () =>
  withBot({}, async (bot) => {
    const empty = await compact(bot, '');
    assert.match(empty, /^Nothing to compact: the session has 0 messages and keeps the last 10\.$/);
    await talk(bot, 2);
    const reply = await compact(bot, '');
    assert.equal(reply, 'Nothing to compact: the session has 4 messages and keeps the last 10.');
    assert.equal(session(bot).messages.length, 4);
    assert.deepEqual(
      kinds(bot).filter((k) => k !== 'chat'),
      [],
    );
    // Right after a compaction, compacting again with the same N finds nothing to do.
    await talk(bot, 6, 2);
    assert.match(await compact(bot, '4'), /^Compacted: 12 messages summarized/);
    assert.equal(await compact(bot, '4'), 'Nothing to compact: the session has 5 messages and keeps the last 4.');
  }));

test('/compact with the summary failing reports the truncation', () => {
  const responder: Responder = (req, i) => (promptKind(req) === 'summary' ? { status: 500 } : memoryAwareResponder(req, i));
  return withBot({ responder }, async (bot) => {
    await talk(bot, 8);
    const reply = await compact(bot, '4');
    assert.match(reply, /^Compacted without a summary \(the model was unavailable\): 12 older messages removed, last 4 kept\. Memory updated\.$/);
    const after = session(bot).messages;
    assert.equal(after[0]!.content, '[12 earlier messages removed — kept in memory]');
    assert.equal(after.length, 5);
    assert.equal(session(bot).metadata.lastCompaction?.kind, 'truncation');
    // The removed words are in history.
    assert.match(await readFile(path.join(bot.workspace, 'memory', SESSION_ID, 'HISTORY.md'), 'utf8'), /Consolidated 12 messages/);
  });
});

test('/compact with summary and consolidation failing: truncation, and the messages are saved raw to history', () => {
  const responder: Responder = (req, i) => (promptKind(req) === 'chat' ? memoryAwareResponder(req, i) : { status: 500 });
  return withBot({ responder }, async (bot) => {
    await talk(bot, 5);
    const reply = await compact(bot, '2');
    assert.equal(
      reply,
      'Compacted without a summary (the model was unavailable): 8 older messages removed, last 2 kept. The model could not consolidate; the messages were saved to the history log as they are.',
    );
    const history = await readFile(path.join(bot.workspace, 'memory', SESSION_ID, 'HISTORY.md'), 'utf8');
    assert.match(history, /\[raw-fallback\]/);
    assert.match(history, /user: Note 0: the kettle in room 0 is blue\./);
  });
});

test('risk: /compact says "Compacted" when it removed nothing — with no summary and only instructions older than the kept ones, it says nothing was removed and why', () => {
  const responder: Responder = (req, i) => (promptKind(req) === 'summary' ? { status: 500 } : memoryAwareResponder(req, i));
  return withBot({ responder }, async (bot) => {
    for (let i = 0; i < 4; i++) await bot.send(CHAT, `Remember: always call me Captain ${i}.`);
    const before = session(bot).messages.map((m) => m.content);
    const first = await compact(bot, '2');
    assert.equal(
      first,
      'Nothing removed: the model was unavailable for a summary, and without one I keep instructions and errors with their corrections, which is all the older messages are. Memory updated. Try /compact again later.',
    );
    assert.deepEqual(
      session(bot).messages.map((m) => m.content),
      before,
      'the conversation is as it was',
    );
    // Again: they were saved to memory the first time, so nothing is said about memory either.
    assert.equal(
      await compact(bot, '2'),
      'Nothing removed: the model was unavailable for a summary, and without one I keep instructions and errors with their corrections, which is all the older messages are. Try /compact again later.',
    );
  });
});

test('two truncations leave one marker counting everything removed so far', () => {
  const responder: Responder = (req, i) => (promptKind(req) === 'summary' ? { status: 500 } : memoryAwareResponder(req, i));
  return withBot({ responder }, async (bot) => {
    await talk(bot, 4);
    assert.match(await compact(bot, '2'), /6 older messages removed/);
    await talk(bot, 3, 10);
    assert.match(await compact(bot, '2'), /6 older messages removed/);
    const markers = session(bot).messages.filter((m) => m.role === 'system');
    assert.deepEqual(
      markers.map((m) => m.content),
      ['[12 earlier messages removed — kept in memory]'],
    );
    assert.equal(session(bot).metadata.messagesCompacted, 12);
  });
});

test('two chats compacting at once: their consolidations never overlap at the server', () => {
  const spans: Array<{ start: number; end: number }> = [];
  const responder: Responder = async (req, i) => {
    if (promptKind(req) === 'consolidation') {
      const start = performance.now();
      await new Promise((r) => setTimeout(r, 200));
      spans.push({ start, end: performance.now() });
    }
    return memoryAwareResponder(req, i);
  };
  return withBot({ responder }, async (bot) => {
    for (let i = 0; i < 4; i++) {
      await bot.send('x', `Chat x line ${i}`);
      await bot.send('y', `Chat y line ${i}`);
    }
    const [rx, ry] = await Promise.all([bot.send('x', '/compact 2'), bot.send('y', '/compact 2')]);
    assert.match(rx[0]!, /6 messages summarized/);
    assert.match(ry[0]!, /6 messages summarized/);
    assert.equal(spans.length, 2);
    spans.sort((a, b) => a.start - b.start);
    assert.ok(spans[1]!.start >= spans[0]!.end, `consolidations overlapped: ${JSON.stringify(spans)}`);
    for (const id of ['x', 'y']) {
      const memory = await readFile(path.join(bot.workspace, 'memory', `test:${id}`, 'MEMORY.md'), 'utf8');
      assert.equal(memory, '- consolidated 6 messages\n', `chat ${id} got its own memory`);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// /new

test('/new consolidates the session into memory first, then clears it and says "Session cleared."', () =>
  withBot({}, async (bot) => {
    await bot.send(CHAT, 'My cat is called Miso and she likes tuna.');
    await bot.send(CHAT, 'I live in Porto.');
    const conv = session(bot).metadata.conversationId;
    const from = bot.llm.chatRequests().length;
    const replies = await bot.send(CHAT, '/new');
    assert.deepEqual(replies, ['Session cleared.']);
    const reqs = bot.llm.chatRequests().slice(from);
    assert.deepEqual(reqs.map(promptKind), ['consolidation']);
    const prompt = String(reqs[0]!.body.messages[0].content);
    assert.ok(prompt.includes('USER: My cat is called Miso and she likes tuna.'));
    assert.ok(prompt.includes('USER: I live in Porto.'));
    assert.ok(prompt.includes('ASSISTANT: echo: I live in Porto.'));
    assert.deepEqual(session(bot).messages, []);
    assert.notEqual(session(bot).metadata.conversationId, conv, 'a new conversation starts');
    const memDir = path.join(bot.workspace, 'memory', SESSION_ID);
    assert.match(await readFile(path.join(memDir, 'MEMORY.md'), 'utf8'), /consolidated 4 messages/);
    assert.match(await readFile(path.join(memDir, 'HISTORY.md'), 'utf8'), /First: .*My cat is called Miso/);
    const file = JSON.parse(await readFile(path.join(bot.workspace, 'sessions', `${SESSION_ID}.json`), 'utf8'));
    assert.deepEqual(file.messages, []);
  }));

test('/new on an empty session just clears (no LLM call)', () =>
  withBot({}, async (bot) => {
    assert.deepEqual(await bot.send(CHAT, '/new'), ['Session cleared.']);
    assert.equal(bot.llm.chatRequests().length, 0);
  }));

test('/new with consolidation failing still clears, and the words are in history as [raw-fallback]', () => {
  const responder: Responder = (req, i) => (promptKind(req) === 'consolidation' ? { status: 500 } : memoryAwareResponder(req, i));
  return withBot({ responder }, async (bot) => {
    await bot.send(CHAT, 'Remember the code word: pelican.');
    assert.match((await bot.send(CHAT, '/new'))[0]!, /^Session cleared, but saving it to memory failed: .*\nNothing was lost/);
    assert.deepEqual(session(bot).messages, []);
    const history = await readFile(path.join(bot.workspace, 'memory', SESSION_ID, 'HISTORY.md'), 'utf8');
    assert.match(history, /\[raw-fallback\]/);
    assert.match(history, /pelican/);
  });
});

test('a message sent while /new is consolidating is answered after "Session cleared." and sees nothing from before', () => {
  const responder: Responder = async (req, i) => {
    if (promptKind(req) === 'consolidation') await new Promise((r) => setTimeout(r, 300));
    return memoryAwareResponder(req, i);
  };
  return withBot({ responder }, async (bot) => {
    await bot.send(CHAT, 'The secret word is avocado.');
    await bot.send(CHAT, 'And the number is 4711.');
    const a = bot.send(CHAT, '/new');
    const b = bot.send(CHAT, 'What do you know so far?');
    const [ra, rb] = await Promise.all([a, b]);
    assert.deepEqual(ra, ['Session cleared.']);
    assert.deepEqual(rb, ['echo: What do you know so far?']);
    assert.deepEqual(bot.replies.get(CHAT)!.slice(-2), ['Session cleared.', 'echo: What do you know so far?'], 'answered after the clear');
    const chats = bot.llm.chatRequests().filter((r) => promptKind(r) === 'chat');
    const last = chats.at(-1)!;
    assert.equal(lastUserText(last), 'What do you know so far?');
    const nonSystem = last.body.messages.filter((m: any) => m.role !== 'system');
    assert.deepEqual(
      nonSystem.map((m: any) => [m.role, m.content]),
      [['user', 'What do you know so far?']],
    );
    // Consolidation came before that chat request.
    const order = bot.llm.chatRequests().map(promptKind);
    assert.ok(order.lastIndexOf('consolidation') < order.lastIndexOf('chat'));
    assert.deepEqual(
      session(bot).messages.map((m) => m.content),
      ['What do you know so far?', 'echo: What do you know so far?'],
    );
  });
});

test('/new sent during a running turn waits for it, and consolidates that exchange too', () => {
  const responder: Responder = async (req, i) => {
    if (promptKind(req) === 'chat') await new Promise((r) => setTimeout(r, 300));
    return memoryAwareResponder(req, i);
  };
  return withBot({ responder }, async (bot) => {
    const a = bot.send(CHAT, 'Slow question about llamas.');
    const b = bot.send(CHAT, '/new');
    const [ra, rb] = await Promise.all([a, b]);
    assert.deepEqual(ra, ['echo: Slow question about llamas.']);
    assert.deepEqual(rb, ['Session cleared.']);
    assert.deepEqual(bot.replies.get(CHAT), ['echo: Slow question about llamas.', 'Session cleared.']);
    const consolidation = bot.llm.chatRequests().find((r) => promptKind(r) === 'consolidation')!;
    const prompt = String(consolidation.body.messages[0].content);
    assert.ok(prompt.includes('USER: Slow question about llamas.'));
    assert.ok(prompt.includes('ASSISTANT: echo: Slow question about llamas.'));
    assert.deepEqual(session(bot).messages, []);
  });
});

// ---------------------------------------------------------------------------------------------
// /status

const num = (s: string) => Number(s.replace(/,/g, ''));

function line(reply: string, prefix: string): string {
  const l = reply.split('\n').find((x) => x.startsWith(prefix));
  assert.ok(l, `no "${prefix}" line in:\n${reply}`);
  return l;
}

test('/status shows context use, tokens by role, messages, compactions and the exact tokenizer', () =>
  withBot({ runtimeConfig: { compaction: { maxContextTokens: 3000, keepLastMessages: 20 } } }, async (bot) => {
    await talk(bot, 6);
    const [s1] = await bot.send(CHAT, '/status full');
    const usage = bot.app.parts.compactor.usage(session(bot));
    const ctx = /^Context: ([\d,]+) \/ ([\d,]+) tokens \((\d+\.\d)%\)/.exec(line(s1!, 'Context: '));
    assert.ok(ctx, line(s1!, 'Context: '));
    assert.equal(num(ctx[1]!), usage.tokens);
    assert.equal(num(ctx[2]!), 3000);
    assert.equal(ctx[3], ((usage.tokens / 3000) * 100).toFixed(1));
    assert.ok(
      line(s1!, 'Context: ').endsWith(`— compaction at 80%, counted with the whole memory budget (${((usage.reserved / 3000) * 100).toFixed(1)}% now)`),
      line(s1!, 'Context: '),
    );
    assert.match(line(s1!, 'Messages: '), /^Messages: 12 in session, 6 received in this chat, 0 compacted so far$/);
    assert.equal(line(s1!, 'Last compaction:'), 'Last compaction: never');
    assert.equal(line(s1!, 'Tokenizer:'), 'Tokenizer: exact (o200k_base)');

    // Tokens by role, checked with an independent tokenizer: 3 + role + content per message.
    const enc = new Tiktoken(o200k);
    const t = (x: string) => enc.encode(x, [], []).length;
    const byRole = /^Tokens by role: system ([\d,]+) · user ([\d,]+) · assistant ([\d,]+) · tool ([\d,]+) · tool definitions ([\d,]+)$/.exec(
      line(s1!, 'Tokens by role'),
    );
    assert.ok(byRole, line(s1!, 'Tokens by role'));
    const msgs = session(bot).messages;
    const sum = (role: string) => msgs.filter((m) => m.role === role).reduce((n, m) => n + 3 + t(m.role) + t(m.content), 0);
    assert.equal(num(byRole[2]!), sum('user'));
    assert.equal(num(byRole[3]!), sum('assistant'));
    assert.equal(num(byRole[4]!), 0);
    assert.ok(num(byRole[1]!) > 0, 'the system prompt of the last turn is counted');
    assert.ok(num(byRole[5]!) > 0, 'tool definitions are counted');

    // After a compaction: fewer messages in session, received unchanged, compacted count and kind.
    assert.match(await compact(bot, '4'), /8 messages summarized/);
    const [s2] = await bot.send(CHAT, '/status full');
    assert.match(line(s2!, 'Messages: '), /^Messages: 5 in session, 6 received in this chat, 8 compacted so far$/);
    assert.match(line(s2!, 'Last compaction:'), /^Last compaction: \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC, summary \(removed 8, kept 4\)$/);
    const ctx2 = /^Context: ([\d,]+) \//.exec(line(s2!, 'Context: '))!;
    assert.ok(num(ctx2[1]!) < usage.tokens, 'context use went down');
  }));

test('/status after a truncation names the kind "truncation"', () => {
  const responder: Responder = (req, i) => (promptKind(req) === 'summary' ? { status: 500 } : memoryAwareResponder(req, i));
  return withBot({ responder }, async (bot) => {
    await talk(bot, 4);
    assert.match(await compact(bot, '2'), /without a summary/);
    const [s] = await bot.send(CHAT, '/status full');
    assert.match(line(s!, 'Last compaction:'), /, truncation \(removed 6, kept 2\)$/);
    assert.match(line(s!, 'Messages: '), /6 compacted so far$/);
  });
});

test('/status says "estimate" for a model with no known tokenizer (LLM_MODEL=llama3)', () =>
  withBot({ env: { LLM_MODEL: 'llama3' } }, async (bot) => {
    await talk(bot, 2);
    const [s] = await bot.send(CHAT, '/status full');
    assert.match(line(s!, 'Tokenizer:'), /^Tokenizer: estimate\b/);
    assert.ok(!line(s!, 'Tokenizer:').includes('exact'));
    // The unknown model's conservative default limit applies.
    assert.match(line(s!, 'Context: '), /\/ 32,768 tokens/);
    const msgs = session(bot).messages;
    const byRole = /user ([\d,]+) · assistant ([\d,]+)/.exec(line(s!, 'Tokens by role'))!;
    const est = (x: string) => Math.ceil(x.length / 3.5);
    assert.equal(
      num(byRole[1]!),
      msgs.filter((m) => m.role === 'user').reduce((n, m) => n + 3 + est('user') + est(m.content), 0),
    );
  }));

test('a command never reaches the chat model', () =>
  withBot({ responder: (req) => (promptKind(req) === 'chat' ? text('should not happen') : memoryAwareResponder(req, 0)) }, async (bot) => {
    await bot.send(CHAT, '/status full');
    await bot.send(CHAT, '/compact');
    assert.equal(bot.llm.chatRequests().filter((r) => promptKind(r) === 'chat').length, 0);
  }));
