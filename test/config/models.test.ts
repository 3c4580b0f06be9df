/**
 * LLM_MODELS and LLM_FALLBACK as read at start (config/models.ts): the three entry forms, one
 * problem line per mistake (the daemon then exits 2), a named key variable must be set and becomes
 * a log secret — and a line never shows what follows "|", in case the key itself was pasted there.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configSecrets, loadConfig } from '../../src/config/env.js';
import { mainTs, runCli } from '../helpers/child.js';
import { tempDir } from '../helpers/workspace.js';

const KEY = { OPENAI_API_KEY: 'sk-test-key-123456', TZ: 'UTC' };

test("LLM_MODELS: a name, name=URL and name=URL|VARIABLE; the variable's value is a secret", () => {
  const { config, problems } = loadConfig({
    ...KEY,
    LLM_MODELS: ' gpt-4o-mini, gpt-4.1=https://api.example.com/v1|EXAMPLE_KEY ,llama3.1:8b=http://127.0.0.1:11434/v1,openai/gpt-4o',
    EXAMPLE_KEY: 'sk-example-secret-42',
    LLM_FALLBACK: 'gpt-4.1, llama3.1:8b',
  });
  assert.deepEqual(problems, []);
  assert.deepEqual(config.models, [
    { name: 'gpt-4o-mini', baseUrl: undefined, keyVariable: undefined, apiKey: undefined },
    { name: 'gpt-4.1', baseUrl: 'https://api.example.com/v1', keyVariable: 'EXAMPLE_KEY', apiKey: 'sk-example-secret-42' },
    { name: 'llama3.1:8b', baseUrl: 'http://127.0.0.1:11434/v1', keyVariable: undefined, apiKey: undefined },
    { name: 'openai/gpt-4o', baseUrl: undefined, keyVariable: undefined, apiKey: undefined },
  ]);
  assert.deepEqual(config.fallback, ['gpt-4.1', 'llama3.1:8b']);
  assert.ok(configSecrets(config).includes('sk-example-secret-42'), 'the named key is scrubbed from logs and replies');
});

test('each mistake is one line saying what to write; the key is never echoed', () => {
  const cases: Array<[Record<string, string>, RegExp]> = [
    [
      { LLM_MODELS: 'gpt-4.1=ftp://x' },
      /^LLM_MODELS: the server of gpt-4\.1 \(after "="\) is not an http\(s\) URL — write name=URL or name=URL\|KEY_VARIABLE, e\.g\./,
    ],
    [
      { LLM_MODELS: 'gpt-4.1=https://api.example.com/v1|MISSING_KEY' },
      /^LLM_MODELS: gpt-4\.1 takes its key from MISSING_KEY, which is not set — set it in \.env/,
    ],
    [
      { LLM_MODELS: 'gpt-4.1=https://api.example.com/v1|sk-live-abc123' },
      /^LLM_MODELS: after "\|" gpt-4\.1 needs the NAME of the environment variable holding its key/,
    ],
    [{ LLM_MODELS: 'llama3,Llama3' }, /^LLM_MODELS names Llama3 twice — keep one entry per model$/],
    [{ LLM_MODELS: 'a model' }, /^LLM_MODELS has "a model", which is not a model name/],
    [{ LLM_FALLBACK: 'x=http://127.0.0.1:1/v1' }, /^LLM_FALLBACK has "x" with a server — give its server in LLM_MODELS and only its name here$/],
    [{ LLM_FALLBACK: 'b,b' }, /^LLM_FALLBACK names b twice/],
    [
      { LLM_FALLBACK: 'a,,b' },
      /^LLM_FALLBACK has an empty entry \(two commas in a row, or one at an end\) — write one model name between each pair of commas$/,
    ],
    [{ LLM_FALLBACK: 'a, ,b,' }, /^LLM_FALLBACK has an empty entry/],
    [{ LLM_MODELS: 'a,,b' }, /^LLM_MODELS has an empty entry/],
  ];
  for (const [env, line] of cases) {
    const { problems } = loadConfig({ ...KEY, ...env });
    assert.equal(problems.length, 1, `${JSON.stringify(env)}: ${JSON.stringify(problems)}`);
    assert.match(problems[0]!, line);
    assert.ok(!problems[0]!.includes('sk-live-abc123'), 'a pasted key is not printed');
  }
});

test('LLM_FALLBACK=a,,b is refused with one line, not read as a shorter chain', () => {
  const { config, problems } = loadConfig({ ...KEY, LLM_FALLBACK: 'a,,b' });
  assert.deepEqual(problems, ['LLM_FALLBACK has an empty entry (two commas in a row, or one at an end) — write one model name between each pair of commas']);
  assert.deepEqual(config.fallback, ['a', 'b'], 'the names that are there are still read');
  assert.deepEqual(loadConfig({ ...KEY, LLM_FALLBACK: '  ' }).problems, [], 'a blank value is no fallback, as unset');
});

test('a bad LLM_MODELS stops the daemon with exit 2 and one line', async () => {
  const ws = await tempDir();
  try {
    const r = await runCli(mainTs, [], {
      OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
      WORKSPACE_DIR: ws.dir,
      LOG_LEVEL: 'silent',
      LLM_MODELS: 'gpt-4.1=https://api.example.com/v1|NOT_SET_ANYWHERE',
    });
    assert.equal(r.code, 2, r.stderr);
    const lines = r.stderr.split('\n').filter(Boolean);
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, /LLM_MODELS: gpt-4\.1 takes its key from NOT_SET_ANYWHERE, which is not set/);
  } finally {
    await ws.cleanup();
  }
});
