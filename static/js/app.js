// The lab page: one state object, actions folded into it by store.js, and views that
// redraw from it. This module only wires the DOM, the server (through api.js), the player
// and the URL together.

import * as api from './api.js';
import { wireGestures, zoomStep } from './gestures.js';
import { createPlayer } from './player.js';
import * as predict from './predict.js';
import * as programs from './programs.js';
import { THEMES, frameAt, initialState, reduce, shownStep, timeline } from './store.js';
import { fromHash, toHash } from './url.js';
import * as again from './views/again.js';
import * as annotate from './views/annotate.js';
import * as consoleView from './views/console.js';
import * as controls from './views/controls.js';
import * as editor from './views/editor.js';
import * as errorView from './views/error.js';
import * as graph from './views/graph.js';
import * as leaves from './views/leaves.js';
import * as minimap from './views/minimap.js';
import * as narration from './views/narration.js';
import * as outside from './views/outside.js';
import * as passes from './views/passes.js';
import * as presets from './views/presets.js';
import * as programView from './views/program.js';
import * as queue from './views/queue.js';

const $ = (id) => document.getElementById(id);
const THEME_LABEL = { auto: 'Auto', light: 'Light', dark: 'Dark' };

let state = initialState(fromHash(location.hash));
let dirty = false;
let stream = null;
let waitingForFirstStep = false;
let follower = null;                // present/follower.js, on a page that follows a room
let predicting = null;              // predict.js's view, once wired
let network = null;                 // views/network/index.js, once a run has needed it
let derivative = null;              // views/derivative.js, once a run has a graph
let schedulers = null;              // views/schedulers.js, once "Compare schedulers" is pressed
let lenses = null;                  // views/timeline.js and callpath.js, once a run has phases
const player = createPlayer(() => state, dispatch);

function dispatch(action) {
  state = reduce(state, action);
  if (follower) follower.observe(action);
  // The run's status is on <body> at once, not at the next frame, so that anything
  // watching the page (tests, assistive tools) never reads the previous run's "done".
  if (document.body.dataset.run !== state.run.status) document.body.dataset.run = state.run.status;
  player.sync();
  if (!network && needsNetwork(state.run)) loadNetwork();
  if (!derivative && state.run.status === 'done' && state.run.passes.length) loadDerivative();
  if (!lenses && state.run.callpath?.length) loadLenses();
  if (!dirty) { dirty = true; requestAnimationFrame(paint); }
}

/** The network views (heatmaps, modules, the optimizer) load only for a run with a tensor,
 * a module or an optimizer step: a scalar program's page never fetches them.
 * <body data-network> says where they are ('loading', 'ready'). */
const needs = new WeakMap();    // by graph: a run is a new object at every streamed step

function needsNetwork(run) {
  return run.optimizer_steps?.length > 0 || run.passes.some((p) => p.graph && graphNeedsNetwork(p.graph));
}

function graphNeedsNetwork(graph) {
  if (!needs.has(graph)) needs.set(graph, graph.bands?.length > 0 || graph.nodes.some((n) => n.shape.length > 0));
  return needs.get(graph);
}

function loadNetwork() {
  if (document.body.dataset.network) return;
  document.body.dataset.network = 'loading';
  import('./views/network/index.js').then(async (module) => {
    await module.ready;
    module.mount({ getState: () => state, dispatch });
    network = module;
    document.body.dataset.network = 'ready';
    if (!dirty) { dirty = true; requestAnimationFrame(paint); }
  });
}

/** The local-derivative panel (views/derivative.js) loads once a run has finished with a
 * pass: the first load never fetches it. */
function loadDerivative() {
  if (document.body.dataset.derivative) return;
  document.body.dataset.derivative = 'loading';
  import('./views/derivative.js').then(async (module) => {
    await module.mount({ onChange: () => { if (!dirty) { dirty = true; requestAnimationFrame(paint); } } });
    derivative = module;
    document.body.dataset.derivative = 'ready';
    if (!dirty) { dirty = true; requestAnimationFrame(paint); }
  });
}

/** The profiler timeline and the call path load once a run has call-path phases (the first
 * pass's arrive with its first step): the first load never fetches them. */
function loadLenses() {
  if (document.body.dataset.lenses) return;
  document.body.dataset.lenses = 'loading';
  Promise.all([import('./views/timeline.js'), import('./views/callpath.js')]).then(async ([timelineView, callpathView]) => {
    await timelineView.ready;
    timelineView.mount($('timeline'), $('graph-wrap'));
    lenses = { timeline: timelineView, callpath: callpathView };
    document.body.dataset.lenses = 'ready';
    if (!dirty) { dirty = true; requestAnimationFrame(paint); }
  });
}

