/**
 * The instructions part of the system prompt: `workspace/SYSTEM.md` when it exists and is not
 * empty, else a built-in default. Re-read only when the file's mtime changes.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';

export const DEFAULT_INSTRUCTIONS = [
  'You are a helpful personal assistant chatting with a user through a messaging app.',
  'Answer clearly and concisely. Use the tools you have when they help.',
  'You remember earlier conversations through the memory sections of this prompt and your memory tools;',
  'when the user tells you something worth keeping, save it.',
].join(' ');

export class InstructionsSource {
  private cached: { mtimeMs: number; text: string } | undefined;

  constructor(private readonly workspaceDir: string) {}

  get file(): string {
    return path.join(this.workspaceDir, 'SYSTEM.md');
  }

  /** The text from the last load (the default before any), without touching the disk. */
  cachedText(): string {
    return this.cached?.text || DEFAULT_INSTRUCTIONS;
  }

  async load(): Promise<string> {
    let mtimeMs: number;
    try {
      mtimeMs = (await stat(this.file)).mtimeMs;
    } catch {
      this.cached = undefined;
      return DEFAULT_INSTRUCTIONS;
    }
    if (this.cached?.mtimeMs !== mtimeMs) {
      const text = (await readFile(this.file, 'utf8').catch(() => '')).trim();
      this.cached = { mtimeMs, text };
    }
    return this.cached.text || DEFAULT_INSTRUCTIONS;
  }
}
