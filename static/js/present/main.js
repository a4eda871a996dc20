// The presenter view (/present): the lab's state and views, large, driven by a clicker
// and the keyboard, stepping through a lesson; with a live session, every frame is sent
// to the room (its state, never pixels) and the room can be asked who pops next.

import { documentEvents, viewState } from '../follow.js';
import { wireGestures, zoomStep } from '../gestures.js';
import { createPlayer } from '../player.js';
import { initialState, reduce, shownStep, timeline } from '../store.js';
import { fromHash } from '../url.js';
import * as graph from '../views/graph.js';
import * as minimap from '../views/minimap.js';
import * as narration from '../views/narration.js';
import { command, HELP } from './keys.js';
import * as pollView from './poll.js';
import * as rooms from './rooms.js';
import { createSession } from './session.js';

const $ = (id) => document.getElementById(id);

let lab = { ...initialState({}), settings: { ...initialState({}).settings, theme: 'light' } };
const view = { lessons: [], lesson: null, programs: [], index: 0, blank: false, help: false, notice: '' };
let dirty = false;
let loadId = 0;
const player = createPlayer(() => lab, dispatch);
const session = createSession({ viewState: () => (lab.run.status === 'done' ? viewState(lab) : null), changed: paint });

function dispatch(action) {
  lab = reduce(lab, action);
  document.body.dataset.run = lab.run.status;
  document.body.dataset.playing = lab.playing ? '1' : '';
  player.sync();
  schedule();
}

function schedule() {
  if (!dirty) { dirty = true; requestAnimationFrame(paint); }
}

function paint() {
  dirty = false;
  graph.render($('graph-wrap'), lab);
  minimap.render($('minimap'), lab);
  narration.render($('caption'), lab);
  const program = view.programs[view.index];
  $('p-index').textContent = view.programs.length ? `${view.index + 1}/${view.programs.length}` : '';
  $('p-title').textContent = program?.title ?? '';
  $('p-goal').textContent = view.notice || program?.goal || '';
  $('p-goal').classList.toggle('notice', Boolean(view.notice));
  $('p-blank').hidden = !view.blank;
  $('p-help').hidden = !view.help;
  if ($('source') !== document.activeElement && $('source').value !== lab.program) $('source').value = lab.program;
  pollView.render($('p-poll'), session.poll);
  session.render($('p-room'), $('p-join'));
  document.body.dataset.step = String(shownStep(lab));
  session.send();
  notes.post(speakerNotes());
}

// -- programs and lessons ---------------------------------------------------------------------

async function load(source) {
  const id = ++loadId;
  player.sync();
  dispatch({ type: 'program', program: source });
  dispatch({ type: 'run-start', source, step: 0 });
  try {
    const doc = await rooms.trace(source);
    if (id !== loadId) return;
    for (const [kind, data] of documentEvents(doc)) dispatch({ type: 'event', kind, data });
    dispatch({ type: 'step', step: 0 });
  } catch (err) {
    if (id === loadId) dispatch({ type: 'run-failed', message: String(err.message || err) });
  }
}

function choose(index) {
  if (!view.programs.length) return;
  view.index = Math.max(0, Math.min(index, view.programs.length - 1));
  session.closePoll();
  load(view.programs[view.index].source);
}

function pickLesson(id, extra = null) {
  view.lesson = view.lessons.find((l) => l.id === id) ?? view.lessons[0] ?? null;
  view.programs = [...(extra ? [extra] : []), ...(view.lesson?.programs ?? [])];
  $('lesson').value = view.lesson?.id ?? '';
  choose(0);
}

// -- commands -------------------------------------------------------------------------------

function move(to) {
  if (session.poll && !session.poll.revealed) {
    say('The room is answering: R reveals, Esc closes the question.');
    return;
  }
  session.closePoll();
  dispatch({ type: 'playing', playing: false });
  dispatch({ type: 'step', step: to });
}

function say(text) {
  view.notice = text;
  schedule();
  setTimeout(() => { if (view.notice === text) { view.notice = ''; schedule(); } }, 3000);
}

const COMMANDS = {
  next: () => move(shownStep(lab) + 1),
  prev: () => move(shownStep(lab) - 1),
  first: () => move(0),
  last: () => move(Infinity),
  play: () => {
    if (session.poll && !session.poll.revealed) return say('Reveal (R) or close (Esc) the question first.');
    const last = timeline(lab.run).count - 1;
    if (!lab.playing && shownStep(lab) >= last) dispatch({ type: 'step', step: 0 });
    dispatch({ type: 'playing', playing: !lab.playing });
  },
  blank: () => { view.blank = !view.blank; schedule(); },
  fullscreen: () => (document.fullscreenElement ? document.exitFullscreen()
    : document.documentElement.requestFullscreen()).catch(() => say('Full screen is not allowed here.')),
  'next-program': () => choose(view.index + 1),
  'prev-program': () => choose(view.index - 1),
  ask: () => session.ask().catch((err) => say(String(err.message || err))),
  reveal: () => session.reveal().catch((err) => say(String(err.message || err))),
  close: () => { session.closePoll(); session.join = false; view.help = false; view.blank = false; schedule(); },
  join: () => { session.join = !session.join && Boolean(session.room); schedule(); },
  notes: () => window.open('/present/notes', 'autograd-lab-notes', 'width=960,height=720'),
  editor: () => { $('editor').open = !$('editor').open; if ($('editor').open) $('source').focus(); },
  'zoom-in': () => dispatch({ type: 'camera', op: 'zoom', factor: zoomStep(1) }),
  'zoom-out': () => dispatch({ type: 'camera', op: 'zoom', factor: zoomStep(-1) }),
  fit: () => dispatch({ type: 'camera', op: 'fit' }),
};

