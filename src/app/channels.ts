/**
 * The channels the daemon can serve, in the order it prefers them: the first whose settings ask
 * for it is started (main.ts); the terminal, always at hand, comes last. A new channel is its
 * folder under src/channels/ (a ChannelProvider: channels/provider.ts) and one line here.
 */
import type { Config } from '../config/env.js';
import type { ChannelProvider } from '../channels/provider.js';
import { telegramChannel } from '../channels/telegram/provider.js';
import { consoleChannel } from '../channels/console.js';

export const CHANNELS: readonly ChannelProvider[] = [telegramChannel, consoleChannel];

/** The channel the settings ask for: the first configured one, else the terminal. */
export function servedChannel(config: Pick<Config, 'channels'>): ChannelProvider {
  return CHANNELS.find((c) => config.channels[c.name]?.configured) ?? consoleChannel;
}

/** Each channel's reading of its chat ids, for the memory page. */
export function chatShapes(): Record<string, NonNullable<ChannelProvider['chatShape']>> {
  return Object.fromEntries(CHANNELS.flatMap((c) => (c.chatShape ? [[c.name, c.chatShape]] : [])));
}
