/**
 * Opening a session, failure by failure, in the project's codes: a program that never answers
 * is `mcp.timeout` and is ended; a program that cannot start, or an address with nobody there,
 * is `mcp.unreachable`; a server that refuses is `mcp.rejected`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { openSession } from '../../src/mcp/client.js';
import type { McpServerConfig } from '../../src/config/mcp.js';
import { isAppError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/log.js';
import { tempDir } from '../helpers/workspace.js';
import { freePort } from '../helpers/telegram.js';
import { startHttpMcpServer } from '../fixtures/mcp-server.js';

const server = (name: string, transport: McpServerConfig['transport']): McpServerConfig => ({
  name,
  transport,
  tools: undefined,
  groups: false,
  timeoutMs: undefined,
  maxAnswerBytes: 10_485_760,
  maxTools: 32,
});
const stdio = (command: string, args: string[]): McpServerConfig['transport'] => ({ kind: 'stdio', command, args, env: {}, cwd: undefined });
const open = (s: McpServerConfig, timeoutMs = 5_000) => openSession(s, { timeoutMs, log: silentLogger() });

test('a program that never answers: mcp.timeout after the deadline, and the program is ended', async () => {
  const ws = await tempDir();
  try {
    const pidFile = path.join(ws.dir, 'pid');
    await assert.rejects(open(server('mute', stdio('sh', ['-c', `echo $$ > ${pidFile}; exec sleep 60`])), 300), (err: unknown) => {
      assert.ok(isAppError(err, 'mcp.timeout'), String(err));
      assert.equal(err.message, 'MCP server mute did not answer within 300 ms');
      return true;
    });
    const pid = Number(await readFile(pidFile, 'utf8'));
    assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, 'the program is gone');
  } finally {
    await ws.cleanup();
  }
});

test('cannot start, nobody there, or a refusal: each its own code', async () => {
  await assert.rejects(
    open(server('nope', stdio('no-such-program-membot', []))),
    (err: unknown) => isAppError(err, 'mcp.unreachable') && /ENOENT/.test(err.message),
  );
  await assert.rejects(
    open(server('dies', stdio('sh', ['-c', 'echo cannot read config >&2; exit 1']))),
    (err: unknown) => isAppError(err, 'mcp.unreachable') && /its last words: cannot read config/.test(err.message),
  );
  await assert.rejects(open(server('gone', { kind: 'http', url: `http://127.0.0.1:${await freePort()}/mcp`, headers: {} })), (err: unknown) =>
    isAppError(err, 'mcp.unreachable'),
  );
  const web = await startHttpMcpServer({ token: 'right-token-123456' });
  try {
    await assert.rejects(
      open(server('web', { kind: 'http', url: web.url, headers: { Authorization: 'Bearer wrong' } })),
      (err: unknown) => isAppError(err, 'mcp.rejected') && /HTTP 401/.test(err.message),
    );
  } finally {
    await web.close();
  }
});
