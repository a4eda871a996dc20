// "Compare schedulers": the same program under PyTorch's ready queue and under the
// topological order of engine/topological.py, side by side. Each column folds its own
// trace (streamed with its scheduler) into a state of its own with store.js, and draws it
// with graph.js; the lab's one step index drives both. Loaded on demand (PRESENTER_ONLY).

import * as api from '../api.js';
import { nodeLabel } from '../labels.js';
import { frameAt, initialState, reduce, shownStep } from '../store.js';
import * as graph from './graph.js';

export const SCHEDULERS = [
  { id: 'ready_queue', title: "PyTorch's ready queue",
    sub: 'Runs, among the nodes whose dependencies are all in, the one with the highest sequence number.' },
  { id: 'topological', title: 'Topological order',
    sub: 'No counts, no queue: a reverse DFS post-order over next_edges, then one pass.' },
];

export const WHY = "The DFS finishes the first edge's subtree first, so in the reversed order that "
  + 'subtree runs last; PyTorch\'s queue runs, among the nodes that are ready, the one with the '
  + 'highest sequence number (an AccumulateGrad first).';

const MICROGRAD = "micrograd's backward() is the same idea: build_topo visits each value's children "
  + 'depth first and the list is walked reversed; here the walk keeps its own stack, so a deep '
  + 'graph needs no recursion.';

const MAX_LISTED = 300;           // steps listed per pass; a longer pass says how many more

let view = null;

/** This view's stylesheet, loaded before the panel shows. */
export const ready = new Promise((resolve) => {
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = new URL('../../css/schedulers.css', import.meta.url).href;
  link.addEventListener('load', resolve);
  link.addEventListener('error', resolve);
  document.head.appendChild(link);
});

function el(tag, attrs = {}, parent = null, text = null) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== null) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

function svgEl(tag, attrs, parent) {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  parent.appendChild(node);
  return node;
}

/** Build the panel in `root` once; `move(delta)` steps the lab (the one step index). */
export function mount(root, { move, onChange }) {
  root.replaceChildren();
  const head = el('div', { class: 'sched-head' }, root);
  el('h2', { id: 'schedulers-h' }, head, 'Two schedulers, one program');
  const steps = el('div', { class: 'sched-steps', role: 'group', 'aria-label': 'Step both schedulers' }, head);
  const back = el('button', { type: 'button', class: 'sched-back', 'aria-label': 'Step both back' }, steps, '◀');
  const counter = el('span', { class: 'sched-k', 'aria-live': 'off' }, steps, '');
  const forward = el('button', { type: 'button', class: 'sched-forward', 'aria-label': 'Step both forward' }, steps, '▶');
  back.addEventListener('click', () => move(-1));
  forward.addEventListener('click', () => move(1));
  const why = el('p', { class: 'sched-why', 'aria-live': 'polite' }, root);
  const columns = el('div', { class: 'sched-columns' }, root);
  const cols = SCHEDULERS.map((s) => column(columns, s, onChange));
  el('p', { class: 'sched-note' }, root, MICROGRAD);
  view = { root, cols, why, counter, source: null, controller: null, onChange };
}

function column(parent, scheduler, onChange) {
  const box = el('article', { class: 'sched-col', 'data-scheduler': scheduler.id,
                              'aria-labelledby': `sched-${scheduler.id}-h` }, parent);
  el('h3', { id: `sched-${scheduler.id}-h` }, box, scheduler.title);
  el('p', { class: 'sub' }, box, scheduler.sub);
  const caption = el('p', { class: 'sched-caption' }, box);
  const wrap = el('div', { class: 'graph-wrap sched-graph' }, box);
  const canvas = el('div', { class: 'graph-canvas' }, wrap);
  const svg = svgEl('svg', { class: 'graph', role: 'img', 'aria-labelledby': `sched-${scheduler.id}-g` }, canvas);
  svgEl('title', { id: `sched-${scheduler.id}-g` }, svg).textContent = `The backward graph, ${scheduler.title}`;
  el('div', { class: 'overlay', 'aria-hidden': 'true' }, canvas);
  el('p', { class: 'graph-empty', hidden: '' }, wrap);
  el('span', { class: 'zoom-level', hidden: '' }, wrap);
  const order = el('ol', { class: 'sched-order', tabindex: '0',
                          'aria-label': `${scheduler.title}: the order of this pass` }, box);
  const col = { id: scheduler.id, wrap, caption, order, state: initialState(), listed: null };
  new ResizeObserver(() => {
    col.state = reduce(col.state, { type: 'box', box: { w: wrap.clientWidth, h: wrap.clientHeight } });
    onChange();
  }).observe(wrap);
  return col;
}

