// The dashboard's admin API (see src/dashboard/dashboard-api.ts): JSON over fetch, the CSRF header on POSTs,
// errors as ApiError { name, message, status }.

const root = document.getElementById('app');

/** The path the dashboard is mounted at, without a trailing slash (e.g. "/queues"). */
export const base = (root?.dataset.base ?? '').replace(/\/+$/, '');
export const title = root?.dataset.title || 'Distributed queues';

export class ApiError extends Error {
  constructor(name, message, status) {
    super(message);
    this.name = name;
    this.status = status;
  }
}

/** The value of the (non-HttpOnly) cookie `dq_csrf` the server sets with the page. */
function csrfToken() {
  for (const part of document.cookie.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === 'dq_csrf') return decodeURIComponent(rest.join('='));
  }
  return '';
}

async function request(method, path, body, root = '/api') {
  const headers = { accept: 'application/json' };
  if (method === 'POST') {
    headers['content-type'] = 'application/json';
    headers['x-csrf-token'] = csrfToken();
  }
  let res;
  try {
    res = await fetch(`${base}${root}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
    });
  } catch (error) {
    throw new ApiError('NetworkError', error?.message || 'the server cannot be reached', 0);
  }
  const text = await res.text();
  let data;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = undefined;
  }
  if (!res.ok) {
    const err = data?.error;
    throw new ApiError(err?.name || `HTTP ${res.status}`, err?.message || res.statusText || text.slice(0, 200), res.status);
  }
  return data;
}

export const get = (path) => request('GET', path);
export const post = (path, body = {}) => request('POST', path, body);
/** Ends this browser's session on the server (every instance) and clears its cookie. */
export const signOut = () => request('POST', '/logout', {}, '');

/** `/types/<type>` with the type URL-encoded. */
export const typePath = (type) => `/types/${encodeURIComponent(type)}`;
/** `/types/<type>/groups/<group>` with both URL-encoded. */
export const groupPath = (type, group) => `${typePath(type)}/groups/${encodeURIComponent(group)}`;
/** `/types/<type>/tasks/<id>` with both URL-encoded. */
export const taskPath = (type, id) => `${typePath(type)}/tasks/${encodeURIComponent(id)}`;
