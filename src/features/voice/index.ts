/**
 * Voice notes: a note is downloaded and turned into text before anything else of its turn
 * (Transcription 10: transcription.ts; download and speech to text in turn-audio.ts), so the
 * rest of the pipeline reads it as the user's words. Off without TRANSCRIPTION_MODEL.
 */
import type { Feature } from '../../turn/feature.js';
import { createTranscriptionSystem, type TranscriptionDeps } from './transcription.js';

export function voiceFeature(deps: TranscriptionDeps): Feature {
  return { name: 'voice', systems: [createTranscriptionSystem(deps)] };
}
