/**
 * The per-message context every system reads and writes. Fields are typed and each belongs to
 * the system that sets it; nothing is passed through a string-keyed bag.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from '../core/log.js';
import type { Session, SessionMessage, ToolCall } from '../sessions/model.js';
import type { SessionWriter } from '../sessions/writer.js';
import type { ChatCompletionContentPartImage } from 'openai/resources/chat/completions';
import type { ImageInfo } from '../media/image-info.js';
import type { Reply } from '../core/channel.js';
import type { InboundMessage } from '../core/message.js';
import { unknownModel, type ActiveModel } from '../llm/chat-models.js';

/** An image of the message as request content (features/images loads it; ToolLoop sends it). */
export interface TurnImage {
  part: ChatCompletionContentPartImage;
  /** What the image adds to the request (llm/vision.ts). */
  tokens: number;
  info: ImageInfo;
  bytes: number;
}

/**
 * The journal entry of the turn's message (queue/inbox.ts, made by dispatch/intake.ts): what
 * earlier runs were doing when the process died, and where each call is marked as it runs.
 */
export interface CallJournal {
  /** Tools whose call was running when an earlier run of this message died (`args`: the arguments' hash). */
  readonly interrupted: ReadonlyArray<{ tool: string; args: string }>;
  /**
   * True when an earlier run of this message ended a call of `tool` (and died before its turn was
   * saved) that this run has not yet been told of — once per such call, in order. By tool, not
   * arguments: a rerun computes "in 10 minutes" from a later clock.
   */
  ranBefore(tool: string): boolean;
  /** The hash `interrupted` keeps of a call's arguments. */
  hash(args: string): string;
  /** Written before the call runs; a failure to write is logged by the journal, never thrown. */
  started(call: ToolCall): Promise<void>;
  ended(): Promise<void>;
  /**
   * Written just before the answer is saved, and just before it goes to the channel
   * (queue/inbox.ts `ANSWER_MARK`, `REPLY_MARK`); like `started`, a failure is logged, never thrown.
   */
  answering(): Promise<void>;
  replying(): Promise<void>;
  /**
   * The last run of this entry died after it began saving its answer and before handing it to
   * the channel: an answer the session holds for it never left. False for a first run, and for
   * a copy of a message (a channel sending it again): its answer is its first entry's.
   */
  readonly answerUnsent: boolean;
}

export interface PromptSection {
  /** e.g. "instructions", "memory", "relevant-memory" */
  name: string;
  content: string;
}

/**
 * A piece of memory the prompt carries that the text of its section does not identify (a
 * `# Relevant Memory` hit's index id): ContextBuilding 20 notes it, `/why` records it (features/why).
 */
export interface MemorySource {
  kind: 'fact' | 'message';
  /** The index id (`fact_…`, …). */
  ref: string;
  text: string;
}

export interface SystemTiming {
  system: string;
  order: number;
  ms: number;
  outcome: 'ok' | 'skipped' | 'failed';
}

export interface Turn {
  /** Short id shown to the user in an apology and present on every log line of the turn. */
  readonly id: string;
  readonly inbound: InboundMessage;
  readonly session: Session;
  /** The one owner of this turn's writes to `session`: record, commit, replace (sessions/writer.ts). */
  readonly writes: SessionWriter;
  readonly log: Logger;
  /** The user's message as recorded in the session (on disk before any LLM call). */
  readonly userMessage: SessionMessage;
  /**
   * The way back to this chat, through the channel the message came from: the answer (`deliver`),
   * a line beside it (a voice note's transcript, SHOW_TRANSCRIPT), and the preview (`progress`)
   * where the channel shows the answer as it is written (absent: it appears when done).
   */
  readonly reply: Reply;
  /** Aborted when the turn runs past TURN_TIMEOUT_MS: LLM calls and tools stop, nothing more is saved. */
  readonly signal: AbortSignal;
  /** The model this chat answers with (its /model choice, else LLM_MODEL): its limit, tokenizer and whether it reads images. */
  readonly model: ActiveModel;
  /** The message's journal entry: ToolLoop marks each call there, and skips a tool an earlier run died in (features/answer/loop.ts). */
  readonly calls: CallJournal | undefined;
  /**
   * Several processes (docs/cluster.md): asked before the turn saves what the model said (a tool
   * round, the answer). If this process can no longer be sure it holds the chat — it was frozen
   * past the lease — the chat is handed over (dispatch/stop.ts) and `signal` aborted. Unset: one process.
   */
  fence: (() => void) | undefined;