function paint() {
  dirty = false;
  const started = performance.now();
  document.documentElement.dataset.theme = state.settings.theme;
  $('theme-label').textContent = THEME_LABEL[state.settings.theme];
  $('theme').setAttribute('aria-label', `Colour theme: ${THEME_LABEL[state.settings.theme]}`);
  presets.render($('preset'), $('goal'), state);
  editor.render($('editor'), state);
  errorView.render($('error'), state);
  programView.render($('program-kind'), $('copy-pytorch'), state);
  consoleView.render($('console'), state);
  narration.render(document.querySelector('.narration'), state);
  passes.render($('passes'), state);
  graph.render($('graph-wrap'), state, network);
  annotate.render($('graph-wrap'), state);
  minimap.render($('minimap'), state);
  controls.render(document.querySelector('.controls'), state);
  queue.render($('queue'), state);
  predicting?.paint(state);
  leaves.render($('leaves'), $('leaves-more'), state, network);
  network?.render(state);
  outside.render($('outside'), state);
  derivative?.render($('derivative'), state);
  lenses?.timeline.render($('timeline'), state);
  lenses?.callpath.render($('callpath'), state);
  if (schedulers && !$('schedulers').hidden) {
    if (state.run.source) schedulers.load(state.run.source);
    schedulers.render($('schedulers'), state);
  }
  again.render(document.querySelector('.again'), state);
  const said = notice && notice.run === state.run && notice.step === shownStep(state) ? notice.text : status();
  if ($('status').textContent !== said) $('status').textContent = said;
  document.body.classList.toggle('is-running', state.run.status === 'running');
  document.body.dataset.run = state.run.status;
  scheduleUrl();
  // Each redraw's cost, for profiling (bench/page.py); old entries are dropped.
  if (performance.getEntriesByName('paint').length > 500) performance.clearMeasures('paint');
  performance.measure('paint', { start: started });
  if (waitingForFirstStep && state.run.passes[0]?.graph) {
    waitingForFirstStep = false;
    performance.mark('first-frame');
    performance.measure('run-to-first-frame', 'run-pressed', 'first-frame');
  }
}

/** The URL follows the state, written when the page is idle: replaceState with a long hash
 * costs milliseconds, too many to pay on every frame while playing. */
let urlTimer = null;

function scheduleUrl() {
  if (urlTimer !== null) clearTimeout(urlTimer);
  urlTimer = setTimeout(writeUrl, state.playing ? 1000 : 150);
}

function writeUrl() {
  if (urlTimer !== null) clearTimeout(urlTimer);
  urlTimer = null;
  const hash = toHash(state, shownStep(state));
  if (location.hash !== hash) history.replaceState(null, '', hash);
}

const NOTHING_RAN = {
  rejected: 'Not run: the lab refused the text.',
  forward: 'PyTorch raised in the forward pass: nothing ran backward.',
  backward: 'backward() raised before any pop.',
  limit: 'Stopped at a lab limit: nothing ran backward.',
  internal: 'The lab failed: nothing ran backward.',
};

function status() {
  const run = state.run;
  if (run.status === 'running') return 'Running…';
  if (run.status === 'failed') return 'Could not reach the server.';
  if (run.status !== 'done') return '';
  const pops = timeline(run).pops;
  if (run.source !== state.program) return 'Edited: press Run to trace the new text.';
  if (!run.passes.length && run.error) return NOTHING_RAN[run.error.kind] ?? NOTHING_RAN.internal;
  return `${pops} ${pops === 1 ? 'pop' : 'pops'} in ${calls(run.passes)}`;
}

/** "2 backward calls", "1 backward and 1 autograd.grad calls". */
function calls(list) {
  const grads = list.filter((p) => p.kind === 'grad').length;
  const kinds = [[list.length - grads, 'backward'], [grads, 'autograd.grad']].filter(([n]) => n > 0);
  return `${kinds.map(([n, kind]) => `${n} ${kind}`).join(' and ')} ${list.length === 1 ? 'call' : 'calls'}`;
}

// -- running a program ----------------------------------------------------------------------

/** Send the program to the server and fold its events in as they stream. `play` plays
 * from step 0, the frame that explains the dependency counts. `passesFrom` and `seed` ask
 * for the same run kept step by step from that pass on; `toPass` then shows its start. */
