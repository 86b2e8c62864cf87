import { useMemo, useState } from 'preact/hooks';
import { html } from './html.js';
import { hashHref, useActions, usePoll } from './hooks.js';
import { get, post } from './api.js';
import { ConfirmButton, ErrorBanner, Notice, When } from './components.js';
import { FlowGraph, Legend, MAX_DRAWN, layout, nodeHref } from './flow-graph.js';

/** Flows per page of the list, and nodes per page of a big flow's list of the nodes not drawn. */
const PAGE = 50;
const REST_PAGE = 100;
const ENDED = ['completed', 'failed', 'cancelled'];
/** `/flows/<id>` with the id URL-encoded. */
const flowPath = (id) => `/flows/${encodeURIComponent(id)}`;

/** A flow's state and counts, as the list and the flow's view show them. */
function Summary({ flow, now }) {
  const { state, counts: c } = flow;
  return html`<span class=${`fstate f-${state}`} data-testid="flow-state">${state}</span>
    <span data-testid="flow-counts">${c.completed}/${c.total} completed${c.dead ? `, ${c.dead} dead` : ''}${c.cancelled ? `, ${c.cancelled} cancelled` : ''}${c.blocked ? `, ${c.blocked} blocked` : ''}</span>
    <span class="muted">created <${When} at=${flow.createdAt} now=${now} testid="flow-created" />${flow.endedAt !== undefined ? html`, ended <${When} at=${flow.endedAt} now=${now} testid="flow-ended" />` : ''}</span>`;
}

/** `#/flows?offset=`: the newest flows first, 50 a page; a form opens a flow by id. */
export function FlowsView({ query, now }) {
  const raw = query.get('offset') ?? '';
  const offset = /^\d{1,15}$/.test(raw) ? Number(raw) : 0;
  const page = usePoll(() => get(`/flows?offset=${offset}&limit=${PAGE}`), [offset], 2000);
  const data = page.data;
  const to = (n, testid, label) => html`<a class=${n === undefined ? 'button disabled' : 'button'} data-testid=${testid}
    href=${n === undefined ? undefined : hashHref('/flows', { offset: n || '' })}>${label}</a>`;
  return html`<section data-testid="flows-view">
    <h1>Flows</h1>
    <form class="toolbar" data-testid="flow-open" onSubmit=${(e) => {
      e.preventDefault();
      const id = new FormData(e.currentTarget).get('id')?.toString().trim();
      if (id) location.hash = hashHref(flowPath(id));
    }}>
      <input name="id" placeholder="flow id" maxlength="64" data-testid="flow-open-id" /><button type="submit" data-testid="flow-open-button">Open</button>
    </form>
    <${ErrorBanner} error=${page.error} />
    ${data && (data.flows.length === 0
      ? html`<p class="muted" data-testid="no-flows">No flows here.</p>`
      : html`<table class="grid" data-testid="flows-table">
          <thead><tr><th>Flow</th><th>State</th><th class="num">Nodes</th><th class="num">Completed</th><th class="num">Dead</th>
            <th class="num">Cancelled</th><th class="num">Blocked</th><th>Created</th><th>Ended</th></tr></thead>
          <tbody>${data.flows.map((f) => html`<tr key=${f.id} data-testid="flow-row" data-flow=${f.id}>
            <td><a href=${hashHref(flowPath(f.id))} data-testid="flow-link">${f.id}</a></td>
            <td class=${`f-${f.state}`} data-testid="flow-row-state">${f.state}</td>
            ${['total', 'completed', 'dead', 'cancelled', 'blocked'].map((k) => html`<td class="num" data-testid=${`flow-row-${k}`}>${f.counts[k]}</td>`)}
            <td><${When} at=${f.createdAt} now=${now} /></td><td><${When} at=${f.endedAt} now=${now} /></td>
          </tr>`)}</tbody>
        </table>`)}
    ${data && html`<div class="pager">
      ${to(offset ? 0 : undefined, 'flows-first', '« First')}${to(offset ? Math.max(0, offset - PAGE) : undefined, 'flows-prev', '‹ Previous')}
      <span data-testid="flows-info">${data.flows.length ? `${offset + 1}–${offset + data.flows.length}` : 'none'}</span>
      ${to(data.more ? offset + PAGE : undefined, 'flows-next', 'Next ›')}
    </div>`}
  </section>`;
}

