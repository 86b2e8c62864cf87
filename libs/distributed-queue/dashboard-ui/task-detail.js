import { useState } from 'preact/hooks';
import { html } from './html.js';
import { useActions, usePoll } from './hooks.js';
import { get, post, taskPath, typePath } from './api.js';
import { formatJson, formatName, formatTime } from './format.js';
import { ErrorBanner, Notice, When } from './components.js';
import { Progress, TaskLogs } from './task-reports.js';

/** How often the detail of a running task is read again (its progress and log lines), ms. */
const LIVE_MS = 1000;

/**
 * The detail's next reading: in LIVE_MS while the last reading says running (a failed reading keeps the last
 * one's answer, but a 404, the task gone, ends it), else none.
 */
const liveMs = (task, error) => (task?.state === 'running' && error?.status !== 404 ? LIVE_MS : 0);

/**
 * One task: its record, its lease, its progress and log lines, its last error, the actions its state allows,
 * and its history. Ordered tasks are not looked up by id (the API lists them only): their detail is the
 * listing's row. While the task runs, it is read again every LIVE_MS (until it ends or the detail closes).
 */
export function TaskDetail({ type, id, ordered, row, history, now, tick, onChanged, closeHref }) {
  const detail = usePoll(() => (ordered ? null : get(taskPath(type, id))), [type, id, ordered, tick], liveMs);
  const actions = useActions(() => {
    detail.reload();
    onChanged();
  });
  const task = ordered ? row : detail.data;
  return html`<aside class="detail" data-testid="task-detail" data-id=${id}>
    <div class="detail-head">
      <h2>Task <span data-testid="detail-id">${formatName(id)}</span></h2>
      <a href=${closeHref} class="close" data-testid="detail-close" title="close">×</a>
    </div>
    <${ErrorBanner} error=${detail.error || actions.error} />
    <${Notice} text=${actions.notice} />
    ${ordered && !row && html`<p class="muted" data-testid="detail-gone">This task is not in the listing any more.</p>`}
    ${task && html`
      <dl class="fields">
        <dt>State</dt><dd data-testid="detail-state" class=${`state-${task.state}`}>${task.state}</dd>
        <dt>Attempts</dt><dd data-testid="detail-attempts">${task.attempts ?? 0}</dd>
        <dt>Due</dt><dd data-testid="detail-due">${task.dueAt === undefined ? '—' : html`${formatTime(task.dueAt)} (<${When} at=${task.dueAt} now=${now} />)`}</dd>
        ${task.leaseExpiresAt !== undefined && html`<dt>Lease expires</dt>
          <dd data-testid="detail-lease">${formatTime(task.leaseExpiresAt)} (<${When} at=${task.leaseExpiresAt} now=${now} />)</dd>`}
        ${task.leaseHolder !== undefined && html`<dt>Lease holder</dt><dd data-testid="detail-lease-holder">${task.leaseHolder}</dd>`}
        ${task.progress !== undefined && html`<dt>Progress</dt><dd data-testid="detail-progress"><${Progress} value=${task.progress} /></dd>`}
        ${task.expireAt !== undefined && html`<dt>Deadline</dt>
          <dd data-testid="detail-deadline">${formatTime(task.expireAt)} (<${When} at=${task.expireAt} now=${now} />)</dd>`}
        ${task.key !== undefined && html`<dt>Key</dt><dd data-testid="detail-key">${task.key}</dd>`}
        ${task.partition !== undefined && html`<dt>Partition</dt><dd data-testid="detail-partition">${task.partition}</dd>`}
        ${flowOf(id) && html`<dt>Flow</dt><dd><${FlowLink} id=${flowOf(id)} /></dd>`}
        ${task.lastError && html`<dt>Last error</dt><dd data-testid="detail-error" class="error-text">
          <strong>${task.lastError.name}</strong>: ${task.lastError.message}
          <div class="muted">attempt ${task.lastError.attempts}, ${formatTime(task.lastError.failedAt)}</div>
        </dd>`}
      </dl>
      <h3>Payload</h3>
      <pre class="payload" data-testid="task-payload">${formatJson(task.payload)}</pre>
      ${task.result !== undefined && html`<h3>Result</h3><pre class="payload" data-testid="task-result">${formatJson(task.result)}</pre>`}
      ${task.resultNotKept !== undefined && html`<h3>Result</h3><p class="muted" data-testid="task-result-not-kept">
        Not kept: ${task.resultNotKept < 0 ? 'it was not JSON' : `${task.resultNotKept} bytes, more than maxResultBytes`}</p>`}
      <${TaskLogs} logs=${task.logs} dropped=${task.logsDropped} />
      <${TaskActions} type=${type} task=${task} ordered=${ordered} actions=${actions} />
      ${history && !ordered && html`<${TaskHistory} type=${type} id=${id} tick=${tick} />`}
    `}
  </aside>`;
}

