// The read-only embed (/embed?p=...&s=...&panels=...&controls=...): the lab's store and views
// on a shell without an editor, for a course page's iframe. The program comes from the
// query (base64url, as the lab's links carry it) and is traced once; the reader may only
// move through the steps with the controls the embed code asked for. The network views
// (views/network/, as the lab shows them) load only when the embed code asked for one of
// them (modules, gradients, optimizer) and the run has tensors, modules or a step.

import * as api from './api.js';
import { wireGestures, zoomStep } from './gestures.js';
import { createPlayer } from './player.js';
import { frameAt, initialState, reduce, shownStep, timeline } from './store.js';
import { decodeProgram, encodeProgram } from './url.js';
import * as controls from './views/controls.js';
import * as graph from './views/graph.js';
import * as leaves from './views/leaves.js';
import * as minimap from './views/minimap.js';
import * as narration from './views/narration.js';
import * as queue from './views/queue.js';

const $ = (id) => document.getElementById(id);
const query = new URLSearchParams(location.search);
const panels = new Set((document.body.dataset.panels ?? '').split(',').filter(Boolean));
const NETWORK_PANELS = { gradients: 'tensors', optimizer: 'optimizer' };
const wantsNetwork = ['modules', ...Object.keys(NETWORK_PANELS)].some((p) => panels.has(p));
let network = null;                 // views/network/index.js, once loaded

/** What the query asks for; a malformed program or step is ignored, never trusted. */
function wanted() {
  let program = '';
  try { program = decodeProgram(query.get('p') ?? ''); } catch { program = ''; }
  const step = Number.parseInt(query.get('s') ?? '', 10);
  return { program, step: Number.isFinite(step) && step >= 0 ? step : 0,
           theme: document.documentElement.dataset.theme };
}

const init = wanted();
let state = initialState(init);
let dirty = false;
const player = createPlayer(() => state, dispatch);

function dispatch(action) {
  state = reduce(state, action);
  if (document.body.dataset.run !== state.run.status) document.body.dataset.run = state.run.status;
  player.sync();
  if (wantsNetwork && needsNetwork(state.run)) loadNetwork();
  if (!dirty) { dirty = true; requestAnimationFrame(paint); }
}

/** As the lab's: a run with a tensor, a module or an optimizer step. */
function needsNetwork(run) {
  return run.optimizer_steps?.length > 0 || run.passes.some((p) => p.graph
    && (p.graph.bands?.length > 0 || p.graph.nodes.some((n) => n.shape.length > 0)));
}

/** The network views, with only the panels the embed code asked for; <body data-network>
 * says where they are ('loading', 'ready'). */
function loadNetwork() {
  if (document.body.dataset.network) return;
  document.body.dataset.network = 'loading';
  import('./views/network/index.js').then(async (module) => {
    await module.ready;
    const show = Object.entries(NETWORK_PANELS).filter(([p]) => panels.has(p)).map(([, v]) => v);
    module.mount({ getState: () => state, dispatch, embedded: true, host: $('e-side'), show });
    network = module;
    document.body.dataset.network = 'ready';
    if (!dirty) { dirty = true; requestAnimationFrame(paint); }
  });
}

function paint() {
  dirty = false;
  const modules = panels.has('modules') ? network : null;   // bands and heatmaps, or plain
  narration.render($('narration'), state);
  graph.render($('graph-wrap'), state, modules);
  minimap.render($('minimap'), state);
  controls.render(document.querySelector('.controls'), state);
  if ($('queue')) queue.render($('queue'), state);
  if ($('leaves')) leaves.render($('leaves'), $('leaves-more'), state, modules);
  network?.render(state);
  if ($('lines')) renderLines($('lines'), state);
  document.body.dataset.step = String(shownStep(state));
}

/** The program, one item per line; the line of the pass shown and an error's line marked. */
function renderLines(root, s) {
  const lines = s.program.split('\n');
  if (lines.at(-1) === '') lines.pop();
  if (root.children.length !== lines.length) {
    root.replaceChildren(...lines.map((text) => {
      const li = document.createElement('li');
      const code = document.createElement('code');
      code.textContent = text || ' ';
      li.append(code);
      return li;
    }));
  }
  const frame = frameAt(s.run, shownStep(s));
  const active = frame.pass?.line ?? null;
  const error = s.run.error?.line ?? null;
  [...root.children].forEach((li, i) => {
    li.classList.toggle('active', active === i + 1);
    li.classList.toggle('error', error === i + 1);
  });
}

async function run() {
  dispatch({ type: 'run-start', source: state.program, step: init.step });
  try {
    await api.streamTrace(state.program, (kind, data) => {
      dispatch({ type: 'event', kind, data });
      if (kind === 'done') dispatch({ type: 'step', step: init.step });
    });
  } catch (err) {
    dispatch({ type: 'run-failed', message: String(err.message || err) });
  }
}

function go(step) {
  dispatch({ type: 'playing', playing: false });
  dispatch({ type: 'step', step });
}

function togglePlay() {
  const last = timeline(state.run).count - 1;
  if (!state.playing && shownStep(state) >= last && last > 0) go(0);
  dispatch({ type: 'playing', playing: !state.playing });
}

/** The keys of the controls the embed shows, and the zoom keys. */
function onKey(event) {
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  const allowed = (id) => $(id) && !$(id).hidden && !$(id).closest('[hidden]');
  const keys = {
    ArrowRight: ['forward-step', () => go(shownStep(state) + 1)],
    ArrowLeft: ['back', () => go(shownStep(state) - 1)],
    Home: ['first', () => go(0)],
    End: ['last', () => go(Infinity)],
    ' ': ['play', togglePlay],
    '+': ['zoom-in', () => dispatch({ type: 'camera', op: 'zoom', factor: zoomStep(1) })],
    '-': ['zoom-out', () => dispatch({ type: 'camera', op: 'zoom', factor: zoomStep(-1) })],
    '0': ['zoom-fit', () => dispatch({ type: 'camera', op: 'fit' })],
  };
  const entry = keys[event.key];
  if (!entry || !allowed(entry[0])) return;
  event.preventDefault();
  entry[1]();
}

function wire() {
  wireGestures($('graph-wrap'), dispatch);      // drag, wheel, pinch and the zoom buttons
  $('first').addEventListener('click', () => go(0));
  $('back').addEventListener('click', () => go(shownStep(state) - 1));
  $('forward-step').addEventListener('click', () => go(shownStep(state) + 1));
  $('last').addEventListener('click', () => go(Infinity));
  $('play').addEventListener('click', togglePlay);
  $('scrub').addEventListener('input', (event) => go(Number(event.target.value)));
  $('speed').addEventListener('change', (event) => {
    dispatch({ type: 'settings', settings: { speed: Number(event.target.value) } });
    player.restart();
  });
  $('leaves-more')?.addEventListener('click', () => dispatch({ type: 'ui', ui: { leavesOpen: !state.ui.leavesOpen } }));
  document.addEventListener('keydown', onKey);
  $('open-lab').href = `/#p=${encodeProgram(state.program)}&s=${init.step}`;
}

wire();
if (state.program.trim()) run();
else paint();
