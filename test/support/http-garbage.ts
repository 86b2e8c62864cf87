/**
 * Sweeps an HTTP API with bad input (dashboard-garbage, scheduler-garbage): the routes are read from a
 * controller's source, so a route added later is swept too; each path parameter, query string and body is
 * varied over bad values.
 */
import * as fs from 'fs';

export type Route = [method: 'GET' | 'POST' | 'DELETE', route: string];

/**
 * The routes a controller's source declares under `prefix` (`@Get('api/…')` with prefix 'api/'), each with the
 * controller's own path before it (`@Controller('orders')` + `@Post(':id/pay')`: `orders/:id/pay`).
 */
export function routesOf(file: string, prefix = ''): Route[] {
  const source = fs.readFileSync(file, 'utf8');
  const base = /@Controller\('([^']*)'\)/.exec(source)?.[1] ?? '';
  const routes = [...source.matchAll(/@(Get|Post|Delete)\((?:'([^']*)')?\)/g)].map((m): Route => [m[1].toUpperCase() as Route[0], [base, m[2] ?? ''].filter(Boolean).join('/')]);
  return routes.filter(([, route]) => route.startsWith(prefix));
}

export const PARAMS: Record<string, string[]> = {
  type: ['mail', 'nope', 'bad%7Btype', 'x'.repeat(300), 'acct', '%00', '__route__.x'],
  id: ['a', 'zz', 'x'.repeat(300), '%23gen', '%26node', '%00'],
  group: ['g', 'x'.repeat(300), '%00', '%20'],
};

export const QUERIES = [
  '', '?state=bogus', '?state=ready&limit=-1', '?state=ready&limit=abc', '?state=delayed&limit=1000000', '?state=dead&offset=-5',
  '?state=ready&offset=1e3', '?state=delayed&cursor=zz', '?state=ready&cursor=ready.g1.1.%25%25', '?state=ready&cursor=delayed.1.1',
  '?id=', '?id=' + 'x'.repeat(300), '?limit=0', '?offset=abc', '?state=ready&limit=1&limit=2', '?windowMs=-1',
];

export const BODIES = [
  undefined, 'not json', '[]', 'null', '"x"', '42', '{"all":"yes"}', '{"ids":"x"}', '{"ids":[1,2]}', '{"ids":[]}',
  `{"ids":[${Array.from({ length: 1001 }, (_, i) => `"i${i}"`).join(',')}]}`, '{"delayMs":-1}', '{"delayMs":"x","runAt":1}',
  '{"runAt":"yesterday"}', '{"max":"x","perMs":0}', '{"max":1.5,"perMs":-1}', '{"limit":null}', '{"n":1.5}', '{"n":-1}',
  '{"weight":0}', '{"weight":1e9}', '{"bogus":1}', '{"__proto__":{"x":1}}', '{"type":"mail","payload":{},"delayMs":-1}',
  '{"type":"bad{type","payload":1}', '{"type":"mail"}', '{"type":"mail","payload":1,"id":""}', JSON.stringify({ pad: 'x'.repeat(2 * 1024 * 1024) }),
];

/**
 * Bodies an application's own body parser refuses before any route runs (Nest's default answer: 400 for
 * what is not a JSON object or array, strict mode; 413 beyond its 100 kB): below 500, not the API's typed shape.
 */
export const PARSER_REFUSES = ['not json', 'null', '"x"', '42', BODIES[BODIES.length - 1]];

/** Every path a route makes with its parameters' bad values (each parameter varied, the others at their first). */
export function pathsOf(route: string): string[] {
  const names = [...route.matchAll(/:(\w+)/g)].map((m) => m[1]);
  const at = (values: Record<string, string>) => route.replace(/:(\w+)/g, (_, name: string) => values[name]);
  const first = Object.fromEntries(names.map((name) => [name, PARAMS[name]?.[0] ?? 'x']));
  const paths = new Set([at(first)]);
  for (const name of names) for (const value of PARAMS[name] ?? ['x', '%00']) paths.add(at({ ...first, [name]: value }));
  return [...paths];
}

/**
 * Calls every route with every bad path, query (GET) or body (POST, DELETE) through `call` (a path relative to
 * the API's base); returns what answered 500 or above, or (`typed`) 4xx without a typed error (`"name"` in its
 * body), and how many answered 2xx (a sweep of paths that all miss their routes would prove nothing).
 */
export async function sweepRoutes(
  routes: Route[], call: (path: string, init: RequestInit) => Promise<Response>, headers: Record<string, string>, typed = true,
): Promise<{ calls: number; answered: number; failures: string[] }> {
  const failures: string[] = [];
  let calls = 0;
  let answered = 0;
  for (const [method, route] of routes) {
    for (const p of pathsOf(route)) {
      const tries = method === 'GET' ? QUERIES.map((q) => ({ url: `/${p}${q}`, body: undefined })) : BODIES.map((body) => ({ url: `/${p}`, body }));
      for (const { url, body } of tries) {
        calls++;
        const res = await call(url, { method, headers, body, signal: AbortSignal.timeout(10_000) });
        const text = await res.text();
        if (res.status < 300) answered++;
        const shown = `${method} ${url.slice(0, 90)}${body === undefined ? '' : ` ${body.slice(0, 40)}`}`;
        if (res.status >= 500) failures.push(`${shown} → ${res.status} ${text.slice(0, 160)}`);
        else if (typed && res.status >= 400 && !PARSER_REFUSES.includes(body as string) && !/"name"/.test(text)) failures.push(`${shown} → ${res.status} without a typed error: ${text.slice(0, 160)}`);
      }
    }
  }
  return { calls, answered, failures };
}
