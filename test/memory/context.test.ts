/**
 * The `# Memory` block of the system prompt, end to end: what the model actually receives
 * (seed 001 "Memory Context Format"), when it is read, and how it is trimmed to its budget.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile, readFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot, type TestBot } from '../helpers/app.js';
import { buildMemoryBlock, conversationNoteBodies } from '../../src/memory/context.js';
import { formatNoteLine, noteLineBody } from '../../src/memory/notes.js';
import { makeMessage } from '../../src/sessions/model.js';
import { FileMemoryFiles } from '../../src/memory/file-memory.js';
import { tempDir } from '../helpers/workspace.js';
import { promptKind } from '../helpers/fake-llm.js';

// "Today" is fixed by the message's receivedAt (TZ is UTC in the test config).
const NOW = new Date('2026-03-10T12:00:00Z');
const TODAY = '2026-03-10';

function memDir(bot: TestBot, chatId: string): string {
  return path.join(bot.workspace, 'memory', `test:${chatId}`);
}

async function writeMem(bot: TestBot, chatId: string, files: Record<string, string>): Promise<void> {
  const dir = memDir(bot, chatId);
  await mkdir(dir, { recursive: true });
  for (const [name, content] of Object.entries(files)) await writeFile(path.join(dir, name), content);
}

async function writeRuntimeConfig(bot: TestBot, cfg: unknown): Promise<void> {
  await mkdir(path.join(bot.workspace, 'preferences'), { recursive: true });
  await writeFile(path.join(bot.workspace, 'preferences', 'runtime-config.json'), JSON.stringify(cfg));
}

function systemPrompt(bot: TestBot, i: number): string {
  const req = bot.llm.chatRequests()[i];
  assert.ok(req, `no LLM request #${i}`);
  const first = req.body.messages[0];
  assert.equal(first.role, 'system');
  return String(first.content);
}

/** The `# Memory` block: everything from its header to the end of the system prompt. */
function memoryBlock(prompt: string): string {
  const at = prompt.indexOf('# Memory\n');
  assert.ok(at >= 0, 'no "# Memory" block in the system prompt');
  return prompt.slice(at);
}

const MEMORY_MD = 'User prefers concise responses.\nProject uses Spring Boot 4.0.2 with Java 17.\n';
const TODAY_NOTES =
  '[09:00] User: How do I configure health checks? | Assistant: Add a healthcheck section.\n[09:30] User: What about restart? | Assistant: Use restart: unless-stopped.\n';
const DAY_1 = '[10:00] User: Set up CI/CD pipeline | Assistant: Created GitHub Actions workflow.\n';
const DAY_3 = '[16:00] User: Initialize project | Assistant: Created Spring Boot project.\n';
const DAY_8 = '[11:00] User: Ancient question about Kafka | Assistant: Ancient answer.\n';

test('the model receives # Memory with long-term memory, today, and recent days newest first', async () => {
  const bot = await startTestBot();
  try {
    await writeMem(bot, '1', {
      'MEMORY.md': MEMORY_MD,
      [`${TODAY}.md`]: TODAY_NOTES,
      '2026-03-09.md': DAY_1,
      '2026-03-07.md': DAY_3,
      '2026-03-02.md': DAY_8, // 8 days back: outside recentDays (7)
    });
    await bot.send('1', 'hello', { receivedAt: NOW });
    const prompt = systemPrompt(bot, 0);
    assert.ok(prompt.indexOf('# Memory') > 0, 'the memory block comes after the instructions');
    assert.equal(
      memoryBlock(prompt),
      [
        '# Memory',
        '',
        '## Long-term Memory',
        'User prefers concise responses.',
        'Project uses Spring Boot 4.0.2 with Java 17.',
        '',
        "## Today's Notes",
        '[09:00] User: How do I configure health checks? | Assistant: Add a healthcheck section.',
        '[09:30] User: What about restart? | Assistant: Use restart: unless-stopped.',
        '',
        '## Recent Context',
        '### 2026-03-09',
        '[10:00] User: Set up CI/CD pipeline | Assistant: Created GitHub Actions workflow.',
        '',
        '### 2026-03-07',
        '[16:00] User: Initialize project | Assistant: Created Spring Boot project.',
      ].join('\n'),
    );
    assert.ok(!prompt.includes('Kafka') && !prompt.includes('2026-03-02'), 'a note 8 days old is not in the prompt');
  } finally {
    await bot.close();
  }
});

