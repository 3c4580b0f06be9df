/**
 * A small JSON Schema checker for tool arguments. Our tools declare simple schemas (objects of
 * strings, numbers, booleans, enums, arrays); this covers exactly those keywords and reports
 * the first problem in words the model can act on. A schema from outside (an MCP server's) may
 * use other keywords or forms (`"type": ["string", "null"]`, a bad pattern): what is not
 * understood is not checked, never refused — the server checks its own input.
 */
export interface JsonSchema {
  type?: 'object' | 'string' | 'number' | 'integer' | 'boolean' | 'array';
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean;
  enum?: readonly (string | number)[];
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
}

/** Returns null when `value` matches, else a one-line description of the first mismatch. */
export function validate(schema: JsonSchema, value: unknown, at = 'arguments'): string | null {
  if (typeof schema.type === 'string' && TYPES.includes(schema.type)) {
    const ok =
      schema.type === 'object'
        ? typeof value === 'object' && value !== null && !Array.isArray(value)
        : schema.type === 'array'
          ? Array.isArray(value)
          : schema.type === 'integer'
            ? Number.isInteger(value)
            : schema.type === 'number'
              ? typeof value === 'number' && Number.isFinite(value)
              : typeof value === schema.type;
    if (!ok) return `${at} must be ${/^[aeiou]/.test(schema.type) ? 'an' : 'a'} ${schema.type}`;
  }
  if (Array.isArray(schema.enum) && !schema.enum.includes(value as string | number)) {
    return `${at} must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`;
  }
  if (typeof value === 'string') {
    if (schema.minLength !== undefined && value.length < schema.minLength) return `${at} must have at least ${schema.minLength} characters`;
    if (schema.maxLength !== undefined && value.length > schema.maxLength) return `${at} must have at most ${schema.maxLength} characters`;
    const pattern = typeof schema.pattern === 'string' ? compile(schema.pattern) : undefined;
    if (pattern && !pattern.test(value)) return `${at} must match ${schema.pattern}`;
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) return `${at} must be >= ${schema.minimum}`;
    if (schema.maximum !== undefined && value > schema.maximum) return `${at} must be <= ${schema.maximum}`;
  }
  if (Array.isArray(value) && isSchema(schema.items)) {
    for (const [i, item] of value.entries()) {
      const p = validate(schema.items, item, `${at}[${i}]`);
      if (p) return p;
    }
  }
  if (schema.type === 'object' && typeof value === 'object' && value !== null) {
    const obj = value as Record<string, unknown>;
    for (const key of Array.isArray(schema.required) ? schema.required : []) {
      if (typeof key === 'string' && (!Object.hasOwn(obj, key) || obj[key] === undefined)) return `${at}.${key} is required`;
    }
    for (const [key, v] of Object.entries(obj)) {
      // Own keys only: names such as `constructor` must not resolve to Object.prototype members.
      const prop =
        isSchema(schema.properties) && Object.hasOwn(schema.properties, key) && isSchema(schema.properties[key]) ? schema.properties[key] : undefined;
      if (!prop) {
        if (schema.additionalProperties === false) return `${at}.${key} is not a known argument`;
        continue;
      }
      const p = validate(prop, v, `${at}.${key}`);
      if (p) return p;
    }
  }
  return null;
}

const TYPES: readonly unknown[] = ['object', 'string', 'number', 'integer', 'boolean', 'array'];

function isSchema(v: unknown): v is object {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A pattern this engine cannot compile is not checked. */
function compile(pattern: string): RegExp | undefined {
  try {
    return new RegExp(pattern, 'u');
  } catch {
    return undefined;
  }
}
