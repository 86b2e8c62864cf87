/** Characters of a value quoted in an error message; longer strings are cut (a 100 kB id stays a line). */
const QUOTE_MAX = 64;

/** A value as it appears in an error message: JSON, strings cut to a prefix with their length. */
export function quote(value: unknown): string {
  if (typeof value === 'string' && value.length > QUOTE_MAX) {
    return `${JSON.stringify(value.slice(0, QUOTE_MAX))}… (${value.length} characters)`;
  }
  try {
    const json = JSON.stringify(value);
    if (json === undefined) return String(value);
    return json.length > QUOTE_MAX + 2 ? `${json.slice(0, QUOTE_MAX)}… (${json.length} characters of JSON)` : json;
  } catch {
    return String(value);
  }
}
