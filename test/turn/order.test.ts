import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { ORDER, type SystemName } from '../../src/turn/order.js';
import { Pipeline } from '../../src/turn/runner.js';
import type { System } from '../../src/turn/system.js';
import { isAppError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/log.js';
import path from 'node:path';
import { startTestBot, unsavedWriter } from '../helpers/app.js';
import { seededRandom } from '../helpers/random.js';
import { createTurn, type Turn } from '../../src/turn/turn.js';
import { makeMessage, newSession } from '../../src/sessions/model.js';

const PIPELINE_DOC = fileURLToPath(new URL('../../docs/pipeline.md', import.meta.url));

interface DocRow {
  order: number;
  name: string;
  onFailure: string;
}

/** The rows of the first markdown table whose header starts with `order | system`. */
async function docTable(): Promise<DocRow[]> {
  const lines = (await readFile(PIPELINE_DOC, 'utf8')).split('\n');
  const cells = (l: string) =>
    l
      .trim()
      .replace(/^\|/, '')
      .replace(/\|$/, '')
      .split('|')
      .map((c) => c.trim());
  const header = lines.findIndex((l) => l.trim().startsWith('|') && cells(l)[0] === 'order' && cells(l)[1] === 'system');
  assert.ok(header >= 0, 'docs/pipeline.md has a table with columns "order | system"');
  const rows: DocRow[] = [];
  // header, then the |---| separator, then rows until the first line that is not a table line.
  for (let i = header + 2; i < lines.length && lines[i]!.trim().startsWith('|'); i++) {
    const [order, name, onFailure] = cells(lines[i]!);
    assert.match(order ?? '', /^\d+$/, `row ${lines[i]} has a numeric order`);
    rows.push({ order: Number(order), name: name!.replace(/`/g, ''), onFailure: onFailure ?? '' });
  }
  return rows;
}

function sys(name: SystemName, order: number, onFailure: System['onFailure'] = 'fail-turn'): System {
  return { name, order, onFailure, run: async () => undefined };
}

function turn(): Turn {
  const session = newSession('test', 'order');
  const userMessage = makeMessage('user', 'hi');
  return createTurn({
    inbound: { channel: 'test', chatId: 'order', userId: 'u1', text: 'hi', receivedAt: new Date() },
    writes: unsavedWriter(session),
    log: silentLogger(),
    userMessage,
    reply: async () => undefined,
  });
}

function withTableEntry<T>(name: SystemName, value: number, fn: () => T): T {
  const table = ORDER as unknown as Record<string, number>;
  const before = table[name]!;
  table[name] = value;
  try {
    return fn();
  } finally {
    table[name] = before;
  }
}

test('docs/pipeline.md lists exactly the systems and numbers of the ORDER table, in ascending order', async () => {
  const rows = await docTable();
  assert.deepEqual(
    rows.map((r) => [r.name, r.order]),
    Object.entries(ORDER).sort((a, b) => a[1] - b[1]),
  );
  for (const r of rows) assert.ok(r.onFailure === 'fail-turn' || r.onFailure === 'skip', `${r.name}: on failure is ${r.onFailure}`);
});

test('the systems the daemon registers use the table numbers and the failure policy the page documents', async () => {
  const rows = new Map((await docTable()).map((r) => [r.name, r]));
  const bot = await startTestBot();
  try {
    const systems = bot.app.pipeline.systems;
    assert.ok(systems.length > 0);
    assert.deepEqual(
      systems.map((s) => s.order),
      [...systems.map((s) => s.order)].sort((a, b) => a - b),
      'the pipeline holds its systems in ascending order',
    );
    for (const s of systems) {
      assert.equal(s.order, ORDER[s.name], `${s.name} uses the table number`);
      assert.equal(s.onFailure, rows.get(s.name)?.onFailure, `${s.name}'s onFailure matches docs/pipeline.md`);
    }
  } finally {
    await bot.close();
  }
});

test('Pipeline refuses two systems on one number and names both', () => {
  // Someone gives MemoryPersist the number Indexing already has, in the table itself.
  withTableEntry('MemoryPersist', 55, () => {
    assert.throws(
      () => new Pipeline([sys('Indexing', 55, 'skip'), sys('MemoryPersist', 55, 'skip')], silentLogger()),
      (err: unknown) => {
        assert.ok(isAppError(err, 'pipeline.duplicate_order'), `got ${String(err)}`);
        assert.match(err.message, /Indexing/);
        assert.match(err.message, /MemoryPersist/);
        assert.match(err.message, /55/);
        return true;
      },
    );
  });
  assert.equal(ORDER.MemoryPersist, 50, 'the table is restored');
});

test('Pipeline refuses the same system registered twice', () => {
  assert.throws(
    () => new Pipeline([sys('ToolLoop', ORDER.ToolLoop), sys('ContextBuilding', ORDER.ContextBuilding), sys('ToolLoop', ORDER.ToolLoop)], silentLogger()),
    (err: unknown) => {
      assert.ok(isAppError(err, 'pipeline.duplicate_order'), `got ${String(err)}`);
      assert.match(err.message, /ToolLoop and ToolLoop/);
      assert.match(err.message, /30/);
      return true;
    },
  );
});

test('Pipeline refuses a system whose order differs from the table', () => {
  assert.throws(
    () => new Pipeline([sys('ContextBuilding', 20), sys('ToolLoop', 35)], silentLogger()),
    (err: unknown) => {
      assert.ok(isAppError(err, 'pipeline.duplicate_order'), `got ${String(err)}`);
      assert.match(err.message, /ToolLoop/);
      assert.match(err.message, /35/, 'names the wrong number');
      assert.match(err.message, /30/, 'names the number the table gives');
      return true;
    },
  );
  // A collision that also disagrees with the table is refused too (whichever check trips first).
  assert.throws(
    () => new Pipeline([sys('Indexing', 55, 'skip'), sys('MemoryPersist', 55, 'skip')], silentLogger()),
    (err: unknown) => isAppError(err, 'pipeline.duplicate_order') && /MemoryPersist/.test(err.message),
  );
});

test('systems run in the order of the table whatever order they are registered in', async () => {
  const names = Object.keys(ORDER) as SystemName[];
  const byTable = [...names].sort((a, b) => ORDER[a] - ORDER[b]);
  const next = seededRandom(13);
  for (let round = 0; round < 5; round++) {
    const shuffled = [...names].sort(() => next() - 0.5);
    const ran: string[] = [];
    const systems: System[] = shuffled.map((name) => ({
      ...sys(name, ORDER[name], ORDER[name] >= ORDER.MemoryPersist ? 'skip' : 'fail-turn'),
      run: async () => void ran.push(name),
    }));
    await new Pipeline(systems, silentLogger()).run(turn());
    assert.deepEqual(ran, byTable, `registered as ${shuffled.join(', ')}`);
  }
});

test('in the daemon each step sees what the steps before it wrote: the model gets the built prompt, the note and the index hold the delivered answer', async () => {
  const at = new Date('2026-03-10T12:00:00Z');
  const bot = await startTestBot({
    prepare: async (ws) => {
      await mkdir(path.join(ws, 'memory', 'test:7'), { recursive: true });
      await writeFile(path.join(ws, 'memory', 'test:7', 'MEMORY.md'), '- The user watches birds at the pond\n');
    },
  });
  try {
    assert.deepEqual(await bot.send('7', 'the heron is back', { receivedAt: at }), ['echo: the heron is back']);
    // ContextBuilding before ToolLoop: the model's request opens with the prompt it built from MEMORY.md.
    const request = bot.llm.chatRequests()[0]!.body as { messages: Array<{ role: string; content: string }> };
    assert.equal(request.messages[0]!.role, 'system');
    assert.match(request.messages[0]!.content, /The user watches birds at the pond/);
    // ToolLoop before MemoryPersist and Indexing: the answer is in the day's note and the index.
    const note = await readFile(path.join(bot.workspace, 'memory', 'test:7', '2026-03-10.md'), 'utf8');
    assert.match(note, /User: the heron is back \| Assistant: echo: the heron is back/);
    const found = bot.app.parts.index.search('heron', { scope: 'test:7' }).map((r) => r.content);
    assert.ok(found.includes('echo: the heron is back'), JSON.stringify(found));
  } finally {
    await bot.close();
  }
});
