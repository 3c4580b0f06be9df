/** Temp workspaces, configs and captured logs for tests. */
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { loadConfig, type Config } from '../../src/config/env.js';
import { CHANNELS } from '../../src/app/channels.js';
import { createLogger, type Logger } from '../../src/core/log.js';

export async function tempDir(prefix = 'membot-'): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Files under `dir` whose name or bytes (read as latin1) match `re`: what a forget or purge left. */
export async function filesMatching(dir: string, re: RegExp): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const file = path.join(e.parentPath ?? (e as any).path, e.name);
    if (re.test(path.relative(dir, file)) || re.test((await readFile(file)).toString('latin1'))) out.push(path.relative(dir, file));
  }
  return out;
}

/** Every file under `dir` (none when it is missing) by its path relative to it, with its bytes as hex: two trees compare with deepEqual. */
export async function readTree(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => [])) {
    if (!e.isFile()) continue;
    const file = path.join(e.parentPath ?? (e as any).path, e.name);
    out[path.relative(dir, file)] = (await readFile(file)).toString('hex');
  }
  return out;
}

/** Files under `dir` whose name or bytes hold `needle` (ASCII, any case). */
export function filesContaining(dir: string, needle: string): Promise<string[]> {
  return filesMatching(dir, new RegExp(needle.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i'));
}

/**
 * A config as main would build it from these env values (plus a workspace and a fake URL).
 * The flood limits are off unless a test sets them: most tests send a chat dozens of messages
 * in a second, which the default limits (20 a minute, 10 waiting) would refuse.
 */
export function testConfig(env: Record<string, string | undefined>): Config {
  const { config, problems } = loadConfig(
    {
      OPENAI_API_KEY: 'sk-test-key-123456',
      TZ: 'UTC',
      LLM_MAX_RETRIES: '0',
      RATE_LIMIT_PER_MINUTE: '0',
      MAX_QUEUED_PER_CHAT: '10000',
      ...env,
    },
    process.cwd(),
    CHANNELS,
  );
  if (problems.length) throw new Error(`bad test config: ${problems.join('; ')}`);
  return config;
}

export interface CapturedLog {
  log: Logger;
  lines: () => Array<Record<string, any>>;
  text: () => string;
}

export function captureLog(level = 'debug'): CapturedLog {
  const chunks: string[] = [];
  const dest = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  const log = createLogger({ level, destination: dest as any });
  return {
    log,
    text: () => chunks.join(''),
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
  };
}
