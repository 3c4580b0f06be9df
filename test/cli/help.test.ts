/**
 * Every command a user runs answers --help (and -h): its usage on stdout, exit code 0, nothing
 * started, opened or checked. Run through npm, as the README and docs/cli.md write them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { childEnv, mainTs, repoRoot, runToEnd, tsxLoader } from '../helpers/child.js';
import { tempDir } from '../helpers/workspace.js';

const run = (cmd: string, args: string[], env: Record<string, string>) => runToEnd(cmd, args, { env: childEnv(env), cwd: repoRoot });

const CASES: Array<[string, RegExp]> = [
  ['memory', /^usage: npm run memory -- <command>/],
  ['pair', /^usage: npm run pair -- approve <CODE>/],
  ['doctor', /^usage: npm run doctor\b/],
  ['setup', /^usage: npm run setup\b/],
  ['bench', /^usage: npm run bench\b/],
];

for (const [script, usage] of CASES) {
  test(`npm run ${script} -- --help: usage on stdout, exit 0`, async () => {
    const ws = await tempDir();
    try {
      // A workspace that must stay empty, and an LLM nobody answers: --help touches neither.
      const env = { WORKSPACE_DIR: ws.dir, OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' };
      for (const flag of ['--help', '-h']) {
        const res = await run('npm', ['run', '--silent', script, '--', flag], env);
        assert.equal(res.code, 0, `${flag}: ${res.stderr}`);
        assert.match(res.stdout, usage, `${flag}: ${res.stdout}`);
        assert.doesNotMatch(res.stdout, /unknown|machine:|check +status/);
      }
    } finally {
      await ws.cleanup();
    }
  });
}

test('the daemon (npm start -- --help): usage on stdout, exit 0, no bot started', async () => {
  const res = await run(process.execPath, ['--import', tsxLoader, mainTs, '--help'], {
    OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
    WORKSPACE_DIR: '/nonexistent/never-created',
  });
  assert.equal(res.code, 0, res.stderr);
  assert.match(res.stdout, /^usage: npm start\b/);
  assert.equal(res.stderr, '');
});
