// Following a room: pure functions from the room's events to what the lab page shows.
// The presenter sends its frame, {source, pass, step, settings}, never pixels; the page
// traces `source` itself and moves its own step index (store.js's timeline) to that frame.

import { fold, fullSteps, shownStep, timeline } from './store.js';

/** Settings a follower takes from the presenter; the theme stays the device's own. */
export const FOLLOWED_SETTINGS = ['speed', 'retain'];

export function initialFollow(code) {
  return { code, status: 'connecting', following: true, presenter: null, lastId: null,
           poll: null, pollSource: null, revealed: null, answered: null, ended: null };
}

/** One room event (state, poll, results, ended) folded into the follow state. */
export function foldRoom(follow, kind, data, id = null) {
  const lastId = id ?? follow.lastId;
  switch (kind) {
    case 'state': {
      const next = { ...follow, status: 'live', presenter: data, lastId };
      return pollStands(next) ? next : { ...next, poll: null, pollSource: null, revealed: null, answered: null };
    }
    case 'poll':
      return { ...follow, lastId, poll: data, pollSource: follow.presenter?.source ?? null,
               revealed: null, answered: null };
    case 'results':
      return follow.poll && data.poll === follow.poll.id ? { ...follow, lastId, revealed: data } : { ...follow, lastId };
    case 'ended':
      return { ...follow, status: 'ended', ended: data.reason, following: false, poll: null };
    default:
      return follow;
  }
}

/** A poll belongs to the frame it was asked at: it goes when the presenter moves on. */
function pollStands(follow) {
  const { poll, presenter } = follow;
  return !poll || (presenter && presenter.source === follow.pollSource
                   && presenter.pass === poll.pass && presenter.step === poll.step);
}

export function answered(follow, node) {
  return { ...follow, answered: node };
}

export function stepAway(follow) {
  return follow.following ? { ...follow, following: false } : follow;
}

export function backToPresenter(follow) {
  return follow.status === 'ended' ? follow : { ...follow, following: true };
}

// -- frames: (pass, step) in the room, an index into the lab's timeline --------------------

/** The timeline index of a room frame: `step` pops done within backward call `pass` (0 is
 * the call's start). Past a call's pops come its frames after the pops: first one per
 * optimizer.step() that consumed its gradients (pops + 1, pops + 2, ...), then, after the
 * last call, the frame after the program. */
export function globalStep(run, pass, step) {
  const t = timeline(run);
  if (!run.passes.length) return 0;
  const p = Math.min(Math.max(0, pass), run.passes.length - 1);
  const pops = run.passes[p].steps.length;
  if (step > pops) {
    const after = afterPops(t, p);
    const k = after[Math.min(step - pops, after.length) - 1];
    if (k !== undefined) return k;
  }
  if (step > fullSteps(run.passes[p])) {         // among the pops a long pass only lists
    const tail = t.places.findIndex((place) => place.p === p && place.tail);
    if (tail >= 0) return tail;
  }
  const j = Math.min(Math.max(0, step), pops) - 1;
  const k = t.places.findIndex((place) => place.p === p && place.j === j && !place.end
    && place.optimizer === undefined);
  return Math.max(0, k);
}

/** The timeline indices of a call's frames after its pops, in order (see globalStep). */
function afterPops(t, p) {
  const out = [];
  t.places.forEach((place, k) => {
    if (place.p === p && (place.end || place.optimizer !== undefined)) out.push(k);
  });
  return out;
}

/** The room frame of a timeline index (the inverse of globalStep). */
export function passStep(run, k) {
  const t = timeline(run);
  const i = Math.max(0, Math.min(k, t.count - 1));
  const place = t.places[i];
  if (!run.passes.length) return { pass: 0, step: 0 };
  const pops = run.passes[place.p].steps.length;
  if (place.end || place.optimizer !== undefined) {
    return { pass: place.p, step: pops + 1 + afterPops(t, place.p).indexOf(i) };
  }
  if (place.tail) return { pass: place.p, step: place.j + 2 };
  return { pass: place.p, step: place.j + 1 };
}

/** The frame a lab state shows, as the presenter sends it. */
export function viewState(state) {
  const { pass, step } = passStep(state.run, shownStep(state));
  const settings = {};
  for (const name of FOLLOWED_SETTINGS) settings[name] = state.settings[name];
  return { source: state.run.source, pass, step, settings };
}

/** What brings the lab to the presenter's frame: `load` (the program must be traced first)
 * or the actions to dispatch (none when it is there already). */
export function plan(state, presenter, loading = null) {
  if (!presenter) return { load: null, actions: [] };
  const run = state.run;
  const source = presenter.source;
  if (state.program !== source || run.source !== source || run.status === 'idle' || run.status === 'failed'
      || (run.status === 'running' && loading !== source)) {
    return { load: loading === source ? null : source, actions: [] };
  }
  if (run.status !== 'done') return { load: null, actions: [] };
  const actions = [];
  if (state.playing) actions.push({ type: 'playing', playing: false });
  const settings = {};
  for (const name of FOLLOWED_SETTINGS) {
    const value = presenter.settings?.[name];
    if (value !== undefined && value !== state.settings[name]) settings[name] = value;
  }
  if (Object.keys(settings).length) actions.push({ type: 'settings', settings });
  const k = globalStep(run, presenter.pass, presenter.step);
  if (shownStep(state) !== k || state.step !== k) actions.push({ type: 'step', step: k });
  return { load: null, actions };
}

/** Whether the page shows something else than the presenter's frame (the student has
 * stepped, played or edited on their own). */
export function diverged(state, presenter) {
  if (!presenter) return false;
  if (state.program !== presenter.source || state.playing) return true;
  if (state.run.status !== 'done' || state.run.source !== presenter.source) return state.run.status === 'done';
  return shownStep(state) !== globalStep(state.run, presenter.pass, presenter.step);
}

/** A whole trace document (POST /api/trace) as the events the stream would have sent, for
 * store.js's fold: pass, graph, dependencies, each step, then done. */
export function documentEvents(doc) {
  const events = [];
  for (const p of doc.passes) {
    const { graph, dependencies, steps, ...pass } = p;
    events.push(['pass', pass]);
    if (graph) events.push(['graph', graph]);
    events.push(['dependencies', { dependencies: dependencies ?? {} }]);
    for (const step of steps) events.push(['step', step]);
  }
  const { passes, ...done } = doc;
  events.push(['done', { ...done, passes: [] }]);
  return events;
}

/** The run a document makes, folded as the page folds the stream. */
export function runOf(run, doc) {
  return documentEvents(doc).reduce((r, [kind, data]) => fold(r, kind, data), run);
}