  /**
   * ContextBuilding 20: the sections of the system prompt, in order, and their join. Only what
   * stays the same from message to message goes here, so the prompt is a cacheable prefix.
   */
  promptSections: PromptSection[];
  systemPrompt: string;
  /**
   * ContextBuilding 20: what belongs to this message only (`# Relevant Memory`). Sent as a system
   * message just before the user's message, after the history; never stored in the session.
   */
  turnSections: PromptSection[];
  turnPrompt: string;
  /** ContextBuilding 20: the `# Relevant Memory` hits sent, with their ids (what `/why` lists). */
  sources: MemorySource[];
  /** ContextBuilding 20: size of the `# Memory` block and what its budget made it drop. */
  memory: { tokens: number; budget: number; drops: Array<{ what: string; tokens: number; approximate?: boolean }> } | undefined;
  /** Images 15: the message's images (one, or an album's) as request content; sent with the user's message only, never stored. */
  images: TurnImage[];
  /** ToolLoop 30: the final answer. */
  response: string | undefined;
  /** ToolLoop 30: the answer as the session keeps it (what MemoryPersist and Indexing derive from). */
  answer: SessionMessage | undefined;
  /** ToolLoop 30: the model that wrote the answer, and the one asked first when a fallback did (LLM_FALLBACK). */
  answeredBy: { model: string; fallbackFrom?: string | undefined } | undefined;
  /** ToolLoop 30: the text streamed so far in the current round (what /stop keeps, marked, of an unfinished answer). */
  streamed: string;
  /** Short lines appended to the reply (e.g. "Compacted the conversation: …"). */
  notices: string[];
  /** True once the turn's one answer reached the channel (`deliver`: ResponseDelivery 40, or a system that answers itself). */
  delivered: boolean;
  usage: { llmCalls: number; toolCalls: number; promptTokens: number; completionTokens: number };
  timings: SystemTiming[];
  /** Set by a system that ends the turn early; later systems do not run. */
  ended: { by: string; reason: string } | undefined;
  /** Set by the runner when a reply-path system failed. */
  failure: { system: string; errorId: string; code: string } | undefined;
}

export function newTurnId(): string {
  return randomBytes(4).toString('hex');
}

export function createTurn(init: {
  inbound: InboundMessage;
  writes: SessionWriter;
  log: Logger;
  userMessage: SessionMessage;
  reply: Reply;
  id?: string;
  signal?: AbortSignal;
  /** Unset (a turn built by hand): an unknown model, the catalogue's default limit. */
  model?: ActiveModel | undefined;
  calls?: CallJournal | undefined;
  fence?: (() => void) | undefined;
}): Turn {
  const id = init.id ?? newTurnId();
  const session = init.writes.session;
  return {
    id,
    inbound: init.inbound,
    session,
    writes: init.writes,
    log: init.log.child({ turn: id, session: session.id }),
    userMessage: init.userMessage,
    reply: init.reply,
    signal: init.signal ?? new AbortController().signal,
    model: init.model ?? unknownModel(),
    calls: init.calls,
    fence: init.fence,
    promptSections: [],
    systemPrompt: '',
    turnSections: [],
    turnPrompt: '',
    sources: [],
    memory: undefined,
    images: [],
    response: undefined,
    answer: undefined,
    answeredBy: undefined,
    streamed: '',
    notices: [],
    delivered: false,
    usage: { llmCalls: 0, toolCalls: 0, promptTokens: 0, completionTokens: 0 },
    timings: [],
    ended: undefined,
    failure: undefined,
  };
}

/** Lets a system stop the turn: later systems are not run. */
export function endTurn(turn: Turn, by: string, reason: string): void {
  turn.ended ??= { by, reason };
}

/** Sends the turn's one answer through its way back, and marks it delivered. */
export async function deliver(turn: Turn, text: string): Promise<void> {
  await turn.reply.send({ kind: 'text', text });
  turn.delivered = true;
}

/**
 * A system that answers the message itself (a refusal, a file it could not read): that reply
 * is the turn's answer, and the turn ends there (`by` and `reason` say so in the log).
 */
export async function answerAndEnd(turn: Turn, by: string, text: string, reason: string): Promise<void> {
  await deliver(turn, text);
  endTurn(turn, by, reason);
}
