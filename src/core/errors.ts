/**
 * Every error the daemon raises on purpose carries a stable code from this table, so logs,
 * tests and user-facing apologies can refer to a failure without matching message text. Each
 * code carries its meaning (documented in `docs/errors.md`; a test keeps the two in step) and
 * its message template: the thrower gives the `{placeholders}`, typed per code, and the text
 * is made here — one class, `AppError`, for all of them.
 */
const CORE_ERRORS = {
  'config.invalid': { meaning: 'A setting is missing or has a value the daemon cannot use.', message: '{problem}' },
  'pipeline.duplicate_order': {
    meaning: 'Two systems were registered with the same order number.',
    message: '{problem} (each system has its own number: the one the table in src/turn/order.ts gives it)',
  },
  'pipeline.system_failed': { meaning: 'A system on the reply path threw; the user got an apology with an error id.', message: '{system} failed: {reason}' },
  'turn.timeout': {
    meaning: 'A turn did not finish within TURN_TIMEOUT_MS; it was stopped, the user got an apology and the chat slot was freed.',
    message: 'the turn did not finish within {ms} ms',
  },
  'turn.stopped': {
    meaning: 'A turn was stopped by /stop: its LLM call and tools were aborted; the text streamed so far is kept in the session, marked [stopped].',
    message: 'the turn of {chat} was stopped by /stop',
  },
  'turn.handed_over': {
    meaning:
      'Several processes: the chat was taken over by another process (this one renewed its claim too late); the turn was aborted here and left, unsaved and open in the journal, to that process.',
    message: 'the turn of {chat} went to another process',
  },
  'chat.rate_limited': {
    meaning: 'A chat sent more than RATE_LIMIT_PER_MINUTE messages in a minute, or had MAX_QUEUED_PER_CHAT waiting; the excess got one line and no LLM call.',
    message: 'chat {chat} sent more messages than its limit',
  },
  'transcription.failed': {
    meaning:
      'A voice note could not be downloaded or the speech-to-text server refused it or did not answer; the note is kept with its file id and the user got one line.',
    message: '{detail}',
  },
  'transcription.timeout': {
    meaning:
      'Download and transcription of a voice note did not finish within TRANSCRIPTION_TIMEOUT_MS; the note is kept with its file id and the user got one line.',
    message: '{detail}',
  },
  'llm.rejected': { meaning: 'The LLM server answered with an error status (the remote said no).', message: '{detail}' },
  'llm.rate_limited': { meaning: 'The LLM server answered 429 and retries ran out.', message: '{detail}' },
  'llm.context_length_exceeded': { meaning: 'The LLM server refused the request as too long for the model.', message: '{detail}' },
  'llm.unreachable': { meaning: 'The LLM server could not be reached (connection refused, reset, DNS).', message: '{detail}' },
  'llm.timeout': { meaning: 'The LLM server did not answer within the per-call timeout.', message: '{detail}' },
  'llm.bad_response': { meaning: 'The LLM server answered 200 but with no usable choice.', message: '{detail}' },
  'llm.budget_exhausted': {
    meaning: 'The chat has used its DAILY_TOKEN_BUDGET: the call was not made (background work pauses until the day ends).',
    message: '{detail}',
  },
  'tool.unknown': { meaning: 'The model called a tool that does not exist.', message: '{tool}: {detail}' },
  'tool.bad_arguments': { meaning: 'The model passed tool arguments that are not JSON or do not match the schema.', message: '{tool}: {detail}' },
  'tool.failed': { meaning: 'A tool threw while running.', message: '{tool}: {detail}' },
  'tool.not_allowed': {
    meaning: 'The model called a tool the sender may not use here (a group member asking for what only the owner or a group admin may do); it was not run.',
    message: '{tool}: {detail}',
  },
  'tool.timeout': { meaning: 'A tool did not finish within its timeout.', message: '{tool}: {detail}' },
  'tool.interrupted': {
    meaning:
      'The daemon stopped (crashed or was killed) while this tool ran for a message; after the restart the recovered message did not run the tool again and the model was told.',
    message: '{tool}: {detail}',
  },
  'mcp.unreachable': {
    meaning:
      'An MCP server could not be started or reached (program not found, it exited, connection refused); it is retried with back-off and its tools are left out meanwhile.',
    message: 'MCP server {server}: {detail}',
  },
  'mcp.rejected': {
    meaning:
      'An MCP server answered with an error (the remote said no): a protocol error, an HTTP error status, or an answer over MCP_MAX_ANSWER_BYTES ("answer too large").',
    message: 'MCP server {server}: {detail}',
  },
  'mcp.timeout': {
    meaning: 'An MCP server did not finish starting or listing its tools within its deadline (timeoutMs, else TOOL_TIMEOUT_MS).',
    message: 'MCP server {server} did not answer within {ms} ms',
  },
  'mcp.tool_failed': {
    meaning: "An MCP server ran a tool and reported that it failed (isError); the model gets the server's text as an error result.",
    message: '{detail}',
  },
  'session.corrupt': {
    meaning: 'A session file could not be parsed; it was renamed aside and a fresh session started.',
    message: 'the session file is unusable: {problem}',
  },
  'session.repaired': {
    meaning: 'A session file had fields of the wrong type (an older version stored a malformed tool call); they were repaired on load.',
    message: 'the session file had {fields} field(s) of the wrong type; repaired',
  },
  'storage.path_escape': { meaning: 'A path given by a user or the model resolved outside its directory.', message: '{reason}' },
  'storage.write_failed': { meaning: 'An atomic write could not complete.', message: 'could not {action} {target}: {reason}' },
  'storage.not_a_file': {
    meaning: 'A memory file is a FIFO, device, socket or folder instead of a regular file; it was refused without being opened.',
    message: '{file} is not a regular file (it is {kind}); it was not opened',
  },
  'memory.rewrite_refused': {
    meaning:
      'A rewrite of MEMORY.md (consolidation, compression or the memory_rewrite tool) dropped too many entries and was refused; the file was left as it was.',
    message: 'refused a MEMORY.md rewrite by {source}: it dropped {dropped} of {prior} entries',
  },
  'reminder.delivery_uncertain': {
    meaning: 'A reminder was recorded in the session but the daemon stopped before confirming it was sent; it is not sent again (at most once).',
    message: 'reminder {reminder} may not have been sent',
  },
  'pairing.unknown_code': {
    meaning: 'A pairing code given to `npm run pair -- approve` is not pending (mistyped, already used, or expired).',
    message: 'no pending pairing has the code {code}',
  },
  'daemon.already_running': {
    meaning: 'Another daemon is using this workspace (its pid is in daemon.pid); the second one does not start.',
    message: 'another daemon (pid {pid}) is already using {workspace}; stop it first, or set WORKSPACE_DIR to another folder',
  },
  'pairing.unreadable': {
    meaning:
      'The pairing file could not be read; strangers are refused and groups approved with /allow are not served (fail closed) until it is fixed or deleted.',
    message: '{file} could not be read ({reason}); fix or delete it',
  },
  'index.newer_schema': {
    meaning: 'memory.db was written by a newer version of the program; the index stays off and the file is not touched.',
    message: 'memory.db has schema version {found}, newer than this program ({supported}); upgrade the bot or restore a backup',
  },
  'index.scrub_failed': {
    meaning:
      'After /forget deleted the rows, rewriting memory.db without their freed bytes failed; the rows are gone, old bytes may remain until the next /forget confirm.',
    message: 'memory.db could not be scrubbed: {reason}',
  },
  'index.unavailable': {
    meaning: 'An operation needed memory.db, but the index is off (locked or newer); the reason is given.',
    message: 'the index is off ({reason})',
  },
  'storage.read_timeout': {
    meaning: 'A file took longer than its deadline to read (a slow or hung disk, a network mount); the request answered without it.',
    message: '{file} was not read within {ms} ms',
  },
  'storage.corrupt': {
    meaning:
      'A state file (the Telegram update log, memory.db, schedules.db, usage.db) could not be parsed or failed its check; it was set aside (a database: as <name>.corrupt-<time>, an empty one started) or ignored, as the log line says.',
    message: '{file} is unusable: {problem}',
  },
  'database.unreachable': {
    meaning:
      'PostgreSQL (DATABASE_URL) could not be reached: connection refused or lost, the server shutting down or starting up. Work waits for it with back-off (the log says "database unreachable" once, then "database back"); this is raised when the wait runs out.',
    message: 'the database at {where} could not be reached: {detail}',
  },
  'database.rejected': {
    meaning:
      'PostgreSQL answered a statement with an error (the remote said no): a syntax error, a broken constraint, a missing permission, or a conflict between transactions that recurred after reruns.',
    message: 'the database at {where} refused a statement: {detail}',
  },
  'database.migration_changed': {
    meaning:
      'A file of migrations/pg/ differs from the one applied to the database (its checksum changed); the start stops. Applied files are never edited: a change goes in a new numbered file.',
    message: '{file} was changed after it was applied to the database at {where} — put it back as it was and make the change in a new numbered file',
  },
  'database.too_new': {
    meaning:
      'The database has a migration, applied by a newer version of the bot, that older versions cannot run beside (marked `-- older versions stop`); this older process does not start. Finish the update: run the newer version everywhere.',
    message:
      'the database at {where} has {migration}, from a newer version of the bot that older ones cannot run beside — update this one (git pull, npm ci, npm run build) and start it again',
  },
  'cluster.stopping': {
    meaning:
      "Work that runs as a chat's holder in a cluster (a reminder's delivery) waited for another process to let the chat go and this process stopped first; it was not done here, and another process (or the next start) takes it up.",
    message: 'this process stopped before it could take chat {chat}',
  },
  'input.invalid': {
    meaning: 'A request or file given to the program is not in the expected shape (a webhook body, an eval dataset); it was refused.',
    message: '{what}: {problem}',
  },
  'internal.bug': { meaning: 'A rule of the code itself was broken (a bug to report), not a problem with settings or data.', message: '{problem}' },
} as const satisfies Record<string, ErrorEntry>;

