/**
 * The session as stored in `workspace/sessions/{channel}:{chatId}.json` (seed 001 "AgentSession").
 * The file's key stays `channel:chat` for ever; `/new` starts a new conversation id inside it.
 */
import { randomUUID } from 'node:crypto';

export type Role = 'system' | 'user' | 'assistant' | 'tool';
export type SessionState = 'ACTIVE' | 'PAUSED' | 'TERMINATED';

export interface ToolCall {
  id: string;
  name: string;
  /** The raw JSON text the model produced; kept verbatim even when invalid. */
  arguments: string;
}

export interface SessionMessage {
  /** Our id for the message (`m_…`), unique within the session. */
  id: string;
  role: Role;
  content: string;
  /** ISO 8601 time the message was recorded. */
  timestamp: string;
  toolCalls?: ToolCall[];
  /** For role `tool`: the id of the call this result answers. */
  toolCallId?: string;
  /** For role `tool`: the tool's name (for readable logs and summaries). */
  toolName?: string;
  /** The channel's own id of the inbound message (e.g. Telegram message_id). */
  sourceId?: string;
  /** Display name of the sender (user messages). */
  senderName?: string;
  /** Already consolidated into memory by a truncation that kept it. */
  consolidated?: boolean;
  /** A delivered reminder: `<reminder id>@<due ms>` (reminders/service.ts; no second delivery). */
  reminder?: string;
}

export interface CompactionRecord {
  at: string;
  kind: 'summary' | 'truncation';
  removed: number;
  kept: number;
}

export interface SessionMetadata {
  /** Changes on every `/new`: what seed 003 calls a "session". */
  conversationId: string;
  /** User messages ever received in this chat (never reset). */
  messagesReceived: number;
  /** Messages removed by compaction so far. */
  messagesCompacted: number;
  lastCompaction?: CompactionRecord;
}

export interface Session {
  /** `{channel}:{chatId}` exactly as the channel gave it. */
  id: string;
  channelType: string;
  chatId: string;
  messages: SessionMessage[];
  metadata: SessionMetadata;
  state: SessionState;
  createdAt: string;
  updatedAt: string;
  /** The newest session-log line (sessions/wal.ts) this file already contains. */
  walSeq?: number;
}

export function sessionKey(channel: string, chatId: string): string {
  return `${channel}:${chatId}`;
}

export function newConversationId(): string {
  return `conv_${randomUUID()}`;
}

export function newMessageId(): string {
  return `m_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
}

export function newSession(channelType: string, chatId: string, now = new Date()): Session {
  const ts = now.toISOString();
  return {
    id: sessionKey(channelType, chatId),
    channelType,
    chatId,
    messages: [],
    metadata: { conversationId: newConversationId(), messagesReceived: 0, messagesCompacted: 0 },
    state: 'ACTIVE',
    createdAt: ts,
    updatedAt: ts,
  };
}

export function makeMessage(role: Role, content: string, extra: Partial<SessionMessage> = {}): SessionMessage {
  return { id: newMessageId(), role, content, timestamp: new Date().toISOString(), ...extra };
}

const ROLES = new Set<Role>(['system', 'user', 'assistant', 'tool']);
const STATES = new Set<SessionState>(['ACTIVE', 'PAUSED', 'TERMINATED']);

/**
 * Checks a parsed file has the shape we write. Older files missing newer metadata fields are
 * upgraded in place; anything structurally wrong throws (the store then sets the file aside).
 */
export function parseSession(raw: unknown, channelType: string, chatId: string): Session {
  if (!raw || typeof raw !== 'object') throw new Error('not an object');
  const s = raw as Partial<Session>;
  if (!Array.isArray(s.messages)) throw new Error('messages is not a list');
  for (const [i, m] of s.messages.entries()) {
    if (!m || typeof m !== 'object' || !ROLES.has(m.role) || typeof m.content !== 'string') {
      throw new Error(`message ${i} is malformed`);
    }
    if (typeof m.id !== 'string') m.id = newMessageId();
    if (typeof m.timestamp !== 'string') m.timestamp = new Date(0).toISOString();
  }
  const meta = (s.metadata && typeof s.metadata === 'object' ? s.metadata : {}) as Partial<SessionMetadata>;
  const fresh = newSession(channelType, chatId);
  return {
    id: sessionKey(channelType, chatId),
    channelType,
    chatId,
    messages: s.messages,
    metadata: {
      ...meta,
      conversationId: typeof meta.conversationId === 'string' ? meta.conversationId : fresh.metadata.conversationId,
      messagesReceived: typeof meta.messagesReceived === 'number' ? meta.messagesReceived : 0,
      messagesCompacted: typeof meta.messagesCompacted === 'number' ? meta.messagesCompacted : 0,
    },
    state: s.state && STATES.has(s.state) ? s.state : 'ACTIVE',
    createdAt: typeof s.createdAt === 'string' ? s.createdAt : fresh.createdAt,
    updatedAt: typeof s.updatedAt === 'string' ? s.updatedAt : fresh.updatedAt,
    ...(typeof s.walSeq === 'number' ? { walSeq: s.walSeq } : {}),
  };
}
