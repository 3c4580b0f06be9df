/**
 * `/model` lists the models this chat may answer with (LLM_MODEL and LLM_MODELS, the one in use
 * marked); `/model <name>` switches this chat to one, `/model default` back to LLM_MODEL. The
 * choice is session metadata (written at once through the session writer), so it outlasts /new
 * and restarts; in a forum topic it is that topic's. Servers and key names are never shown: the
 * chat is not the place for the operator's setup (the log and `npm run doctor` are).
 */
import type { Command } from '../../turn/command.js';
import { chatModel, modelNamed, type ModelChoice } from './chat-model.js';
import { THRESHOLD, type AutoCompactor } from '../../turn/auto-compact.js';
import type { ChatModel } from '../../llm/chat-models.js';
import { visionLabel } from '../../llm/vision.js';

const fmt = (n: number) => n.toLocaleString('en-US');

/** "128,000 tokens · reads images" */
function traits(m: ChatModel, limit: number): string {
  return `${fmt(limit)} tokens · ${visionLabel(m.info.vision)}`;
}

export interface ModelDeps extends ModelChoice {
  /** How full the conversation is against the new model's limit (a switch to a smaller one says it will be compacted). */
  compactor: Pick<AutoCompactor, 'usage'>;
}

export function createModelCommand(deps: ModelDeps): Command {
  return {
    name: 'model',
    description: 'Show the models this chat can use; /model <name> switches to one',
    // It changes the model for everyone in the group (and what the bot costs).
    access: 'managers',
    async run({ session, writes, args }) {
      const { models } = deps;
      const current = chatModel(deps, session);
      const defaultName = models.defaultModel.name;
      if (args === '') {
        const lines = models.choices.map((name) => {
          const m = modelNamed(deps, name)!;
          return `${name === current.name ? '✓' : '•'} ${name}${name === defaultName ? ' (default)' : ''} — ${traits(m, m.limit)}`;
        });
        const stale = session.metadata.model !== undefined && models.find(session.metadata.model) === undefined;
        return [
          'Models for this chat (✓ = in use):',
          ...lines,
          ...(stale ? [`${session.metadata.model}, chosen earlier, is no longer offered, so this chat uses ${defaultName}.`] : []),
          models.choices.length > 1
            ? `Switch with /model <name>; /model default goes back to ${defaultName}.`
            : 'This bot offers only this model (the operator can add more with LLM_MODELS).',
        ].join('\n');
      }
      const wanted = models.find(args) ?? (args.toLowerCase() === 'default' ? defaultName : undefined);
      if (wanted === undefined) {
        return `There is no model "${args.slice(0, 60)}" here, so nothing changed. Choose one of: ${models.choices.join(', ')}.`;
      }
      if (wanted === current.name) return `This chat already uses ${wanted}.`;
      await writes.setModel(wanted === defaultName ? undefined : wanted);
      const next = chatModel(deps, session);
      const { reserved, limit } = deps.compactor.usage(session);
      const over = reserved / limit > THRESHOLD ? ` The conversation is large for its context, so it will be compacted before the next answer.` : '';
      return `Switched this chat to ${wanted} (${traits(next, next.limit)}). Your next message is answered by it.${over}`;
    },
  };
}
