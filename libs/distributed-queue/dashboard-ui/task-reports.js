import { html } from './html.js';
import { formatTime } from './format.js';

/**
 * What a running handler reported with `task.progress(value)`: a number from 0 to 100 as a bar and a
 * percentage, any other JSON value as compact JSON text.
 */
export function Progress({ value }) {
  if (typeof value === 'number' && value >= 0 && value <= 100) {
    return html`<progress class="progress" max="100" value=${value} data-testid="progress-bar"></progress>
      <span data-testid="progress-value">${value} %</span>`;
  }
  return html`<code data-testid="progress-value">${compactJson(value)}</code>`;
}

/**
 * The task's log lines (`task.log(line)`), oldest first, each with its attempt and time, and how many older
 * lines were dropped to keep within `taskLogs`. Lines are the handler's text: rendered as text only.
 */
export function TaskLogs({ logs = [], dropped = 0 }) {
  if (!logs.length && !dropped) return null;
  return html`<section data-testid="task-logs">
    <h3>Log</h3>
    ${dropped > 0 && html`<p class="muted" data-testid="logs-dropped">${dropped} earlier line${dropped === 1 ? '' : 's'} dropped</p>`}
    <ol class="payload logs">
      ${logs.map((l) => html`<li data-testid="log-line" data-attempt=${l.attempt}>
        <span class="muted" title=${formatTime(l.at)}>#${l.attempt} ${clock(l.at)}</span> <span data-testid="log-text">${l.line}</span>
      </li>`)}
    </ol>
  </section>`;
}

/** The time of day of an epoch-ms time, UTC, to the millisecond ("12:00:00.250"). */
const clock = (at) => formatTime(at).slice(11, 23);

function compactJson(value) {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}