async function run({ step = 0, play = false, note = null, passesFrom = 0, seed = null, toPass = null } = {}) {
  if (stream) stream.abort();
  const controller = new AbortController();
  stream = controller;
  const source = state.program;
  waitingForFirstStep = play;
  if (state.ui.marked) dispatch({ type: 'ui', ui: { marked: null } });
  dispatch({ type: 'run-start', source, step, playing: play, note, passesFrom });
  // The steps that one read of the stream brings are folded in together: folded one by one,
  // each copied the pass's steps so far (a pass of 30,001 pops copied 450 million).
  let pending = [];
  const flush = () => {
    if (pending.length && !controller.signal.aborted) dispatch({ type: 'event', kind: 'steps', data: pending });
    pending = [];
  };
  try {
    await api.streamTrace(source, (kind, data) => {
      if (controller.signal.aborted) return;
      if (kind === 'step') {
        if (!pending.length) queueMicrotask(flush);
        pending.push(data);
        return;
      }
      flush();
      dispatch({ type: 'event', kind, data });
      if (kind === 'done') {
        dispatch({ type: 'step', step: toPass === null ? state.step : passes.passStart(state.run, toPass) });
      }
    }, controller.signal, null, { passesFrom, seed });
  } catch (err) {
    if (!controller.signal.aborted) dispatch({ type: 'run-failed', message: String(err.message || err) });
  }
}

function pressRun() {
  performance.clearMarks('first-step');
  performance.mark('run-pressed');
  run({ play: true, note: state.note });
}

function rewrite(program, note) {
  if (!program) return;
  dispatch({ type: 'program', program });
  performance.mark('run-pressed');
  run({ play: true, note });
}

// -- moving through the steps ---------------------------------------------------------------

function go(step) {
  dispatch({ type: 'step', step });
}

function move(delta) {
  dispatch({ type: 'playing', playing: false });
  go(shownStep(state) + delta);
}

/** "Step through this pass": the same run again (its seed), kept step by step from pass p
 * on (the server keeps a window of passes: Note [Passes kept in full]). */
function keepPass(p) {
  dispatch({ type: 'playing', playing: false });
  run({ passesFrom: p, seed: state.run.seed ?? null, toPass: p, note: state.note });
}

/** Pass p's first frame (the pass picker, `[` and `]`). */
function goPass(p) {
  dispatch({ type: 'playing', playing: false });
  const count = state.run.passes.length;
  if (count) go(passes.passStart(state.run, Math.max(0, Math.min(count - 1, p))));
}

/** Mark a program line asked for by the console or the outside list, scrolled into view. */
function markLine(line) {
  dispatch({ type: 'ui', ui: { marked: line } });
  const area = $('source');
  const height = parseFloat(getComputedStyle(area).lineHeight) || 23;
  const top = (line - 1) * height;
  if (top < area.scrollTop || top + height > area.scrollTop + area.clientHeight - 20) {
    area.scrollTop = Math.max(0, top - area.clientHeight / 3);
  }
}

function togglePlay() {
  const last = timeline(state.run).count - 1;
  if (!state.playing && shownStep(state) >= last && last > 0) go(0);
  dispatch({ type: 'playing', playing: !state.playing });
}

// -- wiring ----------------------------------------------------------------------------------

