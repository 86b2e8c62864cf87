/** Characters of a value quoted in an error message; longer strings are cut (a 100 kB id stays a line). */
const QUOTE_MAX = 64;

/** JSON, but NaN, Infinity and -Infinity (which JSON writes as null) by their names. */
function toJson(value: unknown): string | undefined {
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v));
}

/** A value as it appears in an error message: JSON, strings cut to a prefix with their length. */
export function quote(value: unknown): string {
  if (typeof value === 'string' && value.length > QUOTE_MAX) {
    return `${JSON.stringify(value.slice(0, QUOTE_MAX))}… (${value.length} characters)`;
  }
  try {
    const json = toJson(value);
    if (json === undefined) return String(value);
    return json.length > QUOTE_MAX + 2 ? `${json.slice(0, QUOTE_MAX)}… (${json.length} characters of JSON)` : json;
  } catch {
    return String(value);
  }
}
