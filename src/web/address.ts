/**
 * Where the memory page is, as a browser names it: the address to print (and doctor's link),
 * and the Host headers the page answers. Small and free of the server, so doctor and the start
 * hook use it without loading fastify.
 */

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

/** Listening on every address: not a name a browser may use. */
export function isWildcardHost(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '[::]';
}

/**
 * The Host headers the page answers: its own address (the loopback names when it listens on
 * loopback or on every address), and the host of each MEMORY_PAGE_ORIGIN. Listening on 0.0.0.0
 * does not mean "any name": a DNS-rebinding site's name is in none of these.
 */
export function allowedHosts(host: string, port: number, origins: readonly string[]): Set<string> {
  const own = isWildcardHost(host) || LOOPBACK_NAMES.includes(host) || host === '::1' ? LOOPBACK_NAMES : [host.includes(':') ? `[${host}]` : host];
  return new Set([...own.map((n) => `${n}:${port}`.toLowerCase()), ...origins.map((o) => new URL(o).host.toLowerCase())]);
}

/** The address to open the page at: its own, or 127.0.0.1 when it listens on every address. */
export function pageAddress(host: string, port: number): string {
  const shown = isWildcardHost(host) ? '127.0.0.1' : host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `http://${shown}:${port}/`;
}
