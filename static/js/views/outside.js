// Tensors the program bound that are not in the graph, beside the leaves, each with why in
// a student's words and the line that made it (a click marks it in the editor).

import { OUTSIDE } from '../course.js';
import { lineButton } from './console.js';

export function render(root, state) {
  const run = state.run;
  const rows = run.source === state.program ? run.outside : [];
  const list = root.querySelector('ul');
  if (root.hidden === !rows.length && list.rows === rows) return;
  root.hidden = !rows.length;
  list.rows = rows;
  list.replaceChildren(...rows.map((row) => {
    const li = document.createElement('li');
    const name = document.createElement('code');
    name.textContent = row.name;
    const why = document.createElement('span');
    why.textContent = OUTSIDE[row.reason] ?? row.reason;
    li.append(name, why, lineButton(row.line));
    return li;
  }));
}
