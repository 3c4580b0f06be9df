/**
 * LLM_MODELS and LLM_FALLBACK: the models a chat may switch to with /model, each on the default
 * server (OPENAI_BASE_URL, OPENAI_API_KEY) or on its own, and the models a call goes on with when
 * the first one fails (llm/client.ts). Checked at start like every setting: each problem is one
 * line and the daemon exits 2.
 *
 *   LLM_MODELS=gpt-4o-mini,gpt-4.1=https://api.example.com/v1|EXAMPLE_KEY,llama3=http://127.0.0.1:11434/v1
 *
 * An entry is `name` (the default server), `name=URL` (its own server, which needs no key) or
 * `name=URL|VARIABLE` (its own server, the key read from that environment variable, which must
 * be set; its value is a log secret like OPENAI_API_KEY). The name is sent to the server as the
 * model and typed after /model. A line never echoes what follows `|`: someone may have pasted
 * the key itself there.
 */
import { isHttpUrl, type Env, type SettingsReader } from './reader.js';

export interface ModelEndpoint {
  /** The model's name: sent to its server as `model`, and what /model takes. */
  name: string;
  /** Its own server; undefined: OPENAI_BASE_URL. */
  baseUrl: string | undefined;
  /** Where its key was read from (for the doctor); undefined: OPENAI_API_KEY, or no key on its own server. */
  keyVariable: string | undefined;
  /** The key from `keyVariable` (a log secret); undefined: the default key, or none. */
  apiKey: string | undefined;
}

/** `names` without repeats, case aside (servers match model names so); the first spelling is kept. */
export function uniqueNames(...names: string[]): string[] {
  const seen = new Set<string>();
  return names.filter((n) => !seen.has(n.toLowerCase()) && seen.add(n.toLowerCase()));
}

/** Model names as providers spell them: `gpt-4.1`, `openai/gpt-4o`, `llama3.1:8b`, `claude-3-5-sonnet@20240620`. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}$/;
const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const EXAMPLE = 'e.g. gpt-4.1=https://api.example.com/v1|EXAMPLE_KEY';

/**
 * The comma-separated entries of `name`. An empty entry (`a,,b`, a trailing comma) is a problem
 * line, not skipped: it is most often a name lost in an edit, and the chain would quietly be
 * shorter than the operator believes.
 */
function entries(r: SettingsReader, name: 'LLM_MODELS' | 'LLM_FALLBACK'): string[] {
  const value = r.str(name);
  if (value === undefined) return [];
  const all = value.split(',').map((e) => e.trim());
  if (all.some((e) => e === ''))
    r.problem(`${name} has an empty entry (two commas in a row, or one at an end) — write one model name between each pair of commas`);
  return all.filter(Boolean);
}

function checkName(r: SettingsReader, setting: string, name: string): boolean {
  if (NAME.test(name)) return true;
  r.problem(
    `${setting} has ${JSON.stringify(name.slice(0, 60))}, which is not a model name (letters, digits and . _ : / @ + -) — separate entries with commas`,
  );
  return false;
}

/** LLM_MODELS as entries, in the order written; problems go to the reader. */
export function readModelChoices(r: SettingsReader, env: Env): ModelEndpoint[] {
  const out: ModelEndpoint[] = [];
  for (const entry of entries(r, 'LLM_MODELS')) {
    const eq = entry.indexOf('=');
    const name = (eq < 0 ? entry : entry.slice(0, eq)).trim();
    if (!checkName(r, 'LLM_MODELS', name)) continue;
    if (out.some((m) => m.name.toLowerCase() === name.toLowerCase())) {
      r.problem(`LLM_MODELS names ${name} twice — keep one entry per model`);
      continue;
    }
    if (eq < 0) {
      out.push({ name, baseUrl: undefined, keyVariable: undefined, apiKey: undefined });
      continue;
    }
    const rest = entry.slice(eq + 1).trim();
    const bar = rest.indexOf('|');
    const baseUrl = (bar < 0 ? rest : rest.slice(0, bar)).trim();
    const variable = bar < 0 ? undefined : rest.slice(bar + 1).trim();
    if (!isHttpUrl(baseUrl)) {
      r.problem(`LLM_MODELS: the server of ${name} (after "=") is not an http(s) URL — write name=URL or name=URL|KEY_VARIABLE, ${EXAMPLE}`);
      continue;
    }
    if (variable !== undefined && !VARIABLE.test(variable)) {
      r.problem(
        `LLM_MODELS: after "|" ${name} needs the NAME of the environment variable holding its key (letters, digits, _), not the key itself — ${EXAMPLE}`,
      );
      continue;
    }
    const apiKey = variable === undefined ? undefined : env[variable]?.trim();
    if (variable !== undefined && !apiKey) {
      r.problem(`LLM_MODELS: ${name} takes its key from ${variable}, which is not set — set it in .env, or drop "|${variable}" for a server that needs no key`);
      continue;
    }
    out.push({ name, baseUrl, keyVariable: variable, apiKey });
  }
  return out;
}

/** LLM_FALLBACK as names, in order; each is a model of LLM_MODELS or a model on the default server. */
export function readFallback(r: SettingsReader): string[] {
  const out: string[] = [];
  for (const name of entries(r, 'LLM_FALLBACK')) {
    if (name.includes('=')) {
      r.problem(`LLM_FALLBACK has ${JSON.stringify(name.slice(0, name.indexOf('=')))} with a server — give its server in LLM_MODELS and only its name here`);
      continue;
    }
    if (!checkName(r, 'LLM_FALLBACK', name)) continue;
    if (out.some((m) => m.toLowerCase() === name.toLowerCase())) {
      r.problem(`LLM_FALLBACK names ${name} twice — each model is tried once`);
      continue;
    }
    out.push(name);
  }
  return out;
}
