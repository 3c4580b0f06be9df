/**
 * Images: a photo or an album is loaded for its turn and sent with the user's message only
 * (Images 15: images.ts; one image in turn-image.ts, an album in album-images.ts); what the
 * model cannot see is said in one line, before anything is spent on it.
 */
import type { Feature } from '../../turn/feature.js';
import { createImagesSystem, type ImagesDeps } from './images.js';

export function imagesFeature(deps: ImagesDeps): Feature {
  return { name: 'images', systems: [createImagesSystem(deps)] };
}
