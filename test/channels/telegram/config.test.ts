import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../../src/config/env.js';
import { loadTelegramConfig } from '../../../src/channels/telegram/settings.js';
import { CHANNELS } from '../../../src/app/channels.js';

const TOKEN = '123456789:AAtest-token-for-the-emulator_0001';

test('without TELEGRAM_* settings: console mode, pairing policy, no problems', () => {
  const { telegram, problems } = loadTelegramConfig({});
  assert.deepEqual(problems, []);
  assert.deepEqual(telegram, {
    configured: false,
    secrets: [],
    owners: [],
    botToken: undefined,
    apiRoot: undefined,
    allowedUsers: [],
    allowedGroups: [],
    dmPolicy: 'pairing',
    webhookUrl: undefined,
    webhookSecret: undefined,
    webhookHost: '127.0.0.1',
    webhookPort: 8787,
    ackReaction: '👀',
  });
  // The settings every channel shares are config's, not the channel's section.
  const shared = (env: Record<string, string>) => loadConfig({ OPENAI_API_KEY: 'sk-test-key-123456', TZ: 'UTC', ...env }, process.cwd(), CHANNELS);
  assert.equal(shared({ STREAMING: 'Edit' }).config.streaming, 'edit');
  assert.equal(shared({ STREAMING: 'off' }).config.streaming, 'off');
  assert.match(shared({ STREAMING: 'fast' }).problems.join('\n'), /STREAMING="fast" must be draft .*, edit .* or off/);
  assert.equal(shared({ TRANSCRIPTION_MODEL: 'off' }).config.transcriptionModel, undefined);
  assert.equal(shared({}).config.transcriptionModel, 'whisper-1');
  assert.equal(shared({ GROUP_ADMINS_MANAGE: 'On' }).config.groupAdminsManage, true);
  assert.equal(loadTelegramConfig({ TELEGRAM_ACK_REACTION: '' }).telegram.ackReaction, '', 'set but empty turns the reaction off');
  assert.equal(loadTelegramConfig({ TELEGRAM_ACK_REACTION: ' 👍 ' }).telegram.ackReaction, '👍');
});

test('lists are read from commas or spaces; usernames lose "@" and case', () => {
  const { telegram, problems } = loadTelegramConfig({
    TELEGRAM_BOT_TOKEN: TOKEN,
    TELEGRAM_ALLOWED_USERS: '12345, @Alice_B  bob_c',
    TELEGRAM_ALLOWED_GROUPS: '-1001234567890,-42',
    GROUP_ADMINS_MANAGE: 'On',
    TELEGRAM_DM_POLICY: 'Allowlist',
    TELEGRAM_WEBHOOK_URL: 'https://bot.example.com/tg',
    TELEGRAM_WEBHOOK_SECRET: 'abc_DEF-123',
    TELEGRAM_WEBHOOK_PORT: '9000',
  });
  assert.deepEqual(problems, []);
  assert.deepEqual(telegram.allowedUsers, ['12345', 'alice_b', 'bob_c']);
  assert.deepEqual(telegram.allowedGroups, ['-1001234567890', '-42']);
  assert.equal(telegram.dmPolicy, 'allowlist');
  assert.equal(telegram.webhookPort, 9000);
});

test('each bad value is one line naming the variable, and the token is never printed', () => {
  const badToken = 'not-a-token-but-a-secret-anyway';
  const { problems } = loadTelegramConfig({
    TELEGRAM_BOT_TOKEN: badToken,
    TELEGRAM_API_ROOT: 'ftp://x',
    TELEGRAM_ALLOWED_USERS: '123,@x!',
    TELEGRAM_ALLOWED_GROUPS: 'team',
    TELEGRAM_DM_POLICY: 'everyone',
    TELEGRAM_WEBHOOK_URL: 'http://bot.example.com/tg',
    TELEGRAM_WEBHOOK_SECRET: 'has spaces',
    TELEGRAM_WEBHOOK_PORT: '70000',
  });
  const vars = [
    'TELEGRAM_BOT_TOKEN',
    'TELEGRAM_API_ROOT',
    'TELEGRAM_ALLOWED_USERS',
    'TELEGRAM_ALLOWED_GROUPS',
    'TELEGRAM_DM_POLICY',
    'TELEGRAM_WEBHOOK_URL',
    'TELEGRAM_WEBHOOK_SECRET',
    'TELEGRAM_WEBHOOK_PORT',
  ];
  assert.equal(problems.length, vars.length, problems.join('\n'));
  vars.forEach((v, i) => assert.ok(problems[i]!.startsWith(v), `${problems[i]} is about ${v}`));
  for (const p of problems) {
    assert.ok(!p.includes('\n'), 'one line');
    assert.ok(!p.includes(badToken), 'the token value is not echoed');
  }
  // GROUP_ADMINS_MANAGE is every channel's setting: config reports it, the same way.
  const shared = loadConfig({ OPENAI_API_KEY: 'sk-test-key-123456', TZ: 'UTC', GROUP_ADMINS_MANAGE: 'sometimes' }, process.cwd(), CHANNELS).problems;
  assert.equal(shared.length, 1);
  assert.match(shared[0]!, /^GROUP_ADMINS_MANAGE="sometimes" must be on/);
});

test('allowlist with nobody listed is refused; a loopback http webhook is allowed (local Bot API servers)', () => {
  const { problems } = loadTelegramConfig({ TELEGRAM_BOT_TOKEN: TOKEN, TELEGRAM_DM_POLICY: 'allowlist' });
  assert.equal(problems.length, 1);
  assert.match(problems[0]!, /TELEGRAM_ALLOWED_USERS is empty/);
  assert.deepEqual(loadTelegramConfig({ TELEGRAM_WEBHOOK_URL: 'http://127.0.0.1:8443/hook' }).problems, []);
});

test('loadConfig reports Telegram problems with the others, so start-up exits 2 on them', () => {
  const { problems } = loadConfig({ OPENAI_API_KEY: 'sk-test-key-123456', TZ: 'UTC', TELEGRAM_DM_POLICY: 'nobody' }, process.cwd(), CHANNELS);
  assert.equal(problems.length, 1);
  assert.match(problems[0]!, /^TELEGRAM_DM_POLICY/);
});
