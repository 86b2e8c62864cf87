import { html } from './html.js';
import { hashHref } from './hooks.js';
import { typePath } from './api.js';
import { STATES, formatName, formatRelative } from './format.js';
import { Badge } from './components.js';
import { LimitsTable } from './limits.js';

/**
 * `#/`: every type with its counts, its throughput and whether it is paused; the delay-queue types' limits;
 * the route queue's summary.
 */
export function OverviewView({ overview }) {
  if (!overview) return html`<p class="muted" data-testid="loading">Loading…</p>`;
  const { types, route, schedules = [], now } = overview;
  return html`<section data-testid="overview">
    <h1>Overview</h1>
    ${route && html`<p class="route-summary" data-testid="route-summary">
      Route queue <strong>${route.qId}</strong>: ${route.partitions} partitions, ${route.machines} live machines —${' '}<a href="#/route" data-testid="route-link">partition map</a>
    </p>`}
    ${types.length === 0
      ? html`<p class="muted" data-testid="no-types">No task types are registered.</p>`
      : html`<table class="grid" data-testid="overview-table">
          <thead><tr>
            <th>Type</th><th>Kind</th>
            ${STATES.map((s) => html`<th class="num">${s}</th>`)}
            <th class="num" title="tasks completed in the last 60 s">completed/min</th>
            <th class="num" title="failed attempts in the last 60 s">failed/min</th>
            <th>Status</th>
          </tr></thead>
          <tbody>${types.map((t) => html`<${TypeRow} key=${t.type} summary=${t} hasRoute=${!!route} />`)}</tbody>
        </table>`}
    <${LimitsTable} types=${types} now=${now} />
    ${schedules.length > 0 && html`<h2>Schedules</h2>
      <table class="grid" data-testid="schedules-table">
        <thead><tr><th>Schedule</th><th>Rule</th><th>Type</th><th>Next tick</th><th>Last tick</th></tr></thead>
        <tbody>${schedules.map((s) => html`<tr key=${s.name} data-testid="schedule-row" data-schedule=${s.name}>
          <td>${s.name}</td>
          <td><code>${s.rule}</code></td>
          <td>${s.type}</td>
          <td data-testid="schedule-next">${s.nextTickAt === null ? html`<span class="muted">none</span>` : formatRelative(s.nextTickAt, now)}</td>
          <td data-testid="schedule-last">${s.lastTickAt === null ? html`<span class="muted">never</span>` : formatRelative(s.lastTickAt, now)}</td>
        </tr>`)}</tbody>
      </table>`}
  </section>`;
}

function TypeRow({ summary, hasRoute }) {
  const { type, ordered, paused, counts, perMinute } = summary;
  return html`<tr data-testid="type-row" data-type=${type}>
    <td><a href=${hashHref(typePath(type))} data-testid="type-link">${formatName(type)}</a></td>
    <td>${ordered ? html`ordered${hasRoute ? html` (<a href="#/route">route</a>)` : ''}` : 'delay'}</td>
    ${STATES.map((s) => html`<td class=${`num state-${s}${counts[s] ? '' : ' zero'}`} data-testid=${`count-${s}`}>
      <a href=${hashHref(typePath(type), { state: s })}>${counts[s] ?? 0}</a>
    </td>`)}
    <td class="num" data-testid="completed-per-minute">${perMinute?.completed ?? 0}</td>
    <td class=${`num${perMinute?.failed ? ' failed' : ''}`} data-testid="failed-per-minute">${perMinute?.failed ?? 0}</td>
    <td data-testid="type-status">${paused ? html`<${Badge} kind="paused">paused<//>` : html`<span class="muted">running</span>`}</td>
  </tr>`;
}
