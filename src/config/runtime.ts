/**
 * Runtime settings (seed 001 "Configuration"): memory and compaction switches the owner changes
 * while the bot runs. Callers see RuntimeConfigStore; its promises are the contract tests in
 * test/config/runtime.contract.ts. Today's store is FileRuntimeConfigStore:
 * `workspace/preferences/runtime-config.json`.
 * Nothing stored means defaults. A change takes effect without a restart. A bad value names its
 * key: at start-up that stops the daemon (exit 2); later, the error is logged once and the last
 * good settings stay in force.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../core/log.js';
import { AppError } from '../core/errors.js';
import { ensureDir, writeFileAtomic } from '../storage/atomic.js';
import type { Portable } from '../storage/portable.js';

export interface RuntimeConfig {
  memory: {
    enabled: boolean;
    recentDays: number;
    /** Share of the context limit the `# Memory` block may use, in percent. */
    budgetPercent: number;
  };
  compaction: {
    enabled: boolean;
    maxContextTokens: number;
    keepLastMessages: number;
  };
}

/**
 * Tokens the memory sections (`# Memory` and `# Relevant Memory` together) may take of a
 * request: `budgetPercent` of the context limit, none when memory is off. The one formula for
 * the prompt, the compaction bound and /status.
 */
export function memoryBudgetTokens(contextLimit: number, memory: RuntimeConfig['memory']): number {
  return memory.enabled ? Math.floor((contextLimit * memory.budgetPercent) / 100) : 0;
}

export const DEFAULT_RUNTIME_CONFIG: RuntimeConfig = {
  memory: { enabled: true, recentDays: 7, budgetPercent: 25 },
  compaction: { enabled: true, maxContextTokens: 50_000, keepLastMessages: 20 },
};

type Spec = { kind: 'boolean' } | { kind: 'int'; min: number; max: number };

const SPEC: Record<string, Record<string, Spec>> = {
  memory: {
    enabled: { kind: 'boolean' },
    recentDays: { kind: 'int', min: 0, max: 365 },
    budgetPercent: { kind: 'int', min: 1, max: 90 },
  },
  compaction: {
    enabled: { kind: 'boolean' },
    maxContextTokens: { kind: 'int', min: 1_000, max: 10_000_000 },
    keepLastMessages: { kind: 'int', min: 1, max: 1_000 },
  },
};

/** Parses the file's text; throws an Error whose message names the offending key. */
export function parseRuntimeConfig(text: string): RuntimeConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new AppError('config.invalid', { problem: `is not valid JSON (${(err as Error).message})` });
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new AppError('config.invalid', { problem: 'must be a JSON object' });
  const out = structuredClone(DEFAULT_RUNTIME_CONFIG) as unknown as Record<string, Record<string, unknown>>;
  // Own keys only, looked up with Object.hasOwn: JSON.parse makes "__proto__" an own key, and
  // `SPEC[key]` would find Object.prototype members ("toString", "constructor") and write
  // into the prototype of every object in the process.
  for (const [group, value] of Object.entries(raw as Record<string, unknown>)) {
    if (!Object.hasOwn(SPEC, group))
      throw new AppError('config.invalid', { problem: `has an unknown key ${JSON.stringify(group)} (known: ${Object.keys(SPEC).join(', ')})` });
    const spec = SPEC[group]!;
    if (!value || typeof value !== 'object' || Array.isArray(value)) throw new AppError('config.invalid', { problem: `"${group}" must be an object` });
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
      const name = `${group}.${key}`;
      if (!Object.hasOwn(spec, key))
        throw new AppError('config.invalid', {
          problem: `has an unknown key ${JSON.stringify(name)} (known: ${Object.keys(spec)
            .map((k) => `${group}.${k}`)
            .join(', ')})`,
        });
      const s = spec[key]!;
      if (s.kind === 'boolean' && typeof v !== 'boolean')
        throw new AppError('config.invalid', { problem: `"${name}" must be true or false, not ${JSON.stringify(v)}` });
      if (s.kind === 'int' && (!Number.isInteger(v) || (v as number) < s.min || (v as number) > s.max)) {
        throw new AppError('config.invalid', { problem: `"${name}" must be a whole number from ${s.min} to ${s.max}, not ${JSON.stringify(v)}` });
      }
      out[group]![key] = v;
    }
  }
  return out as unknown as RuntimeConfig;
}

/**
 * What moves between the modes (storage/portable.ts): the owner's settings as the text they
 * stored, unparsed — a bad one moves as it is, and is refused by the next start in either mode.
 */
export interface StoredSettings {
  settings: string;
}

export interface RuntimeConfigStore {
  /** First load: a one-line problem naming the bad key instead of silently using defaults; null when the settings are good. */
  init(): string | null;
  /** The settings in force, with a change stored meanwhile (a bad change leaves the last good settings in force). */
  get(): RuntimeConfig;
}

/** The settings in the workspace's `preferences/runtime-config.json`, re-checked (by mtime) at most once a second. */
export class FileRuntimeConfigStore implements RuntimeConfigStore, Portable<StoredSettings> {
  readonly portableName = 'runtime settings';
  private current: RuntimeConfig = structuredClone(DEFAULT_RUNTIME_CONFIG);
  private mtimeMs: number | null = null;
  private checkedAt = 0;

  constructor(
    readonly workspaceDir: string,
    private readonly log?: Logger,
    private readonly minCheckIntervalMs = 1_000,
  ) {}

  get file(): string {
    return path.join(this.workspaceDir, 'preferences', 'runtime-config.json');
  }

  /** First load: returns a problem line instead of silently using defaults. */
  init(): string | null {
    try {
      this.reload(true);
      return null;
    } catch (err) {
      return `${path.relative(process.cwd(), this.file) || this.file} ${(err as Error).message}`;
    }
  }

  /** The settings in force; re-reads the file when it changed. */
  get(): RuntimeConfig {
    const now = Date.now();
    if (now - this.checkedAt >= this.minCheckIntervalMs) {
      this.checkedAt = now;
      try {
        this.reload(false);
      } catch (err) {
        this.log?.error({ file: this.file }, `runtime config ${(err as Error).message}; keeping the previous settings`);
      }
    }
    return this.current;
  }

  async *dump(): AsyncIterable<StoredSettings> {
    const text = await readFile(this.file, 'utf8').catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? undefined : Promise.reject(err)));
    if (text !== undefined) yield { settings: text };
  }

  /** Writes the (last) settings given as the file's text, byte for byte. */
  async load(items: AsyncIterable<StoredSettings>): Promise<number> {
    let n = 0;
    for await (const item of items) {
      await ensureDir(path.dirname(this.file));
      await writeFileAtomic(this.file, item.settings);
      n++;
    }
    return n;
  }

  async isEmpty(): Promise<boolean> {
    return !existsSync(this.file);
  }

  async clear(): Promise<void> {
    await rm(this.file, { force: true });
  }

  private reload(strict: boolean): void {
    let mtimeMs: number | null = null;
    try {
      mtimeMs = statSync(this.file).mtimeMs;
    } catch {
      mtimeMs = null;
    }
    if (!strict && mtimeMs === this.mtimeMs) return;
    this.mtimeMs = mtimeMs;
    if (mtimeMs === null) {
      this.current = structuredClone(DEFAULT_RUNTIME_CONFIG);
      return;
    }
    this.current = parseRuntimeConfig(readFileSync(this.file, 'utf8'));
    if (!strict) this.log?.info({ file: this.file }, 'runtime config reloaded');
  }
}
