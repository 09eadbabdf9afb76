import type { JsonSchema } from '../../chat/types.ts';

/**
 * Client JSON Schemas (structured outputs, tool parameters) as Gemini takes
 * them. The adapter sends JSON Schema itself, in `responseJsonSchema` and
 * `parametersJsonSchema`, rather than translating into the OpenAPI-subset
 * `Schema` object of `responseSchema` / `parameters`: the Gemini API documents
 * both fields as taking JSON Schema (`GenerationConfig.responseJsonSchema`,
 * `FunctionDeclaration.parametersJsonSchema`, generativelanguage v1beta;
 * ai.google.dev/gemini-api/docs/structured-output#json-schema), and the JSON
 * Schema route expresses far more of what OpenAI clients send: `$ref`/`$defs`,
 * `anyOf`, `type: [..., "null"]`, `additionalProperties`, `minimum`/`maximum`,
 * `prefixItems`.
 *
 * The documented subset is `$id`, `$defs`, `$ref`, `$anchor`, `type`,
 * `format`, `title`, `description`, `enum` (strings and numbers), `items`,
 * `prefixItems`, `minItems`, `maxItems`, `minimum`, `maximum`, `anyOf`,
 * `oneOf` (read as `anyOf`), `properties`, `additionalProperties`,
 * `required` and the non-standard `propertyOrdering` (doc of
 * `GenerationConfig.responseJsonSchema`). Other keywords are accepted but
 * ignored upstream, so a reply could silently break a constraint the client
 * relies on: those are refused here instead, naming the keyword. Pure
 * annotations are dropped, and a few equivalent spellings are rewritten.
 *
 * Tool parameters are read differently: a function declaration guides the
 * model, it guarantees nothing (no upstream format but OpenAI's enforces a
 * tool schema, and callers such as Claude Code validate a call's input and
 * answer a bad one with an error result the model corrects). So there the
 * constraints of Gemini's own `Schema` object (generativelanguage v1beta:
 * `minLength`, `maxLength`, `pattern`, `minProperties`, `maxProperties`)
 * are sent as they are, an integer's `exclusiveMinimum`/`exclusiveMaximum`
 * become the equivalent `minimum`/`maximum`, and the other constraints,
 * which only narrow what is valid, are left out and named (the reply's
 * `X-Gateway-Dropped-Params`). What would change what the parameters are
 * (`allOf`, dynamic and recursive references) is still refused.
 */

/** Constraint keywords Gemini would ignore, so its output could break them. */
const INEXPRESSIBLE: ReadonlySet<string> = new Set([
  'allOf',
  'not',
  'if',
  'then',
  'else',
  'pattern',
  'minLength',
  'maxLength',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'uniqueItems',
  'contains',
  'minContains',
  'maxContains',
  'additionalItems',
  'unevaluatedItems',
  'minProperties',
  'maxProperties',
  'patternProperties',
  'propertyNames',
  'dependentRequired',
  'dependentSchemas',
  'dependencies',
  'unevaluatedProperties',
  '$dynamicRef',
  '$dynamicAnchor',
  '$recursiveRef',
  '$recursiveAnchor',
]);

/** Constraints of Gemini's `Schema` object, sent as they are in tool parameters. */
const PARAMETER_CONSTRAINTS: ReadonlySet<string> = new Set([
  'minLength',
  'maxLength',
  'pattern',
  'minProperties',
  'maxProperties',
]);

/** What changes the shape of tool parameters rather than narrowing it: refused in them too. */
const PARAMETER_INEXPRESSIBLE: ReadonlySet<string> = new Set([
  'allOf',
  '$dynamicRef',
  '$dynamicAnchor',
  '$recursiveRef',
  '$recursiveAnchor',
]);

/** Annotations without effect on valid output, outside the documented subset: dropped rather than sent. */
const DROPPED: ReadonlySet<string> = new Set([
  '$schema',
  '$comment',
  'default',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
]);

/** Keywords whose value maps names to subschemas. */
const SCHEMA_MAPS: ReadonlySet<string> = new Set(['properties', '$defs']);

