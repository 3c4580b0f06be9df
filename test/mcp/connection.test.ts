/**
 * A server's life in the daemon: connected in the background (a server that never answers
 * does not hold up the start), opened again with a growing, capped back-off when it dies or
 * cannot start, "not connected, try later" meanwhile, and no process left after the stop.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { text, toolCalls } from '../helpers/fake-llm.js';
import { startMcpBot } from '../helpers/mcp.js';
import { captureLog } from '../helpers/workspace.js';

import { stdioFixture } from '../fixtures/mcp-server.js';
import { McpConnection } from '../../src/mcp/connection.js';
import type { McpServerConfig } from '../../src/config/mcp.js';
import { waitFor } from '../helpers/wait.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('a server killed mid-life: its tools go, a call meanwhile says "not connected, try later", it is started again and its tools come back; the stop leaves no process', async () => {
  const { bot, close } = await startMcpBot(
    { fx: { ...stdioFixture(), tools: ['forecast'] } },
    { responder: (_req, i) => (i % 2 === 0 ? toolCalls([{ name: 'fx__forecast', args: { city: 'Oslo' } }]) : text('done')) },
  );
  const fx = bot.app.parts.mcp!.get('fx')!;
  const tools = bot.app.parts.tools;
  const chat = { channel: 'test', chatId: '1', group: false, manages: true };
  try {
    await waitFor(() => fx.state.kind === 'connected', 20_000, 'fx connected');
    const first = fx.pid!;
    assert.ok(alive(first));
    assert.ok(tools.names(chat).includes('fx__forecast'));

    process.kill(first, 'SIGKILL');
    await waitFor(() => fx.state.kind === 'down', 5_000, 'fx seen down');
    assert.match(fx.describe(Date.now()), /^down since \d\d:\d\d:\d\d UTC \(the program exited\), retry in \d s$/);
    assert.ok(!tools.names(chat).includes('fx__forecast'), 'its tools are not offered while it is down');
    const meanwhile = await tools.execute(
      { id: 'c1', name: 'fx__forecast', arguments: '{"city":"Oslo"}' },
      { chat, conversationId: 'x', log: bot.logs.log, deadline: new AbortController().signal },
    );
    assert.equal(meanwhile.code, 'mcp.unreachable');
    assert.match(meanwhile.content, /^Error: the tool "fx__forecast" failed: MCP server fx: not connected \(down since .*\); try again later$/);

    await waitFor(() => fx.state.kind === 'connected', 20_000, 'fx started again');
    const second = fx.pid!;
    assert.notEqual(second, first);
    assert.ok(!alive(first), 'the killed process is gone (reaped, not a zombie)');
    assert.deepEqual(await bot.send('1', 'weather?'), ['done']);
    const [, answer] = bot.llm.chatRequests();
    assert.match(answer!.body.messages.at(-1).content, /Forecast for Oslo/);

    await close();
    assert.ok(!alive(second), 'the stop ended the server');
  } finally {
    await close().catch(() => undefined);
  }
});

test('a server that cannot start is tried again after 1, 2, 4 … times the base delay, capped, saying why; stop ends the retries', async () => {
  const logs = captureLog();
  const server: McpServerConfig = {
    name: 'broken',
    transport: { kind: 'stdio', command: 'sh', args: ['-c', 'echo missing config >&2; exit 1'], env: {}, cwd: undefined },
    tools: undefined,
    groups: false,
    timeoutMs: undefined,
    maxAnswerBytes: 10_485_760,
    maxTools: 32,
  };
  const c = new McpConnection(server, { log: logs.log, toolTimeoutMs: 5_000, backoff: { baseMs: 40, capMs: 200, healthyMs: 60_000, random: () => 1 } });
  c.start();
  const delays = () =>
    logs
      .lines()
      .filter((l) => l.retryInMs !== undefined)
      .map((l) => l.retryInMs as number);
  try {
    await waitFor(() => delays().length >= 5, 15_000, 'five failed starts');
    assert.deepEqual(delays().slice(0, 5), [40, 80, 160, 200, 200]);
    const down = logs.lines().find((l) => l.retryInMs !== undefined)!;
    assert.match(down.reason, /its last words: missing config/);
    assert.equal(down.msg, 'MCP server broken is down; trying again in 40 ms');
  } finally {
    await c.stop();
  }
  const seen = delays().length;
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(delays().length, seen, 'no attempt after the stop');
  assert.equal(c.state.kind, 'stopped');
});

test('a server that never answers does not hold up the start: the bot answers without its tools meanwhile', async () => {
  const { bot, close } = await startMcpBot({ mute: { command: 'sh', args: ['-c', 'exec sleep 60'] } });
  try {
    const mute = bot.app.parts.mcp!.get('mute')!;
    assert.equal(mute.state.kind, 'connecting');
    assert.deepEqual(await bot.send('1', 'hi'), ['echo: hi']);
    assert.ok(!(bot.llm.chatRequests()[0]!.body.tools as any[]).some((t) => t.function.name.startsWith('mute__')));
    const [status] = await bot.send('1', '/status full');
    assert.match(status!, /^ {2}mute \(stdio\): connecting \(attempt 1\) · private chats only$/m);
  } finally {
    await close();
  }
});

test('a server that announces a changed tool list is listed again: the new tool is offered', async () => {
  const server: McpServerConfig = {
    name: 'fx',
    transport: { kind: 'stdio', ...stdioFixture(), env: {}, cwd: undefined },
    tools: ['grow', 'extra'],
    groups: false,
    timeoutMs: undefined,
    maxAnswerBytes: 10_485_760,
    maxTools: 32,
  };
  const c = new McpConnection(server, { log: captureLog().log, toolTimeoutMs: 5_000 });
  c.start();
  try {
    await waitFor(() => c.state.kind === 'connected', 20_000, 'fx connected');
    assert.deepEqual(
      c.offered().map((t) => t.name),
      ['fx__grow'],
    );
    const ctx = {
      chat: { channel: 'test', chatId: '1', group: false, manages: true },
      conversationId: 'x',
      log: captureLog().log,
      signal: new AbortController().signal,
    };
    assert.match(await c.find('fx__grow')!.execute({}, ctx), /\ngrown\n\[End of output of "grow"\]$/);
    await waitFor(() => c.find('fx__extra') !== undefined, 5_000, 'the new tool listed');
    assert.match(await c.find('fx__extra')!.execute({}, ctx), /\nextra here\n\[End of output of "extra"\]$/);
  } finally {
    await c.stop();
  }
});
