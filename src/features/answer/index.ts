/**
 * Answering: the model is asked with the prompt ContextBuilding (20) built and the tools it may
 * call, in rounds, until it answers in words (ToolLoop 30: tool-loop.ts, the loop itself in
 * loop.ts); the answer goes back through the channel the message came from (ResponseDelivery 40).
 * Its own tool: get_current_time (datetime.ts).
 */
import type { Feature } from '../../turn/feature.js';
import { createToolLoopSystem } from './tool-loop.js';
import { createResponseDeliverySystem } from './response-delivery.js';
import { createDateTimeTool } from './datetime.js';
import type { ToolLoopDeps } from './loop.js';

export interface AnswerDeps extends ToolLoopDeps {
  /** TIMEZONE: what get_current_time answers in unless the model names a zone. */
  timezone: string;
}

export function answerFeature(deps: AnswerDeps): Feature {
  const { timezone, ...loop } = deps;
  return {
    name: 'answer',
    systems: [createToolLoopSystem(loop), createResponseDeliverySystem()],
    tools: [createDateTimeTool(timezone)],
  };
}