/**
 * `#/flows/<id>`: one flow drawn (nodes in layers by dependency depth, edges, colours by state, a legend),
 * each node a link to its task; a flow of more than MAX_DRAWN nodes draws its first ones and lists the rest.
 * Polled every 2 s while it runs (15 s past 1,000 nodes: getFlow reads every node's task), once when it
 * ended. Cancel asks first.
 */
export function FlowView({ id, now }) {
  const [ended, setEnded] = useState(false);
  const [big, setBig] = useState(false);
  const flow = usePoll(async () => {
    const f = await get(flowPath(id));
    setEnded(ENDED.includes(f.state));
    setBig(f.nodes.length > 1000);
    return f;
  }, [id], ended ? 0 : big ? 15_000 : 2000);
  const actions = useActions(flow.reload);
  const data = flow.data;
  const graph = useMemo(() => data && layout(data.nodes), [data]);
  const cancel = () => actions.run(async () => {
    const res = await post(`${flowPath(id)}/cancel`);
    return `Cancelled ${res.cancelled} node(s); ${res.cancelRequested} running node(s) asked to stop`;
  });
  return html`<section data-testid="flow-view" data-flow=${id}>
    <h1>Flow <span data-testid="flow-id">${id}</span></h1>
    <p><a href="#/flows" data-testid="flows-back">« all flows</a></p>
    <${ErrorBanner} error=${flow.error || actions.error} /><${Notice} text=${actions.notice} />
    ${data && html`<div class="toolbar" data-testid="flow-summary"><${Summary} flow=${data} now=${now} />
      ${!ENDED.includes(data.state) && html`<${ConfirmButton} label="Cancel flow" testid="flow-cancel" disabled=${actions.busy}
        question=${`Cancel what has not run of flow ${id}?`} onConfirm=${cancel} />`}
    </div>
    <${Legend} nodes=${data.nodes} />
    ${graph.rest.length > 0 && html`<p class="banner notice" data-testid="flow-capped">
      ${data.nodes.length} nodes: the first ${MAX_DRAWN} (by depth) are drawn, the other ${graph.rest.length} listed below.</p>`}
    <${FlowGraph} graph=${graph} />
    ${graph.rest.length > 0 && html`<${NodeList} nodes=${graph.rest} depth=${graph.depth} />`}`}
  </section>`;
}

/** The nodes not drawn, 100 a page. */
function NodeList({ nodes, depth }) {
  const [at, setAt] = useState(0);
  const shown = nodes.slice(at, at + REST_PAGE);
  return html`<h2>Nodes not drawn</h2>
    <table class="grid" data-testid="flow-rest">
      <thead><tr><th>Node</th><th>Type</th><th>State</th><th class="num">Layer</th><th class="num">Depends on</th></tr></thead>
      <tbody>${shown.map((n) => html`<tr key=${n.ref} data-testid="rest-row" data-ref=${n.ref}>
        <td><a href=${nodeHref(n)} data-testid="rest-link">${n.ref}</a></td><td>${n.type}</td>
        <td class=${`s-${n.state}`} data-testid="rest-state">${n.state}</td><td class="num">${depth.get(n.ref)}</td><td class="num">${n.dependsOn.length}</td>
      </tr>`)}</tbody>
    </table>
    <div class="pager">
      <button disabled=${at === 0} data-testid="rest-prev" onClick=${() => setAt(Math.max(0, at - REST_PAGE))}>‹ Previous</button>
      <span data-testid="rest-info">${at + 1}–${at + shown.length} of ${nodes.length}</span>
      <button disabled=${at + REST_PAGE >= nodes.length} data-testid="rest-next" onClick=${() => setAt(at + REST_PAGE)}>Next ›</button>
    </div>`;
}
