/**
 * A JSON value as text with object keys sorted at every depth, so equal JSON values give
 * equal texts (a content hash, a set of distinct items). Follows `JSON.stringify`'s rule for
 * `undefined`: an object key whose value is `undefined` is left out, an array item that is
 * `undefined` becomes `null`.
 *
 * @example canonicalJson({ b: 1, a: [undefined], c: undefined }) // '{"a":[null],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
