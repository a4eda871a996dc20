// "backward() again", "new forward pass", "zero_grad()": their state and what happened.

import { explainNote } from '../explain.js';

export function render(root, state) {
  const busy = state.run.status === 'running';
  const ran = state.run.status === 'done' && state.run.passes.length > 0;
  root.querySelector('#again').disabled = busy || !ran;
  root.querySelector('#forward').disabled = busy || !ran;
  root.querySelector('#zero').disabled = busy || !ran;
  root.querySelector('#retain').checked = state.settings.retain;
  const note = root.querySelector('#note');
  const text = explainNote(state.note, state.run);
  if (note.textContent !== text) note.textContent = text;
  note.hidden = !text;
}
