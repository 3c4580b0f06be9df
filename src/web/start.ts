/**
 * The daemon's hook for the memory page: off unless MEMORY_PAGE_PORT is set. The token is a log
 * secret; the full link (with it) is printed to stderr only the first time a random token is
 * made, later starts print the address and where to find the token (`npm run doctor`).
 */
import type { Services } from '../services/services.js';
import { componentLogger, registerSecret, type Logger } from '../core/log.js';
import type { MemoryPage } from './server.js';
import { resolvePageToken } from './token.js';

export async function startConfiguredMemoryPage(services: Services, log: Logger): Promise<MemoryPage | undefined> {
  const { memoryPagePort: port, memoryPageHost: host, memoryPageToken, workspaceDir } = services.config;
  if (!port) return undefined;
  // Loaded only when the page is on: a daemon without it does not pay for fastify at start.
  const { startMemoryPage } = await import('./server.js');
  const pageLog = componentLogger(log, 'MemoryPage');
  const { token, created } = await resolvePageToken(workspaceDir, memoryPageToken);
  registerSecret(token);
  const page = await startMemoryPage(services, pageLog, { token, host, port });
  process.stderr.write(
    created
      ? `memory page: open ${page.url}?token=${token} (this link is shown once; npm run doctor prints it again)\n`
      : `memory page: ${page.url} (the link with its token: npm run doctor)\n`,
  );
  pageLog.info({ url: page.url }, 'memory page started');
  return page;
}
