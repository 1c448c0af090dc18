/**
 * Named component schemas for the OpenAPI document. ts-rest inlines every zod schema where it is
 * used; code generators then emit one anonymous type per use. Here each exported zod schema of
 * `schemas/` becomes `components.schemas.<ExportName>`, and every place in the document whose
 * schema is exactly that one's becomes a `$ref` to it. The JSON of each named schema comes from
 * the same generator ts-rest uses (through a one-route router), so "exactly" is a plain
 * comparison, and a use that differs (a field with its own description, another bound) stays
 * inline rather than being misnamed.
 */
import { generateOpenApi } from '@ts-rest/open-api';
import { initContract, type AppRouter } from '@ts-rest/core';
import { ZodType } from 'zod';
import * as admin from './schemas/admin.js';
import * as apiKeys from './schemas/api-keys.js';
import * as audit from './schemas/audit.js';
import * as billing from './schemas/billing.js';
import * as common from './schemas/common.js';
import * as connectors from './schemas/connectors.js';
import * as dashboard from './schemas/dashboard.js';
import * as health from './schemas/health.js';
import * as history from './schemas/history.js';
import * as ingest from './schemas/ingest.js';
import * as links from './schemas/links.js';
import * as memories from './schemas/memories.js';
import * as ownerData from './schemas/owner-data.js';
import * as pins from './schemas/pins.js';
import * as pruning from './schemas/pruning.js';
import * as search from './schemas/search.js';
import * as usage from './schemas/usage.js';
import * as webhooks from './schemas/webhooks.js';

/** A JSON Schema object as the OpenAPI document holds it. */
export type JsonSchema = { [key: string]: unknown };

const SCHEMA_MODULES: Array<Record<string, unknown>> = [
  common,
  memories,
  search,
  ingest,
  links,
  history,
  pins,
  usage,
  billing,
  health,
  dashboard,
  apiKeys,
  audit,
  connectors,
  pruning,
  admin,
  ownerData,
  webhooks,
];

const COMPONENT_PREFIX = '#/components/schemas/';

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A schema's children, rewritten by `map` (the schema itself is not passed to it). */
function mapChildren(schema: JsonSchema, map: (child: JsonSchema) => JsonSchema): JsonSchema {
  const out: JsonSchema = { ...schema };
  if (isSchema(schema.properties)) {
    out.properties = Object.fromEntries(
      Object.entries(schema.properties).map(([name, child]) => [
        name,
        isSchema(child) ? map(child) : child,
      ]),
    );
  }
  for (const key of ['items', 'additionalProperties', 'not'] as const) {
    const child = schema[key];
    if (isSchema(child)) out[key] = map(child);
  }
  for (const key of ['oneOf', 'anyOf', 'allOf'] as const) {
    const list = schema[key];
    if (Array.isArray(list)) out[key] = list.map((child) => (isSchema(child) ? map(child) : child));
  }
  return out;
}

/** The zod → OpenAPI generator's marker for a `null` member of a union. */
function isNullBranch(schema: unknown): boolean {
  return isSchema(schema) && schema.format === 'null';
}

/**
 * OpenAPI 3.0 ignores `nullable` on a schema without `type`. The generator writes a nullable
 * union as `{oneOf: [..., {type: 'string', format: 'null'}], nullable: true}`, whose null member
 * is also a second string; here `null` is allowed by the first typed member instead, so the
 * members stay mutually exclusive. A bare `{nullable: true}` (any value) loses the no-op flag.
 */
export function fixNullable(schema: JsonSchema): JsonSchema {
  const fixed = mapChildren(schema, fixNullable);
  if (fixed.nullable !== true || 'type' in fixed) return fixed;
  const { nullable: _nullable, ...rest } = fixed;
  for (const key of ['oneOf', 'anyOf'] as const) {
    const members = rest[key];
    if (!Array.isArray(members)) continue;
    const kept = members.filter((member) => !isNullBranch(member)) as JsonSchema[];
    const typed = kept.findIndex((member) => typeof member.type === 'string');
    if (typed < 0) return fixed;
    kept[typed] = { ...kept[typed], nullable: true };
    if (kept.length === 1) {
      const { [key]: _members, ...outer } = rest;
      return { ...outer, ...kept[0] };
    }
    return { ...rest, [key]: kept };
  }
  return rest;
}

