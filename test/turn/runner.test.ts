import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { readFileSync, readdirSync } from 'node:fs';
import ts from 'typescript';
import path from 'node:path';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { ORDER, type SystemName } from '../../src/turn/order.js';
import { Pipeline } from '../../src/turn/runner.js';
import type { System } from '../../src/turn/system.js';
import { answerAndEnd, createTurn, deliver, endTurn, type Turn } from '../../src/turn/turn.js';
import { makeMessage, newSession } from '../../src/sessions/model.js';
import { FileSessionStore } from '../../src/sessions/file-store.js';
import { AppError } from '../../src/core/errors.js';
import { captureLog, type CapturedLog } from '../helpers/workspace.js';
import { startTestBot } from '../helpers/app.js';
import { echoResponder } from '../helpers/fake-llm.js';
import { textReply } from '../../src/core/channel.js';

interface Harness {
  turn: Turn;
  logs: CapturedLog;
  replies: string[];
  ran: string[];
}

function harness(): Harness {
  const logs = captureLog();
  const session = newSession('test', 'runner');
  const userMessage = makeMessage('user', 'hi');
  session.messages.push(userMessage);
  const replies: string[] = [];
  const turn = createTurn({
    inbound: { channel: 'test', chatId: 'runner', userId: 'u1', text: 'hi', receivedAt: new Date() },
    // Nothing here is committed: the store's folder is never created.
    writes: new FileSessionStore(path.join(tmpdir(), 'membot-runner-never-written'), logs.log).writer(session),
    log: logs.log,
    userMessage,
    reply: textReply(async (t) => {
      replies.push(t);
    }),
  });
  return { turn, logs, replies, ran: [] };
}

function sys(h: Harness, name: SystemName, opts: Partial<Pick<System, 'onFailure' | 'shouldRun'>> & { run?: (turn: Turn) => Promise<void> } = {}): System {
  return {
    name,
    order: ORDER[name],
    onFailure: opts.onFailure ?? (ORDER[name] >= 50 ? 'skip' : 'fail-turn'),
    ...(opts.shouldRun ? { shouldRun: opts.shouldRun } : {}),
    async run(turn) {
      h.ran.push(name);
      await opts.run?.(turn);
    },
  };
}

test('systems run in ascending order whatever order they were registered in', async () => {
  const h = harness();
  const p = new Pipeline(
    [sys(h, 'Indexing'), sys(h, 'ToolLoop'), sys(h, 'AutoCompaction'), sys(h, 'MemoryPersist'), sys(h, 'ResponseDelivery'), sys(h, 'ContextBuilding')],
    h.logs.log,
  );
  await p.run(h.turn);
  assert.deepEqual(h.ran, ['AutoCompaction', 'ContextBuilding', 'ToolLoop', 'ResponseDelivery', 'MemoryPersist', 'Indexing']);
  assert.equal(h.turn.ended, undefined);
  assert.equal(h.turn.failure, undefined);
  assert.deepEqual(h.replies, []);
});

test('each system that runs gets its duration recorded in turn.timings', async () => {
  const h = harness();
  const p = new Pipeline(
    [sys(h, 'ToolLoop', { run: () => sleep(40) }), sys(h, 'ContextBuilding', { run: () => sleep(15) }), sys(h, 'ResponseDelivery')],
    h.logs.log,
  );
  await p.run(h.turn);
  assert.deepEqual(
    h.turn.timings.map((t) => [t.system, t.order, t.outcome]),
    [
      ['ContextBuilding', 20, 'ok'],
      ['ToolLoop', 30, 'ok'],
      ['ResponseDelivery', 40, 'ok'],
    ],
  );
  const ms = Object.fromEntries(h.turn.timings.map((t) => [t.system, t.ms]));
  // Lower bounds only: a system that waited 40 ms cannot have taken less (2 ms slack for timer rounding).
  assert.ok(ms.ContextBuilding! >= 13, `ContextBuilding took ${ms.ContextBuilding} ms`);
  assert.ok(ms.ToolLoop! >= 38, `ToolLoop took ${ms.ToolLoop} ms`);
  for (const t of h.turn.timings) assert.ok(Number.isFinite(t.ms) && t.ms >= 0, `${t.system}: ${t.ms}`);
});

