// The profiler's timeline of the shown pass, as the trace's `profile` gives it: the forward
// ops that made the graph (each with its node's sequence number), the ones_like seed, then
// one block per pop, `evaluate_function` with the node's own event and the aten ops inside.
// It follows the steps (the pop that runs is lit) and is linked to the graph: hovering or
// focusing an event outlines its node, hovering a node marks its events. The page only
// draws what the server derived (app/trace/profile.py).

import { frameAt, shownStep } from '../store.js';

const EVALUATE = 'autograd::engine::evaluate_function: ';
let linked = null;                // the node id hovered or focused, on either side
let graphRoot = null;
let lastRoot = null;
let drawn = { run: null, pass: -1 };
// The drawn events with what follow() last set on each: a step then touches only the few
// that change (a long pass has thousands of events, and the page repaints every step).
let marks = [];
let scrolling = 0;                // the frame that keeps the lit pop in view

/** This view's stylesheet (shared with the call path), loaded before the panel shows. */
export const ready = new Promise((resolve) => {
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = new URL('../../css/timeline.css', import.meta.url).href;
  link.addEventListener('load', resolve);
  link.addEventListener('error', resolve);
  document.head.appendChild(link);
});

function el(name, attrs = {}, parent = null, text = null) {
  const node = document.createElement(name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== null) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

/** Wire the two-way link with the graph once (`graph` is the graph's wrapper). */
export function mount(root, graph) {
  graphRoot = graph;
  const over = (event) => {
    const target = event.target.closest?.('[data-node]');
    link(target ? Number(target.dataset.node) : null);
  };
  root.addEventListener('pointerover', over);
  root.addEventListener('focusin', over);
  root.addEventListener('pointerleave', () => link(null));
  root.addEventListener('focusout', () => link(null));
  const onGraph = (event) => {
    const node = event.target.closest?.('g.node');
    link(node ? Number(node.dataset.id) : null);
  };
  graph.addEventListener('pointerover', onGraph);
  graph.addEventListener('focusin', onGraph);
  graph.addEventListener('pointerleave', () => link(null));
}

/** Mark node `id` on both sides (null: none). */
function link(id) {
  if (linked === id) return;
  linked = id;
  paintLink();
}

function paintLink() {
  if (graphRoot) {
    graphRoot.querySelectorAll('g.node[data-linked]').forEach((g) => g.removeAttribute('data-linked'));
    if (linked !== null) graphRoot.querySelector(`g.node[data-id="${linked}"]`)?.setAttribute('data-linked', '');
  }
  lastRoot?.querySelectorAll('.tl-event').forEach((e) => {
    e.classList.toggle('is-linked', linked !== null && Number(e.dataset.node) === linked);
  });
}

export function render(root, state) {
  lastRoot = root;
  const run = state.run;
  const frame = frameAt(run, shownStep(state));
  const hidden = !(run.profile ?? []).length;
  if (root.hidden !== hidden) root.hidden = hidden;
  if (hidden) return;
  if (drawn.run !== run || drawn.pass !== frame.passIndex) {
    draw(root, run.profile.filter((e) => e.pass === frame.passIndex), frame);
    drawn = { run, pass: frame.passIndex };
    paintLink();                  // new elements on this side (the graph keeps its marks)
  }
  if (drawn.k !== frame.k) follow(root, frame);
  drawn.k = frame.k;
}

function shortName(name) {
  return name.startsWith(EVALUATE) ? name.slice(EVALUATE.length).replace('torch::autograd::', '') : name;
}

function draw(root, events, frame) {
  const body = root.querySelector('.tl-body');
  const children = new Map();
  events.forEach((e) => {
    if (e.parent !== null) {
      if (!children.has(e.parent)) children.set(e.parent, []);
      children.get(e.parent).push(e);
    }
  });
  const rows = [el('div', { class: 'tl-lane tl-forward', role: 'list', 'aria-label': 'forward' }),
                el('div', { class: 'tl-lane tl-backward', role: 'list', 'aria-label': 'backward' })];
  el('span', { class: 'tl-lane-name' }, rows[0], 'forward');
  el('span', { class: 'tl-lane-name' }, rows[1], 'backward');
  for (const e of events) {
    if (e.parent !== null) continue;
    rows[e.kind === 'forward' ? 0 : 1].appendChild(block(e, children, frame));
  }
  marks = [];
  if (!events.length) {
    body.replaceChildren(el('p', { class: 'tl-empty' }, null,
      frame.pass?.summarized ? 'Not kept for a summarized pass.' : 'No profiler events for this pass.'));
    return;
  }
  body.replaceChildren(...rows);
  marks = [...body.querySelectorAll('.tl-event')].map((ev) => ({
    ev, step: ev.dataset.step === '' ? null : Number(ev.dataset.step),
    backward: ev.classList.contains('kind-backward'), current: false, done: false }));
}

/** One event and, beneath it, the events inside it. */
function block(e, children, frame) {
  const box = el('div', { class: `tl-block depth-${e.depth}`, role: e.depth === 0 ? 'listitem' : 'group' });
  const label = e.name.startsWith(EVALUATE) ? `evaluate_function: ${shortName(e.name)}` : e.name;
  const node = e.node === null ? null : frame.byId.get(e.node);
  const who = node ? ` (node ${node.name}${node.variable ? ` → ${node.variable}` : ''}${node.leaf ? ` of ${node.leaf}` : ''})` : '';
  const attrs = { class: `tl-event kind-${e.kind}${e.known ? '' : ' unknown'}`, tabindex: '0',
                  'data-index': e.index, 'data-step': e.step ?? '',
                  'aria-label': `${label}, sequence_nr ${e.seq}${who}${e.known ? '' : ', ops not recorded'}` };
  if (e.node !== null) attrs['data-node'] = e.node;
  const ev = el('div', attrs, box);
  el('span', { class: 'tl-name' }, ev, e.depth === 0 && e.kind === 'backward' ? shortName(e.name) : e.name);
  el('span', { class: 'tl-seq' }, ev, String(e.seq));
  const inner = children.get(e.index) ?? [];
  if (inner.length) {
    const row = el('div', { class: 'tl-inner' }, box);
    inner.forEach((c) => row.appendChild(block(c, children, frame)));
  } else if (!e.known && e.depth > 0) {
    el('span', { class: 'tl-note' }, box, 'ops not recorded');
  }
  return box;
}

/** Light the shown step's pop; mark the pops behind it; keep the lit one in view. */
function follow(root, frame) {
  const s = frame.j + 1;                        // 0: before the first pop
  const after = frame.end || frame.optimizer !== null;
  let current = null;
  for (const m of marks) {
    const now = m.backward && !after && m.step === s;
    const done = !m.backward || after || (m.step !== null && m.step < s);
    if (m.current !== now) { m.current = now; m.ev.classList.toggle('is-current', now); }
    if (m.done !== done) { m.done = done; m.ev.classList.toggle('is-done', done); }
    if (now && !current) current = m.ev;
  }
  root.dataset.step = String(s);
  const body = root.querySelector('.tl-body');
  cancelAnimationFrame(scrolling);
  if (current && body) {
    const box = current.closest('.depth-0') ?? current;
    // Read where it is on the next frame, when the layout is clean: read here, in the middle
    // of the page's paint, it would lay out the whole page once more on every step.
    scrolling = requestAnimationFrame(() => {
      const left = box.offsetLeft - body.offsetLeft;
      if (left < body.scrollLeft || left + box.offsetWidth > body.scrollLeft + body.clientWidth) {
        body.scrollLeft = Math.max(0, left - 24);
      }
    });
  }
}