/** JSON with object keys sorted: two schemas are the same when their keys are. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isSchema(value)) {
    const entries = Object.keys(value)
      .sort()
      .filter((key) => value[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Worth a name: objects, unions and enums (a plain string or number stays inline). */
function isNameable(schema: JsonSchema): boolean {
  return (
    schema.type === 'object' ||
    Array.isArray(schema.oneOf) ||
    Array.isArray(schema.anyOf) ||
    Array.isArray(schema.allOf) ||
    (Array.isArray(schema.enum) && schema.enum.length > 1)
  );
}

/**
 * How the generator writes each zod schema: as a request body (input: defaults make fields
 * optional) and as a response (output). One router with a route per schema: one generator run.
 */
function generatedForms(
  schemas: Array<[string, ZodType]>,
): Array<{ name: string; input: JsonSchema; output: JsonSchema }> {
  const c = initContract();
  const router = c.router(
    Object.fromEntries(
      schemas.map(([, schema], index) => [
        `probe${index}`,
        { method: 'POST', path: `/${index}`, body: schema, responses: { 200: schema } },
      ]),
    ),
  ) as AppRouter;
  const document = generateOpenApi(router, { info: { title: 'probe', version: '0' } });
  return schemas.map(([name], index) => {
    const operation = document.paths[`/${index}`]?.post as {
      requestBody?: { content: Record<string, { schema: JsonSchema }> };
      responses: Record<string, { content?: Record<string, { schema: JsonSchema }> }>;
    };
    const input = operation.requestBody?.content['application/json']?.schema ?? {};
    const output = operation.responses['200']?.content?.['application/json']?.schema ?? {};
    return { name, input: fixNullable(input), output: fixNullable(output) };
  });
}

interface NamedSchemas {
  /** Canonical JSON → component name. */
  byShape: Map<string, string>;
  /** Component name → its schema, children not yet replaced by references. */
  byName: Map<string, JsonSchema>;
}

let named: NamedSchemas | undefined;

/**
 * Every exported zod schema worth a name, by its JSON. When two exports give the same JSON (a
 * payload and the fields it refines), the later one names it: the refined, public schema is
 * declared after its parts. When a schema's input and output forms differ, the output form has
 * the plain name and the input form `<Name>Input`.
 */
function namedSchemas(): NamedSchemas {
  if (named) return named;
  const byShape = new Map<string, string>();
  const byName = new Map<string, JsonSchema>();
  const claim = (name: string, schema: JsonSchema) => {
    if (!isNameable(schema)) return;
    const shape = canonical(schema);
    const previous = byShape.get(shape);
    if (previous !== undefined) byName.delete(previous);
    byShape.set(shape, name);
    byName.set(name, schema);
  };
  const exported = SCHEMA_MODULES.flatMap((module) =>
    Object.entries(module).filter(
      (entry): entry is [string, ZodType] => entry[1] instanceof ZodType,
    ),
  );
  for (const { name, input, output } of generatedForms(exported)) {
    claim(name, output);
    if (canonical(input) !== canonical(output)) claim(`${name}Input`, input);
  }
  named = { byShape, byName };
  return named;
}

type MediaContent = Record<string, { schema?: JsonSchema }>;

/**
 * A request body or response that is still inline after the exported schemas were named (a
 * route-local wrapper such as the dashboard's `{ok, data}`, an export's JSON Lines text) is named
 * after its operation: `<OperationId>Body`, `<OperationId>Response` (another status: `Response<status>`).
 */
