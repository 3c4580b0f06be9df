/**
 * Consolidation (seed 002): the three parsing tiers, and the service against the fake
 * OpenAI-compatible server — what reaches HISTORY.md / HISTORY-YYYY-MM.md / MEMORY.md for a
 * cooperative answer, an unchanged or empty memory, garbage, a 500 and a timeout, the
 * compression instruction, and the queue that keeps two consolidations from overlapping.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir, stat, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { parseConsolidation, ConsolidationService, type ConsolidationOptions } from '../../src/memory/consolidation.js';
import { FileMemoryFiles } from '../../src/memory/file-memory.js';
import { LlmClient } from '../../src/llm/client.js';
import { makeMessage, type SessionMessage } from '../../src/sessions/model.js';
import {
  lastUserText,
  memoryAwareResponder,
  promptKind,
  startFakeLlm,
  text,
  toolCalls,
  type FakeLlm,
  type RecordedRequest,
  type Responder,
} from '../helpers/fake-llm.js';
import { startTestBot } from '../helpers/app.js';
import { captureLog, tempDir, testConfig } from '../helpers/workspace.js';

// ---------------------------------------------------------------------------------------------
// parseConsolidation

test('parse tier 1: plain JSON', () => {
  assert.deepEqual(parseConsolidation('{"history_entry": "[2026-01-02 10:00] Talked about Rust.", "memory_update": "# Memory\\n- likes Rust"}'), {
    historyEntry: '[2026-01-02 10:00] Talked about Rust.',
    memoryUpdate: '# Memory\n- likes Rust',
  });
});

test('parse tier 1: ```json fenced (and a bare ``` fence)', () => {
  const body = '{\n  "history_entry": "Planned a trip to Lisbon.",\n  "memory_update": "- travels in May"\n}';
  const want = { historyEntry: 'Planned a trip to Lisbon.', memoryUpdate: '- travels in May' };
  assert.deepEqual(parseConsolidation(`\`\`\`json\n${body}\n\`\`\``), want);
  assert.deepEqual(parseConsolidation(`\`\`\`JSON\n${body}\n\`\`\`\n`), want);
  assert.deepEqual(parseConsolidation(`\`\`\`\n${body}\n\`\`\``), want);
});

test('parse tier 2: JSON inside prose', () => {
  const want = { historyEntry: 'Discussed the budget.', memoryUpdate: '- budget is 500 EUR' };
  assert.deepEqual(
    parseConsolidation('Sure! Here it is: {"history_entry": "Discussed the budget.", "memory_update": "- budget is 500 EUR"} Hope this helps'),
    want,
  );
  // A fenced block surrounded by prose.
  assert.deepEqual(
    parseConsolidation('Here you go:\n```json\n{"history_entry": "Discussed the budget.", "memory_update": "- budget is 500 EUR"}\n```\nLet me know!'),
    want,
  );
  // Braces inside string values and a decoy object before the real one.
  assert.deepEqual(parseConsolidation('Format {like this}. Result: {"history_entry": "Wrote fn() { return 1 }", "memory_update": "- uses {braces}"} done'), {
    historyEntry: 'Wrote fn() { return 1 }',
    memoryUpdate: '- uses {braces}',
  });
});

test('parse tier 3: broken JSON with recoverable fields', () => {
  // Missing closing brace.
  assert.deepEqual(parseConsolidation('{"history_entry": "Fixed the CI.", "memory_update": "- CI uses GitHub Actions"'), {
    historyEntry: 'Fixed the CI.',
    memoryUpdate: '- CI uses GitHub Actions',
  });
  // Trailing comma and trailing garbage.
  assert.deepEqual(parseConsolidation('{"history_entry": "Fixed the CI.", "memory_update": "- CI uses GitHub Actions",} <eos> ]]'), {
    historyEntry: 'Fixed the CI.',
    memoryUpdate: '- CI uses GitHub Actions',
  });
  // Unquoted key elsewhere in the object.
  assert.deepEqual(parseConsolidation('{confidence: high, "history_entry": "A", "memory_update": "B"}'), { historyEntry: 'A', memoryUpdate: 'B' });
  // Cut off in the middle of memory_update: the history entry is still recovered, memory is not invented.
  const cut = parseConsolidation('{"history_entry": "Talked about the cat Miso.", "memory_update": "# Memory\\n- has a cat called Mi');
  assert.deepEqual(cut, { historyEntry: 'Talked about the cat Miso.' });
});

test('parse: escaped quotes and newlines in values are decoded (clean and broken JSON alike)', () => {
  const want = { historyEntry: 'She said "hi"\nand left.', memoryUpdate: '# Memory\n- quote: "carpe diem"\n- path C:\\tmp' };
  const json = '{"history_entry": "She said \\"hi\\"\\nand left.", "memory_update": "# Memory\\n- quote: \\"carpe diem\\"\\n- path C:\\\\tmp"}';
  assert.deepEqual(parseConsolidation(json), want);
  assert.deepEqual(parseConsolidation(`Sure: ${json} bye`), want);
  // Broken (no closing brace): the regex tier must decode escapes the same way.
  assert.deepEqual(parseConsolidation(json.slice(0, -1)), want);
});

test('parse: garbage and JSON without the two fields → null', () => {
  for (const s of [
    '',
    'I could not do that.',
    'history_entry: talked; memory_update: nothing',
    '{"summary": "x", "memory": "y"}',
    '[1, 2, 3]',
    '{"history_entry": 42, "memory_update": null}',
    '```json\n```',
    '{{{{',
  ]) {
    assert.equal(parseConsolidation(s), null, JSON.stringify(s));
  }
});

// ---------------------------------------------------------------------------------------------
// ConsolidationService against the fake LLM

interface Rig {
  llm: FakeLlm;
  service: ConsolidationService;
  dir: string;
  files: FileMemoryFiles;
  read(name: string): Promise<string>;
}

async function withRig(responder: Responder, fn: (r: Rig) => Promise<void>, opts: Partial<ConsolidationOptions> = {}): Promise<void> {
  const llm = await startFakeLlm(responder);
  const ws = await tempDir('membot-consol-');
  try {
    const client = new LlmClient(testConfig({ OPENAI_BASE_URL: llm.url }), captureLog().log);
    const service = new ConsolidationService(client, { timeoutMs: 5_000, maxMemorySize: 8192, timezone: 'UTC', ...opts }, captureLog().log);
    const dir = path.join(ws.dir, 'mem');
    await fn({ llm, service, dir, files: new FileMemoryFiles(dir), read: (name) => readFile(path.join(dir, name), 'utf8').catch(() => '') });
  } finally {
    await llm.close();
    await ws.cleanup();
  }
}

function conversation(n: number, len = 40): SessionMessage[] {
  const out: SessionMessage[] = [];
  for (let i = 0; i < n; i++) {
    const tag = `msg-${String(i).padStart(2, '0')}`;
    const body = `${tag} ${i % 2 === 0 ? 'user says' : 'assistant says'} `.padEnd(len, String.fromCharCode(97 + (i % 26)));
    out.push(makeMessage(i % 2 === 0 ? 'user' : 'assistant', body));
  }
  return out;
}

function promptOf(req: RecordedRequest): string {
  return String(req.body.messages[0].content);
}

async function seedMemory(dir: string, content: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'MEMORY.md'), content);
}

test('fenced JSON answer: history entry under "## <ISO>" in HISTORY.md and HISTORY-YYYY-MM.md, MEMORY.md rewritten', () =>
  withRig(
    () =>
      text(
        '```json\n{"history_entry": "[2026-01-01 10:00] The user planned a trip to Lisbon.", "memory_update": "# Memory\\n- likes tea\\n- plans a trip to Lisbon"}\n```',
      ),
    async ({ llm, service, files, dir, read }) => {
      await seedMemory(dir, '# Memory\n- likes tea\n');
      const before = Date.now();
      const out = await service.consolidate(conversation(4), files);
      assert.deepEqual(
        { kind: out.kind, historyWritten: out.historyWritten, memoryUpdated: out.memoryUpdated },
        { kind: 'llm', historyWritten: true, memoryUpdated: true },
      );
      const history = await read('HISTORY.md');
      const m = /^## (\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)\n\[2026-01-01 10:00\] The user planned a trip to Lisbon\.\n\n$/.exec(history);
      assert.ok(m, `HISTORY.md: ${JSON.stringify(history)}`);
      const at = Date.parse(m[1]!);
      assert.ok(at >= before - 1000 && at <= Date.now() + 1000, 'the header is the time of the consolidation');
      assert.equal(await read(`HISTORY-${m[1]!.slice(0, 7)}.md`), history, 'the monthly file gets the same entry');
      assert.equal(await read('MEMORY.md'), '# Memory\n- likes tea\n- plans a trip to Lisbon\n');
      // One request, on the consolidation prompt, carrying the current memory and the messages.
      const reqs = llm.chatRequests();
      assert.equal(reqs.length, 1);
      const prompt = promptOf(reqs[0]!);
      assert.ok(prompt.startsWith('You are a memory consolidation agent'));
      assert.match(prompt, /"history_entry"/);
      assert.match(prompt, /"memory_update"/);
      assert.match(prompt, /## Current Long-term Memory\n# Memory\n- likes tea/);
      for (const msg of conversation(4)) assert.ok(prompt.includes(msg.content.slice(0, 12)), msg.content);
    },
  ));

test('memory_update equal to the current memory: MEMORY.md is not rewritten', () =>
  withRig(
    () => text('{"history_entry": "Small talk.", "memory_update": "# Memory\\n- likes tea"}'),
    async ({ service, files, dir, read }) => {
      await seedMemory(dir, '# Memory\n- likes tea\n');
      const st1 = await stat(path.join(dir, 'MEMORY.md'));
      await new Promise((r) => setTimeout(r, 30));
      const out = await service.consolidate(conversation(2), files);
      assert.equal(out.kind, 'llm');
      assert.equal(out.memoryUpdated, false);
      assert.equal(await read('MEMORY.md'), '# Memory\n- likes tea\n');
      const st2 = await stat(path.join(dir, 'MEMORY.md'));
      assert.equal(st2.mtimeMs, st1.mtimeMs, 'MEMORY.md was written although nothing changed');
      assert.equal(st2.ino, st1.ino, 'MEMORY.md was replaced although nothing changed');
      assert.match(await read('HISTORY.md'), /Small talk\./);
    },
  ));

test('an empty memory_update never erases MEMORY.md', () =>
  withRig(
    (_req, i) => text(i === 0 ? '{"history_entry": "Nothing new.", "memory_update": ""}' : '{"history_entry": "Still nothing.", "memory_update": "   \\n  "}'),
    async ({ service, files, dir, read }) => {
      await seedMemory(dir, '# Memory\n- name: Ada\n');
      const a = await service.consolidate(conversation(2), files);
      const b = await service.consolidate(conversation(2), files);
      assert.equal(a.memoryUpdated, false);
      assert.equal(b.memoryUpdated, false);
      assert.equal(await read('MEMORY.md'), '# Memory\n- name: Ada\n');
      const history = await read('HISTORY.md');
      assert.match(history, /Nothing new\./);
      assert.match(history, /Still nothing\./);
    },
  ));

test('JSON inside prose and broken-but-recoverable JSON both consolidate normally', () =>
  withRig(
    (_req, i) =>
      text(
        i === 0
          ? 'Sure! Here it is: {"history_entry": "Talked about cats.", "memory_update": "- has a cat"} Hope this helps'
          : '{"history_entry": "Talked about dogs.", "memory_update": "- has a cat\\n- has a dog",,, <garbage',
      ),
    async ({ service, files, read }) => {
      const a = await service.consolidate(conversation(2), files);
      assert.equal(a.kind, 'llm');
      assert.equal(await read('MEMORY.md'), '- has a cat\n');
      const b = await service.consolidate(conversation(2), files);
      assert.equal(b.kind, 'llm');
      assert.equal(await read('MEMORY.md'), '- has a cat\n- has a dog\n');
      const history = await read('HISTORY.md');
      assert.match(history, /Talked about cats\./);
      assert.match(history, /Talked about dogs\./);
      assert.doesNotMatch(history, /raw-fallback/);
    },
  ));

/** The raw-fallback entry: the last 10 messages, each cut to 200 characters, one line each. */
function assertRawFallback(history: string, messages: SessionMessage[]): void {
  const entries = history.split(/^## /m).filter(Boolean);
  assert.equal(entries.length, 1, `one entry expected: ${history}`);
  assert.match(entries[0]!, /^\d{4}-\d{2}-\d{2}T[\d:.]+Z\n\[raw-fallback\]/);
  const lines = entries[0]!.split('\n').filter((l) => l.startsWith('- '));
  assert.equal(lines.length, 10, 'the last 10 messages');
  const last = messages.slice(-10);
  last.forEach((m, k) => {
    const line = lines[k]!;
    const want = m.content.slice(0, 200).replace(/\s*\n\s*/g, ' ');
    assert.ok(line.includes(`${m.role}: `), line);
    assert.ok(line.endsWith(want), `line ${k} should end with the first 200 chars of its message:\n${line}`);
    assert.ok(!line.includes(m.content.slice(0, 201)), `line ${k} is not cut to 200 chars`);
  });
  for (const m of messages.slice(0, -10)) assert.ok(!history.includes(m.content.slice(0, 6)), `${m.content.slice(0, 6)} should not be in the fallback`);
}

for (const [name, responder, opts] of [
  ['garbage answer', () => text('I am sorry, I cannot produce JSON today.'), {}],
  ['HTTP 500', () => ({ status: 500 }), {}],
  ['timeout (the server hangs)', () => ({ hang: true }), { timeoutMs: 300 }],
] as Array<[string, Responder, Partial<ConsolidationOptions>]>) {
  test(`${name} → a [raw-fallback] history entry with the last 10 messages cut to 200 chars; MEMORY.md unchanged`, () =>
    withRig(
      responder,
      async ({ service, files, dir, read }) => {
        await seedMemory(dir, '# Memory\n- keep me\n');
        const messages = conversation(14, 260);
        const out = await service.consolidate(messages, files);
        assert.equal(out.kind, 'raw-fallback');
        assert.equal(out.memoryUpdated, false);
        assertRawFallback(await read('HISTORY.md'), messages);
        const monthly = `HISTORY-${new Date().toISOString().slice(0, 7)}.md`;
        assert.equal(await read(monthly), await read('HISTORY.md'));
        assert.equal(await read('MEMORY.md'), '# Memory\n- keep me\n');
      },
      opts,
    ));
}

test('a message with newlines is one line in the raw fallback', () =>
  withRig(
    () => ({ status: 500 }),
    async ({ service, files, read }) => {
      await service.consolidate([makeMessage('user', 'line one\nline two\n\nline three')], files);
      assert.match(await read('HISTORY.md'), /^- \[\d{4}-\d{2}-\d{2} \d{2}:\d{2}\] user: line one line two line three$/m);
    },
  ));

test('the compression instruction is in the prompt only when MEMORY.md is over maxMemorySize bytes', () =>
  withRig(
    () => text('{"history_entry": "ok", "memory_update": ""}'),
    async ({ llm, service, files, dir }) => {
      const has = (i: number) => /compress it/i.test(promptOf(llm.chatRequests()[i]!)) && promptOf(llm.chatRequests()[i]!).includes('300 bytes');
      // Exactly at the limit: no instruction.
      await seedMemory(dir, 'x'.repeat(300));
      await service.consolidate(conversation(2), files);
      // 120 characters but 360 bytes (multi-byte): over the limit, counted in bytes.
      await seedMemory(dir, '€'.repeat(120));
      await service.consolidate(conversation(2), files);
      // Well under.
      await seedMemory(dir, '- short\n');
      await service.consolidate(conversation(2), files);
      // One byte over.
      await seedMemory(dir, 'x'.repeat(301));
      await service.consolidate(conversation(2), files);
      assert.deepEqual([0, 1, 2, 3].map(has), [false, true, false, true]);
    },
    { maxMemorySize: 300 },
  ));

test('two consolidations started at once (two memory dirs) never overlap at the server', async () => {
  const spans: Array<{ start: number; end: number; who: string }> = [];
  const responder: Responder = async (req) => {
    const start = performance.now();
    await new Promise((r) => setTimeout(r, 200));
    const who = promptOf(req).includes('chat-A') ? 'A' : 'B';
    spans.push({ start, end: performance.now(), who });
    return text(`{"history_entry": "entry for ${who}", "memory_update": "- from ${who}"}`);
  };
  await withRig(responder, async ({ service, dir, llm }) => {
    const a = new FileMemoryFiles(path.join(dir, 'A'));
    const b = new FileMemoryFiles(path.join(dir, 'B'));
    const [ra, rb] = await Promise.all([
      service.consolidate([makeMessage('user', 'hello from chat-A')], a),
      service.consolidate([makeMessage('user', 'hello from chat-B')], b),
    ]);
    assert.equal(ra.kind, 'llm');
    assert.equal(rb.kind, 'llm');
    assert.equal(llm.chatRequests().length, 2);
    assert.equal(spans.length, 2);
    spans.sort((x, y) => x.start - y.start);
    assert.ok(spans[1]!.start >= spans[0]!.end, `requests overlapped: ${JSON.stringify(spans)}`);
    assert.equal(await readFile(path.join(dir, 'A', 'MEMORY.md'), 'utf8'), '- from A\n');
    assert.equal(await readFile(path.join(dir, 'B', 'MEMORY.md'), 'utf8'), '- from B\n');
  });
});

test('a failing consolidation does not block the next one in the queue', () =>
  withRig(
    (_req, i) => (i === 0 ? { status: 500 } : text('{"history_entry": "second worked", "memory_update": "- second"}')),
    async ({ service, files, read }) => {
      const [a, b] = await Promise.all([service.consolidate(conversation(2), files), service.consolidate(conversation(2), files)]);
      assert.equal(a.kind, 'raw-fallback');
      assert.equal(b.kind, 'llm');
      assert.equal(await read('MEMORY.md'), '- second\n');
      const history = await read('HISTORY.md');
      assert.ok(history.indexOf('[raw-fallback]') < history.indexOf('second worked'), 'entries in queue order');
    },
  ));

test('three consolidations of one chat at once: each sees the memory the previous one wrote (no lost update)', () =>
  withRig(memoryAwareResponder, async ({ service, files, read }) => {
    await Promise.all([1, 2, 3].map((n) => service.consolidate(conversation(n), files)));
    const memory = await read('MEMORY.md');
    assert.equal(memory, '- consolidated 1 messages\n- consolidated 2 messages\n- consolidated 3 messages\n');
  }));

test('risk: the API key written into chat-readable memory — a failed consolidation writes the error code, and no file, tool result or reply carries the key', async () => {
  const KEY = 'sk-test-key-123456'; // the key testConfig gives the daemon
  const echoKey = {
    status: 401,
    json: {
      error: {
        message: `Incorrect API key provided: ${KEY}. Find your key at https://example.invalid/keys.`,
        type: 'invalid_request_error',
        code: 'invalid_api_key',
      },
    },
  };
  const responder: Responder = (req) => {
    if (promptKind(req) === 'consolidation') return echoKey;
    const msgs = req.body.messages as Array<{ role: string; content: string }>;
    if (msgs.at(-1)!.role === 'tool') return text(`RESULT: ${msgs.at(-1)!.content}`);
    const call = /^CALL (\w+) (.*)$/s.exec(lastUserText(req));
    if (call) return toolCalls([{ name: call[1]!, args: call[2]! }]);
    return text(`echo: ${lastUserText(req)}`);
  };
  const bot = await startTestBot({ responder });
  try {
    const dir = path.join(bot.workspace, 'memory', 'test:1');
    await bot.send('1', 'my cat is called Miso');
    const [cleared] = await bot.send('1', '/new');
    assert.match(cleared!, /Session cleared/);
    const history = await readFile(path.join(dir, 'HISTORY.md'), 'utf8');
    assert.match(history, /\[raw-fallback\] Consolidation failed \(llm\.rejected\)/, history);
    assert.match(history, /my cat is called Miso/, "the user's words are still kept");
    assert.ok(!history.includes(KEY), history);
    assert.ok(!history.includes('Incorrect API key'), "the provider's text stays in the log");
    assert.ok(bot.logs.text().includes('Incorrect API key provided: [redacted]'), 'the detail is in the log, scrubbed');

    // Files an older version wrote with the key in them: tools and replies hand out no key.
    await writeFile(
      path.join(dir, 'HISTORY-2025-12.md'),
      `## 2025-12-01T10:00:00.000Z\n[raw-fallback] Consolidation failed (the LLM server answered 401: Incorrect API key provided: ${KEY}).\n`,
    );
    await writeFile(path.join(dir, 'MEMORY.md'), `- the proxy said ${KEY}\n`);
    const results: string[] = [];
    for (const [tool, args] of [
      ['notes_read', { file: 'HISTORY-2025-12.md' }],
      ['notes_search', { keyword: 'Incorrect API key' }],
      ['memory_read', {}],
    ] as const) {
      const [reply] = await bot.send('1', `CALL ${tool} ${JSON.stringify(args)}`);
      results.push(reply!);
      const toolMsg = (bot.llm.chatRequests().at(-1)!.body.messages as Array<{ role: string; content: string }>).at(-1)!;
      assert.equal(toolMsg.role, 'tool');
      assert.match(toolMsg.content, /\[redacted\]/, `${tool}: ${toolMsg.content}`);
      assert.ok(!toolMsg.content.includes(KEY), `${tool} result carries the key`);
    }
    const [memory] = await bot.send('1', '/memory');
    results.push(memory!);
    for (const r of results) assert.ok(!r.includes(KEY), `a reply carries the key: ${r}`);
    // The prompt built from MEMORY.md does not carry it either.
    await bot.send('1', 'hello');
    assert.ok(!JSON.stringify(bot.llm.chatRequests().at(-1)!.body).includes(KEY), 'the prompt carries the key');
  } finally {
    await bot.close();
  }
});

test('the scrubbing does not eat ordinary words: the placeholder key of a keyless local server is no secret', async () => {
  const bot = await startTestBot({ env: { OPENAI_API_KEY: '' } });
  try {
    assert.deepEqual(await bot.send('1', 'that step is not-needed anymore'), ['echo: that step is not-needed anymore']);
    const [note] = await readdir(path.join(bot.workspace, 'memory', 'test:1'));
    assert.match(await readFile(path.join(bot.workspace, 'memory', 'test:1', note!), 'utf8'), /that step is not-needed anymore/);
  } finally {
    await bot.close();
  }
});
