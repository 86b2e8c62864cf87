import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { useHashRoute, usePoll } from './hooks.js';
import { get, signOut, title } from './api.js';
import { ErrorBanner } from './components.js';
import { OverviewView } from './overview.js';
import { TypeView } from './type-view.js';
import { RouteView } from './route-view.js';
import { FlowsView, FlowView } from './flows.js';

/** The app: the dashboard until the user signs out (the session then ends on the server). */
export function App() {
  const [signedOut, setSignedOut] = useState(false);
  const [signOutError, setSignOutError] = useState(null);
  if (signedOut) return html`<main><p data-testid="signed-out">Signed out. Sign in again at <code>login?token=…</code>.</p></main>`;
  return html`<${Dashboard} onSignOut=${() => signOut().then(() => setSignedOut(true), setSignOutError)} signOutError=${signOutError} />`;
}

/** The shell: the header, the overview polled every 2 s (every view reads it), and the view of the hash. */
function Dashboard({ onSignOut, signOutError }) {
  const route = useHashRoute();
  const overview = usePoll(async () => ({ value: await get('/overview'), at: Date.now() }), [], 2000);
  useEffect(() => {
    document.title = title;
  }, []);
  const data = overview.data?.value;
  // "now" on the Redis clock: the overview's reading plus the time since it arrived.
  const now = data ? data.now + (Date.now() - overview.data.at) : Date.now();
  const [section, name] = route.parts;
  let view;
  if (section === 'types' && name) {
    view = html`<${TypeView} key=${name} type=${name} query=${route.query} summary=${data?.types.find((t) => t.type === name)}
      history=${!!data?.history} now=${now} refreshOverview=${overview.reload} />`;
  } else if (section === 'flows') {
    view = name ? html`<${FlowView} key=${name} id=${name} now=${now} />` : html`<${FlowsView} query=${route.query} now=${now} />`;
  } else if (section === 'route') {
    view = html`<${RouteView} now=${now} />`;
  } else {
    view = html`<${OverviewView} overview=${data} />`;
  }
  return html`
    <header class="top">
      <a href="#/" class="brand" data-testid="brand">${title}</a>
      <nav>
        <a href="#/" class=${!section ? 'active' : ''} data-testid="nav-overview">Overview</a>
        <a href="#/flows" class=${section === 'flows' ? 'active' : ''} data-testid="nav-flows">Flows</a>
        ${data?.route && html`<a href="#/route" class=${section === 'route' ? 'active' : ''} data-testid="nav-route">Route</a>`}
      </nav>
      <span class="muted clock" data-testid="updated">${data ? `updated ${new Date(overview.data.at).toLocaleTimeString()}` : ''}</span>
      <button class="sign-out" data-testid="sign-out" onClick=${onSignOut}>Sign out</button>
    </header>
    <main>
      <${ErrorBanner} error=${signOutError ?? overview.error} />
      ${view}
    </main>`;
}
