/**
 * RememberRequest (35) — reads: the user's message, the answer (`turn.response`), the memory
 * writes the turn's tools made (TurnWrites) and the tools it called. Writes: one fact of the
 * chat in memory.db; `turn.notices` when what the user asked to keep could not be kept.
 *
 * "I told it to remember and it forgot": a model may answer "Noted!" and call no tool. When the
 * user's message asks the bot to remember something (remember-words.ts) and no memory tool
 * changed the memory in this turn, the words are saved here as remember_fact would save them:
 * the chat's scope, the conversation's id, after a /forget's scrub, and the reply waits until
 * they are kept for good (MemoryIndex.persisted). A model that did call a tool is left alone (no
 * second copy). Whatever could not be kept — memory switched off, the index off or failing, the
 * database not answering — the reply says so in one line, and so it does when the model's own
 * memory call failed and its answer still says "saved".
 *
 * After ToolLoop (30), which gives the answer and the tools' writes, and before ResponseDelivery
 * (40), so that the line goes out with the reply. It never fails the turn: a throw of its own
 * is caught and told as "not saved".
 */
import { ORDER } from '../../turn/order.js';
import { hasResponse, type System } from '../../turn/system.js';
import type { Turn } from '../../turn/turn.js';
import type { RuntimeConfigStore } from '../../config/runtime.js';
import type { MemoryIndex } from '../../index/memory-index.js';
import type { MemoryService } from '../../memory/service.js';
import type { Embedder } from '../../index/upkeep/embeddings.js';
import { componentLogger } from '../../core/log.js';
import { isGroupChat } from '../../core/message.js';
import { asFact, rememberAsk } from './remember-words.js';
import { keptForGood, saveFact } from './memory-index.js';
import type { TurnWrites } from './turn-writes.js';

/** The tools that change the chat's memory: a call of one that took effect is a TurnWrites entry. */
export const MEMORY_WRITE_TOOLS: ReadonlySet<string> = new Set(['remember_fact', 'correct_fact', 'confirm_fact', 'memory_add', 'memory_rewrite']);

/** An answer that tells the user something was kept. */
const CLAIMS_SAVE =
  /\b(?:noted|saved|stored|remembered|memori[sz]ed|got it|i'?ll remember|i will remember|i'?ll keep (?:that|this|it) in mind|won'?t forget|added (?:it |that |this )?to (?:my )?memory)\b/i;

export const NOT_SAVED = {
  memoryOff: 'Not saved: memory is switched off for this bot (runtime setting memory.enabled), so nothing is kept beyond this conversation.',
  indexOff: 'Not saved: long-term memory is unavailable right now. Please ask me to remember it again later.',
  database: 'Kept on this server, not yet in the database (it is not answering): it is written there when the database answers.',
  toolFailed: (tool: string) => `Not saved: the memory call (${tool}) did not go through. Please ask me to remember it again.`,
  held: "Not saved yet: a memory change made after text from outside the bot waits for the owner's approval (/memory pending).",
};

export interface RememberRequestDeps {
  index: MemoryIndex;
  memory: MemoryService;
  runtime: RuntimeConfigStore;
  writes: TurnWrites;
  embedder?: Embedder | undefined;
}

/** The names of the tools the model called in this turn (the session's messages after the user's). */
function toolsCalled(turn: Turn): string[] {
  const messages = turn.session.messages;
  const from = messages.indexOf(turn.userMessage);
  return messages.slice(from + 1).flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.name) : []));
}

/** What to keep and whose words they are (the sender, named in a group's fact). */
interface Said {
  words: string;
  sender: string | undefined;
}

/**
 * The user's message before this one ("My cat is Miso." then "remember that"), unless it was a
 * question; when it was a request itself, its words without the lead-in. In a group it may be
 * another member's: the fact names them.
 */
function previousWords(turn: Turn): Said | undefined {
  const messages = turn.session.messages;
  const before = messages.slice(0, Math.max(0, messages.indexOf(turn.userMessage))).findLast((m) => m.role === 'user');
  const text = before?.content.trim();
  if (!text || text.endsWith('?') || text.startsWith('/')) return undefined;
  const ask = rememberAsk(text);
  return { words: ask && 'words' in ask ? ask.words : asFact(text), sender: before!.senderName };
}

export function createRememberRequestSystem(deps: RememberRequestDeps): System {
  function answered(turn: Turn): boolean {
    return hasResponse(turn) && turn.answer !== undefined && turn.failure === undefined;
  }

  /** What to keep, or why it was not kept (a notice); undefined when there is nothing to do. */
  async function keep(turn: Turn, { words, sender }: Said): Promise<string | undefined> {
    const log = componentLogger(turn.log, 'RememberRequest');
    if (!deps.runtime.get().memory.enabled) return NOT_SAVED.memoryOff;
    if (!deps.index.enabled) {
      log.warn({ reason: deps.index.disabledReason }, 'the user asked to remember something and the model saved nothing; the index is off, so it is not kept');
      return NOT_SAVED.indexOff;
    }
    // In a group the fact says whose words they are ("my birthday" is the sender's).
    const content = isGroupChat(turn.inbound) && sender ? `${sender}: ${words}` : words;
    const scope = deps.memory.scopeKey(turn.inbound.channel, turn.inbound.chatId);
    const saved = await saveFact(deps.index, { content, scope, sessionId: turn.session.metadata.conversationId, sourceIds: [] }, deps.embedder);
    if (!saved) {
      log.warn('the user asked to remember something and the model saved nothing; the index could not write it');
      return NOT_SAVED.indexOff;
    }
    const kept = await keptForGood(deps.index);
    log.info(
      { fact: saved.duplicateOf ?? saved.id, duplicate: saved.duplicateOf !== undefined, kept },
      'kept what the user asked to remember (the model saved nothing)',
    );
    return kept ? undefined : NOT_SAVED.database;
  }

  return {
    name: 'RememberRequest',
    order: ORDER.RememberRequest,
    onFailure: 'skip',
    shouldRun: answered,
    async run(turn) {
      const took = deps.writes.take(turn.id);
      // A held write (pending.ts): the user learns it waits, whatever the answer says.
      if (took.held) turn.notices.push(NOT_SAVED.held);
      if (took.wrote || took.held) return;
      const ask = rememberAsk(turn.userMessage.content);
      let notice: string | undefined;
      if (ask) {
        const said = 'words' in ask ? { words: ask.words, sender: turn.userMessage.senderName } : previousWords(turn);
        if (!said) return;
        try {
          notice = await keep(turn, said);
        } catch (err) {
          componentLogger(turn.log, 'RememberRequest').warn({ err }, 'what the user asked to remember could not be saved');
          notice = NOT_SAVED.indexOff;
        }
      } else {
        // Not asked in so many words, but the model tried to save, nothing took, and it says it did.
        const tried = toolsCalled(turn).find((name) => MEMORY_WRITE_TOOLS.has(name));
        if (tried && CLAIMS_SAVE.test(turn.response ?? '')) notice = NOT_SAVED.toolFailed(tried);
      }
      if (notice) turn.notices.push(notice);
    },
  };
}
