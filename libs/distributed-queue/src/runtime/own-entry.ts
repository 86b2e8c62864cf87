/**
 * Sets `record[key]` as an own entry, whatever the key: assigning `"__proto__"` would set the object's
 * prototype instead (a flow node's ref, a user's name, may be "__proto__").
 */
export function setEntry<T>(record: Record<string, T>, key: string, value: T): void {
  if (key === '__proto__') Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
  else record[key] = value;
}
