/**
 * Servers that list too many tools cannot make every request fail or cost a fortune: each
 * server's tools are taken up to its `maxTools` (32 unless set), a request holds 128 functions
 * at most with the bot's own first, names are unique, and what was left out is named in the
 * log and in /status full.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startMcpBot } from '../helpers/mcp.js';
import { until } from '../helpers/reminders.js';
import { stdioFixture } from '../fixtures/mcp-server.js';

test('150 and 120 listed tools: 32 from the first (its default maxTools), the second fills the request up to 128 functions; /status full and the log name the rest', async () => {
  const fixture = stdioFixture();
  const { bot, close } = await startMcpBot({
    many: { ...fixture, env: { FIXTURE_EXTRA_TOOLS: '150' } },
    more: { ...fixture, env: { FIXTURE_EXTRA_TOOLS: '120' }, maxTools: 128 },
  });
  try {
    const mcp = bot.app.parts.mcp!;
    await until(() => mcp.connections.every((c) => c.state.kind === 'connected'), 30_000, 'both servers connected');
    const own = bot.app.parts.tools.names().filter((n) => !n.includes('__')).length;

    await bot.send('1', 'hello');
    const names = (bot.llm.chatRequests()[0]!.body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name);
    assert.equal(names.length, 128, 'a request holds 128 functions');
    assert.equal(new Set(names).size, names.length, 'no two alike');
    assert.equal(names.filter((n) => n.startsWith('many__')).length, 32);
    assert.equal(names.filter((n) => n.startsWith('more__')).length, 128 - own - 32);
    assert.equal(names.filter((n) => !n.includes('__')).length, own, "the bot's own tools all stay");

    const [status] = await bot.send('1', '/status full');
    // The fixture lists 7 tools of its own before the extra ones, and one after.
    assert.match(
      status!,
      /^ {2}many \(stdio\): connected, 32 tools; 126 more left out, past its maxTools 32 \(extra_25, extra_26, extra_27, extra_28, extra_29 and 121 more\) · private chats only$/m,
    );
    const cut = 128 - (128 - own - 32);
    assert.match(
      status!,
      new RegExp(
        `^ {2}more \\(stdio\\): connected, 128 tools; ${cut} of them not offered, a request holds 128 functions at most \\(extra_\\d+, .* and ${cut - 5} more\\) · private chats only$`,
        'm',
      ),
    );

    const logged = bot.logs.lines();
    const over = logged.find((l) => l.server === 'many' && l.msg === '[MCP] MCP server tools left out');
    assert.equal(over?.overMaxToolsCount, 126);
    const total = logged.find((l) => typeof l.msg === 'string' && l.msg.startsWith('[MCP] MCP tools left out: a request holds 128 functions'));
    assert.equal((total?.leftOut as Record<string, string[]> | undefined)?.more?.length, cut);
  } finally {
    await close();
  }
});
