import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_IMAGE_COST, imagePart, imageTokens, parseVision, type ImageCost } from '../../src/llm/vision.js';
import { lookupModel } from '../../src/llm/catalogue.js';
import catalogue from '../../src/llm/models.json' with { type: 'json' };
import { createTokenCounter } from '../../src/llm/tokens.js';
import { buildRequestMessages } from '../../src/llm/messages.js';
import { makeMessage } from '../../src/sessions/model.js';
import { readImageInfo } from '../../src/media/image-info.js';
import { png } from '../helpers/images.js';

const GPT4O: ImageCost = { kind: 'tiles', base: 85, tile: 170 };
const MINI_41: ImageCost = { kind: 'patches', multiplier: 1.62 };

test("tile cost follows OpenAI's published examples (gpt-4o: 85 + 170 per 512-px tile)", () => {
  // 1024×1024 → shortest side to 768 → 768×768 → 4 tiles.
  assert.equal(imageTokens(1024, 1024, GPT4O, 'high'), 765);
  // 2048×4096 → fits 2048 box as 1024×2048 → 768×1536 → 2×3 tiles.
  assert.equal(imageTokens(2048, 4096, GPT4O, 'high'), 1105);
  // Low detail: the base alone, whatever the size.
  assert.equal(imageTokens(4096, 8192, GPT4O, 'low'), 85);
  // Small images are not scaled up: 300×200 is one tile.
  assert.equal(imageTokens(300, 200, GPT4O, 'high'), 255);
  // gpt-4o-mini bills the same image at its own figures.
  assert.equal(imageTokens(1024, 1024, { kind: 'tiles', base: 2833, tile: 5667 }, 'high'), 2833 + 4 * 5667);
});

test("patch cost follows OpenAI's published examples (32-px patches, at most 1536, times the multiplier)", () => {
  // 1024×1024 → 32×32 = 1024 patches.
  assert.equal(imageTokens(1024, 1024, { kind: 'patches', multiplier: 1 }), 1024);
  // 1800×2400 → scaled to 1056×1408 → 33×44 = 1452 patches.
  assert.equal(imageTokens(1800, 2400, { kind: 'patches', multiplier: 1 }), 1452);
  assert.equal(imageTokens(1024, 1024, MINI_41), Math.ceil(1024 * 1.62));
  // However large, never over the cap.
  assert.ok(imageTokens(20000, 20000, { kind: 'patches', multiplier: 1 }) <= 1536);
});

test('the catalogue flag: true, {base, tile} or {patch}; every entry in models.json reads', () => {
  assert.deepEqual(parseVision(true), DEFAULT_IMAGE_COST);
  assert.deepEqual(parseVision({ base: 75, tile: 150 }), { kind: 'tiles', base: 75, tile: 150 });
  assert.deepEqual(parseVision({ patch: 2.46 }), { kind: 'patches', multiplier: 2.46 });
  for (const bad of [undefined, false, 'yes', { base: 85 }, { patch: -1 }, { base: 'x', tile: 1 }]) assert.equal(parseVision(bad), null, JSON.stringify(bad));
  for (const [name, entry] of Object.entries(catalogue.models)) {
    const v = (entry as { vision?: unknown }).vision;
    if (v !== undefined) assert.notEqual(parseVision(v), null, `${name}: "vision" is not a form the catalogue reads`);
  }
  assert.equal(lookupModel('gpt-4o').vision?.kind, 'tiles');
  assert.equal(lookupModel('gpt-4.1-mini').vision?.kind, 'patches');
  assert.equal(lookupModel('gpt-3.5-turbo').vision, null, 'text-only');
  assert.equal(lookupModel('o3-mini').vision, null, 'text-only');
});

test('LLM_VISION overrides the catalogue both ways', () => {
  assert.equal(lookupModel('llava:13b').vision, null, 'unknown models are text-only');
  assert.deepEqual(lookupModel('llava:13b', true).vision, DEFAULT_IMAGE_COST);
  assert.deepEqual(lookupModel('gpt-4o-mini', true).vision, { kind: 'tiles', base: 2833, tile: 5667 }, 'a known cost is kept');
  assert.equal(lookupModel('gpt-4o', false).vision, null);
});

test("the token count of a request grows by exactly the image cost; the image rides on the turn's user message only", async () => {
  const counter = await createTokenCounter('o200k_base');
  const older = makeMessage('user', '[Photo] my cat', { attachment: { kind: 'photo', fileId: 'old' } });
  const history = [older, makeMessage('assistant', 'A grey cat.'), makeMessage('user', '[Photo] and this one?')];
  const current = history[2]!;
  const bytes = png(1024, 1024);
  const { part, tokens } = imagePart(bytes, readImageInfo(bytes)!, GPT4O);
  assert.equal(tokens, 765);
  assert.equal(part.image_url.url, `data:image/png;base64,${bytes.toString('base64')}`);

  const plain = buildRequestMessages('be brief', history, { content: '', before: current });
  const withImage = buildRequestMessages('be brief', history, { content: '', before: current, images: [part] });
  assert.equal(counter.countMessages(withImage), counter.countMessages(plain) + 765);
  assert.deepEqual(withImage.at(-1), { role: 'user', content: [{ type: 'text', text: '[Photo] and this one?' }, part] });
  assert.deepEqual(withImage[1], { role: 'user', content: '[Photo] my cat' }, 'an older photo is its placeholder text');
  assert.equal(withImage.filter((m) => Array.isArray(m.content)).length, 1);

  // With the per-turn context, it sits before the user's message, which still carries the image.
  const both = buildRequestMessages('be brief', history, { content: '# Relevant Memory\n- cats', before: current, images: [part] });
  assert.deepEqual(
    both.slice(-2).map((m) => m.role),
    ['system', 'user'],
  );
  assert.ok(Array.isArray(both.at(-1)!.content));

  // The estimate (models with no known tokenizer) adds the same cost.
  const estimate = await createTokenCounter(null);
  assert.equal(estimate.countMessages(withImage) - estimate.countMessages(plain), 765);
});
