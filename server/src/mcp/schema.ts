import { toJsonSchemaCompat } from '@modelcontextprotocol/sdk/server/zod-json-schema-compat.js';
import { findUnstorableText } from '@mnemo/contract';
import { z } from 'zod';
import { InvariantError, type ErrorDetails } from '../errors.js';

type JsonSchema = Record<string, unknown>;

/**
 * A tool's listed JSON Schema, from the contract's zod schema through the SDK's own converter.
 * Pipes are described by their output side: the contract writes `PgString.pipe(z.string().min(1))`,
 * and the bounds are on the output. The converter shares repeated sub-schemas through local
 * `$ref`s (`"user_id": {"$ref": "#/properties/userId"}`), which many model clients resolve badly,
 * so they are inlined (the contract has no recursive schemas).
 */
export function toolJsonSchema(schema: z.AnyZodObject): JsonSchema & { type: 'object' } {
  const converted = toJsonSchemaCompat(schema, { pipeStrategy: 'output' });
  return { ...(inlineRefs(converted, converted) as JsonSchema), type: 'object' };
}

/**
 * An output schema: as {@link toolJsonSchema}, but open to fields it does not name. Clients check
 * structuredContent against it (the SDK client throws on a mismatch), and REST does not validate
 * its responses either: a field a response gains before the contract names it must not break MCP
 * clients. Named fields keep their types and `required`.
 */
export function toolOutputJsonSchema(schema: z.AnyZodObject): JsonSchema & { type: 'object' } {
  return { ...(allowExtraFields(toolJsonSchema(schema)) as JsonSchema), type: 'object' };
}

function allowExtraFields(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(allowExtraFields);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node as JsonSchema)
      .filter(([key, value]) => !(key === 'additionalProperties' && value === false))
      .map(([key, value]) => [key, allowExtraFields(value)]),
  );
}

const MAX_DEPTH = 32;

function inlineRefs(node: unknown, root: unknown, depth = 0): unknown {
  if (depth > MAX_DEPTH) throw new InvariantError('JSON Schema nests too deep (recursive $ref?)');
  if (Array.isArray(node)) return node.map((item) => inlineRefs(item, root, depth + 1));
  if (!node || typeof node !== 'object') return node;
  const ref = (node as { $ref?: unknown }).$ref;
  if (typeof ref === 'string' && ref.startsWith('#/')) {
    const { $ref: _ref, ...rest } = node as JsonSchema;
    // The target's own description belongs to the field it was first seen on.
    const { description: _description, ...target } = inlineRefs(
      resolvePointer(root, ref),
      root,
      depth + 1,
    ) as JsonSchema;
    return { ...target, ...rest };
  }
  return Object.fromEntries(
    Object.entries(node as JsonSchema).map(([key, value]) => [
      key,
      inlineRefs(value, root, depth + 1),
    ]),
  );
}

function resolvePointer(root: unknown, pointer: string): unknown {
  let node = root;
  for (const raw of pointer.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!node || typeof node !== 'object' || !(key in node))
      throw new InvariantError(`Unresolvable $ref ${pointer}`);
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/**
 * The contract's object with a description on each field, for the model reading the tool list.
 * Descriptions are MCP's business; types and bounds stay the contract's.
 */
export function describeFields<T extends z.ZodRawShape>(
  shape: T,
  descriptions: { [K in keyof T]?: string },
): z.ZodObject<T> {
  const described = Object.fromEntries(
    Object.entries(shape).map(([key, field]) => {
      const description = descriptions[key as keyof T];
      return [key, description ? field.describe(description) : field];
    }),
  );
  return z.object(described as T);
}

const NUMBER = new Intl.NumberFormat('en-US', { maximumFractionDigits: 6 });

/** A contract bound as a description quotes it: `1 to 50,000`. */
export function between({ min, max }: { min: number; max: number }): string {
  return `${NUMBER.format(min)} to ${NUMBER.format(max)}`;
}

/**
 * The contract's values as a description lists them, `a, b (note) or c`, so that the listed
 * values are always exactly the contract's; `notes` explain some of them.
 */
export function listOf<V extends string>(
  values: readonly V[],
  conjunction: 'and' | 'or',
  notes: { [K in V]?: string } = {},
): string {
  const items = values.map((value) => (notes[value] ? `${value} (${notes[value]})` : value));
  const last = items.pop();
  if (last === undefined) return '';
  return items.length === 0 ? last : `${items.join(', ')} ${conjunction} ${last}`;
}

/**
 * The contract's text rule (no lone surrogates, no NUL) on a tool's whole arguments object,
 * keys included, as REST applies it to every parsed body: `undefined` when they pass, else the
 * details of a validation error naming the argument.
 */
export function unstorableArguments(args: unknown): ErrorDetails | undefined {
  const found = findUnstorableText(args);
  if (!found) return undefined;
  const field = found.path.length > 0 ? found.path.join('.') : 'arguments';
  return { [field]: [found.message] };
}
