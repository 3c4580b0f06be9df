/**
 * Tuning knobs arrive as partial records whose fields may be `undefined` (a test sets a few,
 * production none). Merging here, once, keeps callers from spreading each field conditionally.
 */

/** `defaults` with each known field that `given` sets; an `undefined` field keeps its default, unknown fields are dropped. */
export function withDefaults<T extends object>(defaults: T, given: { readonly [K in keyof T]?: T[K] | undefined } | undefined): T {
  const out = { ...defaults };
  if (!given) return out;
  for (const key of Object.keys(defaults) as Array<keyof T>) {
    const value = given[key];
    if (value !== undefined) out[key] = value as T[keyof T];
  }
  return out;
}
