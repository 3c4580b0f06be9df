/**
 * The model a chat answers with: `/model` lists the models offered (LLM_MODEL, LLM_MODELS) and
 * switches the chat to one (model.ts); chat-model.ts reads a chat's choice with its context
 * limit, for every turn, /status and compaction (the app passes it on as `modelOf`).
 */
import type { Feature } from '../../turn/feature.js';
import { createModelCommand, type ModelDeps } from './model.js';

export function modelsFeature(deps: ModelDeps): Feature {
  return { name: 'models', commands: [createModelCommand(deps)] };
}
