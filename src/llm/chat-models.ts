/**
 * The models a chat may answer with, and what each one is to the daemon: its input limit,
 * tokenizer and whether it reads images, from the catalogue (catalogue.ts). LLM_MODEL is the
 * default; LLM_MODELS adds the ones /model may switch a chat to; LLM_FALLBACK's are known too,
 * so a request can be fitted to one before it is sent there (llm/client.ts). Tokenizers are
 * loaded once per encoding at start, so switching a chat costs nothing.
 */
import type { Config } from '../config/env.js';
import { uniqueNames } from '../config/models.js';
import { lookupModel, type ModelInfo } from './catalogue.js';
import { createTokenCounter, EstimateCounter, type TokenCounter } from './tokens.js';

export interface ChatModel {
  /** As configured: sent to the server, typed after /model. */
  name: string;
  info: ModelInfo;
  tokens: TokenCounter;
}

/** A chat's model as a turn uses it: with the context limit (the model's, or compaction.maxContextTokens when lower). */
export interface ActiveModel extends ChatModel {
  limit: number;
}

type ModelsConfig = Pick<Config, 'model' | 'models' | 'fallback' | 'vision'>;

export class ChatModels {
  private readonly byName = new Map<string, ChatModel>();

  private constructor(
    readonly defaultModel: ChatModel,
    /** What /model offers, LLM_MODEL first. */
    readonly choices: readonly string[],
    known: ChatModel[],
  ) {
    for (const m of known) this.byName.set(m.name.toLowerCase(), m);
  }

  static async create(config: ModelsConfig): Promise<ChatModels> {
    const choices = uniqueNames(config.model, ...config.models.map((m) => m.name));
    const names = uniqueNames(...choices, ...config.fallback);
    const counters = new Map<string, Promise<TokenCounter>>();
    const known = await Promise.all(
      names.map(async (name) => {
        // LLM_VISION speaks of LLM_MODEL; the others go by the catalogue.
        const info = lookupModel(name, name === config.model ? config.vision : undefined);
        const key = info.encoding ?? 'estimate';
        if (!counters.has(key)) counters.set(key, createTokenCounter(info.encoding));
        return { name, info, tokens: await counters.get(key)! };
      }),
    );
    return new ChatModels(known[0]!, choices, known);
  }

  /** The offered model named `name` (any case), as configured; undefined when it is not offered. */
  find(name: string): string | undefined {
    return this.choices.find((c) => c.toLowerCase() === name.trim().toLowerCase());
  }

  /** The model a chat answers with: its /model choice while LLM_MODELS still offers it, else LLM_MODEL. */
  of(choice: string | undefined): ChatModel {
    const name = choice === undefined ? undefined : this.find(choice);
    return (name && this.byName.get(name.toLowerCase())) || this.defaultModel;
  }

  /** Any configured model (a fallback too); undefined for a name the settings do not hold. */
  get(name: string): ChatModel | undefined {
    return this.byName.get(name.toLowerCase());
  }

  /** Some model a chat can switch to reads images: a channel then takes pictures in (Images 15 decides per chat). */
  get anyVision(): boolean {
    return this.choices.some((c) => this.byName.get(c.toLowerCase())!.info.vision !== null);
  }
}

/** A model the settings do not name (a turn built by hand): the catalogue's default limit, tokens estimated. */
export function unknownModel(name = 'unknown'): ActiveModel {
  const info = lookupModel(name);
  return { name, info, tokens: new EstimateCounter(), limit: info.maxInputTokens };
}