/** A code's meaning (what docs/errors.md says) and its message template. */
export interface ErrorEntry {
  meaning: string;
  message: string;
}

/**
 * The codes a channel declares for its own failures (e.g. `telegram.*`), so that nothing below
 * the channels spells one: the channel's table adds its entries here by declaration merging, and
 * the same table is given to `declareErrors` when the channel's module is loaded.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled in by the channels (declaration merging)
export interface ChannelErrors {}

type ErrorTable = typeof CORE_ERRORS & ChannelErrors;

export type ErrorCode = keyof ErrorTable;

/** Every code's entry: the daemon's own, and those of the channels loaded. */
export const ERRORS = { ...CORE_ERRORS } as ErrorTable;

/** Each code's meaning (what docs/errors.md says). */
export const ERROR_CODES = Object.fromEntries(Object.entries(ERRORS).map(([code, e]) => [code, e.meaning])) as { readonly [C in ErrorCode]: string };

/** A channel's codes join the table (its module calls this once, as it loads); a code taken twice is a bug. */
export function declareErrors(table: Readonly<Record<string, ErrorEntry>>): void {
  const all = ERRORS as unknown as Record<string, ErrorEntry>;
  for (const [code, e] of Object.entries(table)) {
    if (all[code] !== undefined && all[code] !== e) throw new AppError('internal.bug', { problem: `error code ${code} is declared twice` });
    all[code] = e;
    (ERROR_CODES as Record<string, string>)[code] = e.meaning;
  }
}

/** The names between braces in a template: `'{a} and {b}'` → `'a' | 'b'`. */
type Placeholders<T extends string> = T extends `${string}{${infer P}}${infer Rest}` ? P | Placeholders<Rest> : never;

/** The values a code's template needs. */
export type ErrorParams<C extends ErrorCode> = { [K in Placeholders<ErrorTable[C]['message']>]: string | number };

/** The text of `code`'s template with `params` filled in. */
export function errorText<C extends ErrorCode>(code: C, params: ErrorParams<C>): string {
  const values = params as Record<string, string | number>;
  return (ERRORS[code] as ErrorEntry).message.replace(/\{([a-z]+)\}/g, (_, name: string) => String(values[name]));
}

/** An error with a stable code and its templated message. `cause` keeps the original for the log, never for the user. */
export class AppError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: C;
  constructor(code: C, params: ErrorParams<C>, options?: { cause?: unknown }) {
    super(errorText(code, params), options);
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
