/**
 * Images as model input: what one costs in tokens, and the request part that carries it.
 *
 * The cost follows OpenAI's published rules, chosen per model by its catalogue entry (`vision`
 * in models.json):
 * - tiles (gpt-4o, gpt-4.1, gpt-5, o1/o3, …): detail "low" costs the base alone; "high" fits the
 *   image in 2048×2048, then brings a shortest side over 768 down to 768, and adds a tile cost
 *   per 512-pixel square it covers.
 * - patches (gpt-4.1-mini/nano, gpt-5-mini/nano, o4-mini): one token per 32-pixel square, at
 *   most 1536 (a larger image is scaled down until it fits), times the model's multiplier.
 * The figures are what the provider bills, which for gpt-4o-mini and the patch models is more
 * than the context holds: for the context budget an overcount only means compacting a little
 * early, an undercount a refused request.
 *
 * A part's cost is recorded when the part is made (by object, so the token counter finds it
 * without decoding the image again, and forgets it with the request).
 */
import type { ChatCompletionContentPartImage } from 'openai/resources/chat/completions';
import type { ImageInfo } from '../media/image-info.js';

export type ImageCost = { kind: 'tiles'; base: number; tile: number } | { kind: 'patches'; multiplier: number };
export type ImageDetail = 'low' | 'high';

/** `"vision": true` in models.json: the gpt-4o figures. */
export const DEFAULT_IMAGE_COST: ImageCost = { kind: 'tiles', base: 85, tile: 170 };
/** What an image part nobody measured counts as (none should exist: every part is made below). */
export const UNMEASURED_IMAGE_TOKENS = 1_536;

/** The catalogue's `vision` value: true, {base, tile} or {patch}; anything else means no images. */
export function parseVision(v: unknown): ImageCost | null {
  if (v === true) return DEFAULT_IMAGE_COST;
  if (!v || typeof v !== 'object') return null;
  const o = v as Record<string, unknown>;
  const positive = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x) && x > 0;
  if (positive(o.patch)) return { kind: 'patches', multiplier: o.patch };
  if (positive(o.base) && positive(o.tile)) return { kind: 'tiles', base: o.base, tile: o.tile };
  return null;
}

export function imageTokens(width: number, height: number, cost: ImageCost, detail: ImageDetail = 'high'): number {
  if (cost.kind === 'patches') return Math.ceil(patches(width, height) * cost.multiplier);
  if (detail === 'low') return cost.base;
  let w = width;
  let h = height;
  if (Math.max(w, h) > 2048) {
    const r = 2048 / Math.max(w, h);
    w = Math.floor(w * r);
    h = Math.floor(h * r);
  }
  if (Math.min(w, h) > 768) {
    const r = 768 / Math.min(w, h);
    w = Math.floor(w * r);
    h = Math.floor(h * r);
  }
  return cost.base + cost.tile * Math.ceil(w / 512) * Math.ceil(h / 512);
}

const PATCH = 32;
const MAX_PATCHES = 1536;

function patches(width: number, height: number): number {
  const raw = Math.ceil(width / PATCH) * Math.ceil(height / PATCH);
  if (raw <= MAX_PATCHES) return raw;
  // Shrink to the patch budget by area, then a little more so whole patches fit on both sides.
  let r = Math.sqrt((PATCH * PATCH * MAX_PATCHES) / (width * height));
  const pw = (width * r) / PATCH;
  const ph = (height * r) / PATCH;
  r *= Math.min(Math.floor(pw) / pw, Math.floor(ph) / ph);
  return Math.min(MAX_PATCHES, Math.ceil((width * r) / PATCH) * Math.ceil((height * r) / PATCH));
}

const measured = new WeakMap<object, number>();

/** The request part for an image (a data: URL; nothing is uploaded elsewhere), its cost recorded. */
export function imagePart(
  bytes: Buffer,
  info: ImageInfo,
  cost: ImageCost,
  detail: ImageDetail = 'high',
): { part: ChatCompletionContentPartImage; tokens: number } {
  const part: ChatCompletionContentPartImage = { type: 'image_url', image_url: { url: `data:${info.mime};base64,${bytes.toString('base64')}`, detail } };
  const tokens = imageTokens(info.width, info.height, cost, detail);
  measured.set(part, tokens);
  return { part, tokens };
}

/** The tokens an image part costs (as recorded when it was made). */
export function imagePartTokens(part: object): number {
  return measured.get(part) ?? UNMEASURED_IMAGE_TOKENS;
}

/** The reply's note when the server refused the image and the turn was answered without it (llm/errors.ts refusedImage). */
/** What a model reads, as /model and /status say it (`vision`: its image cost, null when it reads none). */
export function visionLabel(vision: unknown): string {
  return vision ? 'reads images' : 'text only';
}

export const IMAGE_REFUSED_NOTICE = 'The model refused the image, so I answered from your words only. It is saved in our conversation.';
/** The same for an album's pictures. */
export const IMAGES_REFUSED_NOTICE = 'The model refused the pictures, so I answered from your words only. They are saved in our conversation.';
