import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validate, type JsonSchema } from '../../src/tools/schema.js';

test('type checks for each primitive', () => {
  assert.equal(validate({ type: 'string' }, 'x'), null);
  assert.match(validate({ type: 'string' }, 5)!, /arguments must be a string/);
  assert.equal(validate({ type: 'number' }, 1.5), null);
  assert.match(validate({ type: 'number' }, '1.5')!, /must be a number/);
  assert.equal(validate({ type: 'integer' }, 3), null);
  assert.match(validate({ type: 'integer' }, 3.5)!, /integer/);
  assert.equal(validate({ type: 'boolean' }, false), null);
  assert.match(validate({ type: 'boolean' }, 'false')!, /must be a boolean/);
  assert.equal(validate({ type: 'array' }, []), null);
  assert.match(validate({ type: 'array' }, {})!, /must be an array/);
});

test('an object is a plain object: not null, not an array', () => {
  assert.equal(validate({ type: 'object' }, {}), null);
  assert.match(validate({ type: 'object' }, null)!, /must be an object/);
  assert.match(validate({ type: 'object' }, [])!, /must be an object/);
  assert.match(validate({ type: 'object' }, 'x')!, /must be an object/);
});

const person: JsonSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 10 },
    age: { type: 'integer', minimum: 0, maximum: 150 },
    mood: { type: 'string', enum: ['happy', 'sad'] },
  },
  required: ['name'],
  additionalProperties: false,
};

test('required properties must be present', () => {
  assert.equal(validate(person, { name: 'Ada' }), null);
  assert.equal(validate(person, {}), 'arguments.name is required');
  assert.match(validate(person, { age: 3 })!, /arguments\.name is required/);
});

test('properties are checked against their own schema, with their path', () => {
  assert.equal(validate(person, { name: 'Ada', age: 36, mood: 'happy' }), null);
  assert.equal(validate(person, { name: 7 }), 'arguments.name must be a string');
  assert.match(validate(person, { name: 'Ada', age: 'old' })!, /^arguments\.age must be a.? integer$/);
});

test('enum accepts only the listed values and names them', () => {
  const p = validate(person, { name: 'Ada', mood: 'angry' });
  assert.ok(p);
  assert.match(p, /arguments\.mood must be one of "happy", "sad"/);
  assert.equal(validate({ enum: [1, 2] }, 2), null);
  assert.match(validate({ enum: [1, 2] }, '2')!, /one of 1, 2/);
});

test('additionalProperties: false rejects unknown keys; otherwise they are allowed', () => {
  assert.equal(validate(person, { name: 'Ada', city: 'London' }), 'arguments.city is not a known argument');
  const open: JsonSchema = { ...person, additionalProperties: undefined };
  assert.equal(validate(open, { name: 'Ada', city: 'London' }), null);
});

test('additionalProperties: false also rejects keys named like Object.prototype members', () => {
  // JSON.parse gives these as ordinary own keys, and a model can send them; they are no more
  // "known arguments" than `city` is.
  const slipped: string[] = [];
  for (const key of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
    const args = JSON.parse(`{"name": "Ada", "${key}": 1}`);
    if (validate(person, args) !== `arguments.${key} is not a known argument`) slipped.push(key);
  }
  assert.deepEqual(slipped, [], `accepted as known arguments: ${slipped.join(', ')}`);
});

test('numbers: minimum and maximum are inclusive', () => {
  assert.equal(validate(person, { name: 'A', age: 0 }), null);
  assert.equal(validate(person, { name: 'A', age: 150 }), null);
  assert.equal(validate(person, { name: 'A', age: -1 }), 'arguments.age must be >= 0');
  assert.equal(validate(person, { name: 'A', age: 151 }), 'arguments.age must be <= 150');
  assert.equal(validate({ type: 'number', minimum: 0.5 }, 0.4), 'arguments must be >= 0.5');
});

test('strings: minLength, maxLength and pattern', () => {
  assert.equal(validate(person, { name: '' }), 'arguments.name must have at least 1 characters');
  assert.equal(validate(person, { name: 'abcdefghijk' }), 'arguments.name must have at most 10 characters');
  assert.equal(validate({ type: 'string', pattern: '^[a-z]+$' }, 'abc'), null);
  assert.equal(validate({ type: 'string', pattern: '^[a-z]+$' }, 'ab1'), 'arguments must match ^[a-z]+$');
});

test('nested arrays and objects are checked item by item, and the first problem names its path', () => {
  const schema: JsonSchema = {
    type: 'object',
    properties: {
      tags: { type: 'array', items: { type: 'string' } },
      matrix: { type: 'array', items: { type: 'array', items: { type: 'number', maximum: 9 } } },
      people: { type: 'array', items: person },
    },
  };
  assert.equal(validate(schema, { tags: ['a', 'b'], matrix: [[1, 2], [3]], people: [{ name: 'Ada' }] }), null);
  assert.equal(validate(schema, { tags: ['a', 2] }), 'arguments.tags[1] must be a string');
  assert.equal(validate(schema, { tags: 'a' }), 'arguments.tags must be an array');
  assert.equal(validate(schema, { matrix: [[1], [2, 10]] }), 'arguments.matrix[1][1] must be <= 9');
  assert.equal(validate(schema, { matrix: [[1], 'x'] }), 'arguments.matrix[1] must be an array');
  assert.equal(validate(schema, { people: [{ name: 'Ada' }, {}] }), 'arguments.people[1].name is required');
  assert.equal(validate(schema, { people: [{ name: 'Ada', x: 1 }] }), 'arguments.people[0].x is not a known argument');
  assert.equal(validate(schema, { tags: [] }), null, 'an empty array is fine');
});

test('the get_current_time schema: optional string timezone, nothing else', () => {
  const schema: JsonSchema = { type: 'object', properties: { timezone: { type: 'string' } }, additionalProperties: false };
  assert.equal(validate(schema, {}), null);
  assert.equal(validate(schema, { timezone: 'Asia/Tokyo' }), null);
  assert.equal(validate(schema, { timezone: 5 }), 'arguments.timezone must be a string');
  assert.equal(validate(schema, { timezone: null }), 'arguments.timezone must be a string');
  assert.equal(validate(schema, { tz: 'UTC' }), 'arguments.tz is not a known argument');
});

test("risk: an MCP server's schema in forms this checker does not know (type lists, a pattern JS cannot compile, odd required/properties) — not checked, never refused or thrown", () => {
  const outside = {
    type: 'object',
    properties: { note: { type: ['string', 'null'] }, code: { type: 'string', pattern: '(?<=a' }, deep: 'not a schema', list: { type: 'array', items: true } },
    required: 'note',
    anyOf: [{ required: ['note'] }],
  } as unknown as JsonSchema;
  assert.equal(validate(outside, { note: null, code: 'x', deep: 1, list: [1, 'a'] }), null);
  assert.equal(validate(outside, {}), null);
  // What it knows it still checks.
  assert.equal(validate({ type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'] }, { n: 0 }), 'arguments.n must be >= 1');
});
