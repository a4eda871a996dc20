// Each leaf's value and its .grad at this step, in the program's order. A long list shows
// its first rows and any leaf being written now, with a button for the rest.

import { short } from '../labels.js';
import { frameAt, shownStep } from '../store.js';

export const SHORT_LIST = 8;

/** `ext`: the network views (views/network/index.js) once loaded: parameters per module,
 * tensors as heatmaps. */
export function render(root, more, state, ext = null) {
  const frame = frameAt(state.run, shownStep(state));
  const long = frame.leaves.length > SHORT_LIST + 1;
  const open = state.ui.leavesOpen || !long;
  const shown = open ? frame.leaves : frame.leaves.filter((leaf, i) => i < SHORT_LIST || leaf.write);
  const rows = frame.pass?.summarized ? [notKept()] : ext?.leafRows(shown, frame, state, row) ?? shown.map(row);
  const body = root.querySelector('tbody');
  // The same rows (a network's are kept while they show the same values) stay in place, so
  // a focused heatmap keeps its focus.
  if (rows.length !== body.children.length || rows.some((r, i) => body.children[i] !== r)) body.replaceChildren(...rows);
  more.hidden = !long;
  if (long) {
    const text = open ? 'Show fewer leaves' : `Show all ${frame.leaves.length} leaves`;
    if (more.textContent !== text) more.textContent = text;
    more.setAttribute('aria-expanded', String(open));
  }
}

/** A summarized pass keeps no .grad values (views/passes.js lists what it keeps). */
function notKept() {
  const tr = document.createElement('tr');
  const td = document.createElement('td');
  td.colSpan = 3;
  td.textContent = 'Not kept for a summarized pass.';
  tr.append(td);
  return tr;
}

function row(leaf) {
  const tr = document.createElement('tr');
  if (leaf.write) tr.className = `written ${leaf.write}`;
  const name = document.createElement('th');
  name.scope = 'row';
  name.textContent = leaf.name;
  const value = document.createElement('td');
  value.textContent = leaf.value === null ? '' : short(leaf.value);
  const grad = document.createElement('td');
  grad.textContent = leaf.grad === null ? 'None' : short(leaf.grad);
  if (leaf.write) {
    const how = document.createElement('span');
    how.className = 'how';
    how.textContent = leaf.write === 'first' ? 'first write' : '+=';
    grad.append(' ', how);
  }
  tr.append(name, value, grad);
  return tr;
}
