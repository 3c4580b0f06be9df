/** Memory page settings: off by default, a short token refused, a random token kept across starts and shown by doctor. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../../src/config/env.js';
import { resolvePageToken, TOKEN_FILE, tokenFile } from '../../src/web/token.js';
import { runDoctor } from '../../src/cli/doctor.js';
import { tempDir } from '../helpers/workspace.js';

test('memory page settings: off by default on 127.0.0.1; a token under 16 characters is a config problem', () => {
  const base = { OPENAI_API_KEY: 'sk-x', TZ: 'UTC' };
  const { config } = loadConfig(base);
  assert.equal(config.memoryPagePort, 0);
  assert.equal(config.memoryPageHost, '127.0.0.1');
  const bad = loadConfig({ ...base, MEMORY_PAGE_TOKEN: 'short', MEMORY_PAGE_PORT: '70000' });
  assert.ok(bad.problems.some((p) => /^MEMORY_PAGE_TOKEN is shorter than 16/.test(p)));
  assert.ok(bad.problems.some((p) => /^MEMORY_PAGE_PORT=/.test(p)));
  assert.ok(!bad.problems.join(' ').includes('"short"'), 'the token value is not printed');
});

test('memory page token: a random one is made once (0600), kept across starts, and npm run doctor prints the link with it', async () => {
  const ws = await tempDir();
  try {
    const first = await resolvePageToken(tokenFile(ws.dir), undefined);
    assert.equal(first.created, true);
    assert.ok(first.token.length >= 30);
    assert.equal((await stat(path.join(ws.dir, TOKEN_FILE))).mode & 0o777, 0o600);
    const again = await resolvePageToken(tokenFile(ws.dir), undefined);
    assert.deepEqual(again, { token: first.token, created: false });
    assert.equal((await resolvePageToken(tokenFile(ws.dir), 'configured-token-123456')).token, 'configured-token-123456');
    const results = await runDoctor({
      env: { OPENAI_API_KEY: 'sk-x', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', WORKSPACE_DIR: ws.dir, TZ: 'UTC', MEMORY_PAGE_PORT: '8790' },
      cwd: ws.dir,
      timeoutMs: 500,
    });
    const row = results.find((r) => r.name === 'memory page');
    assert.equal(row?.detail, `http://127.0.0.1:8790/?token=${first.token}`);
  } finally {
    await ws.cleanup();
  }
});
