/**
 * The one rule for text the service takes in: PostgreSQL stores it as given. A string must be
 * well-formed UTF-16 (no lone surrogate, which UTF-8 cannot encode: drivers replace it with
 * U+FFFD, so two different ill-formed ids would become one stored id) and must not contain NUL
 * (text and jsonb refuse it). The contract's string fields carry the rule (`PgString`), and the
 * server applies {@link findUnstorableText} to every parsed request input, so a route added later
 * is covered even where its schema says only `z.string()`.
 */

/**
 * A high surrogate not followed by a low one, or a low one not preceded by a high one. Matched on
 * code units (no `u` flag) so it behaves as `String.prototype.isWellFormed` does, in browsers
 * without it too.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a string is refused, as a validation message; `undefined` when it is storable. */
export function unstorableTextReason(value: string): string | undefined {
  if (LONE_SURROGATE.test(value)) return 'must be well-formed text (no lone UTF-16 surrogates)';
  if (value.includes('\u0000')) return 'must not contain the NUL character (\\u0000)';
  return undefined;
}

/** The text rule as the OpenAPI document states it on string fields. */
export const TEXT_RULE_DESCRIPTION =
  'Well-formed Unicode text: no lone UTF-16 surrogates and no NUL (\\u0000) character.';

/** Where a value holds an unstorable string: the path (keys and indexes) and why. */
export interface UnstorableText {
  path: Array<string | number>;
  message: string;
}

/** Deeper than any request the contract describes; a body nested further is refused as such. */
export const MAX_INPUT_DEPTH = 64;

/**
 * The first unstorable string in a parsed input (JSON body, query object, tool arguments),
 * object keys included, or a note that it nests deeper than {@link MAX_INPUT_DEPTH}. Iterative,
 * so a hostile depth cannot overflow the stack.
 */
export function findUnstorableText(input: unknown): UnstorableText | undefined {
  const stack: Array<{ value: unknown; path: Array<string | number> }> = [
    { value: input, path: [] },
  ];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (typeof value === 'string') {
      const message = unstorableTextReason(value);
      if (message) return { path, message };
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (path.length >= MAX_INPUT_DEPTH) {
      return { path, message: `nests deeper than ${MAX_INPUT_DEPTH} levels` };
    }
    if (Array.isArray(value)) {
      value.forEach((item, index) => stack.push({ value: item, path: [...path, index] }));
      continue;
    }
    for (const [key, item] of Object.entries(value)) {
      const keyMessage = unstorableTextReason(key);
      // A bad key is reported on its object: the key itself cannot be shown as a path.
      if (keyMessage) return { path, message: `has a key that ${keyMessage}` };
      stack.push({ value: item, path: [...path, key] });
    }
  }
  return undefined;
}