test('a shouldRun predicate returning false skips the system, records "skipped" and names the predicate in the log', async () => {
  const h = harness();
  function hasNothingToSay(turn: Turn): boolean {
    return turn.response !== undefined;
  }
  const p = new Pipeline([sys(h, 'ContextBuilding'), sys(h, 'ResponseDelivery', { shouldRun: hasNothingToSay }), sys(h, 'MemoryPersist')], h.logs.log);
  await p.run(h.turn);
  assert.deepEqual(h.ran, ['ContextBuilding', 'MemoryPersist'], 'the skipped system did not run; later ones did');
  assert.deepEqual(
    h.turn.timings.map((t) => [t.system, t.outcome]),
    [
      ['ContextBuilding', 'ok'],
      ['ResponseDelivery', 'skipped'],
      ['MemoryPersist', 'ok'],
    ],
  );
  const line = h.logs.lines().find((l) => l.system === 'ResponseDelivery' && /skipped/.test(l.msg));
  assert.ok(line, `a log line says ResponseDelivery was skipped:\n${h.logs.text()}`);
  assert.match(line.msg, /hasNothingToSay/);
  assert.equal(line.turn, h.turn.id, 'the line carries the turn id');
});

test('a system that calls endTurn stops the systems after it', async () => {
  const h = harness();
  const p = new Pipeline(
    [
      sys(h, 'ContextBuilding'),
      sys(h, 'ToolLoop', { run: async (turn) => endTurn(turn, 'ToolLoop', 'nothing to answer') }),
      sys(h, 'ResponseDelivery'),
      sys(h, 'MemoryPersist'),
      sys(h, 'Indexing'),
    ],
    h.logs.log,
  );
  await p.run(h.turn);
  assert.deepEqual(h.ran, ['ContextBuilding', 'ToolLoop']);
  assert.deepEqual(h.turn.ended, { by: 'ToolLoop', reason: 'nothing to answer' });
  assert.deepEqual(
    h.turn.timings.map((t) => t.system),
    ['ContextBuilding', 'ToolLoop'],
  );
  assert.deepEqual(h.replies, [], 'ending a turn is not a failure: no apology');
  assert.equal(h.turn.failure, undefined);
});

test('a system that answers the message itself (answerAndEnd) sends that one reply and ends the turn: no answer from the model on top', async () => {
  const h = harness();
  const p = new Pipeline(
    [
      sys(h, 'Images', { run: (turn) => answerAndEnd(turn, 'Images', 'I read text only.', 'image refused up front') }),
      sys(h, 'ToolLoop', {
        run: async (turn) => {
          turn.response = 'an answer about the picture';
        },
      }),
      sys(h, 'ResponseDelivery', { run: (turn) => deliver(turn, turn.response!) }),
    ],
    h.logs.log,
  );
  await p.run(h.turn);
  assert.deepEqual(h.replies, ['I read text only.'], 'exactly one reply');
  assert.deepEqual(h.ran, ['Images']);
  assert.equal(h.turn.delivered, true, 'the turn has its answer: a later failure or the deadline adds no apology');
  assert.deepEqual(h.turn.ended, { by: 'Images', reason: 'image refused up front' });
});

test('a reply that cannot be sent is not marked delivered: the turn fails and the user gets the apology instead of silence', async () => {
  const h = harness();
  const refused = createTurn({
    inbound: h.turn.inbound,
    writes: h.turn.writes,
    log: h.logs.log,
    userMessage: h.turn.userMessage,
    reply: textReply(async () => {
      throw new Error('chat not found');
    }),
  });
  const p = new Pipeline(
    [sys(h, 'Images', { run: (turn) => answerAndEnd(turn, 'Images', 'I read text only.', 'image refused up front') }), sys(h, 'ToolLoop')],
    h.logs.log,
  );
  await p.run(refused);
  assert.equal(refused.delivered, false);
  assert.equal(refused.failure?.system, 'Images', 'the intake apologises for a failed turn not delivered (turn-run.ts)');
});

