/**
 * MCP_CONFIG: the file is read once at start and checked strictly — a typo is refused by name
 * in one line (main exits 2 on it), `${NAME}` takes a value from the environment and makes it a
 * log secret, and a server is exactly one of a program (stdio) or a URL (streamable HTTP).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { configSecrets, loadConfig } from '../../src/config/env.js';
import { tempDir } from '../helpers/workspace.js';

const KEY = { OPENAI_API_KEY: 'sk-test-key-123456', TZ: 'UTC' };

/** loadConfig with MCP_CONFIG pointing at a file holding `content` (JSON unless a string). */
async function withFile(content: unknown, env: Record<string, string> = {}) {
  const ws = await tempDir();
  try {
    await writeFile(path.join(ws.dir, 'mcp.json'), typeof content === 'string' ? content : JSON.stringify(content));
    return { ...loadConfig({ ...KEY, MCP_CONFIG: 'mcp.json', ...env }, ws.dir), dir: ws.dir };
  } finally {
    await ws.cleanup();
  }
}

test('a valid file: a program and a URL, ${NAME} filled from the environment and kept as a secret, defaults for the rest', async () => {
  const { config, problems, dir } = await withFile(
    {
      servers: {
        files: {
          command: 'npx',
          args: ['-y', 'some-mcp-server'],
          env: { GITHUB_TOKEN: '${GH_TOKEN}', MODE: 'read-only' },
          cwd: 'srv',
          tools: ['read_file'],
          groups: ['-100123', -100456],
          timeoutMs: 5000,
          maxAnswerBytes: 2048,
          maxTools: 3,
        },
        calendar: { url: 'http://127.0.0.1:9000/mcp', headers: { Authorization: 'Bearer ${CAL_TOKEN}' }, groups: true },
      },
    },
    { GH_TOKEN: 'ghp_secretvalue12345', CAL_TOKEN: 'cal-token-abcdef123' },
  );
  assert.deepEqual(problems, []);
  assert.equal(config.mcp.file, path.join(dir, 'mcp.json'));
  assert.deepEqual(config.mcp.servers, [
    {
      name: 'files',
      transport: {
        kind: 'stdio',
        command: 'npx',
        args: ['-y', 'some-mcp-server'],
        env: { GITHUB_TOKEN: 'ghp_secretvalue12345', MODE: 'read-only' },
        cwd: path.join(dir, 'srv'),
      },
      tools: ['read_file'],
      groups: ['-100123', '-100456'],
      timeoutMs: 5000,
      maxAnswerBytes: 2048,
      maxTools: 3,
    },
    {
      name: 'calendar',
      transport: { kind: 'http', url: 'http://127.0.0.1:9000/mcp', headers: { Authorization: 'Bearer cal-token-abcdef123' } },
      tools: undefined,
      groups: true,
      timeoutMs: undefined,
      maxAnswerBytes: 10_485_760,
      maxTools: 32,
    },
  ]);
  const secrets = configSecrets(config);
  assert.ok(secrets.includes('ghp_secretvalue12345') && secrets.includes('cal-token-abcdef123'), 'values from the environment are secrets');
  assert.ok(!secrets.includes('read-only'), 'values written in the file are not');
});

