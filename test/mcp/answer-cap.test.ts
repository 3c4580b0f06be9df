/**
 * A hostile or careless MCP server cannot take the daemon down with one answer: an endless SSE
 * event, an endless JSON body (HTTP) or an over-long line (stdio) is stopped on the wire at
 * MCP_MAX_ANSWER_BYTES, the model reads "answer too large" (mcp.rejected) and the turn goes on;
 * the HTTP connection is closed (nothing more is read from it) and the next call works.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestBot } from '../helpers/app.js';
import { callingModel, startMcpBot } from '../helpers/mcp.js';
import { until } from '../helpers/reminders.js';
import { startHttpMcpServer, stdioFixture, type HttpMcpServer } from '../fixtures/mcp-server.js';

/** 256 KiB: small enough to reach quickly, far above a real answer's size in these tests. */
const CAP = 256 * 1024;

let bot: TestBot;
let web: HttpMcpServer;
let cleanup: () => Promise<void>;

before(async () => {
  web = await startHttpMcpServer({ floods: true });
  ({ bot, close: cleanup } = await startMcpBot(
    {
      // A deadline far beyond what reading CAP bytes takes: the call must end by the bound, not by the clock.
      web: { url: web.url, tools: ['flood_event', 'flood_json', 'forecast'], timeoutMs: 60_000 },
      fx: { ...stdioFixture(), tools: ['big', 'forecast'], timeoutMs: 60_000 },
    },
    { responder: callingModel, env: { MCP_MAX_ANSWER_BYTES: String(CAP), TURN_TIMEOUT_MS: '300000' } },
  ));
  await until(() => bot.app.parts.mcp!.connections.every((c) => c.state.kind === 'connected'), 30_000, 'both servers connected');
});

after(async () => {
  await cleanup?.();
  await web?.close();
});

const TOO_LARGE = `answer too large: more than ${CAP.toLocaleString('en-US')} bytes in one message`;

test('an endless SSE event and an endless JSON body: the call ends "answer too large", the connection is closed, and the next call works', async () => {
  for (const [chat, tool] of [
    ['1', 'flood_event'],
    ['2', 'flood_json'],
  ] as const) {
    const replies = await bot.send(chat, `call web__${tool}`);
    assert.equal(replies.length, 1);
    assert.ok(replies[0]!.startsWith(`The tool answered: Error: the tool "web__${tool}" failed: MCP server web: ${TOO_LARGE}`), replies[0]!.slice(0, 300));
    const flood = web.floods.find((f) => f.tool === tool);
    assert.ok(flood, `the server began the ${tool} answer`);
    assert.equal(await flood.closed, true, 'the daemon closed the connection before the answer ended');
    assert.ok(
      bot.logs.lines().some((l) => l.code === 'mcp.rejected' && l.tool === `web__${tool}`),
      'logged as mcp.rejected',
    );
  }
  assert.equal(bot.app.parts.mcp!.get('web')!.state.kind, 'connected', 'the session is kept: only the answer was refused');
  assert.deepEqual(await bot.send('3', 'call web__forecast {"city":"Rome"}'), [
    'The tool answered: Forecast for Rome: sunny, 21 °C, light wind from the west.',
  ]);
});

test('a stdio line over the bound: the call ends "answer too large", the program is started again, and its next call works', async () => {
  const fx = bot.app.parts.mcp!.get('fx')!;
  const first = fx.pid;
  const [reply] = await bot.send('4', `call fx__big {"size":${CAP * 2}}`);
  assert.ok(reply!.startsWith(`The tool answered: Error: the tool "fx__big" failed: MCP server fx: ${TOO_LARGE}`), reply!.slice(0, 300));
  // Its output is out of step after a cut line: the program is ended and started again.
  await until(() => fx.state.kind === 'connected' && fx.pid !== first, 30_000, 'fx started again');
  assert.deepEqual(await bot.send('5', 'call fx__forecast {"city":"Oslo"}'), ['The tool answered: Forecast for Oslo: sunny, 21 °C, light wind from the west.']);
  // Under the bound a big answer still comes, cut for the model as before.
  const [big] = await bot.send('6', `call fx__big {"size":${CAP / 2}}`);
  assert.match(big!, /…\[cut: [\d,]+ more characters not shown\]$/);
});
