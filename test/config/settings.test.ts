/**
 * One table of settings (src/config/reader.ts) and one reader: docs/configuration.md's settings table and
 * .env.example list exactly the table's names, renamed settings still work with one warning,
 * and each kind of value is read and refused the same way whatever the setting.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import dotenv from 'dotenv';
import { fileURLToPath } from 'node:url';
import { RENAMED, SETTINGS, SettingsReader } from '../../src/config/reader.js';
import { loadConfig } from '../../src/config/env.js';
import { CHANNELS } from '../../src/app/channels.js';
import type { TelegramConfig } from '../../src/channels/telegram/settings.js';

const file = (rel: string) => fileURLToPath(new URL(`../../${rel}`, import.meta.url));
const KEY = { OPENAI_API_KEY: 'sk-test-key-123456', TZ: 'UTC' };

test("docs/configuration.md's settings table lists the table's settings, in its order", async () => {
  const lines = (await readFile(file('docs/configuration.md'), 'utf8')).split('\n');
  const header = lines.findIndex((l) => /^\| variable \| default \| meaning \|/.test(l));
  assert.ok(header >= 0, 'docs/configuration.md has a "| variable | default | meaning |" table');
  const names: string[] = [];
  for (let i = header + 2; lines[i]?.startsWith('|'); i++) names.push(/^\| `([A-Z0-9_]+)`/.exec(lines[i]!)?.[1] ?? `unreadable row: ${lines[i]}`);
  assert.deepEqual(names, [...SETTINGS]);
});

test('.env.example sets every setting of the table once (TZ as a commented example), and nothing else', async () => {
  // TZ must stay unset by default (the system's zone); its line is an example to uncomment.
  const names = (await readFile(file('.env.example'), 'utf8')).split('\n').flatMap((l) => /^(?:# )?([A-Z][A-Z0-9_]*)=/.exec(l)?.[1] ?? []);
  assert.deepEqual([...names].sort(), [...SETTINGS].sort());
});

test('.env.example sets each setting to its documented default, and leaves empty those whose default is not a value (system, random, OpenAI, …)', async () => {
  const example = dotenv.parse(await readFile(file('.env.example'), 'utf8'));
  const lines = (await readFile(file('docs/configuration.md'), 'utf8')).split('\n');
  const header = lines.findIndex((l) => /^\| variable \| default \| meaning \|/.test(l));
  const wrong: string[] = [];
  for (let i = header + 2; lines[i]?.startsWith('|'); i++) {
    const [, name, def] = /^\| `([A-Z0-9_]+)` \| ([^|]*) \|/.exec(lines[i]!)!;
    const literal = /^(\d+)$|^`([^`]+)`$/.exec(def!.trim());
    const want = literal ? (literal[1] ?? literal[2]!) : '';
    // A default that names another setting (`LLM_MODEL`) is not a value to copy.
    const expected = /^[A-Z][A-Z0-9_]+$/.test(want) ? '' : want;
    if ((example[name!] ?? '') !== expected) wrong.push(`${name}: .env.example ${JSON.stringify(example[name!] ?? '')}, documented ${def!.trim()}`);
  }
  assert.deepEqual(wrong, []);
});

test('the old timeout names still work, with one warning each naming the new name; the new name wins', () => {
  const old = loadConfig({ ...KEY, CONSOLIDATION_TIMEOUT: '1234', COMPACTION_TIMEOUT: '4321' });
  assert.deepEqual(old.problems, []);
  assert.equal(old.config.consolidationTimeoutMs, 1234);
  assert.equal(old.config.summaryTimeoutMs, 4321);
  assert.deepEqual(old.warnings, [
    'CONSOLIDATION_TIMEOUT is deprecated — rename it to CONSOLIDATION_TIMEOUT_MS in .env',
    'COMPACTION_TIMEOUT is deprecated — rename it to COMPACTION_TIMEOUT_MS in .env',
  ]);
  const both = loadConfig({ ...KEY, CONSOLIDATION_TIMEOUT: '1234', CONSOLIDATION_TIMEOUT_MS: '5678' });
  assert.equal(both.config.consolidationTimeoutMs, 5678);
  assert.equal(both.warnings.length, 1);
  assert.match(both.warnings[0]!, /CONSOLIDATION_TIMEOUT_MS is set too and wins/);
  // A bad value under the old name is reported under the name the user wrote.
  assert.match(loadConfig({ ...KEY, COMPACTION_TIMEOUT: 'soon' }).problems[0]!, /^COMPACTION_TIMEOUT="soon" is not a whole number/);
  assert.deepEqual(loadConfig({ ...KEY, CONSOLIDATION_TIMEOUT_MS: '999' }).warnings, []);
  for (const [from, to] of Object.entries(RENAMED)) assert.ok((SETTINGS as readonly string[]).includes(to), `${from} → ${to} is in the table`);
});

test("a channel's settings are its section of the config, read by the same reader", () => {
  const { config, problems } = loadConfig(
    { ...KEY, TELEGRAM_ALLOWED_USERS: '42, @Owner', TELEGRAM_DM_POLICY: 'Open', TELEGRAM_WEBHOOK_PORT: '70000' },
    process.cwd(),
    CHANNELS,
  );
  const telegram = config.channels.telegram as TelegramConfig;
  assert.deepEqual(telegram.allowedUsers, ['42', 'owner']);
  assert.equal(telegram.dmPolicy, 'open');
  assert.equal(telegram.webhookPort, 8787);
  assert.equal(config.channels.console?.configured, true, 'the terminal is always at hand');
  assert.deepEqual(problems, ['TELEGRAM_WEBHOOK_PORT="70000" is not a whole number from 1 to 65535 — fix it or remove it to use 8787']);
});

test('the reader: blank is unset, one problem line per bad value, the default kept', () => {
  const r = new SettingsReader({
    LLM_MODEL: '  ',
    LOG_LEVEL: 'Loud',
    LLM_TIMEOUT_MS: '1.5',
    OPENAI_BASE_URL: 'ftp://x',
    TELEGRAM_ALLOWED_USERS: 'a, b c,,',
    SHOW_TRANSCRIPT: 'On',
    DAILY_TOKEN_BUDGET_EXEMPT_ALLOWED_USERS: 'perhaps',
    TELEGRAM_ACK_REACTION: '',
  });
  assert.equal(r.str('LLM_MODEL'), undefined);
  assert.equal(r.oneOf('LOG_LEVEL', ['info', 'debug'], 'info', 'is not a level'), 'info');
  assert.equal(r.int('LLM_TIMEOUT_MS', 60_000, 100, 600_000), 60_000);
  assert.equal(r.url('OPENAI_BASE_URL', 'use http'), 'ftp://x');
  assert.deepEqual(r.list('TELEGRAM_ALLOWED_USERS'), ['a', 'b', 'c']);
  assert.equal(r.bool('SHOW_TRANSCRIPT', false), true);
  assert.equal(r.bool('DAILY_TOKEN_BUDGET_EXEMPT_ALLOWED_USERS', true, 'must be true or false'), true);
  assert.equal(r.present('TELEGRAM_ACK_REACTION'), true, 'set but empty is present');
  assert.equal(r.present('TELEGRAM_WEBHOOK_URL'), false);
  assert.deepEqual(r.problems, [
    'LOG_LEVEL="loud" is not a level',
    'LLM_TIMEOUT_MS="1.5" is not a whole number from 100 to 600000 — fix it in .env or remove it to use 60000',
    'OPENAI_BASE_URL="ftp://x" is not an http(s) URL — use http',
    'DAILY_TOKEN_BUDGET_EXEMPT_ALLOWED_USERS="perhaps" must be true or false',
  ]);
});