/** Where a file of src/ sets `….delivered`: the line numbers. */
function deliveredWrites(file: string): number[] {
  const text = readFileSync(file, 'utf8');
  if (!text.includes('delivered')) return [];
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lines: number[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isBinaryExpression(node) &&
      node.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
      ts.isPropertyAccessExpression(node.left) &&
      node.left.name.text === 'delivered'
    )
      lines.push(source.getLineAndCharacterOfPosition(node.getStart()).line + 1);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return lines;
}

test('a reply and its "delivered" mark go together: only deliver() (and turn-run, settling the deadline and /stop) writes turn.delivered', () => {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
    );
  const writers = walk('src')
    .filter((f) => deliveredWrites(f).length > 0)
    .map((f) => path.relative('src', f).split(path.sep).join('/'))
    .sort();
  // A system that replied without the mark would let a later failure send an apology on top
  // of its answer; one that marked without replying would leave the user in silence.
  assert.deepEqual(writers, ['dispatch/turn-run.ts', 'turn/turn.ts']);
  assert.deepEqual(deliveredWrites(path.join('src', 'turn', 'turn.ts')).length, 1, 'turn.ts: in deliver() only');
});

test('a fail-turn system that throws ends the turn and records the failure under the turn id; the runner itself sends nothing (the intake apologises)', async () => {
  const h = harness();
  const p = new Pipeline(
    [
      sys(h, 'ContextBuilding'),
      sys(h, 'ToolLoop', {
        run: async () => {
          throw new Error('model exploded');
        },
      }),
      sys(h, 'ResponseDelivery'),
      sys(h, 'MemoryPersist'),
      sys(h, 'Indexing'),
    ],
    h.logs.log,
  );
  await p.run(h.turn);
  assert.deepEqual(h.ran, ['ContextBuilding', 'ToolLoop'], 'no system after the failing one ran');
  assert.deepEqual(h.replies, [], "the apology is the intake's (test/dispatch/intake.test.ts)");
  assert.equal(h.turn.delivered, false);
  assert.deepEqual(h.turn.failure, { system: 'ToolLoop', errorId: h.turn.id, code: 'pipeline.system_failed' });
  assert.deepEqual(
    h.turn.timings.map((t) => [t.system, t.outcome]),
    [
      ['ContextBuilding', 'ok'],
      ['ToolLoop', 'failed'],
    ],
  );
  const errors = h.logs.lines().filter((l) => l.level === 50);
  const line = errors.find((l) => l.system === 'ToolLoop');
  assert.ok(line, `an error line for ToolLoop:\n${h.logs.text()}`);
  assert.equal(line.errorId, h.turn.id);
  assert.equal(line.code, 'pipeline.system_failed');
  assert.match(JSON.stringify(line.err), /model exploded/, 'the full error is in the log');
});

test('a fail-turn AppError keeps its code in the log and in turn.failure', async () => {
  const h = harness();
  const p = new Pipeline(
    [
      sys(h, 'AutoCompaction', {
        run: async () => {
          throw new AppError('storage.write_failed', { action: 'write', target: 'x.json', reason: 'disk full' });
        },
      }),
      sys(h, 'ContextBuilding'),
    ],
    h.logs.log,
  );
  await p.run(h.turn);
  assert.deepEqual(h.ran, ['AutoCompaction']);
  assert.deepEqual(h.replies, []);
  assert.equal(h.turn.failure?.code, 'storage.write_failed');
  const line = h.logs.lines().find((l) => l.level === 50 && l.errorId === h.turn.id);
  assert.equal(line?.code, 'storage.write_failed');
});

