/** Escapes text for HTML text and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The page: a shell the bundled front end (assets/app.js, built at build time, no network) fills in.
 * No inline script or style: the Content-Security-Policy allows only this origin's files.
 */
export function dashboardPage(base: string, title: string): string {
  const b = escapeHtml(base);
  const t = escapeHtml(title);
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${t}</title>`,
    `<link rel="stylesheet" href="${b}/assets/app.css">`,
    `<script type="module" src="${b}/assets/app.js"></script>`,
    '</head>',
    '<body>',
    `<div id="app" data-base="${b}" data-title="${t}"></div>`,
    '</body>',
    '</html>',
  ].join('\n');
}

/** Headers of every dashboard response: no framing, no sniffing, only this origin's scripts and styles. */
export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};
