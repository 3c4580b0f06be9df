/**
 * Wires one daemon: the parts (build.ts) → the features, installed (features.ts, install.ts) →
 * the intake (dispatch/intake.ts), which every channel hands its messages to. The stop takes the
 * parts down in the reverse order they were built (lifecycle.ts). main.ts and the tests both
 * build the daemon here.
 */
import { configSecrets, type Config } from '../config/env.js';
import { registerSecret, type Logger } from '../core/log.js';
import type { Pipeline } from '../turn/runner.js';
import type { InboundMessage } from '../core/message.js';
import { chatKey, type Chat } from '../core/chat.js';
import type { Dispatcher } from '../queue/dispatcher.js';
import { ChatLimits } from '../dispatch/limits.js';
import { Intake } from '../dispatch/intake.js';
import type { HandleResult, Reply } from '../core/channel.js';
import type { CommandRouter } from '../dispatch/router.js';
import type { Parts } from './parts.js';
import { buildParts, type BuildOptions } from './build.js';
import { features, ownCommands } from './features.js';
import { installFeatures } from './install.js';
import { Lifecycle } from './lifecycle.js';
import { promptTokens } from '../llm/tokens.js';
import { forgetNotice } from '../features/privacy/forget.js';

export type { Reply } from '../core/channel.js';

export interface App {
  /** What the app built (stores, LLM client, reminders …): for main.ts and the tests, never handed down. */
  parts: Parts;
  pipeline: Pipeline;
  dispatcher: Dispatcher;
  commands: CommandRouter;
  /**
   * Queues one inbound message for its chat; resolves when it has been fully handled — in a
   * cluster, once it is journaled (whichever process claims the chat answers it: `settled`).
   * Its `accepted` resolves as soon as the message is journaled (durable).
   */
  handle(msg: InboundMessage, reply: Reply): HandleResult;
  /**
   * Handles messages accepted before the last stop (or kill) that never reached the session or
   * never got an answer; `replyFor` gives the way back to each one's chat. Returns how many.
   * `senders` (per channel): tells each chat whose /forget the start finished (features/privacy/forget.ts).
   */
  recover(
    replyFor: (msg: InboundMessage) => Reply,
    senders?: Record<string, (chatId: string, text: string) => Promise<void>>,
    takeOver?: (msg: InboundMessage) => Promise<void>,
  ): Promise<number>;
  /** The messages the last run left unfinished, before `recover` takes them (a channel reads what it needs to know of them). */
  leftOver(): InboundMessage[];
  /** Several processes serve the bot (app/cluster.ts): `recover` starts running the chats this one claims. */
  clustered: boolean;
  /** Resolves once every message of `channel`'s chats handed to `handle` is answered: at once but in a cluster (ClaimsWiring.settled). */
  settled(channel: string): Promise<void>;
  /** Stops taking messages, waits for running turns (bounded), then closes every part, the last built first. */
  stop(): Promise<{ drained: boolean }>;
}

export type AppOptions = BuildOptions;

export async function createApp(config: Config, log: Logger, opts: AppOptions = {}): Promise<App> {
  // Whoever builds the app (main, a CLI, a test), the key is scrubbed from logs, files and replies.
  for (const s of configSecrets(config)) registerSecret(s);
  const life = new Lifecycle();
  const parts = await buildParts(config, log, opts, life);
  const { pipeline, commands } = installFeatures(features(parts, config), {
    own: ownCommands(parts, config),
    tools: parts.tools,
    adminsManage: config.groupAdminsManage,
    log,
  });
  const { sessions, stats, dispatcher, derived, forget } = parts;
  // What the last run's turns derived from the session log (note lines, index rows), written
  // again where a crash kept it from being written; then the log can forget its lines.
  await derived.recover(sessions.takeLastRun());
  // Forgetting fsyncs the notes first (deriveFromLog); a failure keeps the log for the next start.
  await sessions.forgetLog().catch((err: unknown) => log.warn({ err }, 'the session log is kept for the next start'));
  // A /forget a kill cut short is finished now: after what the log rebuilt (it may hold the
  // words), before any message, reminder or page can show them. Its chat is told in `recover`.
  const forgets = await forget.finishInterrupted();
  // In a cluster the intake only journals; the chats this process claims are run from the journal.
  const claims =
    parts.cluster && parts.database
      ? await (await import('./cluster.js')).runClaims(parts.database, parts.cluster, parts.chatStops, {
          config,
          log,
          life,
          // A dead process's session log lines: what its last turns derive, written here (see runClaims).
          orphans: sessions.takeOrphaned ? async () => void (await derived.recover(await sessions.takeOrphaned!())) : undefined,
        })
      : undefined;
  // A chat nothing runs here for may have been another process's since: its session is read afresh.
  const freshen = (chat: Chat) => {
    if (!dispatcher.busy(chatKey(chat))) sessions.reread?.(chat.channel, chat.chatId);
  };
  // A reminder's delivery writes the chat's session: in a cluster only as the chat's holder, with
  // the session read afresh when the chat comes from outside this process's run of it.
  if (claims)
    parts.asHolder.run = (chat, task) =>
      claims.asHolder(chat, async (fresh) => {
        if (fresh) freshen(chat);
        await task();
      });
  // Taken over before any channel starts (see Intake.open).
  const intake = await Intake.open({
    config,
    inbox: parts.inbox,
    dispatcher,
    limits: new ChatLimits(config.rateLimitPerMinute, config.maxQueuedPerChat),
    sessions,
    budget: parts.budget,
    commands,
    stops: parts.chatStops,
    cluster: claims?.intake,
    pipeline,
    measured: (turn) =>
      stats.record(turn.session.id, {
        at: Date.now(),
        timings: turn.timings,
        systemPromptTokens: promptTokens(turn.model.tokens, turn.systemPrompt, turn.turnPrompt),
        promptSections: turn.promptSections.map((s) => ({ name: s.name, chars: s.content.length })),
        memory: turn.memory,
        answeredBy: turn.answeredBy,
      }),
    modelOf: parts.modelOf,
    // No message prefix here: each system tags its own lines ([Context], [ToolLoop], …).
    log: log.child({ component: 'Turn' }),
  });

  return {
    parts,
    pipeline,
    dispatcher,
    commands,
    handle: (msg, reply) => intake.handle(msg, reply),
    clustered: claims !== undefined,
    settled: (channel) => claims?.settled(channel) ?? Promise.resolve(),
    recover(replyFor, senders = {}, takeOver) {
      // In a cluster, what is open in the journal is run as this process claims it, from now on.
      claims?.start(
        (entry, reply) => {
          freshen(entry.chat);
          return intake.handle(entry.msg, reply, entry);
        },
        replyFor,
        takeOver,
      );
      // The messages are queued first, at once (Intake.recover); the chats are told meanwhile.
      const recovered = claims ? Promise.resolve(0) : intake.recover(replyFor);
      const told = Promise.all(
        forgets.splice(0).map(async ({ id, record }) => {
          const send = senders[record.channel];
          if (!send) return; // another channel's chat: told when that channel runs
          // Told at most once, as every reply: the record goes first (it holds no words by now).
          try {
            await forget.told(id);
            await send(record.chatId, forgetNotice(record));
          } catch (err) {
            log.error({ err, chat: chatKey(record) }, 'could not tell a chat its /forget was finished');
          }
        }),
      );
      return Promise.all([recovered, told]).then(([n]) => n);
    },
    leftOver: () => intake.leftOverMessages(),
    stop: () => life.stop(),
  };
}
