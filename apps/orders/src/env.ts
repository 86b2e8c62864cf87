/** A start-up problem the user can fix (bad setting, missing tool): main prints its message without a stack. */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** Reads an integer from the environment: `fallback` when unset or empty, an error when out of range. */
export function intFromEnv(name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new StartupError(`Environment variable ${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

/** A Redis URL with its password hidden, for logs. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]*):([^@/]*)@/, '//$1:***@');
}