function run(cmd) {
  if (cmd.command === 'program') return choose(cmd.program);
  COMMANDS[cmd.command]?.();
}

function onKey(event) {
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  const t = event.target;
  if (t.tagName === 'TEXTAREA' || (t.tagName === 'INPUT' && t.type !== 'checkbox') || t.tagName === 'SELECT') {
    if (event.key === 'Escape') t.blur();
    return;
  }
  const cmd = command(event.key, { shift: event.shiftKey });
  if (!cmd) return;
  event.preventDefault();
  run(cmd);
}

// -- the speaker view: a second window, in step through a BroadcastChannel ------------------

const notes = (() => {
  const channel = 'BroadcastChannel' in window ? new BroadcastChannel('autograd-lab-present') : null;
  let last = '';
  channel?.addEventListener('message', (event) => {
    const m = event.data;
    if (m?.type === 'hello') { last = ''; schedule(); }
    if (m?.type === 'key') { const cmd = command(m.key, { shift: m.shift }); if (cmd) run(cmd); }
  });
  return {
    post(message) {
      const text = JSON.stringify(message);
      if (channel && text !== last) { last = text; channel.postMessage(message); }
    },
  };
})();

function speakerNotes() {
  const program = view.programs[view.index];
  const next = view.programs[view.index + 1];
  const poll = session.poll;
  return {
    type: 'notes', lesson: view.lesson?.title ?? '', index: view.index, count: view.programs.length,
    title: program?.title ?? '', goal: program?.goal ?? '', notes: program?.notes ?? '',
    next: next ? next.title : '', counter: $('counter').textContent, sentence: $('sentence').textContent,
    poll: poll ? { question: poll.question.question, answer: poll.answer.label, reason: poll.answer.reason,
                   answers: poll.tally?.answers ?? 0, revealed: Boolean(poll.revealed) } : null,
    room: session.room ? { code: session.room.code, followers: session.room.followers } : null,
  };
}

// -- start ----------------------------------------------------------------------------------

/** Run the edited program and fold the editor away: the graph is what the hall looks at. */
function runEdited() {
  $('source').blur();
  $('editor').open = false;
  load($('source').value);
}

function wire() {
  document.addEventListener('keydown', onKey);
  // A focused button clicks on Space's keyup, and Space was "next" already; a clicked
  // button gives the keys back to the page.
  document.addEventListener('keyup', (event) => { if (event.key === ' ' && event.target.tagName === 'BUTTON') event.preventDefault(); });
  document.addEventListener('click', (event) => { const b = event.target.closest('button'); if (b) b.blur(); });
  wireGestures($('graph-wrap'), dispatch);
  // A focused select or textarea keeps the keys (a clicker's PageDown would change the
  // lesson or scroll the program): choosing a lesson or running the program gives them back.
  $('lesson').addEventListener('change', (event) => { event.target.blur(); pickLesson(event.target.value); });
  $('run').addEventListener('click', runEdited);
  $('source').addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) { event.preventDefault(); runEdited(); }
  });
  $('prev-step').addEventListener('click', () => run({ command: 'prev' }));
  $('next-step').addEventListener('click', () => run({ command: 'next' }));
  $('ask').addEventListener('click', () => run({ command: 'ask' }));
  $('notes').addEventListener('click', () => run({ command: 'notes' }));
  $('help').addEventListener('click', () => { view.help = !view.help; schedule(); });
  $('p-help').replaceChildren(...HELP.map(([keys, what]) => {
    const row = document.createElement('p');
    const k = document.createElement('kbd');
    k.textContent = keys;
    row.append(k, document.createTextNode(` ${what}`));
    return row;
  }));
}

async function start() {
  wire();
  try {
    view.lessons = await rooms.lessons();
  } catch (err) {
    say(`Lessons could not be loaded: ${err.message || err}`);
  }
  $('lesson').replaceChildren(...view.lessons.map((l) => new Option(l.title, l.id)));
  const wanted = fromHash(location.hash);
  const params = new URLSearchParams(location.search);
  const extra = wanted.program ? { title: 'From the lab', goal: '', notes: '', source: wanted.program } : null;
  pickLesson(params.get('lesson'), extra);
  await session.resume();
  if (params.get('live') === '1' && !session.room) {
    await whenTraced();
    session.start().catch((err) => say(String(err.message || err)));
  }
  paint();
}

/** Resolves once the current program's trace is in (a room starts on a real frame). */
function whenTraced() {
  return new Promise((resolve) => {
    const check = () => (lab.run.status === 'running' ? setTimeout(check, 50) : resolve());
    check();
  });
}

start();
