// Each leaf's value and its .grad at this step.

import { short } from '../labels.js';
import { frameAt, shownStep } from '../store.js';

export function render(root, state) {
  const frame = frameAt(state.run, shownStep(state));
  const rows = frame.leaves.map((leaf) => {
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
  });
  root.querySelector('tbody').replaceChildren(...rows);
}
