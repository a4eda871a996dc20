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
  fill(root.querySelector('#sentence'), sentence);
  fill(root.querySelector('#detail'), detail);
  root.classList.toggle('is-error', Boolean(frame.step?.error || (frame.end && state.run.error)));
}

function set(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

/** Node names, .grad and backward() calls set as code; the text stays text. */
const CODE = /(AccumulateGrad\([^)]*\)|\b[A-Z]\w*Backward\d*(?: #\d+)?|\b[A-Za-z_]\w*\.grad\b|\b[A-Za-z_]\w*\.backward\(\)|retain_graph=True)/;

function fill(node, text) {
  if (node.dataset.text === text) return;
  node.dataset.text = text;
  node.replaceChildren(...text.split(CODE).map((part, i) => {
    if (i % 2 === 0) return document.createTextNode(part);
    const code = document.createElement('code');
    code.textContent = part;
    return code;
  }));
}