test('only MEMORY.md present: # Memory has long-term memory and no other headers', async () => {
  const bot = await startTestBot();
  try {
    await writeMem(bot, '1', { 'MEMORY.md': MEMORY_MD });
    await bot.send('1', 'hello', { receivedAt: NOW });
    const block = memoryBlock(systemPrompt(bot, 0));
    assert.equal(block, `# Memory\n\n## Long-term Memory\n${MEMORY_MD.trim()}`);
    assert.ok(!block.includes("## Today's Notes"));
    assert.ok(!block.includes('## Recent Context'));
  } finally {
    await bot.close();
  }
});

test('no memory files at all (or only empty ones): no # Memory header in the prompt', async () => {
  const bot = await startTestBot();
  try {
    await bot.send('1', 'hello', { receivedAt: NOW });
    assert.ok(!systemPrompt(bot, 0).includes('# Memory'));
    // Empty or whitespace-only files count as absent.
    await writeMem(bot, '2', { 'MEMORY.md': '\n  \n', [`${TODAY}.md`]: '\n\n', '2026-03-09.md': '' });
    await bot.send('2', 'hello', { receivedAt: NOW });
    assert.ok(!systemPrompt(bot, 1).includes('# Memory'));
    assert.ok(!systemPrompt(bot, 1).includes('## '));
  } finally {
    await bot.close();
  }
});

test('a note line never repeats an exchange the conversation still holds; once the messages are gone it counts again', async () => {
  const bot = await startTestBot();
  try {
    await writeMem(bot, '1', { '2026-03-10.md': '[08:00] User: from an earlier conversation | Assistant: noted.\n' });
    await bot.send('1', 'my first words', { receivedAt: NOW });
    assert.ok(!systemPrompt(bot, 0).includes('my first words'), 'turn 1 prompt was built before its note was written');
    await bot.send('1', 'my second words', { receivedAt: new Date('2026-03-10T12:01:00Z') });
    const note = await readFile(path.join(memDir(bot, '1'), '2026-03-10.md'), 'utf8');
    assert.match(note, /\[12:00\] User: my first words \| Assistant: echo: my first words\n/, 'the note file keeps every line');
    // The first exchange is in the request as messages: its note line is left out of the prompt.
    const block = memoryBlock(systemPrompt(bot, 1));
    assert.equal(block, "# Memory\n\n## Today's Notes\n[08:00] User: from an earlier conversation | Assistant: noted.");
    assert.ok(bot.llm.chatRequests()[1]!.body.messages.some((m: any) => m.role === 'user' && m.content === 'my first words'));
    // Next day: yesterday's lines of this conversation stay out of Recent Context too.
    await bot.send('1', 'next day', { receivedAt: new Date('2026-03-11T08:00:00Z') });
    const block3 = memoryBlock(systemPrompt(bot, 2));
    assert.ok(!block3.includes("## Today's Notes"));
    assert.equal(block3, '# Memory\n\n## Recent Context\n### 2026-03-10\n[08:00] User: from an earlier conversation | Assistant: noted.');
    // After /new the messages are gone from the conversation: their lines come back.
    await bot.send('1', '/new');
    await bot.send('1', 'fresh start', { receivedAt: new Date('2026-03-11T09:00:00Z') });
    const last = bot.llm
      .chatRequests()
      .filter((r) => promptKind(r) === 'chat')
      .at(-1)!;
    assert.match(
      memoryBlock(String(last.body.messages[0].content)),
      /## Today's Notes\n\[08:00\] User: next day .*\n\n## Recent Context\n### 2026-03-10\n\[08:00\] User: from an earlier conversation .*\n\[12:00\] User: my first words .*\n\[12:01\] User: my second words/,
    );
  } finally {
    await bot.close();
  }
});

