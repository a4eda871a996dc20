// "step 3 of 5", and one sentence about the step, announced to screen readers.

import { callText } from '../course.js';
import { explainFrame } from '../explain.js';
import { frameAt, shownStep } from '../store.js';

let measuring = 0;

export function render(root, state) {
  const frame = frameAt(state.run, shownStep(state));
  const { sentence, detail } = explainFrame(frame, state.run);
  set(root.querySelector('#counter'), `step ${frame.k} of ${frame.count - 1}`);
  const passes = state.run.passes.length;
  // With several passes the pass picker beside it says which one, where and in which iteration.
  set(root.querySelector('#pass'), !frame.pass ? '' : passes > 1 ? callText(frame.pass)
    : `${callText(frame.pass)} · line ${frame.pass.line}`);
  const changed = fill(root.querySelector('#sentence'), sentence) | fill(root.querySelector('#detail'), detail);
  // A long message (PyTorch's version error) scrolls the box: then it takes focus too, so
  // that a keyboard reaches all of it. Measured on the next frame, when the layout is clean:
  // read here, just after the text was written, it would lay the page out once more on
  // every step.
  if (changed) {
    cancelAnimationFrame(measuring);
    measuring = requestAnimationFrame(() => {
      if (root.scrollHeight > root.clientHeight + 1) root.tabIndex = 0;
      else root.removeAttribute('tabindex');
    });
  }
  root.classList.toggle('is-error', Boolean(frame.step?.error || (frame.end && state.run.error)));
}

function set(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

/** Node names, .grad and backward() calls set as code; the text stays text. */
const CODE = /(AccumulateGrad\([^)]*\)|\b[A-Z]\w*Backward\d*(?: #\d+)?|\b[A-Za-z_]\w*\.grad\b|\b[A-Za-z_]\w*\.backward\(\)|torch\.autograd\.grad\([^)]*\)|retain_grad\(\)|(?:retain|create)_graph=True)/;

function fill(node, text) {
  if (node.dataset.text === text) return false;
  node.dataset.text = text;
  node.replaceChildren(...text.split(CODE).map((part, i) => {
    if (i % 2 === 0) return document.createTextNode(part);
    const code = document.createElement('code');
    code.textContent = part;
    return code;
  }));
  return true;
}
