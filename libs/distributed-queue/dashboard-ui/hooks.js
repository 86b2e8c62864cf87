import { useEffect, useRef, useState } from 'preact/hooks';

/** `#/types/a?state=dead` → { path: '/types/a', parts: ['types', 'a'], query }. */
export function parseHash(hash) {
  const raw = hash.replace(/^#/, '') || '/';
  const q = raw.indexOf('?');
  const path = q < 0 ? raw : raw.slice(0, q);
  const parts = path.split('/').filter(Boolean).map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return p;
    }
  });
  return { path, parts, query: new URLSearchParams(q < 0 ? '' : raw.slice(q + 1)) };
}

/** A hash link: `hashHref('/types/a', { state: 'dead' })` → `#/types/a?state=dead` (empty values left out). */
export function hashHref(path, params = {}) {
  const entries = Object.entries(params).filter(([, v]) => v !== undefined && v !== null && v !== '');
  const qs = new URLSearchParams(entries.map(([k, v]) => [k, String(v)])).toString();
  return `#${path}${qs ? `?${qs}` : ''}`;
}

/** The current location.hash, parsed; re-renders on hashchange. */
export function useHashRoute() {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const onChange = () => setHash(location.hash);
    addEventListener('hashchange', onChange);
    // Effects run after the first paint: a hash changed before that fired no event we heard.
    onChange();
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return parseHash(hash);
}

/**
 * Loads `load()` now, whenever `deps` change or `reload()` is called, and every `intervalMs` (0: once).
 * `intervalMs` may be a function `(data, error) => ms` of the last value loaded for these deps and the
 * failure of this load, asked after each load: polling while the data says so, with no extra load at a switch.
 * `data` is the last value loaded for the current deps; `error` the last failure (cleared by a success).
 */
export function usePoll(load, deps, intervalMs = 0) {
  const key = JSON.stringify(deps);
  const [state, setState] = useState({ key: undefined, data: undefined, error: undefined });
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  const everyRef = useRef(intervalMs);
  everyRef.current = intervalMs;
  useEffect(() => {
    let alive = true;
    let timer;
    let last;
    const run = async () => {
      let failure;
      try {
        last = await loadRef.current();
        if (alive) setState({ key, data: last, error: undefined });
      } catch (error) {
        failure = error;
        if (alive) setState((s) => ({ key, data: s.key === key ? s.data : undefined, error }));
      }
      const every = everyRef.current;
      const ms = typeof every === 'function' ? every(last, failure) : every;
      if (alive && ms > 0) timer = setTimeout(run, ms);
    };
    run();
    return () => {
      alive = false;
      clearTimeout(timer);
    };
  }, [key, tick, typeof intervalMs === 'function' ? -1 : intervalMs]);
  const current = state.key === key;
  return {
    data: current ? state.data : undefined,
    error: current ? state.error : undefined,
    reload: () => setTick((t) => t + 1),
  };
}

/**
 * Runs user actions one at a time: `run(label, fn)` awaits fn, keeps its outcome as `notice` (the string fn
 * returns) or `error`, then calls `onDone` (a refresh).
 */
export function useActions(onDone) {
  const [state, setState] = useState({ busy: false, notice: '', error: undefined });
  const run = async (fn) => {
    setState({ busy: true, notice: '', error: undefined });
    try {
      const notice = await fn();
      setState({ busy: false, notice: notice || '', error: undefined });
    } catch (error) {
      setState({ busy: false, notice: '', error });
    }
    onDone?.();
  };
  return { ...state, run };
}