function TaskActions({ type, task, ordered, actions }) {
  const [seconds, setSeconds] = useState('60');
  const { id, state } = task;
  const call = (path, body, describe) => actions.run(async () => describe(await post(`${taskPath(type, id)}/${path}`, body)));
  const dead = (verb) => actions.run(async () => {
    const res = await post(`${typePath(type)}/dead/${verb}`, { ids: [id] });
    return `${verb === 'redrive' ? 'Re-drove' : 'Deleted'} ${res?.count ?? 0} task(s)`;
  });
  const waiting = !ordered && (state === 'delayed' || state === 'ready');
  const ok = (what) => (res) => (res?.ok ? what : `Nothing to do: the task is no longer waiting`);
  const buttons = [];
  if (waiting) {
    buttons.push(html`<button data-testid="action-run-now" onClick=${() => call('run-now', {}, ok('Runs now'))}>Run now</button>`);
    buttons.push(html`<form class="inline" data-testid="reschedule-form" onSubmit=${(e) => {
      e.preventDefault();
      const delayMs = Math.round(Number(seconds) * 1000);
      if (!Number.isFinite(delayMs) || delayMs < 0) return;
      call('reschedule', { delayMs }, ok(`Rescheduled in ${seconds} s`));
    }}>
      <input type="number" min="0" step="any" class="seconds" value=${seconds} data-testid="reschedule-seconds"
        onInput=${(e) => setSeconds(e.currentTarget.value)} /> s
      <button type="submit" data-testid="action-reschedule">Reschedule</button>
    </form>`);
  }
  if (!ordered && (waiting || state === 'running')) {
    buttons.push(html`<button class="danger" data-testid="action-cancel" onClick=${() => call('cancel', {}, (res) => `Cancel: ${res?.result}`)}>Cancel</button>`);
  }
  // Ordered dead letters are re-driven or deleted all at once (the dead tab's buttons).
  if (state === 'dead' && !ordered) {
    buttons.push(html`<button data-testid="action-redrive" onClick=${() => dead('redrive')}>Re-drive</button>`);
    buttons.push(html`<button class="danger" data-testid="action-delete" onClick=${() => dead('delete')}>Delete</button>`);
  }
  if (!buttons.length) return null;
  return html`<div class="toolbar actions" data-testid="task-actions">${buttons}</div>`;
}

/** The task's row in the history store (PostgreSQL), when the application keeps one. */
function TaskHistory({ type, id, tick }) {
  const res = usePoll(() => get(`${taskPath(type, id)}/history`), [type, id, tick]);
  const row = res.data;
  const missing = res.error && res.error.status === 404;
  return html`<section data-testid="task-history">
    <h3>History</h3>
    ${missing ? html`<p class="muted">No history recorded.</p>` : html`<${ErrorBanner} error=${res.error} />`}
    ${row && html`<dl class="history" data-testid="history-row">
      ${HISTORY_FIELDS.map(([label, show]) => html`<dt>${label}</dt><dd>${show(row)}</dd>`)}
    </dl>`}
  </section>`;
}

/** The flow of a flow node's task id (`&<flow id>:<ref>`), else undefined. */
const flowOf = (id) => /^&([\w.-]{1,64}):/.exec(id)?.[1];

/** A link to a flow's view. */
const FlowLink = ({ id, testid = 'flow-of-task' }) => html`<a href=${`#/flows/${encodeURIComponent(id)}`} data-testid=${testid}>${id}</a>`;

/** What the history row shows, in order. */
const HISTORY_FIELDS = [
  ['status', (r) => r.status],
  ['attempts', (r) => String(r.attempts)],
  ['submitted', (r) => formatTime(r.createdAt)],
  ['due', (r) => formatTime(r.dueAt)],
  ['last started', (r) => formatTime(r.startedAt)],
  ['finished', (r) => formatTime(r.finishedAt)],
  ['worker', (r) => r.machine ?? ''],
  ['flow', (r) => (r.flowId ? html`<${FlowLink} id=${r.flowId} testid="history-flow" />` : '')],
  ['last error', (r) => (r.lastError ? `${r.lastError.name}: ${r.lastError.message}` : '')],
];