/** Trace `source` under both schedulers (again only when it changed). */
export function load(source) {
  if (!view || view.source === source) return;
  view.controller?.abort();
  const controller = new AbortController();
  view.controller = controller;
  view.source = source;
  view.root.dataset.loaded = '0';
  let done = 0;
  for (const col of view.cols) {
    col.state = reduce({ ...initialState(), box: col.state.box }, { type: 'run-start', source });
    col.listed = null;
    api.streamTrace(source, (kind, data) => {
      if (controller.signal.aborted) return;
      col.state = reduce(col.state, { type: 'event', kind, data });
      if (kind === 'done' && ++done === view.cols.length) view.root.dataset.loaded = '1';
      view.onChange();
    }, controller.signal, col.id).catch((err) => {
      if (!controller.signal.aborted) {
        col.state = reduce(col.state, { type: 'run-failed', message: String(err.message || err) });
        view.onChange();
      }
    });
  }
}

/** Both columns at the lab's shown step. */
export function render(root, state) {
  if (!view || root.hidden) return;
  const k = shownStep(state);
  const frames = view.cols.map((col) => {
    if (col.state.step !== k || col.state.settings !== state.settings) {
      col.state = reduce({ ...col.state, settings: state.settings }, { type: 'step', step: k });
    }
    graph.render(col.wrap, col.state);
    return frameAt(col.state.run, shownStep(col.state));
  });
  const [a, b] = frames;
  const differ = Boolean(a.step && b.step && a.step.node !== b.step.node);
  view.cols.forEach((col, i) => {
    const frame = frames[i];
    const other = frames[1 - i];
    col.caption.textContent = caption(frame);
    mark(col.wrap, differ ? frame.step.node : null, differ ? other.step.node : null);
    listOrder(col, frame, other.pass);
  });
  view.counter.textContent = `step ${k} of ${Math.max(a.count, b.count) - 1}`;
  view.root.dataset.differs = differ ? '1' : '0';
  view.why.textContent = whySentence(a, b, differ);
}

function caption(frame) {
  if (!frame.graph) return frame.pass ? 'No graph kept for this pass.' : 'Tracing…';
  const passText = frame.pass && frame.count > 1 ? ` (pass ${frame.passIndex + 1})` : '';
  if (!frame.step) {
    return frame.j < 0 ? `Before the first step${passText}: the root comes first.` : `After the last step${passText}.`;
  }
  const node = frame.byId.get(frame.step.node);
  return `Step ${frame.j + 1} of ${frame.pass.steps.length}${passText}: ${nodeLabel(node)} runs.`;
}

function whySentence(a, b, differ) {
  if (!a.graph || !b.graph) return '';
  if (!differ) {
    if (!a.step || !b.step) return 'Both schedulers start from the root and end with every .grad written.';
    return `Both run ${nodeLabel(a.byId.get(a.step.node))} at this step.`;
  }
  return `Here the ready queue runs ${nodeLabel(a.byId.get(a.step.node))} and the topological order `
    + `runs ${nodeLabel(b.byId.get(b.step.node))}. ${WHY}`;
}

/** The nodes that make this step differ, in this column's graph: the one it runs
 * (`here`) and the one the other scheduler runs (`other`). */
function mark(wrap, here, other) {
  for (const g of wrap.querySelectorAll('g.node[data-differs]')) g.removeAttribute('data-differs');
  if (here === null) return;
  wrap.querySelector(`g.node[data-id="${other}"]`)?.setAttribute('data-differs', 'other');
  wrap.querySelector(`g.node[data-id="${here}"]`)?.setAttribute('data-differs', 'here');
}

/** The pass's steps in this scheduler's order, the shown one current, those whose node
 * differs from the other order's at the same place marked. */
function listOrder(col, frame, otherPass) {
  const pass = frame.pass;
  if (col.listed?.pass !== pass || col.listed?.other !== otherPass || col.listed?.count !== pass?.steps.length) {
    const items = [];
    const steps = pass?.steps ?? [];
    steps.slice(0, MAX_LISTED).forEach((step, j) => {
      const differs = otherPass?.steps[j] && otherPass.steps[j].node !== step.node;
      const li = el('li', { class: `sched-step${differs ? ' differs' : ''}`, 'data-node': step.node });
      li.textContent = nodeLabel(frame.byId.get(step.node));
      if (differs) el('span', { class: 'visually-hidden' }, li, ' (differs)');
      items.push(li);
    });
    if (steps.length > MAX_LISTED) items.push(el('li', { class: 'sched-more' }, null, `… and ${steps.length - MAX_LISTED} more`));
    col.order.replaceChildren(...items);
    col.listed = { pass, other: otherPass, count: steps.length, current: null };
  }
  const current = frame.step ? col.order.children[frame.j] ?? null : null;
  if (col.listed.current !== current) {
    col.listed.current?.classList.remove('current');
    col.listed.current?.removeAttribute('aria-current');
    current?.classList.add('current');
    current?.setAttribute('aria-current', 'step');
    col.listed.current = current;
  }
}
