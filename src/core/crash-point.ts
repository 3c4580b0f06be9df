/**
 * Test-only crash points (docs/development.md): with `MEMBOT_CRASH_AT=<name>` in its environment
 * the process kills itself with SIGKILL — as `kill -9` would, nothing flushed, no handler run —
 * when it reaches the point of that name. Lets a test stop a multi-step change (a /forget, a
 * purge) at an exact step and check what the next start makes of it. Unset, it does nothing.
 */
export function crashPoint(name: string): void {
  if (process.env.MEMBOT_CRASH_AT === name) process.kill(process.pid, 'SIGKILL');
}