// --- budget -------------------------------------------------------------------------------

function noteLines(prefix: string, n: number): string[] {
  return Array.from(
    { length: n },
    (_, i) => `[${String(8 + i).padStart(2, '0')}:00] User: ${prefix} question number ${i} | Assistant: ${prefix} answer number ${i}.`,
  );
}

test('over budget: the oldest recent day goes first; MEMORY.md, today and newer days stay', async () => {
  const bot = await startTestBot();
  try {
    const today = noteLines('today', 2);
    const day1 = noteLines('yesterday', 2);
    const day3 = noteLines('older', 6);
    await writeMem(bot, '1', {
      'MEMORY.md': MEMORY_MD,
      [`${TODAY}.md`]: `${today.join('\n')}\n`,
      '2026-03-09.md': `${day1.join('\n')}\n`,
      '2026-03-07.md': `${day3.join('\n')}\n`,
    });
    // Limit min(128k, 1000) → budget 25% = 250 tokens (≈ 875 chars); the block is ≈ 1,250 chars.
    await writeRuntimeConfig(bot, { compaction: { maxContextTokens: 1000 }, memory: { budgetPercent: 25 } });
    await bot.send('1', 'hello', { receivedAt: NOW });
    const block = memoryBlock(systemPrompt(bot, 0));
    assert.ok(block.includes(`## Long-term Memory\n${MEMORY_MD.trim()}`), 'MEMORY.md whole');
    assert.ok(block.includes(`## Today's Notes\n${today.join('\n')}`), "today's notes whole");
    assert.ok(block.includes(`### 2026-03-09\n${day1.join('\n')}`), 'the newer recent day stays');
    assert.ok(!block.includes('2026-03-07') && !block.includes('older'), 'the oldest recent day is dropped');

    const [status] = await bot.send('1', '/status full');
    assert.match(status!, /Memory trimmed to fit: recent day 2026-03-07 \(\d+ tokens\)$/m);
    assert.doesNotMatch(status!, /2026-03-09|today's notes/);
    const m = /Memory block: (\d+) tokens \(budget (\d+)\)/.exec(status!);
    assert.ok(m, status);
    assert.equal(Number(m[2]), 250);
    assert.ok(Number(m[1]) <= 250, `block ${m[1]} tokens is over its budget`);

    const dropLogs = bot.logs.lines().filter((l) => typeof l.msg === 'string' && l.msg.includes('memory over budget'));
    assert.equal(dropLogs.length, 1);
    assert.equal(dropLogs[0]!.dropped, 'recent day 2026-03-07');
    assert.equal(dropLogs[0]!.budget, 250);
  } finally {
    await bot.close();
  }
});

test('far over budget: recent days oldest first, then the oldest lines of today; MEMORY.md is kept whole', async () => {
  const bot = await startTestBot();
  try {
    const today = noteLines('today', 8);
    const longTerm = 'The user is called Ada.\nAda keeps bees and writes Rust.\nAda lives in Porto.\n';
    await writeMem(bot, '1', {
      'MEMORY.md': longTerm,
      [`${TODAY}.md`]: `${today.join('\n')}\n`,
      '2026-03-09.md': `${noteLines('yesterday', 2).join('\n')}\n`,
      '2026-03-07.md': `${noteLines('older', 2).join('\n')}\n`,
    });
    // Budget 15% of 1000 = 150 tokens (≈ 525 chars): only about four of today's lines fit.
    await writeRuntimeConfig(bot, { compaction: { maxContextTokens: 1000 }, memory: { budgetPercent: 15 } });
    await bot.send('1', 'hello', { receivedAt: NOW });
    const block = memoryBlock(systemPrompt(bot, 0));
    assert.ok(block.includes(`## Long-term Memory\n${longTerm.trim()}`), 'MEMORY.md whole');
    assert.ok(!block.includes('## Recent Context'), 'every recent day dropped');
    const kept = /## Today's Notes\n([\s\S]*)$/.exec(block)?.[1]?.split('\n') ?? [];
    assert.ok(kept.length > 0 && kept.length < today.length, `kept ${kept.length} of ${today.length} lines of today`);
    assert.deepEqual(kept, today.slice(today.length - kept.length), 'the newest lines of today are the ones kept, in order');

    const [status] = await bot.send('1', '/status full');
    const size = /Memory block: (\d+) tokens \(budget (\d+)\)/.exec(status!);
    assert.ok(size, status);
    assert.equal(Number(size[2]), 150);
    assert.ok(Number(size[1]) <= 150, `block of ${size[1]} tokens is over its budget of 150`);
    const trimmed = /^Memory trimmed to fit: (.*)$/m.exec(status!)?.[1];
    assert.ok(trimmed, status);
    const dropped = trimmed.split('; ');
    assert.equal(dropped.length, 3, trimmed);
    assert.match(dropped[0]!, /^recent day 2026-03-07 \(\d+ tokens\)$/);
    assert.match(dropped[1]!, /^recent day 2026-03-09 \(\d+ tokens\)$/);
    assert.match(dropped[2]!, new RegExp(`^${today.length - kept.length} oldest lines of today's notes \\(\\d+ tokens\\)$`));

    const logged = bot.logs
      .lines()
      .filter((l) => typeof l.msg === 'string' && l.msg.includes('memory over budget'))
      .map((l) => l.dropped);
    assert.deepEqual(logged, ['recent day 2026-03-07', 'recent day 2026-03-09', `${today.length - kept.length} oldest lines of today's notes`]);
  } finally {
    await bot.close();
  }
});

test('a MEMORY.md bigger than the whole budget is still sent whole; everything else is dropped', async () => {
  const bot = await startTestBot();
  try {
    const longTerm = Array.from({ length: 40 }, (_, i) => `- Fact number ${i}: the user likes item ${i}.`).join('\n');
    await writeMem(bot, '1', {
      'MEMORY.md': `${longTerm}\n`,
      [`${TODAY}.md`]: `${noteLines('today', 3).join('\n')}\n`,
      '2026-03-09.md': `${noteLines('y', 1).join('\n')}\n`,
    });
    // Budget 5 % of 3,000 = 150 tokens, far below MEMORY.md's ~600 (the limit leaves room for the tool schemas).
    await writeRuntimeConfig(bot, { compaction: { maxContextTokens: 3000 }, memory: { budgetPercent: 5 } });
    await bot.send('1', 'hello', { receivedAt: NOW });
    assert.equal(memoryBlock(systemPrompt(bot, 0)), `# Memory\n\n## Long-term Memory\n${longTerm}`);
    // MEMORY.md itself is untouched on disk.
    assert.equal(await readFile(path.join(memDir(bot, '1'), 'MEMORY.md'), 'utf8'), `${longTerm}\n`);
  } finally {
    await bot.close();
  }
});

test("after trimming today's notes the block fits its budget whenever MEMORY.md alone fits", async () => {
  // Realistic short note lines; for every budget at which MEMORY.md alone fits, the trimmed
  // block must fit too (otherwise the model gets more memory than the configured share).
  const ws = await tempDir();
  try {
    const files = new FileMemoryFiles(ws.dir);
    await files.writeMemory('User likes tea.');
    for (let i = 0; i < 20; i++) await files.appendNote(TODAY, `[10:${String(i).padStart(2, '0')}] User: hi | Assistant: hello`);
    const count = (t: string): number => Math.ceil(t.length / 3.5);
    const floor = count('# Memory\n\n## Long-term Memory\nUser likes tea.');
    const over: string[] = [];
    for (let budget = floor; budget <= 250; budget++) {
      const b = await buildMemoryBlock(files, { today: TODAY, recentDays: 7, budgetTokens: budget, count });
      assert.equal(b.tokens, count(b.text));
      if (b.tokens > budget) over.push(`budget ${budget} → ${b.tokens}`);
    }
    assert.deepEqual(over.slice(0, 5), [], `${over.length} budgets end over budget, e.g. ${over.slice(0, 3).join(', ')}`);
  } finally {
    await ws.cleanup();
  }
});

test('conversationNoteBodies pairs each user message with its final answer (tool rounds skipped), as MemoryPersist writes it', () => {
  const msgs = [
    makeMessage('user', 'what time is it\nnow?'),
    makeMessage('assistant', '', { toolCalls: [{ id: 'c1', name: 'get_current_time', arguments: '{}' }] }),
    makeMessage('tool', '12:00', { toolCallId: 'c1', toolName: 'get_current_time' }),
    makeMessage('assistant', 'It is noon.'),
    makeMessage('user', 'unanswered (the turn failed)'),
    makeMessage('user', 'x'.repeat(250)),
    makeMessage('assistant', 'ok'),
  ];
  const bodies = conversationNoteBodies(msgs);
  assert.deepEqual(
    [...bodies],
    [noteLineBody(formatNoteLine(NOW, 'UTC', 'what time is it\nnow?', 'It is noon.')), noteLineBody(formatNoteLine(NOW, 'UTC', 'x'.repeat(250), 'ok'))],
  );
});

test('risk: one long chat makes every turn slower — a busy day of 20,000 note lines costs about what the budget holds, not the whole day', async () => {
  const ws = await tempDir();
  try {
    const files = new FileMemoryFiles(ws.dir);
    const today = noteLines('today', 20_000);
    const yesterday = noteLines('yesterday', 20_000);
    await mkdir(ws.dir, { recursive: true });
    await writeFile(path.join(ws.dir, `${TODAY}.md`), `${today.join('\n')}\n`);
    await writeFile(path.join(ws.dir, '2026-03-09.md'), `${yesterday.join('\n')}\n`);
    await writeFile(path.join(ws.dir, '2026-03-08.md'), `${noteLines('small', 3).join('\n')}\n`);
    const { createTokenCounter } = await import('../../src/llm/tokens.js');
    const counter = await createTokenCounter('o200k_base');
    let counted = 0;
    const block = await buildMemoryBlock(files, {
      today: TODAY,
      recentDays: 7,
      budgetTokens: 2_000,
      count: (t) => {
        counted += t.length;
        return counter.countText(t);
      },
    });
    // The newest lines of today, in order, inside the budget; every recent day dropped.
    assert.ok(block.tokens <= 2_000, `${block.tokens} tokens`);
    const kept = /## Today's Notes\n([\s\S]*)$/.exec(block.text)?.[1]?.split('\n') ?? [];
    assert.ok(kept.length > 10, `kept ${kept.length} lines`);
    assert.deepEqual(kept, today.slice(today.length - kept.length));
    assert.ok(!block.text.includes('## Recent Context'));
    assert.deepEqual(
      block.drops.map((d) => d.what),
      ['recent day 2026-03-08', 'recent day 2026-03-09', `${today.length - kept.length} oldest lines of today's notes`],
    );
    const todayDrop = block.drops.at(-1)!;
    assert.equal(todayDrop.approximate, true, 'lines far out of reach are not counted: the figure says so');
    // Proportionate to the ~20,000 lines dropped (~20 tokens each), not made up.
    assert.ok(todayDrop.tokens > 300_000 && todayDrop.tokens < 600_000, `${todayDrop.tokens}`);
    // The work: text handed to the counter stays within a few times the block, not the 3 MB of notes.
    const notes = today.join('\n').length + yesterday.join('\n').length;
    assert.ok(counted < 20 * block.text.length, `counted ${counted} characters for a block of ${block.text.length} (notes: ${notes})`);
  } finally {
    await ws.cleanup();
  }
});