function wire() {
  predicting = predict.mount($('predict'), $('predict-panel'), $('queue'), () => state, dispatch);
  const area = $('source');
  area.addEventListener('input', () => {
    dispatch({ type: 'program', program: area.value });
  });
  area.addEventListener('scroll', () => editor.syncScroll($('editor')));
  area.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) { event.preventDefault(); pressRun(); }
  });
  $('run').addEventListener('click', pressRun);
  $('preset').addEventListener('change', (event) => {
    const preset = state.presets.find((p) => p.id === event.target.value);
    if (!preset) return;
    dispatch({ type: 'settings', settings: { retain: false } });
    rewrite(preset.source, null);
  });
  $('copy-pytorch').addEventListener('click', copyPytorch);
  $('pass-pick').addEventListener('change', (event) => goPass(Number(event.target.value)));
  $('pass-summary').addEventListener('click', (event) => {
    const button = event.target.closest?.('button[data-pass]');
    if (button) keepPass(Number(button.dataset.pass));
  });
  document.addEventListener('click', (event) => {
    const link = event.target.closest?.('.line-link');
    if (link) markLine(Number(link.dataset.line));
  });
  $('leaves-more').addEventListener('click', () => dispatch({ type: 'ui', ui: { leavesOpen: !state.ui.leavesOpen } }));
  wireGestures($('graph-wrap'), dispatch);
  $('first').addEventListener('click', () => { dispatch({ type: 'playing', playing: false }); go(0); });
  $('back').addEventListener('click', () => move(-1));
  $('forward-step').addEventListener('click', () => move(1));
  $('last').addEventListener('click', () => { dispatch({ type: 'playing', playing: false }); go(Infinity); });
  $('play').addEventListener('click', togglePlay);
  $('scrub').addEventListener('input', (event) => {
    dispatch({ type: 'playing', playing: false });
    go(Number(event.target.value));
  });
  $('speed').addEventListener('change', (event) => {
    dispatch({ type: 'settings', settings: { speed: Number(event.target.value) } });
    player.restart();
  });
  $('theme').addEventListener('click', () => {
    const next = THEMES[(THEMES.indexOf(state.settings.theme) + 1) % THEMES.length];
    dispatch({ type: 'settings', settings: { theme: next } });
  });
  $('share').addEventListener('click', share);
  $('compare-schedulers').addEventListener('click', toggleSchedulers);
  $('export-svg').addEventListener('click', exportSvg);
  $('export-frames').addEventListener('click', exportFrames);
  $('embed-code').addEventListener('click', copyEmbed);
  $('present').addEventListener('click', () => { location.href = `/present${toHash(state, shownStep(state))}`; });
  $('go-live').addEventListener('click', () => { location.href = `/present?live=1${toHash(state, shownStep(state))}`; });
  $('again').addEventListener('click', () => {
    const retain = state.settings.retain;
    rewrite(programs.backwardAgain(state.program, retain), retain ? 'again-retain' : 'again');
  });
  $('retain').addEventListener('change', (event) => {
    const retain = event.target.checked;
    dispatch({ type: 'settings', settings: { retain } });
    if (state.note === 'again' || state.note === 'again-retain') {
      rewrite(programs.setRetain(state.program, retain), retain ? 'again-retain' : 'again');
    }
  });
  $('forward').addEventListener('click', () => rewrite(programs.newForward(state.program), 'forward'));
  $('zero').addEventListener('click', () => rewrite(programs.zeroGrad(state.program, Object.keys(state.run.grads)), 'zero'));
  document.addEventListener('keydown', onKey);
  document.addEventListener('keyup', (event) => {
    // A focused button clicks on Space's keyup: Space was play/pause already.
    if (event.key === ' ' && !typing(event.target) && event.target.type !== 'checkbox') event.preventDefault();
  });
  window.addEventListener('hashchange', () => {
    const wanted = fromHash(location.hash);
    if (wanted.program !== undefined && wanted.program !== state.program) {
      dispatch({ type: 'program', program: wanted.program });
      run({ step: wanted.step ?? 0, note: wanted.note ?? null, passesFrom: wanted.passesFrom ?? 0, seed: wanted.seed ?? null });
    } else if (wanted.step !== undefined) {
      go(wanted.step);
    }
  });
}

/** "Compare schedulers": the panel (views/schedulers.js, loaded at the first press) shows
 * the run under both schedulers; the lab's step index drives both. */
async function toggleSchedulers() {
  const panel = $('schedulers');
  const open = panel.hidden;
  $('compare-schedulers').setAttribute('aria-pressed', String(open));
  if (open && !schedulers) {
    const module = await import('./views/schedulers.js');
    await module.ready;
    module.mount(panel, { move, onChange: () => { if (!dirty) { dirty = true; requestAnimationFrame(paint); } } });
    schedulers = module;
  }
  panel.hidden = !open;
  if (open) panel.scrollIntoView({ block: 'nearest' });
  if (!dirty) { dirty = true; requestAnimationFrame(paint); }
}

/** Where keys type text, and so are not the lab's shortcuts. */
const KEYS_OF_THEIR_OWN = new Set(['text', 'search', 'email', 'url', 'tel', 'password', 'number']);

function typing(target) {
  if (target.isContentEditable || target.tagName === 'TEXTAREA') return true;
  return target.tagName === 'INPUT' && KEYS_OF_THEIR_OWN.has(target.type);
}

/** The shortcuts work whatever has focus but a text field: on the preset or speed picker
 * the arrows step (they do not change the choice), and Space plays everywhere but on a
 * checkbox, which has no other key. PageDown/PageUp step too: clickers send them. */
