/** A JSON reply of the sample app. */
export interface Reply {
  status: number;
  body: any;
}

/** Calls the sample app over HTTP with a JSON body; bounded by a 5 s timeout. */
export async function httpCall(base: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Reply> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(5000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}
