// The lab page: one state object, actions folded into it by store.js, and views that
// redraw from it. This module only wires the DOM, the server (through api.js), the player
// and the URL together.

import * as api from './api.js';
import { createPlayer } from './player.js';
import * as programs from './programs.js';
import { THEMES, initialState, reduce, shownStep, timeline } from './store.js';
import { fromHash, toHash } from './url.js';
import * as again from './views/again.js';
import * as controls from './views/controls.js';
import * as editor from './views/editor.js';
import * as errorView from './views/error.js';
import * as graph from './views/graph.js';
import * as leaves from './views/leaves.js';
import * as narration from './views/narration.js';
import * as presets from './views/presets.js';
import * as queue from './views/queue.js';

const $ = (id) => document.getElementById(id);
const THEME_LABEL = { auto: 'Auto', light: 'Light', dark: 'Dark' };

let state = initialState(fromHash(location.hash));
let dirty = false;
let stream = null;
let waitingForFirstStep = false;
const player = createPlayer(() => state, dispatch);

function dispatch(action) {
  state = reduce(state, action);
  // The run's status is on <body> at once, not at the next frame, so that anything
  // watching the page (tests, assistive tools) never reads the previous run's "done".
  if (document.body.dataset.run !== state.run.status) document.body.dataset.run = state.run.status;
  player.sync();
  if (!dirty) { dirty = true; requestAnimationFrame(paint); }
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
  narration.render(document.querySelector('.narration'), state);
  graph.render($('graph-wrap'), state);
  controls.render(document.querySelector('.controls'), state);
  queue.render($('queue'), state);
  leaves.render($('leaves'), state);
  again.render(document.querySelector('.again'), state);
  const said = status();
  if ($('status').textContent !== said) $('status').textContent = said;
  document.body.classList.toggle('is-running', state.run.status === 'running');
  document.body.dataset.run = state.run.status;
  scheduleUrl();
  // Each redraw's cost, for profiling (bench/page.py); old entries are dropped.
  if (performance.getEntriesByName('paint').length > 500) performance.clearMeasures('paint');
  performance.measure('paint', { start: started });
  if (waitingForFirstStep && shownStep(state) >= 1) {
    waitingForFirstStep = false;
    performance.mark('first-step');
    performance.measure('run-to-first-step', 'run-pressed', 'first-step');
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

function status() {
  const run = state.run;
  if (run.status === 'running') return 'Running…';
  if (run.status === 'failed') return 'Could not reach the server.';
  if (run.status !== 'done') return '';
  const pops = timeline(run).pops;
  if (run.source !== state.program) return 'Edited: press Run to trace the new text.';
  if (!run.passes.length && run.error) return `${run.error.type}: nothing ran backward.`;
  return `${pops} ${pops === 1 ? 'pop' : 'pops'} in ${run.passes.length} backward ${run.passes.length === 1 ? 'call' : 'calls'}`;
}

// -- running a program ----------------------------------------------------------------------

/** Send the program to the server and fold its events in as they stream. `play` starts
 * the animation at the first step as soon as it arrives. */
async function run({ step = 0, play = false, note = null } = {}) {
  if (stream) stream.abort();
  const controller = new AbortController();
  stream = controller;
  const source = state.program;
  waitingForFirstStep = play;
  dispatch({ type: 'run-start', source, step, playing: play, note });
  try {
    await api.streamTrace(source, (kind, data) => {
      if (controller.signal.aborted) return;
      dispatch({ type: 'event', kind, data });
      if (play && kind === 'step' && state.step === 0) {
        dispatch({ type: 'step', step: 1 });
        player.restart();
      }
      if (kind === 'done') dispatch({ type: 'step', step: state.step });
    }, controller.signal);
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

function togglePlay() {
  const last = timeline(state.run).count - 1;
  if (!state.playing && shownStep(state) >= last && last > 0) go(0);
  dispatch({ type: 'playing', playing: !state.playing });
}

// -- wiring ----------------------------------------------------------------------------------

function wire() {
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
    if (preset) rewrite(preset.source, null);
  });
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
  window.addEventListener('hashchange', () => {
    const wanted = fromHash(location.hash);
    if (wanted.program !== undefined && wanted.program !== state.program) {
      dispatch({ type: 'program', program: wanted.program });
      run({ step: wanted.step ?? 0, note: wanted.note ?? null });
    } else if (wanted.step !== undefined) {
      go(wanted.step);
    }
  });
}

function onKey(event) {
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  const tag = event.target.tagName;
  if (tag === 'TEXTAREA' || tag === 'SELECT' || tag === 'INPUT') return;
  const keys = {
    ArrowRight: () => move(1),
    ArrowLeft: () => move(-1),
    ' ': togglePlay,
    Home: () => { dispatch({ type: 'playing', playing: false }); go(0); },
    End: () => { dispatch({ type: 'playing', playing: false }); go(Infinity); },
  };
  const handler = keys[event.key];
  if (!handler) return;
  event.preventDefault();
  handler();
}

async function share() {
  writeUrl();
  try {
    await navigator.clipboard.writeText(location.href);
    $('status').textContent = 'Link copied: it opens this exact view.';
  } catch {
    $('status').textContent = 'Copy the address bar: it holds this exact view.';
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
  if (wanted.program === undefined && list.length) dispatch({ type: 'program', program: list[0].source });
  if (state.program.trim()) run({ step: wanted.step ?? 0, note: wanted.note ?? null });
  else paint();
}

start();