test('a skip system that throws logs a warning, later systems still run, and the user gets no apology', async () => {
  const h = harness();
  const p = new Pipeline(
    [
      sys(h, 'ResponseDelivery', {
        run: async (turn) => {
          await deliver(turn, 'the answer');
        },
      }),
      sys(h, 'MemoryPersist', {
        run: async () => {
          throw new Error('note file locked');
        },
      }),
      sys(h, 'Indexing'),
    ],
    h.logs.log,
  );
  await p.run(h.turn);
  assert.deepEqual(h.ran, ['ResponseDelivery', 'MemoryPersist', 'Indexing']);
  assert.deepEqual(h.replies, ['the answer'], 'only the answer, no apology');
  assert.equal(h.turn.failure, undefined);
  assert.equal(h.turn.ended, undefined);
  assert.deepEqual(
    h.turn.timings.map((t) => [t.system, t.outcome]),
    [
      ['ResponseDelivery', 'ok'],
      ['MemoryPersist', 'failed'],
      ['Indexing', 'ok'],
    ],
  );
  const warn = h.logs.lines().find((l) => l.level === 40 && l.system === 'MemoryPersist');
  assert.ok(warn, `a warning for MemoryPersist:\n${h.logs.text()}`);
  assert.match(warn.msg, /note file locked/);
  assert.equal(h.logs.lines().filter((l) => l.level >= 50).length, 0, 'nothing at error level');
});

test('a skip system that throws before any reply still sends no apology', async () => {
  const h = harness();
  const p = new Pipeline(
    [
      sys(h, 'MemoryPersist', {
        run: async () => {
          throw new Error('boom');
        },
      }),
      sys(h, 'Indexing'),
    ],
    h.logs.log,
  );
  await p.run(h.turn);
  assert.deepEqual(h.ran, ['MemoryPersist', 'Indexing']);
  assert.deepEqual(h.replies, []);
});

test('end to end: an LLM 500 gives one apology with an error id, keeps the session valid, and the chat recovers', async () => {
  const bot = await startTestBot({ responder: () => ({ status: 500 }) });
  try {
    const first = await bot.send('c500', 'what is the weather');
    assert.equal(first.length, 1, `exactly one reply, got ${JSON.stringify(first)}`);
    const m = /error id ([0-9a-f]+)/.exec(first[0]!);
    assert.ok(m, `the reply carries an error id: ${first[0]}`);
    assert.ok(bot.llm.chatRequests().length >= 1, 'the model was asked');
    const errorLine = bot.logs.lines().find((l) => l.level >= 50 && l.errorId === m[1]);
    assert.ok(errorLine, `the error id ${m[1]} finds the log line:\n${bot.logs.text()}`);
    assert.match(String(errorLine.code), /^llm\./);

    const file = path.join(bot.workspace, 'sessions', 'test:c500.json');
    const afterFailure = JSON.parse(await readFile(file, 'utf8'));
    assert.deepEqual(
      afterFailure.messages.map((x: any) => [x.role, x.content]),
      [['user', 'what is the weather']],
    );

    bot.llm.setResponder(echoResponder);
    const second = await bot.send('c500', 'hello again');
    assert.deepEqual(second, ['echo: hello again']);
    const last = bot.llm.chatRequests().at(-1)!;
    assert.deepEqual(
      last.body.messages.filter((x: any) => x.role === 'user').map((x: any) => x.content),
      ['what is the weather', 'hello again'],
      'the failed message is still part of the history',
    );
    const afterRecovery = JSON.parse(await readFile(file, 'utf8'));
    assert.deepEqual(
      afterRecovery.messages.map((x: any) => [x.role, x.content]),
      [
        ['user', 'what is the weather'],
        ['user', 'hello again'],
        ['assistant', 'echo: hello again'],
      ],
    );
    assert.deepEqual(bot.replies.get('c500'), [first[0], 'echo: hello again']);
  } finally {
    await bot.close();
  }
});
