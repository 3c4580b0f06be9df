/**
 * Keeps a message in its chat's session without a turn: the user sent something the bot could
 * not read (a voice note with no transcription, a photo for a text-only model), the user is told so by the channel, and the
 * session holds what came (e.g. the file id) so nothing sent is lost. Runs in the chat's queue,
 * so it never interleaves with a turn of the same chat; a message already kept (the same
 * update seen again after a restart) is not kept twice.
 */
import type { Dispatcher } from '../queue/dispatcher.js';
import type { InboundMessage } from '../core/message.js';
import { makeMessage, sessionKey } from '../sessions/model.js';
import type { SessionStore } from '../sessions/store.js';
import { storedAttachment } from '../media/attachments.js';

export type KeepFn = (msg: InboundMessage) => Promise<void>;

export function keepInSession(deps: { dispatcher: Dispatcher; sessions: SessionStore }): KeepFn {
  return (msg) =>
    deps.dispatcher.submit(sessionKey(msg.channel, msg.chatId), async () => {
      const session = await deps.sessions.getOrCreate(msg.channel, msg.chatId);
      if (msg.messageId && session.messages.some((m) => m.role === 'user' && m.sourceId === msg.messageId)) return;
      session.metadata.messagesReceived++;
      await deps.sessions.writer(session).append(
        makeMessage('user', msg.text, {
          ...(msg.messageId ? { sourceId: msg.messageId } : {}),
          ...(msg.userName ? { senderName: msg.userName } : {}),
          ...(msg.image ? { attachment: storedAttachment(msg.image) } : {}),
        }),
      );
    });
}
