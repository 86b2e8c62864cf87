import { useState } from 'preact/hooks';
import { html } from './html.js';
import { hashHref, useActions, usePoll } from './hooks.js';
import { get, post, typePath } from './api.js';
import { STATES, formatName } from './format.js';
import { Badge, ConfirmButton, ErrorBanner, Notice, When } from './components.js';
import { TaskDetail } from './task-detail.js';
import { LimitsPanel } from './limits.js';
import { GroupsPanel } from './groups.js';

const LIMIT = 50;

/**
 * `#/types/<type>?state=&cursor=&id=&task=`: the tasks of one type in one state, paged by cursor (a page's
 * `next`: a deep page never walks the tasks before it); a task's detail. The pages met while browsing are
 * kept here (their position and the page before, for Previous). `?view=groups`: a delay type's groups.
 */
export function TypeView({ type, query, summary, history, now, refreshOverview }) {
  const groupsView = query.get('view') === 'groups';
  const state = STATES.includes(query.get('state')) ? query.get('state') : 'ready';
  const cursor = query.get('cursor') || '';
  const search = query.get('id') || '';
  const selected = query.get('task') || '';
  const link = (params) => hashHref(typePath(type), { state, cursor, id: search, task: selected, ...params });
  // the pages met while browsing this state from its first: cursor ('' = first) -> its index and the page before
  const [met, setMet] = useState({ state, pages: { '': { index: 0 } } });
  const pages = met.state === state ? met.pages : { '': { index: 0 } };
  const pager = {
    pages,
    /** `next` is the page after the page of cursor `from`. */
    remember: (next, from) => {
      const at = pages[from];
      if (at && next) setMet({ state, pages: { ...pages, [next]: { index: at.index + 1, prev: from } } });
    },
  };

  // NOTE: the groups view polls its own: no task page is read meanwhile.
  const page = usePoll(() => {
    if (groupsView) return undefined;
    const qs = new URLSearchParams({ state, limit: String(LIMIT) });
    if (cursor) qs.set('cursor', cursor);
    if (search) qs.set('id', search);
    return get(`${typePath(type)}/tasks?${qs}`);
  }, [type, state, cursor, search, groupsView], groupsView ? 0 : 2000);
  const refresh = () => {
    page.reload();
    refreshOverview();
  };
  const actions = useActions(refresh);
  const [detailTick, setDetailTick] = useState(0);
  const afterDetailAction = () => {
    setDetailTick((t) => t + 1);
    refresh();
  };

  const paused = summary?.paused;
  const ordered = summary?.ordered;
  const counts = summary?.counts;
  const togglePause = () => actions.run(async () => {
    const res = await post(`${typePath(type)}/${paused ? 'resume' : 'pause'}`);
    return res?.paused ? `${type} is paused` : `${type} runs`;
  });
  const bulk = (verb) => actions.run(async () => {
    const res = await post(`${typePath(type)}/dead/${verb}`, { all: true });
    return `${verb === 'redrive' ? 'Re-drove' : 'Deleted'} ${res?.count ?? 0} dead tasks`;
  });

  return html`<section data-testid="type-view" data-type=${type}>
    <h1>
      <span data-testid="type-name">${formatName(type)}</span>
      ${summary && html` <${Badge} kind="kind">${ordered ? 'ordered' : 'delay'}<//>`}
      ${paused && html` <${Badge} kind="paused" testid="paused-badge">paused<//>`}
    </h1>
    <div class="toolbar">
      <button disabled=${actions.busy || !summary} data-testid=${paused ? 'resume-button' : 'pause-button'} onClick=${togglePause}>
        ${paused ? 'Resume' : 'Pause'}
      </button>
      ${!ordered && html`<form class="search" data-testid="search-form" onSubmit=${(e) => {
        e.preventDefault();
        const id = new FormData(e.currentTarget).get('id')?.toString().trim();
        location.hash = hashHref(typePath(type), { state, id });
      }}>
        <input name="id" placeholder="task id" value=${search} data-testid="search-input" />
        <button type="submit" data-testid="search-button">Find</button>
        ${search && html`<a href=${hashHref(typePath(type), { state })} data-testid="search-clear">clear</a>`}
      </form>`}
    </div>
    <${ErrorBanner} error=${actions.error} />
    <${Notice} text=${actions.notice} />
    ${!ordered && html`<${LimitsPanel} type=${type} summary=${summary} now=${now} refresh=${refreshOverview} />`}
    <nav class="tabs" data-testid="state-tabs">
      ${STATES.map((s) => html`<a href=${hashHref(typePath(type), { state: s })} class=${s === state && !groupsView ? 'tab active' : 'tab'} data-testid=${`tab-${s}`}>
        ${s} <span class="count" data-testid=${`tab-count-${s}`}>${counts?.[s] ?? '…'}</span>
      </a>`)}
      ${summary && !ordered && html`<a href=${hashHref(typePath(type), { view: 'groups' })} class=${groupsView ? 'tab active' : 'tab'} data-testid="tab-groups">groups</a>`}
    </nav>
    ${groupsView && html`<${GroupsPanel} type=${type} query=${query} />`}
    ${!groupsView && html`
      ${state === 'dead' && html`<div class="toolbar" data-testid="dead-actions">
        <${ConfirmButton} label="Re-drive all" testid="redrive-all" disabled=${actions.busy || !counts?.dead}
          question=${`Re-drive all ${counts?.dead ?? 0} dead tasks of ${type}?`} onConfirm=${() => bulk('redrive')} />
        <${ConfirmButton} label="Delete all" testid="delete-all" disabled=${actions.busy || !counts?.dead}
          question=${`Delete all ${counts?.dead ?? 0} dead tasks of ${type}? This cannot be undone.`} onConfirm=${() => bulk('delete')} />
      </div>`}
      <${ErrorBanner} error=${page.error} />
      <div class="split">
        <${TaskTable} page=${page.data} failed=${!!page.error} ordered=${ordered} search=${search} now=${now} selected=${selected} link=${link} pager=${pager} />
        ${selected && html`<${TaskDetail} key=${`${type}/${selected}`} type=${type} id=${selected} ordered=${ordered}
          row=${page.data?.tasks.find((t) => t.id === selected)}
          history=${history} now=${now} tick=${detailTick} onChanged=${afterDetailAction} closeHref=${link({ task: '' })} />`}
      </div>`}
  </section>`;
}

function TaskTable({ page, failed, ordered, search, now, selected, link, pager }) {
  if (!page) return failed ? null : html`<p class="muted" data-testid="loading">Loading…</p>`;
  const { tasks, limit, cursor, next } = page;
  // A search by id answers the task found (in any state), not a page of the state.
  const total = search ? tasks.length : page.total;
  // positions are known for pages reached from the first one (a cursor opened from a link: "N more")
  const here = pager.pages[cursor ?? ''];
  const first = here ? here.index * limit + 1 : 0;
  const info = !tasks.length ? `0 of ${total}` : here ? `${first}–${first + tasks.length - 1} of ${total}` : `${tasks.length} more of ${total}`;
  const previous = !cursor ? undefined : (here?.prev ?? '');
  return html`<div class="tasks">
    ${tasks.length === 0
      ? html`<p class="muted" data-testid="no-tasks">No tasks here.</p>`
      : html`<table class="grid" data-testid="task-table">
          <thead><tr>
            <th>Id</th><th>State</th><th class="num">Attempts</th><th>Due</th>
            ${ordered && html`<th>Key</th><th class="num">Partition</th>`}
            <th>Last error</th>
          </tr></thead>
          <tbody>${tasks.map((t) => html`<tr key=${t.id} class=${t.id === selected ? 'selected clickable' : 'clickable'}
              data-testid="task-row" data-id=${t.id} onClick=${() => { location.hash = link({ task: t.id }); }}>
            <td><a href=${link({ task: t.id })} data-testid="task-link">${formatName(t.id)}</a></td>
            <td class=${`state-${t.state}`}>${t.state}</td>
            <td class="num">${t.attempts ?? 0}</td>
            <td><${When} at=${t.dueAt} now=${now} /></td>
            ${ordered && html`<td>${t.key ?? ''}</td><td class="num">${t.partition ?? ''}</td>`}
            <td class="error-text">${t.lastError ? `${t.lastError.name}: ${t.lastError.message}` : ''}</td>
          </tr>`)}</tbody>
        </table>`}
    <div class="pager">
      <a class=${cursor ? 'button' : 'button disabled'} data-testid="pager-first"
        href=${cursor ? link({ cursor: '', task: '' }) : undefined}>« First</a>
      <a class=${previous !== undefined ? 'button' : 'button disabled'} data-testid="pager-prev"
        href=${previous !== undefined ? link({ cursor: previous, task: '' }) : undefined}>‹ Previous</a>
      <span data-testid="pager-info">${info}</span>
      <a class=${next ? 'button' : 'button disabled'} data-testid="pager-next"
        href=${next ? link({ cursor: next, task: '' }) : undefined} onClick=${() => pager.remember(next, cursor ?? '')}>Next ›</a>
    </div>
  </div>`;
}
