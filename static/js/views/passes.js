// The pass picker, shown when a program runs several passes (a training loop has one per
// iteration): "pass 3 of 20 · backward() at line 7, iteration 3". Choosing one moves the
// step index to that pass's start, so the URL's step holds the choice. A summarized pass
// (no graph kept) shows the order of its pops where the graph would be, and a button that
// asks for the run again kept step by step from that pass on (app.js `keepPass`). A long
// pass's pops after those it keeps step by step are listed there too, after its last one.

import { passLabel } from '../course.js';
import { nodeLabel } from '../labels.js';
import { frameAt, fullSteps, shownStep, timeline } from '../store.js';

/** The timeline index of pass p's first frame. */
export function passStart(run, p) {
  return Math.max(0, timeline(run).places.findIndex((place) => place.p === p && place.j === -1));
}

export function render(root, state) {
  const run = state.run;
  const select = root.querySelector('select');
  const many = run.passes.length > 1;
  if (root.hidden === many) root.hidden = !many;
  renderSummary(root.ownerDocument.getElementById('pass-summary'), frameAt(run, shownStep(state)));
  if (!many) { select.replaceChildren(); return; }
  // Options are only added while the trace streams; their "of N" is written once it is done.
  const count = run.status === 'done' ? run.passes.length : 0;
  if (select.dataset.count !== String(count) || select.options.length > run.passes.length) {
    select.replaceChildren();
    select.dataset.count = String(count);
  }
  for (let p = select.options.length; p < run.passes.length; p++) {
    select.append(new Option(passLabel(run.passes[p], p, count), String(p)));
  }
  const frame = frameAt(run, shownStep(state));
  if (select.value !== String(frame.passIndex)) select.value = String(frame.passIndex);
}

function renderSummary(box, frame) {
  const pass = frame.pass?.summarized || frame.tail ? frame.pass : null;
  const from = pass && frame.tail ? fullSteps(pass) : 0;
  if (box.hidden === !pass && box.pass === pass && box.from === from) return;
  box.hidden = !pass;
  box.pass = pass;
  box.from = from;
  if (!pass) { box.replaceChildren(); return; }
  const head = document.createElement('p');
  if (frame.tail) {
    head.textContent = `Pops ${from + 1}–${pass.steps.length} of this pass, in order (the trace keeps its first ${from} step by step):`;
  } else {
    head.textContent = `Pass ${frame.passIndex + 1} is summarized: its ${pass.steps.length} pops, in order.`;
    const load = document.createElement('button');
    load.type = 'button';
    load.className = 'pass-load';
    load.dataset.pass = String(frame.passIndex);
    load.textContent = `Step through pass ${frame.passIndex + 1}`;
    head.append(' ', load);
  }
  const list = document.createElement('ol');
  list.start = from + 1;
  list.append(...pass.steps.slice(from).map((s) => {
    const li = document.createElement('li');
    li.textContent = nodeLabel(s);
    return li;
  }));
  box.replaceChildren(head, list);
}
