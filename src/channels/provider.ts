/**
 * A channel as the app sees it before it runs: its name, how it reads its own settings, and how
 * it is made from what the app gives it. The app lists the providers (app/channels.ts) and
 * starts the one the settings ask for; nothing else in the daemon names a channel.
 */
import type { ChannelSection, ChannelSettings, Config } from '../config/env.js';
import type { Channel } from '../core/channel.js';
import type { ChatShapeReader } from '../core/chat.js';
import type { Logger } from '../core/log.js';
import type { InboundMessage } from '../core/message.js';
import type { MediaFetchers } from '../media/attachments.js';
import type { Database } from '../storage/pg/database.js';
import type { ProcessOwner } from '../storage/pg/owner.js';

/** What the app gives a channel it starts. */
export interface ChannelDeps<St = unknown> {
  config: Config;
  /** The daemon's logger; the channel names its component. */
  log: Logger;
  /** The commands the app answers (a channel may offer them in a menu). */
  commands: Array<{ name: string; description: string }>;
  /** The app's downloaders: a channel registers its own, so turns fetch its photos and voice notes. */
  media: MediaFetchers;
  /** The channel cannot go on (its credentials were refused while running): the daemon stops, exit 1. */
  onFatal: (reason: string) => void;
  /** The messages the last run accepted and did not finish (the app's journal). */
  unfinished: InboundMessage[];
  /** The channel's own stores, made where the app keeps its state (the provider's `state`); undefined: the channel's default. */
  state?: St | undefined;
  /** Several processes of one bot (docs/cluster.md): awaited before each poll of updates, resolves once this process may poll. */
  pollGate?: ((signal: AbortSignal) => Promise<void>) | undefined;
}

/**
 * How a channel makes the stores of what it keeps across starts, in either place the app may
 * keep state: the app (app/stores.ts) chooses one, the channel never does.
 */
export interface ChannelStateMakers<St> {
  /** In the workspace: files. */
  files(workspaceDir: string, log: Logger): St;
  /**
   * In PostgreSQL (DATABASE_URL), the migrations applied. `owner`: the process writing, as the
   * cluster knows it (several processes may serve the bot; a random id outside one).
   */
  postgres(db: Database, log: Logger, owner: ProcessOwner): St;
}

export interface ChannelProvider<S extends ChannelSection = ChannelSection, St = unknown> extends ChannelSettings<S> {
  create(settings: S, deps: ChannelDeps<St>): Channel;
  /** What the channel keeps across starts, when it keeps anything. */
  readonly state?: ChannelStateMakers<St>;
  /** How the memory page names a chat of this channel from its id alone. */
  readonly chatShape?: ChatShapeReader;
}
