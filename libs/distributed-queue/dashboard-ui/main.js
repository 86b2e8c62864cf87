// The dashboard's browser entry point, bundled by scripts/build-dashboard.js into src/dashboard/assets/app.js
// (and app.css, from the import below).
import './app.css';
import { render } from 'preact';
import { html } from './html.js';
import { App } from './app.js';

render(html`<${App} />`, document.getElementById('app'));