/** Keywords whose value is a list of subschemas. */
const SCHEMA_LISTS: ReadonlySet<string> = new Set(['anyOf', 'oneOf', 'prefixItems']);

/**
 * The schema as sent, with the keywords left out of it (tool parameters
 * only, see above), or the reason it cannot be sent.
 */
export type SchemaTranslation = { schema: JsonSchema; leftOut: string[] } | { problem: string };

/** A response schema constrains the reply; tool parameters guide the model. */
export type SchemaUse = 'response' | 'parameters';

/** Thrown inside the walk, turned into a `problem` at the top. */
class Inexpressible extends Error {}

/** One walk's settings and findings. */
interface Walk {
  use: SchemaUse;
  leftOut: Set<string>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `a.b.c`, or `the root` for the schema itself; clipped so a hostile schema cannot inflate the message. */
function describePath(path: readonly string[]): string {
  if (path.length === 0) return 'the root';
  const text = path.join('.');
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
}

/**
 * The schema as sent to Gemini, or the reason it cannot be (for `validate()`).
 * `where` names the schema in the message, e.g. `response_format.json_schema.schema`.
 */
export function toGeminiJsonSchema(schema: JsonSchema, where: string, use: SchemaUse = 'response'): SchemaTranslation {
  const walk: Walk = { use, leftOut: new Set() };
  try {
    const translated = translate(schema, [], walk);
    return { schema: isRecord(translated) ? translated : schema, leftOut: [...walk.leftOut] };
  } catch (error) {
    if (error instanceof Inexpressible)
      return { problem: `${where} ${error.message}, which provider_b cannot express.` };
    throw error;
  }
}

function refuse(keyword: string, path: readonly string[], detail = ''): never {
  throw new Inexpressible(`uses '${keyword}'${detail} (at ${describePath(path)})`);
}

/** An integer's exclusive bound as the inclusive one it equals, when it is an integer too. */
function inclusiveBound(
  node: Record<string, unknown>,
  key: 'exclusiveMinimum' | 'exclusiveMaximum',
): number | undefined {
  const bound = node[key];
  if (node.type !== 'integer' || typeof bound !== 'number' || !Number.isInteger(bound)) return undefined;
  return key === 'exclusiveMinimum' ? bound + 1 : bound - 1;
}

/** Whether a keyword the response route refuses goes into tool parameters (true), or is left out of them (false). */
function keepInParameters(
  key: string,
  node: Record<string, unknown>,
  out: Record<string, unknown>,
  path: readonly string[],
  walk: Walk,
): boolean {
  if (PARAMETER_INEXPRESSIBLE.has(key)) refuse(key, path);
  if (PARAMETER_CONSTRAINTS.has(key)) return true;
  if (key === 'exclusiveMinimum' || key === 'exclusiveMaximum') {
    const bound = inclusiveBound(node, key);
    if (bound !== undefined) {
      const inclusive = key === 'exclusiveMinimum' ? 'minimum' : 'maximum';
      const other = node[inclusive];
      const tighter =
        typeof other !== 'number'
          ? bound
          : key === 'exclusiveMinimum'
            ? Math.max(bound, other)
            : Math.min(bound, other);
      out[inclusive] = tighter;
      return false;
    }
  }
  walk.leftOut.add(key);
  return false;
}

function translate(node: unknown, path: string[], walk: Walk): unknown {
  // Boolean schemas (`true`/`false`) and non-objects pass as they are.
  if (!isRecord(node)) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (INEXPRESSIBLE.has(key)) {
      if (walk.use === 'response') refuse(key, path);
      if (!keepInParameters(key, node, out, path, walk)) continue;
    }
    if (DROPPED.has(key)) continue;
    const at = [...path, key];
    if (key === 'definitions' || SCHEMA_MAPS.has(key)) {
      // Draft-07 `definitions` is the same as `$defs`; refs are rewritten below to match.
      const name = key === 'definitions' ? '$defs' : key;
      if (!isRecord(value)) refuse(key, path, ' with a value that is not an object');
      const map: Record<string, unknown> = {};
      for (const [entry, subschema] of Object.entries(value)) map[entry] = translate(subschema, [...at, entry], walk);
      out[name] = { ...(isRecord(out[name]) ? out[name] : {}), ...map };
    } else if (SCHEMA_LISTS.has(key)) {
      if (!Array.isArray(value)) refuse(key, path, ' with a value that is not a list');
      out[key] = value.map((subschema, i) => translate(subschema, [...at, String(i)], walk));
    } else if (key === 'items') {
      // Draft-07 tuples (`items: [...]`) are 2020-12 `prefixItems`.
      if (Array.isArray(value))
        out.prefixItems = value.map((subschema, i) => translate(subschema, [...at, String(i)], walk));
      else out.items = translate(value, at, walk);
    } else if (key === 'additionalProperties') {
      out[key] = typeof value === 'boolean' ? value : translate(value, at, walk);
    } else if ((key === 'minimum' || key === 'maximum') && out[key] !== undefined) {
      // Already set from an exclusive bound, as the tighter of the two.
      continue;
    } else if (key === '$ref') {
      out[key] = typeof value === 'string' ? value.replace(/^#\/definitions\//, '#/$defs/') : value;
    } else if (key === 'const') {
      // A constant string or number is a one-value `enum`; other constants have no documented counterpart.
      if (typeof value !== 'string' && typeof value !== 'number')
        refuse('const', path, ' with a value that is not a string or a number');
      out.enum = [value];
    } else {
      out[key] = value;
    }
  }
  return finish(out, path);
}

/** The rewrites that depend on a whole node. */
function finish(node: Record<string, unknown>, path: readonly string[]): Record<string, unknown> {
  // Gemini 2.5+ keeps the schema's key order, earlier models follow only an
  // explicit `propertyOrdering` (structured-output doc): spell it out.
  if (isRecord(node.properties) && node.propertyOrdering === undefined)
    node.propertyOrdering = Object.keys(node.properties);

  // "If `$ref` is set on a sub-schema, no other properties, except for those
  // starting as a `$`, may be set": a one-branch `anyOf` holds the reference
  // and the siblings stay beside it, which means the same. A sibling
  // `anyOf`/`oneOf` would need `allOf` to combine with it.
  if (node.$ref !== undefined && Object.keys(node).some((key) => !key.startsWith('$'))) {
    if (node.anyOf !== undefined || node.oneOf !== undefined) refuse('$ref', path, " beside 'anyOf' or 'oneOf'");
    // Only `$ref` moves: a `$defs` or `$id` beside it must stay where `#` finds it.
    const { $ref, ...rest } = node;
    return { ...rest, anyOf: [{ $ref }] };
  }

  if (Array.isArray(node.enum)) return finishEnum(node, node.enum, path);
  return node;
}

/**
 * `enum` is documented for strings and numbers. A `null` member (OpenAI's
 * nullable enum) becomes `anyOf: [<enum without null>, {type: "null"}]`;
 * booleans and objects are refused.
 */
function finishEnum(
  node: Record<string, unknown>,
  values: readonly unknown[],
  path: readonly string[],
): Record<string, unknown> {
  const present = values.filter((value) => value !== null);
  if (present.some((value) => typeof value !== 'string' && typeof value !== 'number')) {
    refuse('enum', path, ' with values that are not strings or numbers');
  }
  if (present.length === values.length) return node;
  if (present.length === 0) return { type: 'null' };
  const { description, title, ...rest } = node;
  const type = Array.isArray(rest.type) ? rest.type.filter((t) => t !== 'null') : rest.type;
  const branch: Record<string, unknown> = { ...rest, enum: present };
  if (Array.isArray(type) && type.length === 1) branch.type = type[0];
  else if (type !== undefined) branch.type = type;
  const out: Record<string, unknown> = { anyOf: [branch, { type: 'null' }] };
  if (title !== undefined) out.title = title;
  if (description !== undefined) out.description = description;
  return out;
}
