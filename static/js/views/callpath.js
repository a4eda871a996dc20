// The call path of the shown pass: the boxes from `loss.backward()` (or autograd.grad) to
// `.grad`, as the trace's `callpath` phases give them, the current one lit as the steps
// play: the entry phases and compute_dependencies at step 0, evaluate_function at every
// pop (with the hooks and release_variables where that pop had them), `.grad` at the last.
// A call that raised before its engine ran shows the phases up to the one that raised.
// Each box links to the lab's engine code that does the same (/source/engine/...).

import { frameAt, shownStep } from '../store.js';

const LABELS = {
  'Tensor.backward': 'Tensor.backward()',
  'torch.autograd.backward': 'torch.autograd.backward',
  'torch.autograd.grad': 'torch.autograd.grad',
  _make_grads: '_make_grads',
  _engine_run_backward: '_engine_run_backward',
  'Engine::execute': 'Engine::execute',
  compute_dependencies: 'compute_dependencies',
  ready_queue: 'ready-queue loop',
  evaluate_function: 'evaluate_function',
  hooks: 'hooks',
  release_variables: 'release_variables',
  '.grad': '.grad ready',
  returned: 'gradients returned',
};
const ORDER = Object.keys(LABELS);
const seen = new WeakMap();       // root → the boxes it shows and each one's state
const PER_POP = new Set(['ready_queue', 'evaluate_function', 'hooks', 'release_variables']);

function el(name, attrs = {}, parent = null, text = null) {
  const node = document.createElement(name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== null) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

/** The phases shown at this frame: the pass's, or a failed call's once the run ends. */
function shownPhases(run, frame) {
  const all = run.callpath ?? [];
  const failed = all.filter((p) => p.pass === null);
  if (failed.length && (!run.passes.length || frame.end)) return { phases: failed, failed: true };
  const ordered = all.filter((p) => p.pass === frame.passIndex);
  ordered.sort((a, b) => ORDER.indexOf(a.phase) - ORDER.indexOf(b.phase));
  return { phases: ordered, failed: false };
}

/** Each box's state at pop `s` of the pass (0: the dependency count): lit, current, off. */
function stateOf(phase, s, frame, total) {
  if (phase.status === 'error') return 'error';
  if (phase.status === 'skipped' && phase.phase !== 'hooks') return 'skipped';
  if (phase.step === null) return phase.phase === 'hooks' ? 'off' : 'skipped';
  const step = frame.step;
  if (phase.phase === 'hooks') return phase.steps?.includes(s) ? 'current' : phase.steps?.some((k) => k < s) ? 'lit' : 'off';
  if (phase.phase === 'release_variables') {
    if (s < 1) return 'off';
    return step?.released?.length ? 'current' : 'lit';
  }
  if (PER_POP.has(phase.phase)) return s >= 1 && s <= total ? 'current' : s > total ? 'lit' : 'off';
  if (phase.phase === 'compute_dependencies') return s === 0 ? 'current' : 'lit';
  if (phase.phase === '.grad' || phase.phase === 'returned') return s >= phase.step ? 'current' : 'off';
  return s >= phase.step ? 'lit' : 'off';
}

export function render(root, state) {
  const run = state.run;
  const frame = frameAt(run, shownStep(state));
  const { phases, failed } = shownPhases(run, frame);
  const hidden = !(run.callpath ?? []).length;
  if (root.hidden !== hidden) root.hidden = hidden;
  if (hidden) return;
  const total = frame.pass?.steps.length ?? 0;
  const after = frame.end || frame.optimizer !== null;
  const s = failed ? 0 : after ? total : frame.j + 1;
  const states = phases.map((phase) => (failed ? (phase.status === 'error' ? 'error' : 'lit')
    : stateOf(phase, s, frame, total)));
  let drawn = seen.get(root);
  if (!drawn || drawn.run !== run || drawn.pass !== frame.passIndex || drawn.phases !== phases.length
      || drawn.failed !== failed) {
    drawn = { run, pass: frame.passIndex, phases: phases.length, failed, boxes: draw(root, phases), states: [] };
    seen.set(root, drawn);
  }
  // A step changes the state of a box or two: only those are touched (a page repaints on
  // every step, and the path used to be built anew each time).
  states.forEach((st, i) => {
    if (drawn.states[i] === st) return;
    const li = drawn.boxes[i];
    if (drawn.states[i]) li.classList.remove(`is-${drawn.states[i]}`);
    li.classList.add(`is-${st}`);
    if (st === 'current' || st === 'error') li.setAttribute('aria-current', 'step');
    else li.removeAttribute('aria-current');
    drawn.states[i] = st;
  });
  const head = failed ? 'The call raised before the engine ran:' : frame.pass
    ? `${frame.pass.kind === 'grad' ? 'autograd.grad' : 'backward()'} at line ${frame.pass.line}, ${s === 0 ? 'before the first pop' : `pop ${Math.min(s, total)} of ${total}`}`
    : '';
  const caption = root.querySelector('.cp-now');
  if (caption.textContent !== head) caption.textContent = head;
}

/** The boxes of one pass's path (or a failed call's), each linking to its engine code. */
function draw(root, phases) {
  const list = el('ol', { class: 'cp-path' });
  const boxes = phases.map((phase) => {
    const li = el('li', { class: 'cp-box', 'data-phase': phase.phase }, list);
    const [file, fn] = phase.source.replace('/source/', '').split('#');
    const a = el('a', { class: 'cp-link', href: phase.source, target: '_blank', rel: 'noopener',
                        title: `The lab's engine: ${file}, ${fn}()` }, li);
    el('span', { class: 'cp-name' }, a, LABELS[phase.phase] ?? phase.phase);
    el('span', { class: 'cp-code' }, a, `${file.replace('engine/', '')} · ${fn}`);
    el('span', { class: 'cp-detail' }, li, phase.detail);
    return li;
  });
  root.querySelector('.cp-body').replaceChildren(list);
  return boxes;
}
