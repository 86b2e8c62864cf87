import { html } from './html.js';
import { usePoll } from './hooks.js';
import { get } from './api.js';
import { formatDuration } from './format.js';
import { ErrorBanner } from './components.js';

/** `#/route`: the partitions × machines map, the live machines and the scheduler lock's holder. */
export function RouteView({ now }) {
  const route = usePoll(() => get('/route'), [], 2000);
  const data = route.data;
  return html`<section data-testid="route-view">
    <h1>Route queue${data ? html` <span data-testid="route-qid">${data.qId}</span>` : ''}</h1>
    <${ErrorBanner} error=${route.error} />
    ${!data ? (!route.error && html`<p class="muted" data-testid="loading">Loading…</p>`) : html`<${RouteMap} route=${data} now=${now} />`}
  </section>`;
}

function RouteMap({ route, now }) {
  const live = new Set(route.machines.map((m) => m.id));
  // Columns: the live machines, then owners that are no longer live (their partitions wait for a new owner).
  const columns = [...route.machines.map((m) => m.id).sort()];
  for (const p of route.partitions) if (p.owner && !live.has(p.owner) && !columns.includes(p.owner)) columns.push(p.owner);
  const owned = (id) => route.partitions.filter((p) => p.owner === id).length;
  return html`
    <p>Scheduler lock: <strong data-testid="lock-holder">${route.lockHolder ?? 'free'}</strong></p>
    <h2>Machines</h2>
    ${route.machines.length === 0
      ? html`<p class="muted" data-testid="no-machines">No live machines.</p>`
      : html`<table class="grid narrow" data-testid="machine-table">
          <thead><tr><th>Machine</th><th class="num">Last heartbeat</th><th class="num">Partitions</th><th></th></tr></thead>
          <tbody>${route.machines.map((m) => html`<tr key=${m.id} data-testid="machine-row" data-machine=${m.id}>
            <td>${m.id}</td>
            <td class="num" data-testid="heartbeat-age">${formatDuration(Math.max(0, now - m.lastHeartbeat))} ago</td>
            <td class="num">${owned(m.id)}</td>
            <td>${m.id === route.lockHolder ? 'scheduler' : ''}</td>
          </tr>`)}</tbody>
        </table>`}
    <h2>Partitions</h2>
    <table class="grid map" data-testid="partition-map">
      <thead><tr>
        <th class="num">Partition</th><th>Owner</th><th class="num">Epoch</th><th>State</th>
        <th class="num">Waiting</th><th class="num">In flight</th><th class="num">Dead</th>
        ${columns.map((id) => html`<th class=${live.has(id) ? 'machine' : 'machine offline'} title=${live.has(id) ? '' : 'not live'}>${id}</th>`)}
      </tr></thead>
      <tbody>${route.partitions.map((p) => html`<tr key=${p.partition} data-testid="partition-row" data-partition=${p.partition}>
        <td class="num">${p.partition}</td>
        <td data-testid="partition-owner">${p.owner ?? html`<span class="muted">none</span>`}</td>
        <td class="num">${p.epoch}</td>
        <td class=${`pstate-${p.state}`}>${p.state}</td>
        <td class="num">${p.waiting}</td>
        <td class="num">${p.inFlight}</td>
        <td class=${p.dead ? 'num failed' : 'num'}>${p.dead}</td>
        ${columns.map((id) => html`<td class=${p.owner === id ? 'cell own' : 'cell'} data-testid="machine-cell" data-machine=${id}>${p.owner === id ? '●' : ''}</td>`)}
      </tr>`)}</tbody>
    </table>`;
}
