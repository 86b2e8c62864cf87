import htm from 'htm';
import { h } from 'preact';

/** Tagged templates rendered by Preact: every interpolated value is a text node or a property, never HTML. */
export const html = htm.bind(h);
