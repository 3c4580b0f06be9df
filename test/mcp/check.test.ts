/**
 * The operator's view before and at start: `npm run doctor` opens each MCP server and lists its
 * tools, a line per server, telling "it said no" (a refused token) apart from "nobody there";
 * a bad MCP_CONFIG stops the daemon with exit 2 and one line.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { exitCodeFor, formatReport, runDoctor } from '../../src/cli/doctor.js';
import { startFakeLlm } from '../helpers/fake-llm.js';
import { freePort } from '../helpers/telegram.js';
import { tempDir } from '../helpers/workspace.js';
import { mainTs, runCli } from '../helpers/child.js';
import { startHttpMcpServer, stdioFixture } from '../fixtures/mcp-server.js';
import { patient } from '../helpers/wait.js';

test('doctor: a line per MCP server — tools listed when it answers; a refused token and a dead URL fail with different fixes', async () => {
  const web = await startHttpMcpServer({ token: 'right-token-123456' });
  const llm = await startFakeLlm();
  const ws = await tempDir();
  try {
    const dead = `http://127.0.0.1:${await freePort()}/mcp`;
    await writeFile(
      path.join(ws.dir, 'mcp.json'),
      JSON.stringify({
        servers: {
          fx: { ...stdioFixture(), tools: ['forecast', 'env'] },
          web: { url: web.url, headers: { Authorization: 'Bearer ${WEB_TOKEN}' } },
          gone: { url: dead },
        },
      }),
    );
    const env = { OPENAI_BASE_URL: llm.url, WORKSPACE_DIR: ws.dir, TZ: 'UTC', MCP_CONFIG: 'mcp.json', WEB_TOKEN: 'wrong-token-654321' };
    // The stdio server starts under tsx: scaled, a loaded machine takes several times longer.
    const results = await runDoctor({ env, cwd: ws.dir, timeoutMs: patient(15_000) });
    const by = Object.fromEntries(results.map((r) => [r.name, r]));
    assert.equal(by['MCP fx']!.status, 'ok', by['MCP fx']!.detail);
    assert.match(by['MCP fx']!.detail, /: 2 tool\(s\) \(forecast, env\)$/);
    assert.equal(by['MCP web']!.status, 'fail');
    assert.match(by['MCP web']!.detail, /HTTP 401/);
    assert.match(by['MCP web']!.fix!, /the server refused — check its url path and headers/);
    assert.equal(by['MCP gone']!.status, 'fail');
    assert.equal(by['MCP gone']!.fix, `check that the server at ${dead} is running`);
    assert.ok(!JSON.stringify(results).includes('wrong-token-654321'), 'the token is not printed');
    assert.equal(exitCodeFor(results), 1);
    assert.match(formatReport(results), /^MCP fx +ok +stdio /m);
  } finally {
    await web.close();
    await llm.close();
    await ws.cleanup();
  }
});

test('a bad MCP_CONFIG: the daemon exits 2 with one line naming the file and the key, before anything starts', { timeout: patient(30_000) }, async () => {
  const ws = await tempDir();
  try {
    await writeFile(path.join(ws.dir, 'mcp.json'), JSON.stringify({ servers: { files: { command: 'npx', tols: ['read_file'] } } }));
    const workspace = path.join(ws.dir, 'workspace');
    const { code, stdout, stderr } = await runCli(mainTs, [], {
      OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
      WORKSPACE_DIR: workspace,
      LOG_LEVEL: 'silent',
      MCP_CONFIG: path.join(ws.dir, 'mcp.json'),
    });
    assert.equal(code, 2, stderr);
    assert.equal(stdout, '');
    const lines = stderr.split('\n').filter(Boolean);
    assert.equal(lines.length, 1, stderr);
    assert.equal(
      lines[0],
      `config: MCP_CONFIG ${path.join(ws.dir, 'mcp.json')}: servers.files.tols is not a known key — use command, args, env, cwd, url, headers, tools, groups, timeoutMs, maxAnswerBytes, maxTools`,
    );
    assert.deepEqual(await readdir(ws.dir), ['mcp.json'], 'no workspace made before the check');
  } finally {
    await ws.cleanup();
  }
});
