// The lab page's views for networks, loaded only for a run that has tensors, modules or an
// optimizer step (app.js imports this module then; a scalar program never pays for it):
// heatmaps of tensors in the graph and in the leaves panel, the network's layers as bands
// that open as backward reaches them, the step's gradients in full, and the optimizer.

import { frameAt, shownStep } from '../../store.js';
import { choicesOf, clickedBand, drawBands, toggled } from './modules.js';
import { renderOptimizer } from './optimizer.js';
import { decorateTensors, renderPanel } from './tensors.js';
import { leafRows as networkLeafRows } from './leaves.js';

const SVG = 'http://www.w3.org/2000/svg';
let app = null;                     // {getState, dispatch}
let panels = null;

/** This module's stylesheet, loaded before anything is drawn with it. */
export const ready = new Promise((resolve) => {
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = new URL('../../../css/network.css', import.meta.url).href;
  link.addEventListener('load', resolve);
  link.addEventListener('error', resolve);
  document.head.appendChild(link);
});

/** Wire to the page: the state to read and the dispatch to change it; adds the panels.
 * The lab puts both around its queue panel; the embed (`embedded`) appends only those its
 * embed code asked for (`show`), in this order, to its side column (`host`). */
export function mount({ getState, dispatch, embedded = false, host = null, show = ['optimizer', 'tensors'] }) {
  app = { getState, dispatch };
  const optimizer = show.includes('optimizer')
    ? section('optimizer-panel', 'optimizer-h', 'optimizer.step()', 'optimizer-body') : null;
  if (optimizer) optimizer.hidden = true;
  const tensors = show.includes('tensors')
    ? section('tensors-panel', 'tensors-h', 'Gradients at this step', 'tensor-list') : null;
  tensors?.querySelector('h2').after(Object.assign(document.createElement('p'), { className: 'sub' }));
  if (embedded) {
    for (const panel of [optimizer, tensors]) if (panel) { panel.classList.add('e-panel'); host.append(panel); }
  } else {
    const side = document.querySelector('.side');
    const queue = side.querySelector('.queue-panel');
    side.insertBefore(optimizer, queue);
    queue.after(tensors);
  }
  panels = { optimizer, tensors };
  const wrap = document.getElementById('graph-wrap');
  let down = null;
  wrap.addEventListener('pointerdown', (event) => { down = [event.clientX, event.clientY]; });
  wrap.addEventListener('click', (event) => {
    if (!down || Math.hypot(event.clientX - down[0], event.clientY - down[1]) > 5) return;   // a drag
    const id = clickedBand(event.clientX, event.clientY);
    const state = getState();
    const graph = frameAt(state.run, shownStep(state)).graph;
    if (id && graph) toggle(graph, id);
  });
}

function section(cls, id, title, body) {
  const s = document.createElement('section');
  s.className = `panel ${cls}`;
  s.setAttribute('aria-labelledby', id);
  const h = document.createElement('h2');
  h.id = id;
  h.textContent = title;
  const content = document.createElement('div');
  content.className = body;
  s.append(h, content);
  return s;
}

/** The panels' redraw, from the state as every view's. */
export function render(state) {
  if (!panels) return;
  const frame = frameAt(state.run, shownStep(state));
  if (panels.optimizer) renderOptimizer(panels.optimizer, frame, state.run);
  if (panels.tensors) {
    renderPanel(panels.tensors, frame);
    panels.tensors.hidden = Boolean(frame.optimizer);
  }
}

function toggle(graph, id) {
  const state = app.getState();
  const frame = frameAt(state.run, shownStep(state));
  const open = frame.graph === graph ? current.get(graph)?.get(id) : undefined;
  app.dispatch({ type: 'ui', ui: toggled(state, id, open ?? true) });
}

const current = new WeakMap();      // graph -> the bands' open state last drawn

/** graph.js's hook: bands behind the edges, collapsed boxes above the nodes, and tensors
 * drawn in the nodes and on the edges. Returns {sync(frame, state)}. */
export function decorate(view, { layer, edgeLayer }) {
  const graph = view.graph;
  const back = document.createElementNS(SVG, 'g');
  back.setAttribute('class', 'bands');
  layer.insertBefore(back, edgeLayer);
  const top = document.createElementNS(SVG, 'g');
  top.setAttribute('class', 'band-boxes');
  layer.appendChild(top);
  const bands = drawBands(graph, { back, top });
  const tensors = decorateTensors(view, graph);
  let lastFrame = null;
  return {
    sync(frame, state) {
      current.set(graph, bands.sync(frame, choicesOf(state)));
      if (frame === lastFrame) return;
      lastFrame = frame;
      tensors.sync(frame, new Map(frame.leaves.map((l) => [l.name, l])));
    },
  };
}

/** views/leaves.js's hook: the rows for a network's leaves, or null for its own. */
export function leafRows(shown, frame, state, plainRow) {
  return networkLeafRows(shown, frame, state, plainRow, (id) => toggle(frame.graph, id));
}
