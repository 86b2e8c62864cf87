import { html } from './html.js';
import { hashHref } from './hooks.js';
import { typePath } from './api.js';

/** A node's states, in the legend's order (each has its colour: class `s-<state>`). */
export const NODE_STATES = ['pending', 'blocked', 'delayed', 'ready', 'running', 'completed', 'dead', 'cancelled'];
/** The most nodes drawn: a bigger flow draws its first layers up to this and lists the rest. */
export const MAX_DRAWN = 300;
/** Boxes in a column before a layer wraps into another; a box's size and the gaps between them (px). */
const ROWS = 30;
const W = 150;
const H = 28;
const GX = 56;
const GY = 10;

/** The type view's tab of a node's state (its task's state there). */
const TAB = { delayed: 'delayed', ready: 'ready', running: 'running', completed: 'done', dead: 'dead' };

/** The link of a node: its task in its type's view (ordered tasks: their listing, as the dashboard shows them). */
export const nodeHref = (n) => hashHref(typePath(n.type), { state: TAB[n.state], task: n.id });

/** Each node's layer: 0 for a node without dependencies, else one more than its deepest dependency's. */
export function depths(nodes) {
  const known = new Set(nodes.map((n) => n.ref));
  const depth = new Map();
  const left = new Map();
  const dependents = new Map();
  for (const n of nodes) {
    const deps = n.dependsOn.filter((d) => known.has(d));
    left.set(n.ref, deps.length);
    for (const d of deps) {
      if (!dependents.has(d)) dependents.set(d, []);
      dependents.get(d).push(n.ref);
    }
  }
  const queue = nodes.filter((n) => left.get(n.ref) === 0).map((n) => n.ref);
  for (const ref of queue) depth.set(ref, 0);
  for (let i = 0; i < queue.length; i++) {
    const ref = queue[i];
    for (const next of dependents.get(ref) ?? []) {
      depth.set(next, Math.max(depth.get(next) ?? 0, depth.get(ref) + 1));
      left.set(next, left.get(next) - 1);
      if (left.get(next) === 0) queue.push(next);
    }
  }
  // NOTE: a cycle is refused at submit; were one read, its nodes go in a last layer
  const last = Math.max(0, ...depth.values()) + 1;
  for (const n of nodes) if (!depth.has(n.ref)) depth.set(n.ref, last);
  return depth;
}

/**
 * The drawing: the first `max` nodes by layer (then by ref: the same however they are read), each layer a column (wrapped
 * every ROWS boxes), its boxes ordered by the mean row of their dependencies (fewer crossings); the edges
 * between drawn nodes; the nodes left out (`rest`).
 */
export function layout(nodes, max = MAX_DRAWN) {
  const depth = depths(nodes);
  const order = nodes.map((n) => ({ n, d: depth.get(n.ref) })).sort((a, b) => a.d - b.d || (a.n.ref < b.n.ref ? -1 : a.n.ref > b.n.ref ? 1 : 0));
  const drawn = order.slice(0, max).map((o) => o.n);
  const columns = [];
  for (const n of drawn) (columns[depth.get(n.ref)] ??= []).push(n);
  const pos = new Map();
  let width = 0;
  let height = 0;
  for (const column of columns) {
    if (!column) continue;
    const mean = new Map(column.map((n) => {
      const ys = n.dependsOn.map((d) => pos.get(d)?.y).filter((y) => y !== undefined);
      return [n.ref, ys.length ? ys.reduce((a, b) => a + b, 0) / ys.length : 0];
    }));
    column.sort((a, b) => mean.get(a.ref) - mean.get(b.ref));
    column.forEach((n, i) => pos.set(n.ref, { x: width + Math.floor(i / ROWS) * (W + GX), y: (i % ROWS) * (H + GY) }));
    width += Math.ceil(column.length / ROWS) * (W + GX);
    height = Math.max(height, Math.min(column.length, ROWS) * (H + GY));
  }
  const edges = [];
  for (const n of drawn) for (const d of n.dependsOn) if (pos.has(d)) edges.push([d, n.ref]);
  return { drawn, rest: order.slice(max).map((o) => o.n), pos, edges, width: Math.max(0, width - GX), height: Math.max(0, height - GY), depth };
}

/** A ref that fits its box. */
const short = (ref) => (ref.length > 20 ? `${ref.slice(0, 19)}…` : ref);

/** The drawn flow: boxes coloured by state, each a link to its task; edges from a dependency to its dependent. */
export function FlowGraph({ graph }) {
  const { drawn, pos, edges, width, height } = graph;
  return html`<div class="graph-box"><svg class="flow-graph" data-testid="flow-graph" width=${width + 2} height=${height + 2} viewBox=${`-1 -1 ${width + 2} ${height + 2}`}>
    <g class="edges">${edges.map(([from, to]) => {
      const a = pos.get(from);
      const b = pos.get(to);
      const [x1, y1, x2, y2] = [a.x + W, a.y + H / 2, b.x, b.y + H / 2];
      const m = (x1 + x2) / 2;
      return html`<path d=${`M${x1} ${y1}C${m} ${y1} ${m} ${y2} ${x2} ${y2}`} data-testid="flow-edge" data-from=${from} data-to=${to} />`;
    })}</g>
    ${drawn.map((n) => {
      const p = pos.get(n.ref);
      const tip = `${n.ref} (${n.type}): ${n.state}${n.error ? ` — ${n.error.name}: ${n.error.message}` : ''}`;
      return html`<a href=${nodeHref(n)} class=${`node s-${n.state}`} data-testid="flow-node" data-ref=${n.ref} data-state=${n.state}>
        <title>${tip}</title>
        <rect x=${p.x} y=${p.y} width=${W} height=${H} rx="4" />
        <text x=${p.x + 8} y=${p.y + H / 2 + 4}>${short(n.ref)}</text>
      </a>`;
    })}
  </svg></div>`;
}

/** The states' colours, with how many nodes are in each. */
export function Legend({ nodes }) {
  const count = (s) => nodes.filter((n) => n.state === s).length;
  return html`<ul class="legend" data-testid="flow-legend">${NODE_STATES.map((s) => html`<li data-testid="legend-item" data-state=${s}>
    <span class=${`swatch s-${s}`} data-testid="legend-swatch"></span>${s} <span class="muted">${count(s)}</span>
  </li>`)}</ul>`;
}
