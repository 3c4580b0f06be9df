/**
 * The Telegram channel's error codes (docs/errors.md lists them with the daemon's own): declared
 * here, so that core/errors.ts names no channel. Loading this module adds them to the table.
 */
import { declareErrors } from '../../core/errors.js';

export const TELEGRAM_ERRORS = {
  'telegram.unauthorized': { meaning: 'Telegram refused the bot token (401); TELEGRAM_BOT_TOKEN is wrong or was revoked.', message: '{what}: {detail}' },
  'telegram.conflict': { meaning: 'Telegram answered 409: another process is polling with this token, or a webhook is set.', message: '{what}: {detail}' },
  'telegram.rejected': { meaning: 'Telegram answered a request with an error status (the remote said no).', message: '{what}: {detail}' },
  'telegram.rate_limited': { meaning: 'Telegram answered 429 and the wait it asked for was too long or retries ran out.', message: '{what}: {detail}' },
  'telegram.unreachable': { meaning: 'The Telegram Bot API could not be reached (connection refused, DNS) and retries ran out.', message: '{what}: {detail}' },
  'telegram.delivery_uncertain': {
    meaning: 'A message may or may not have reached Telegram (timeout or cut connection after sending); it is not re-sent, so it cannot arrive twice.',
    message: '{what}: {detail}',
  },
  'telegram.bad_response': {
    meaning: 'Telegram answered a request as done but without what the answer must hold (a sent message without its id).',
    message: '{what}: {detail}',
  },
} as const;

type TelegramErrors = typeof TELEGRAM_ERRORS;

declare module '../../core/errors.js' {
  interface ChannelErrors extends TelegramErrors {}
}

declareErrors(TELEGRAM_ERRORS);
