/**
 * The daemon's hook for the memory page: off unless MEMORY_PAGE_PORT is set. The token is a log
 * secret and is never printed: the start prints the address and where the token is kept (a 0600
 * file, or MEMORY_PAGE_TOKEN); `npm run doctor` prints the whole link on request.
 */
import type { Config } from '../config/env.js';
import type { PageDeps } from './data.js';
import { componentLogger, registerSecret, type Logger } from '../core/log.js';
import type { MemoryPage } from './server.js';
import type { KeptValue } from '../storage/kept.js';
import { resolvePageToken } from './token.js';
import { isWildcardHost } from './address.js';

/** `stores`: what the page reads and changes (data.ts); `tokenStore`: where its token is kept (token.ts); the rest comes from the settings. */
export async function startConfiguredMemoryPage(
  config: Config,
  stores: Omit<PageDeps, 'memoryScope'>,
  log: Logger,
  tokenStore: KeptValue,
): Promise<MemoryPage | undefined> {
  const { memoryPagePort: port, memoryPageHost: host, memoryPageToken } = config;
  if (!port) return undefined;
  // Loaded only when the page is on: a daemon without it does not pay for fastify at start.
  const { startMemoryPage } = await import('./server.js');
  const pageLog = componentLogger(log, 'MemoryPage');
  const { token, created } = await resolvePageToken(tokenStore, memoryPageToken);
  registerSecret(token);
  const origins = config.memoryPageOrigins;
  const page = await startMemoryPage({ ...stores, memoryScope: config.memoryScope }, pageLog, { token, host, port, origins });
  // Never the token itself: this line lands in log files (pm2 keeps stderr). Where it is kept
  // (0600, readable by the daemon's user only) and how to get the whole link instead.
  const where = memoryPageToken ? 'MEMORY_PAGE_TOKEN' : tokenStore.where;
  process.stderr.write(
    `memory page: ${page.url} — open it with ?token=<the token in ${where}>${created ? ' (made just now)' : ''}; npm run doctor prints the whole link\n`,
  );
  if (isWildcardHost(host) && origins.length === 0) {
    pageLog.warn(
      `the memory page listens on ${host} but answers only at 127.0.0.1/localhost: set MEMORY_PAGE_ORIGIN to the address people open it at (e.g. https://memory.example.com behind your TLS proxy)`,
    );
  }
  pageLog.info({ url: page.url, origins }, 'memory page started');
  return page;
}
