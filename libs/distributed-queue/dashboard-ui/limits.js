import { html } from './html.js';
import { hashHref, useActions } from './hooks.js';
import { post, typePath } from './api.js';
import { formatDuration } from './format.js';
import { Badge, ErrorBanner, Notice, When } from './components.js';

/** A rate limit as "100/s, burst 2" or "30 per 1 min, burst 1"; "none". */
function formatRate(limit) {
  if (!limit) return 'none';
  const per = limit.perMs === 1000 ? '/s' : ` per ${formatDuration(limit.perMs)}`;
  return `${limit.max}${per}, burst ${limit.burst}`;
}

/** A number per second as "12.4/s". */
const formatPerSecond = (n) => `${Number.isInteger(n) ? n : n.toFixed(1)}/s`;

/** "override" when an operator's value holds over the options (a null override is "no limit"). */
function Override({ state, testid }) {
  return state.override !== undefined ? html` <${Badge} kind="override" testid=${testid}>override<//>` : null;
}

/** Waiting tasks per priority level ("0: 5 · 3: 2"), when the type's tasks carry priorities. */
function Priorities({ counts }) {
  const levels = Object.entries(counts?.priorities ?? {}).sort(([a], [b]) => Number(a) - Number(b));
  if (!levels.length) return html`<span class="muted">—</span>`;
  return levels.map(([level, n], i) => html`${i > 0 ? ' · ' : ''}<span data-testid="priority" data-priority=${level}>${level}: ${n}</span>`);
}

/** The limits' cells of one delay-queue type (the overview's row and the type view's panel show the same). */
function LimitCells({ limits, counts, now }) {
  const { rateLimit, globalConcurrency, running, limitedUntil, recentPerSecond } = limits;
  const bound = globalConcurrency.effective === null ? 'none' : globalConcurrency.effective;
  return html`
    <td data-testid="limit-rate">${formatRate(rateLimit.effective)}<${Override} state=${rateLimit} testid="rate-override" /></td>
    <td class="num" data-testid="limit-recent-rate">${formatPerSecond(recentPerSecond)}</td>
    <td data-testid="limit-until">${limitedUntil === null ? html`<span class="muted">—</span>` : html`<${Badge} kind="paused">limited<//> <${When} at=${limitedUntil} now=${now} />`}</td>
    <td data-testid="limit-concurrency">${running} / ${bound}<${Override} state=${globalConcurrency} testid="concurrency-override" /></td>
    <td data-testid="limit-priorities"><${Priorities} counts=${counts} /></td>`;
}

/** The headers of `LimitCells`. */
const headCells = () => html`
  <th title="in force: an operator's override, else the workers' options">Rate limit</th>
  <th class="num" title="tasks finished (completed or failed attempts) per second over the last 5 s">Rate (5 s)</th>
  <th title="a handler threw RateLimitedError: nothing of the type starts until then">Limited until</th>
  <th title="tasks holding a lease across the fleet / the fleet-wide concurrency">Running / concurrency</th>
  <th title="waiting tasks per priority level">Waiting by priority</th>`;

/** The overview's table of the delay-queue types' fleet-wide limits. */
export function LimitsTable({ types, now }) {
  const limited = types.filter((t) => t.limits);
  if (!limited.length) return null;
  return html`<h2>Limits</h2>
    <table class="grid" data-testid="limits-table">
      <thead><tr><th>Type</th>${headCells()}</tr></thead>
      <tbody>${limited.map((t) => html`<tr key=${t.type} data-testid="limits-row" data-type=${t.type}>
        <td><a href=${hashHref(typePath(t.type))}>${t.type}</a></td>
        <${LimitCells} limits=${t.limits} counts=${t.counts} now=${now} />
      </tr>`)}</tbody>
    </table>`;
}

/** A form's field as a number for the API (the server checks it); empty: left out. */
export function numberField(form, name) {
  const raw = new FormData(form).get(name)?.toString().trim();
  return raw ? Number(raw) : undefined;
}

/**
 * A delay-queue type's limits with the operator's controls: set the rate limit or the fleet-wide concurrency,
 * lift either ("No limit", over the options), or reset to the options.
 */
export function LimitsPanel({ type, summary, now, refresh }) {
  const actions = useActions(refresh);
  const limits = summary?.limits;
  if (!limits) return null;
  const set = (path, body, describe) => actions.run(async () => describe(await post(`${typePath(type)}/limits/${path}`, body)));
  const rateSet = (res) => `Rate limit: ${formatRate(res?.rateLimit.effective)}`;
  const concurrencySet = (res) => `Fleet concurrency: ${res?.globalConcurrency.effective ?? 'none'}`;
  const overridden = limits.rateLimit.override !== undefined || limits.globalConcurrency.override !== undefined;
  return html`<section class="limits" data-testid="limits-panel">
    <h2>Limits</h2>
    <table class="grid narrow"><thead><tr>${headCells()}</tr></thead><tbody><tr><${LimitCells} limits=${limits} counts=${summary.counts} now=${now} /></tr></tbody></table>
    <${ErrorBanner} error=${actions.error} />
    <${Notice} text=${actions.notice} />
    <div class="toolbar">
      <form class="inline" data-testid="rate-limit-form" onSubmit=${(e) => {
        e.preventDefault();
        const form = e.currentTarget;
        const rateLimit = { max: numberField(form, 'max'), perMs: numberField(form, 'perMs') ?? 1000, burst: numberField(form, 'burst') };
        set('rate-limit', { rateLimit }, rateSet);
      }}>
        Rate limit <input name="max" type="number" min="1" class="seconds" placeholder="max" data-testid="rate-max" />
        per <input name="perMs" type="number" min="1" class="seconds" placeholder="1000" data-testid="rate-per-ms" /> ms,
        burst <input name="burst" type="number" min="0" class="seconds" placeholder="auto" data-testid="rate-burst" />
        <button type="submit" disabled=${actions.busy} data-testid="rate-limit-set">Set</button>
        <button type="button" disabled=${actions.busy} data-testid="rate-limit-none" onClick=${() => set('rate-limit', { rateLimit: null }, rateSet)}>No limit</button>
      </form>
    </div>
    <div class="toolbar">
      <form class="inline" data-testid="concurrency-form" onSubmit=${(e) => {
        e.preventDefault();
        set('global-concurrency', { globalConcurrency: numberField(e.currentTarget, 'n') }, concurrencySet);
      }}>
        Fleet concurrency <input name="n" type="number" min="1" class="seconds" placeholder="n" data-testid="concurrency-n" />
        <button type="submit" disabled=${actions.busy} data-testid="concurrency-set">Set</button>
        <button type="button" disabled=${actions.busy} data-testid="concurrency-none" onClick=${() => set('global-concurrency', { globalConcurrency: null }, concurrencySet)}>No limit</button>
      </form>
      <button disabled=${actions.busy || !overridden} data-testid="limits-reset" title="drop the overrides: the workers' options hold again"
        onClick=${() => set('reset', {}, () => 'Limits reset to the options')}>Reset to options</button>
    </div>
  </section>`;
}
