/**
 * A tool call that takes the daemon down must not take it down again (issue 33, item 1): the
 * real daemon (src/main.ts, Telegram channel against the emulator, fake LLM) asks an MCP server
 * (HTTP, in this process, so it outlives the daemon and counts its calls) for a tool that never
 * answers, and is killed with SIGKILL while that call runs — as an answer that exhausts its
 * memory would kill it. At the next start the message is recovered from the journal; the model
 * asks for the same tool again, and it is not called: the model reads that the bot stopped while
 * it ran, the user gets one answer, and the journal entry is closed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startTelegramEmulator } from '../helpers/telegram.js';
import { startFakeLlm, text, toolCalls } from '../helpers/fake-llm.js';
import { tempDir } from '../helpers/workspace.js';
import { startDaemonChild, telegramDaemonEnv } from '../helpers/child.js';
import { fixtureCalls, startHttpMcpServer } from '../fixtures/mcp-server.js';
import { FileInbox } from '../../src/queue/file-inbox.js';
import { waitFor } from '../helpers/wait.js';

const USER = 4242;

test('risk: a tool call that kills the daemon kills it again at every restart — after kill -9 mid-call the tool is not called again, the user gets one answer, the entry is closed', {
  timeout: 120_000,
}, async () => {
  const tg = await startTelegramEmulator();
  // The model asks for the tool until it has a tool result, then answers with what it read.
  const llm = await startFakeLlm((req) => {
    const last = req.body.messages.at(-1);
    return last.role === 'tool' ? text(`done: ${String(last.content)}`) : toolCalls([{ name: 'fixture__slow', args: {} }]);
  });
  const mcp = await startHttpMcpServer();
  const ws = await tempDir('membot-tool-crash-');
  const mcpFile = path.join(ws.dir, 'mcp.json');
  await writeFile(mcpFile, JSON.stringify({ servers: { fixture: { url: mcp.url } } }));
  // A short tool timeout: on the old code the second call ends by it instead of hanging the test.
  const env = telegramDaemonEnv(
    { llmUrl: llm.url, workspace: ws.dir, tg },
    { TELEGRAM_ALLOWED_USERS: String(USER), TELEGRAM_DM_POLICY: 'allowlist', MCP_CONFIG: mcpFile, TOOL_TIMEOUT_MS: '5000' },
  );
  let daemon = startDaemonChild(env, ws.dir);
  try {
    await daemon.started;
    const before = fixtureCalls.slow;
    await tg.user({ userId: USER }).say('use the slow tool please');
    await waitFor(() => fixtureCalls.slow === before + 1, 60_000, 'the tool call to reach the MCP server');
    daemon.child.kill('SIGKILL');
    await new Promise((r) => daemon.child.once('close', r));
    assert.equal(tg.botMessages(USER).length, 0, 'killed before any answer');

    daemon = startDaemonChild(env, ws.dir);
    await daemon.started;
    await waitFor(() => tg.botMessages(USER).length >= 1, 60_000, 'the answer after the restart');
    // Stopped gracefully once answered: anything more (a second answer, a second call) would be in by then.
    daemon.child.kill('SIGTERM');
    await new Promise((r) => daemon.child.once('close', r));

    assert.equal(fixtureCalls.slow, before + 1, 'the tool the daemon died in is not called again');
    const answers = tg.botMessages(USER).map((m) => m.text);
    assert.equal(answers.length, 1, `one answer: ${JSON.stringify(answers)}`);
    assert.match(answers[0]!, /^done: Not run: the bot stopped .* while "fixture__slow" was running for this message/);
    assert.deepEqual((await new FileInbox(path.join(ws.dir, 'inbox.jsonl')).unfinished()).entries, [], 'the journal entry is closed');
    assert.match(daemon.log(), /"code":"tool\.interrupted".*"sameArguments":true/);
  } finally {
    if (daemon.child.exitCode === null && daemon.child.signalCode === null) daemon.child.kill('SIGKILL');
    await tg.close();
    await llm.close();
    await mcp.close();
    await ws.cleanup();
  }
});
