// "Predict" mode in the lab: before each pop the student picks the node that pops next,
// sees at once whether they were right and why, and keeps a running score for the run.
// `question` and `judge` are pure functions of the run (store.js's frames, which hold the
// server's ready queue after each pop); `mount` is the small view the lab wires in.

import { listing, nodeLabel, plural, seqText } from './labels.js';
import { frameAt, shownStep, timeline } from './store.js';

const MAX_WAITING = 2;

/** The question before the pop after frame k, or null when nothing pops next in this
 * backward call: {k, options: node ids, answer, ready: ids, waiting: ids, byId}. */
export function question(run, k) {
  const t = timeline(run);
  if (run.status !== 'done' || k + 1 >= t.count) return null;
  const frame = frameAt(run, k);
  const next = frameAt(run, k + 1);
  if (!next.step || next.passIndex !== frame.passIndex || !frame.queue.length) return null;
  const best = Math.max(...frame.queue.map((id) => seqOf(frame.byId.get(id))));
  const waiting = [...frame.nodes].filter(([id, n]) => n.status === 'waiting' && (n.deps ?? 0) > 0
                                           && seqOf(frame.byId.get(id)) > best)
    .map(([id]) => id).sort((a, b) => seqOf(frame.byId.get(b)) - seqOf(frame.byId.get(a))).slice(0, MAX_WAITING);
  const options = [...frame.queue, ...waiting].sort((a, b) => a - b);
  return { k, options, answer: next.step.node, ready: [...frame.queue], waiting, byId: frame.byId, nodes: frame.nodes };
}

/** AccumulateGrad's number (UINT64_MAX) compares above every other. */
function seqOf(node) {
  return node.name === 'AccumulateGrad' ? Number.POSITIVE_INFINITY : node.seq;
}

/** Whether `choice` is the node that pops next, and one sentence why. */
export function judge(q, choice) {
  const name = (id) => nodeLabel(q.byId.get(id));
  const answer = q.byId.get(q.answer);
  const right = choice === q.answer;
  let why;
  if (!q.ready.includes(choice)) {
    const left = q.nodes.get(choice)?.deps ?? 0;
    why = `${name(choice)} is not ready: it still waits for ${left} ${plural(left, 'gradient', 'gradients')}. `;
  } else if (!right && seqOf(q.byId.get(choice)) === seqOf(answer)) {
    why = `${name(choice)} and ${name(q.answer)} both have ${seqText(answer)}: PyTorch's heap pops ${name(q.answer)} first, the one pushed first. `;
  } else if (!right) {
    why = `${name(choice)} (${seqText(q.byId.get(choice))}) is ready, but ${name(q.answer)} has a larger number. `;
  } else {
    why = '';
  }
  const others = q.ready.filter((id) => id !== q.answer).map(name);
  why += others.length
    ? `${name(q.answer)} has the largest sequence number of the ready nodes (${seqText(answer)}; also ready: ${listing(others)}).`
    : `${name(q.answer)} is the only node in the ready queue.`;
  return { right, why };
}

/** Score for a run: {asked, right}. */
export function score(answers) {
  const values = [...answers.values()];
  return { asked: values.length, right: values.filter((a) => a.right).length };
}

/** The view: a toggle button and a panel; `paint(state)` after every state change. */
export function mount(button, panel, queueList, getState, dispatch) {
  let on = false;
  let run = null;
  let answers = new Map();            // frame k → {choice, right, why}

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function pick(q, choice) {
    answers.set(q.k, { choice, ...judge(q, choice) });
    dispatch({ type: 'step', step: q.k + 1 });
  }

  function paint(state) {
    if (state.run !== run) { run = state.run; answers = new Map(); }
    button.setAttribute('aria-pressed', String(on));
    panel.hidden = !on;
    if (!on) { queueList.style.visibility = ''; return; }
    if (state.playing) dispatch({ type: 'playing', playing: false });
    const k = shownStep(state);
    const q = question(state.run, k);
    const last = answers.get(k - 1);
    const { asked, right } = score(answers);
    const children = [el('h2', 'predict-title', 'Predict the next pop'),
                      el('p', 'predict-score', `Score: ${right} of ${asked}`)];
    if (last) {
      const verdict = el('p', `predict-verdict ${last.right ? 'right' : 'wrong'}`, `${last.right ? '✓ Right. ' : '✗ Not quite. '}${last.why}`);
      children.push(verdict);
    }
    queueList.style.visibility = q ? 'hidden' : '';
    if (q) {
      children.push(el('p', 'predict-ask', 'Which node pops next?'));
      const list = el('div', 'predict-options');
      list.setAttribute('role', 'group');
      list.setAttribute('aria-label', 'Which node pops next?');
      for (const id of q.options) {
        const b = el('button', 'predict-option', nodeLabel(q.byId.get(id)));
        b.type = 'button';
        b.dataset.node = String(id);
        b.addEventListener('click', () => pick(q, id));
        list.append(b);
      }
      children.push(list);
    } else {
      children.push(el('p', 'predict-ask', state.run.status === 'done' ? 'Nothing pops next here: step on, or run another program.' : 'Waiting for the run…'));
    }
    panel.replaceChildren(...children);
  }

  button.addEventListener('click', () => { on = !on; paint(getState()); });
  return { paint, isOn: () => on };
}
