/**
 * The model catalogue (`models.json`): input limit, tokenizer and whether it reads images (with
 * what an image costs: llm/vision.ts) per model, with a default for models we do not know. Names are matched exactly, then without a provider prefix
 * (`openai/gpt-4o` on OpenRouter), then by the longest known family prefix
 * (`gpt-4o-2024-08-06` → `gpt-4o`).
 */
import catalogue from './models.json' with { type: 'json' };
import { DEFAULT_IMAGE_COST, parseVision, type ImageCost } from './vision.js';

export type Encoding = 'o200k_base' | 'cl100k_base';

export interface ModelInfo {
  /** The catalogue entry that matched, or null when the default was used. */
  matched: string | null;
  maxInputTokens: number;
  encoding: Encoding | null;
  /** Reads images, at this cost per image; null = text only. */
  vision: ImageCost | null;
}

interface Entry {
  maxInputTokens: number;
  encoding: string | null;
  /** true, {"base","tile"} or {"patch"} (llm/vision.ts); absent = text only. */
  vision?: unknown;
}

const models = catalogue.models as Record<string, Entry>;
const keysLongestFirst = Object.keys(models).sort((a, b) => b.length - a.length);

function toInfo(matched: string | null, e: Entry): ModelInfo {
  const enc = e.encoding === 'o200k_base' || e.encoding === 'cl100k_base' ? e.encoding : null;
  return { matched, maxInputTokens: e.maxInputTokens, encoding: enc, vision: parseVision(e.vision) };
}

/**
 * `vision` (LLM_VISION) overrides the entry: true gives a model the catalogue does not know to
 * read images (at the gpt-4o cost unless its entry has one), false makes it text only.
 */
export function lookupModel(name: string, vision?: boolean): ModelInfo {
  const info = findModel(name);
  if (vision === false) return { ...info, vision: null };
  if (vision === true) return { ...info, vision: info.vision ?? DEFAULT_IMAGE_COST };
  return info;
}

function findModel(name: string): ModelInfo {
  const lower = name.toLowerCase();
  const candidates = [lower, lower.includes('/') ? lower.slice(lower.lastIndexOf('/') + 1) : null];
  for (const c of candidates) {
    if (!c) continue;
    const exact = models[c];
    if (exact) return toInfo(c, exact);
    for (const k of keysLongestFirst) {
      if (c.startsWith(`${k}-`)) return toInfo(k, models[k]!);
    }
  }
  return toInfo(null, catalogue.default as Entry);
}
