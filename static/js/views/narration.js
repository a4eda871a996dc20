// "step 3 of 5", and one sentence about the step, announced to screen readers.

import { explainFrame } from '../explain.js';
import { frameAt, shownStep } from '../store.js';

export function render(root, state) {
  const frame = frameAt(state.run, shownStep(state));
  const { sentence, detail } = explainFrame(frame, state.run);
  set(root.querySelector('#counter'), `step ${frame.k} of ${frame.count - 1}`);
  const passes = state.run.passes.length;
  set(root.querySelector('#pass'), frame.pass
    ? `${frame.pass.output}.backward()${passes > 1 ? ` · call ${frame.passIndex + 1} of ${passes}` : ''} · line ${frame.pass.line}`
    : '');
  set(root.querySelector('#sentence'), sentence);
  set(root.querySelector('#detail'), detail);
  root.classList.toggle('is-error', Boolean(frame.step?.error || (frame.end && state.run.error)));
}

function set(node, text) {
  if (node.textContent !== text) node.textContent = text;
}