function onKey(event) {
  if (event.altKey || event.ctrlKey || event.metaKey || typing(event.target)) return;
  if (event.key === ' ' && event.target.type === 'checkbox') return;
  const stop = () => dispatch({ type: 'playing', playing: false });
  const keys = {
    ArrowRight: () => move(1),
    PageDown: () => move(1),
    ArrowLeft: () => move(-1),
    PageUp: () => move(-1),
    ' ': togglePlay,
    Home: () => { stop(); go(0); },
    End: () => { stop(); go(Infinity); },
    '[': () => goPass(frameAt(state.run, shownStep(state)).passIndex - 1),
    ']': () => goPass(frameAt(state.run, shownStep(state)).passIndex + 1),
    '+': () => dispatch({ type: 'camera', op: 'zoom', factor: zoomStep(1) }),
    '=': () => dispatch({ type: 'camera', op: 'zoom', factor: zoomStep(1) }),
    '-': () => dispatch({ type: 'camera', op: 'zoom', factor: zoomStep(-1) }),
    '0': () => dispatch({ type: 'camera', op: 'fit' }),
  };
  const handler = keys[event.key];
  if (!handler) return;
  event.preventDefault();
  handler();
}

/** A message about what the student just did (copied, exported): shown until the step or the
 * run changes, whatever else repaints meanwhile (a view that loads late repaints the page). */
let notice = null;
function say(text) {
  notice = { run: state.run, step: shownStep(state), text };
  $('status').textContent = text;
}

/** "Copy as PyTorch": the server's script for the program that ran. Where the clipboard
 * is refused, the script is shown, selected, to copy by hand. */
async function copyPytorch() {
  const script = state.run.program?.as_pytorch;
  if (!script) return;
  const lines = script.trimEnd().split('\n').length;
  try {
    await navigator.clipboard.writeText(script);
    $('pytorch-copy').hidden = true;
    say(`Copied as PyTorch: a ${lines}-line script that prints every leaf's .grad.`);
  } catch {
    const box = $('pytorch-copy');
    box.hidden = false;
    $('pytorch-text').value = script;
    $('pytorch-text').select();
    say('The clipboard is not available here: copy the script below.');
  }
}

async function share() {
  writeUrl();
  try {
    await navigator.clipboard.writeText(location.href);
    say('Link copied: it opens this exact view.');
  } catch {
    say('Copy the address bar: it holds this exact view.');
  }
}

// -- exports and the embed (export.js, loaded at the first click) ------------------------------

const exportsModule = () => import('./export.js');
const background = () => getComputedStyle($('graph-wrap')).getPropertyValue('--panel-2').trim() || '#ffffff';

async function exportSvg() {
  const svg = $('graph');
  if (!svg.getAttribute('viewBox') || !$('graph-wrap').classList.contains('has-graph')) {
    say('No graph to export at this step.');
    return;
  }
  const { download, standaloneSvg } = await exportsModule();
  const k = shownStep(state);
  download(new Blob([standaloneSvg(svg, background())], { type: 'image/svg+xml' }), `autograd-lab-step-${k}.svg`);
  say(`Exported step ${k} as SVG.`);
}

async function exportFrames() {
  if (state.run.status !== 'done' || !state.run.passes.some((p) => p.graph)) {
    say('Run a program first: the frames are its steps.');
    return;
  }
  const { download, frames, zip } = await exportsModule();
  const files = frames(state, network, background());
  download(zip(files), 'autograd-lab-frames.zip');
  say(`Exported ${files.length} frames (one per step) as a zip.`);
}

async function copyEmbed() {
  const { embedCode } = await exportsModule();
  const title = state.presets.find((p) => p.source === state.program)?.title ?? '';
  const code = embedCode(state, shownStep(state), location.origin, title);
  try {
    await navigator.clipboard.writeText(code);
    $('embed-copy').hidden = true;
    say('Embed code copied: a read-only view of this program at this step.');
  } catch {
    $('embed-copy').hidden = false;
    $('embed-text').value = code;
    $('embed-text').select();
    say('The clipboard is not available here: copy the embed code below.');
  }
}

async function start() {
  wire();
  const wanted = fromHash(location.hash);
  dispatch({ type: 'program', program: state.program });
  let list = [];
  try {
    list = await api.getPresets();
  } catch (err) {
    dispatch({ type: 'run-failed', message: String(err.message || err) });
  }
  dispatch({ type: 'presets', presets: list });
  const room = new URLSearchParams(location.search).get('room');
  if (room) {
    const { startFollowing } = await import('./present/follower.js');
    follower = startFollowing(room, { getState: () => state, dispatch, stop: () => stream?.abort() });
    paint();
    return;
  }
  if (wanted.program === undefined && list.length) dispatch({ type: 'program', program: list[0].source });
  if (state.program.trim()) {
    run({ step: wanted.step ?? 0, note: wanted.note ?? null, passesFrom: wanted.passesFrom ?? 0, seed: wanted.seed ?? null });
  }
  else paint();
}

start();
