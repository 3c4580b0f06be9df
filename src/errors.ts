/**
 * Every error the daemon raises on purpose carries a stable code from this table, so logs,
 * tests and user-facing apologies can refer to a failure without matching message text.
 * `docs/errors.md` documents each code; a test keeps the two in step.
 */
export const ERROR_CODES = {
  'config.invalid': 'A setting is missing or has a value the daemon cannot use.',
  'pipeline.duplicate_order': 'Two systems were registered with the same order number.',
  'pipeline.system_failed': 'A system on the reply path threw; the user got an apology with an error id.',
  'turn.timeout': 'A turn did not finish within TURN_TIMEOUT_MS; it was stopped, the user got an apology and the chat slot was freed.',
  'chat.rate_limited': 'A chat sent more than RATE_LIMIT_PER_MINUTE messages in a minute, or had MAX_QUEUED_PER_CHAT waiting; the excess got one line and no LLM call.',
  'llm.rejected': 'The LLM server answered with an error status (the remote said no).',
  'llm.rate_limited': 'The LLM server answered 429 and retries ran out.',
  'llm.context_length_exceeded': 'The LLM server refused the request as too long for the model.',
  'llm.unreachable': 'The LLM server could not be reached (connection refused, reset, DNS).',
  'llm.timeout': 'The LLM server did not answer within the per-call timeout.',
  'llm.bad_response': 'The LLM server answered 200 but with no usable choice.',
  'llm.budget_exhausted': "The chat has used its DAILY_TOKEN_BUDGET: the call was not made (background work pauses until the day ends).",
  'tool.unknown': 'The model called a tool that does not exist.',
  'tool.bad_arguments': 'The model passed tool arguments that are not JSON or do not match the schema.',
  'tool.failed': 'A tool threw while running.',
  'tool.timeout': 'A tool did not finish within its timeout.',
  'session.corrupt': 'A session file could not be parsed; it was renamed aside and a fresh session started.',
  'session.repaired': 'A session file had fields of the wrong type (an older version stored a malformed tool call); they were repaired on load.',
  'storage.path_escape': 'A path given by a user or the model resolved outside its directory.',
  'storage.write_failed': 'An atomic write could not complete.',
  'storage.not_a_file': 'A memory file is a FIFO, device, socket or folder instead of a regular file; it was refused without being opened.',
  'telegram.unauthorized': 'Telegram refused the bot token (401); TELEGRAM_BOT_TOKEN is wrong or was revoked.',
  'telegram.conflict': 'Telegram answered 409: another process is polling with this token, or a webhook is set.',
  'telegram.rejected': 'Telegram answered a request with an error status (the remote said no).',
  'telegram.rate_limited': 'Telegram answered 429 and the wait it asked for was too long or retries ran out.',
  'telegram.unreachable': 'The Telegram Bot API could not be reached (connection refused, DNS) and retries ran out.',
  'telegram.delivery_uncertain': 'A message may or may not have reached Telegram (timeout or cut connection after sending); it is not re-sent, so it cannot arrive twice.',
  'memory.rewrite_refused': 'A rewrite of MEMORY.md (consolidation, compression or the memory_rewrite tool) dropped too many entries and was refused; the file was left as it was.',
  'reminder.delivery_uncertain': 'A reminder was recorded in the session but the daemon stopped before confirming it was sent; it is not sent again (at most once).',
  'pairing.unknown_code': 'A pairing code given to `npm run pair -- approve` is not pending (mistyped, already used, or expired).',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** An error with a stable code. `cause` keeps the original for the log, never for the user. */
export class AppError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AppError';
    this.code = code;
  }
}

export function isAppError(err: unknown, code?: ErrorCode): err is AppError {
  return err instanceof AppError && (code === undefined || err.code === code);
}

/** Short message of any thrown value, for tool results and warnings. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