test('each mistake is one problem line naming the file and the key', async () => {
  const cases: Array<[unknown, RegExp, Record<string, string>?]> = [
    [{ servers: { files: { comand: 'npx' } } }, /servers\.files\.comand is not a known key — use command, args, env/],
    [{ servers: {}, extra: 1 }, /"extra" is not a known key — the file holds only "servers"/],
    [{ files: { command: 'npx' } }, /must be an object \{"servers"/],
    [{ servers: { files: {} } }, /servers\.files needs either "command" .* or "url" .*, not neither/],
    [{ servers: { files: { command: 'x', url: 'http://a' } } }, /not both/],
    [{ servers: { files: { command: 'x', headers: {} } } }, /servers\.files\.headers is for "url" servers/],
    [{ servers: { web: { url: 'ftp://host/mcp' } } }, /servers\.web\.url "ftp:\/\/host\/mcp" is not an http\(s\) URL/],
    [{ servers: { 'my files': { command: 'x' } } }, /server name "my files" may hold only letters/],
    [{ servers: { a__b: { command: 'x' } } }, /server name "a__b"/],
    [{ servers: { files: { command: 'x', groups: 'yes' } } }, /servers\.files\.groups must be true .* or a list of group chat ids/],
    [{ servers: { files: { command: 'x', groups: ['42'] } } }, /servers\.files\.groups must be/],
    [{ servers: { files: { command: 'x', tools: [] } } }, /servers\.files\.tools is empty/],
    [{ servers: { files: { command: 'x', timeoutMs: 0 } } }, /servers\.files\.timeoutMs must be a whole number of ms from 10 to 600000/],
    [{ servers: { files: { command: 'x', maxAnswerBytes: 100 } } }, /servers\.files\.maxAnswerBytes must be a whole number of bytes from 1024 to 1073741824/],
    [{ servers: { files: { command: 'x', maxTools: 129 } } }, /servers\.files\.maxTools must be a whole number of tools from 1 to 128/],
    [{ servers: { files: { command: 'x', env: { T: '${NOT_SET}' } } } }, /servers\.files\.env\.T uses \$\{NOT_SET\}, which is not set in the environment/],
    [{ servers: { files: { command: 'x', args: ['a', 3] } } }, /servers\.files\.args must be a list of non-empty strings/],
    ['{ "servers": ', /is not valid JSON/],
  ];
  for (const [content, expected, env] of cases) {
    const { problems, config } = await withFile(content, env);
    assert.equal(problems.length, 1, `${JSON.stringify(content)}: ${problems.join(' | ')}`);
    assert.match(problems[0]!, /^MCP_CONFIG \/.*mcp\.json/);
    assert.match(problems[0]!, expected);
    assert.deepEqual(config.mcp.servers, [], 'no server from a bad file');
  }
});

test('MCP_MAX_ANSWER_BYTES is the bound of a server without maxAnswerBytes; a tools list longer than the default maxTools takes them all', async () => {
  const tools = Array.from({ length: 40 }, (_, i) => `t${i}`);
  const { config, problems } = await withFile(
    { servers: { a: { command: 'x', tools }, b: { command: 'x', maxAnswerBytes: 4096 } } },
    { MCP_MAX_ANSWER_BYTES: '65536' },
  );
  assert.deepEqual(problems, []);
  assert.deepEqual(
    config.mcp.servers.map((s) => [s.maxAnswerBytes, s.maxTools]),
    [
      [65_536, 40],
      [4096, 32],
    ],
  );
  const bad = await withFile({ servers: { a: { command: 'x' } } }, { MCP_MAX_ANSWER_BYTES: '10MB' });
  assert.deepEqual(bad.problems, ['MCP_MAX_ANSWER_BYTES="10MB" is not a whole number from 1024 to 1073741824 — fix it in .env or remove it to use 10485760']);
});

test('a file that is not there is one problem line; MCP_CONFIG unset means no servers', async () => {
  const { problems } = loadConfig({ ...KEY, MCP_CONFIG: '/nonexistent/mcp.json' });
  assert.deepEqual(problems, [
    "MCP_CONFIG /nonexistent/mcp.json cannot be read (ENOENT) — check the path (a relative one starts at the daemon's working directory), or remove MCP_CONFIG",
  ]);
  assert.deepEqual(loadConfig(KEY).config.mcp.servers, []);
});

test('a credential written literally in the file is a log secret too: every header value (and its token), and env entries named like a key', async () => {
  const { config, problems } = await withFile(
    {
      servers: {
        files: { command: 'npx', env: { API_KEY: 'literal-api-key-0001', MODE: 'verbose-mode-on' } },
        calendar: { url: 'http://127.0.0.1:9000/mcp', headers: { Authorization: 'Bearer literal-token-0002' } },
      },
    },
    {},
  );
  assert.deepEqual(problems, []);
  const secrets = configSecrets(config);
  for (const s of ['literal-api-key-0001', 'Bearer literal-token-0002', 'literal-token-0002']) assert.ok(secrets.includes(s), s);
  assert.ok(!secrets.includes('verbose-mode-on'), 'an ordinary setting stays readable in the log');
});
