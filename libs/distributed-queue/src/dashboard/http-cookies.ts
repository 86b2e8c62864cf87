/** The cookies of a request's `Cookie` header (the first of each name). */
export function parseCookies(header: string | string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  const text = Array.isArray(header) ? header.join('; ') : (header ?? '');
  for (const part of text.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    if (!name || name in out) continue;
    try {
      out[name] = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      out[name] = part.slice(eq + 1).trim();
    }
  }
  return out;
}

/** A `Set-Cookie` value: SameSite=Strict, limited to `path`, HttpOnly unless the page must read it. */
export function cookie(name: string, value: string, options: { path: string; httpOnly: boolean; maxAgeS?: number }): string {
  const parts = [`${name}=${encodeURIComponent(value)}`, `Path=${options.path}`, 'SameSite=Strict'];
  if (options.httpOnly) parts.push('HttpOnly');
  if (options.maxAgeS !== undefined) parts.push(`Max-Age=${options.maxAgeS}`);
  return parts.join('; ');
}
