/** The model a chat answers with, and its context limit: what /model switches and every turn, /status and compaction read. */
import type { RuntimeConfigStore } from '../../config/runtime.js';
import type { ActiveModel, ChatModels } from '../../llm/chat-models.js';
import type { ModelInfo } from '../../llm/catalogue.js';
import type { Session } from '../../sessions/model.js';

/** The settings a chat's model is read from. */
export interface ModelChoice {
  models: ChatModels;
  runtime: RuntimeConfigStore;
}

/** The context limit budgets are measured against: min(the model's input limit, compaction.maxContextTokens). */
export function contextLimit(model: ModelInfo, runtime: RuntimeConfigStore): number {
  return Math.min(model.maxInputTokens, runtime.get().compaction.maxContextTokens);
}

/** The model a chat answers with (its /model choice while still offered, else LLM_MODEL), with its context limit. */
export function chatModel(s: ModelChoice, session: Session): ActiveModel {
  const m = s.models.of(session.metadata.model);
  return { ...m, limit: contextLimit(m.info, s.runtime) };
}

/** Any configured model by name (a fallback too) with its context limit; undefined for a name the settings do not hold. */
export function modelNamed(s: ModelChoice, name: string): ActiveModel | undefined {
  const m = s.models.get(name);
  return m && { ...m, limit: contextLimit(m.info, s.runtime) };
}