function nameOperationSchemas(
  paths: Record<string, Record<string, JsonSchema>>,
  byName: Map<string, JsonSchema>,
  reference: (name: string) => JsonSchema,
): void {
  const nameInline = (content: unknown, name: string) => {
    if (!isSchema(content)) return;
    for (const media of Object.values(content as MediaContent)) {
      const schema = media.schema;
      if (!schema || schema.$ref !== undefined) continue;
      if (byName.has(name)) throw new Error(`component schema ${name} is named twice`);
      byName.set(name, schema);
      media.schema = reference(name);
    }
  };
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      const id = typeof operation.operationId === 'string' ? capitalise(operation.operationId) : '';
      if (id === '') continue;
      nameInline((operation.requestBody as JsonSchema | undefined)?.content, `${id}Body`);
      const responses = (operation.responses ?? {}) as Record<string, JsonSchema>;
      for (const [status, response] of Object.entries(responses)) {
        const suffix = status === '200' ? 'Response' : `Response${status}`;
        nameInline(response.content, `${id}${suffix}`);
      }
    }
  }
}

function capitalise(word: string): string {
  return word
    .split(/[^A-Za-z0-9]+/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

/**
 * Replaces every schema of `document` that is exactly a named one by a `$ref`, and returns the
 * component schemas those references need (nested names referenced in turn). A discriminated
 * union's inline members are named `<Union><Value>` so its `discriminator` can map to them.
 */
export function withNamedSchemas<T extends JsonSchema>(document: T): T {
  const { byShape, byName: exported } = namedSchemas();
  // This document's own names (union members, operation wrappers) join a copy.
  const byName = new Map(exported);
  const components = new Map<string, JsonSchema>();
  const pending: string[] = [];

  const reference = (name: string): JsonSchema => {
    if (!components.has(name) && !pending.includes(name)) pending.push(name);
    return { $ref: `${COMPONENT_PREFIX}${name}` };
  };
  const replace = (schema: JsonSchema): JsonSchema => {
    const name = byShape.get(canonical(schema));
    return name === undefined ? mapChildren(schema, replace) : reference(name);
  };
  const nameMembers = (unionName: string, schema: JsonSchema): JsonSchema => {
    const discriminator = schema.discriminator as { propertyName?: string } | undefined;
    const property = discriminator?.propertyName;
    if (property === undefined || !Array.isArray(schema.oneOf)) return schema;
    const mapping: Record<string, string> = {};
    const members = (schema.oneOf as JsonSchema[]).map((member) => {
      const target = isSchema(member) && member.$ref === undefined ? member : undefined;
      const ref = typeof member.$ref === 'string' ? member.$ref : undefined;
      const resolved = target ?? byName.get(ref?.slice(COMPONENT_PREFIX.length) ?? '');
      const values = (resolved?.properties as Record<string, JsonSchema> | undefined)?.[property]
        ?.enum;
      const value = Array.isArray(values) && values.length === 1 ? String(values[0]) : undefined;
      if (value === undefined) return member;
      if (target) {
        const name = `${unionName}${capitalise(value)}`;
        byName.set(name, target);
        const memberRef = reference(name);
        mapping[value] = memberRef.$ref as string;
        return memberRef;
      }
      mapping[value] = ref as string;
      return member;
    });
    return { ...schema, oneOf: members, discriminator: { ...discriminator, mapping } };
  };

  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!isSchema(node)) return node;
    return Object.fromEntries(
      Object.entries(node).map(([key, value]) => [
        key,
        key === 'schema' && isSchema(value) ? replace(fixNullable(value)) : walk(value),
      ]),
    );
  };
  const paths = walk(document.paths) as Record<string, Record<string, JsonSchema>>;
  nameOperationSchemas(paths, byName, reference);

  while (pending.length > 0) {
    const name = pending.shift() as string;
    const schema = byName.get(name);
    if (!schema) throw new Error(`no component schema ${name}`);
    components.set(name, nameMembers(name, mapChildren(schema, replace)));
  }
  const existing = isSchema(document.components) ? document.components : {};
  const sorted = Object.fromEntries([...components].sort(([a], [b]) => a.localeCompare(b)));
  return {
    ...document,
    paths,
    components: { ...existing, schemas: sorted },
  };
}
