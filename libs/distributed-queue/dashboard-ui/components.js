import { useState } from 'preact/hooks';
import { html } from './html.js';
import { formatRelative, formatTime } from './format.js';

/** The visible error banner: the API error's name and message, as text. */
export function ErrorBanner({ error }) {
  if (!error) return null;
  const hint = error.status === 401 ? ' (sign in again through the login link you were given)' : '';
  return html`<div class="banner error" role="alert" data-testid="error-banner">
    <strong data-testid="error-name">${error.name || 'Error'}</strong>: <span data-testid="error-message">${error.message}</span>${hint}
  </div>`;
}

/** The outcome of the last action. */
export function Notice({ text }) {
  return text ? html`<div class="banner notice" role="status" data-testid="notice">${text}</div>` : null;
}

/** A button that asks once more before it acts (for bulk actions). */
export function ConfirmButton({ label, question, onConfirm, disabled, testid }) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return html`<button class="danger" disabled=${disabled} data-testid=${testid} onClick=${() => setAsking(true)}>${label}</button>`;
  }
  return html`<span class="confirm" data-testid="confirm">
    ${question}
    <button class="danger" data-testid="confirm-yes" onClick=${() => { setAsking(false); onConfirm(); }}>Yes</button>
    <button data-testid="confirm-no" onClick=${() => setAsking(false)}>No</button>
  </span>`;
}

/** A time as text with its distance from now; the absolute time in the tooltip. */
export function When({ at, now, testid }) {
  if (at === undefined || at === null) return html`<span class="muted">—</span>`;
  return html`<span title=${formatTime(at)} data-testid=${testid}>${formatRelative(at, now)}</span>`;
}

/** A small badge ("paused", "ordered"). */
export function Badge({ kind, children, testid }) {
  return html`<span class=${`badge ${kind}`} data-testid=${testid}>${children}</span>`;
}
