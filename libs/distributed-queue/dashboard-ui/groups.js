import { html } from './html.js';
import { hashHref, useActions, usePoll } from './hooks.js';
import { get, groupPath, post, typePath } from './api.js';
import { Badge, ErrorBanner, Notice } from './components.js';
import { numberField } from './limits.js';
import { formatName } from './format.js';

/** Groups per page. */
const PAGE = 50;

/** What a group is after an action (the API answers the group). */
const describe = (g) => `${g.group}: ${g.paused ? 'paused' : 'runs'}, concurrency ${g.concurrency ?? '—'}, weight ${g.weight ?? '—'}`;

/**
 * `#/types/<type>?view=groups&offset=&group=`: a delay-queue type's groups with waiting tasks, the largest
 * backlog first, by pages of 50 (by offset: any page is read in O(log n + 50)), each with its pause or resume
 * button; the form acts on one group by name (a row's name fills it in; a group without a backlog too): pause,
 * resume, its concurrency and its weight, set or cleared. Names are text, URL-encoded in every request.
 */
export function GroupsPanel({ type, query }) {
  const raw = query.get('offset') ?? '';
  const offset = /^\d{1,15}$/.test(raw) ? Number(raw) : 0;
  const selected = query.get('group') ?? '';
  const link = (params) => hashHref(typePath(type), { view: 'groups', offset: offset || '', group: selected, ...params });
  const page = usePoll(() => get(`${typePath(type)}/groups?offset=${offset}&limit=${PAGE}`), [type, offset], 2000);
  const actions = useActions(page.reload);
  const run = (group, path, body) => group && actions.run(async () => describe(await post(`${groupPath(type, group)}/${path}`, body)));
  // a button of the form: the action on the group named in it, with the value of `field` (null: clear)
  const act = (path, field, clear) => (e) => {
    const form = e.currentTarget.form;
    run(new FormData(form).get('group'), path, field && { [field]: clear ? null : numberField(form, field) });
  };
  const button = (label, testid, onClick) => html`<button type="button" disabled=${actions.busy} data-testid=${testid} onClick=${onClick}>${label}</button>`;
  const setting = (field, label) => html`
    ${label} <input name=${field} type="number" min="1" class="seconds" data-testid=${`group-${field}-n`} />
    ${button('Set', `group-${field}-set`, act(field, field))}${button('Clear', `group-${field}-clear`, act(field, field, true))}`;
  const toggle = (g) => button(g.paused ? 'Resume' : 'Pause', g.paused ? 'group-resume' : 'group-pause', () => run(g.group, g.paused ? 'resume' : 'pause'));
  return html`<section data-testid="groups-panel">
    <form class="toolbar" data-testid="group-form" onSubmit=${(e) => e.preventDefault()}>
      Group <input key=${selected} name="group" defaultValue=${selected} maxlength="256" placeholder="name" data-testid="group-name" />
      ${button('Pause', 'group-form-pause', act('pause'))}${button('Resume', 'group-form-resume', act('resume'))}
      ${setting('concurrency', 'Concurrency')}${setting('weight', 'Weight')}
    </form>
    <${ErrorBanner} error=${actions.error} /><${Notice} text=${actions.notice} /><${ErrorBanner} error=${page.error} />
    ${page.data && html`<${GroupTable} page=${page.data} selected=${selected} link=${link} toggle=${toggle} />`}
  </section>`;
}

/** The page's groups and the pager. */
function GroupTable({ page: { offset, total, groups }, selected, link, toggle }) {
  const next = offset + PAGE < total ? offset + PAGE : undefined;
  const to = (n, testid, label) => html`<a class=${n === undefined ? 'button disabled' : 'button'} data-testid=${testid}
    href=${n === undefined ? undefined : link({ offset: n || '', group: '' })}>${label}</a>`;
  return html`<table class="grid" data-testid="groups-table">
      <thead><tr>
        <th>Group</th><th class="num">Waiting</th><th class="num">Running</th><th>Status</th>
        <th class="num" title="its own fleet-wide concurrency; —: the type's groupConcurrency, if any">Concurrency</th><th class="num" title="—: 1">Weight</th><th></th>
      </tr></thead>
      <tbody>${groups.map((g) => html`<tr key=${g.group} class=${g.group === selected ? 'selected' : ''} data-testid="group-row" data-group=${g.group}>
        <td class="group-name"><a href=${link({ group: g.group })} data-testid="group-link">${formatName(g.group)}</a></td>
        <td class="num" data-testid="group-waiting">${g.waiting}</td>
        <td class="num" data-testid="group-running">${g.running}</td>
        <td data-testid="group-status">${g.paused ? html`<${Badge} kind="paused">paused<//>` : 'runs'}</td>
        <td class="num" data-testid="group-concurrency">${g.concurrency ?? '—'}</td>
        <td class="num" data-testid="group-weight">${g.weight ?? '—'}</td>
        <td>${toggle(g)}</td>
      </tr>`)}</tbody>
    </table>
    <div class="pager">
      ${to(offset ? 0 : undefined, 'groups-first', '« First')}${to(offset ? Math.max(0, offset - PAGE) : undefined, 'groups-prev', '‹ Previous')}
      <span data-testid="groups-info">${groups.length ? `${offset + 1}–${offset + groups.length}` : 0} of ${total}</span>
      ${to(next, 'groups-next', 'Next ›')}
    </div>`;
}
