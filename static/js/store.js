// The one state object, and pure functions over it: `reduce` folds actions (typing,
// server events, moving the step, zooming the graph) into a new state; `frameAt` derives
// what the page shows at one step and `cameraOf` which part of the graph it shows.
// Nothing here touches the DOM or the network.

import * as cam from './camera.js';
import { ranWith } from './course.js';

export const SPEEDS = [0.5, 1, 2, 4];
export const THEMES = ['auto', 'light', 'dark'];

export function emptyRun(status = 'idle', source = '') {
  return { status, source, passes: [], grads: {}, error: null, program: null, console: [], outside: [],
           optimizer_steps: [], profile: [], callpath: [] };
}

export function initialState(init = {}) {
  return {
    program: init.program ?? '',
    presets: [],
    run: emptyRun(),
    step: init.step ?? 0,
    playing: false,
    settings: {
      speed: SPEEDS.includes(init.speed) ? init.speed : 1,
      theme: THEMES.includes(init.theme) ? init.theme : 'auto',
      retain: Boolean(init.retain),
    },
    note: init.note ?? null,
    passesFrom: init.passesFrom ?? 0,    // the first pass the run keeps step by step
    box: null,                      // the graph box's size in px, {w, h}, once measured
    camera: null,                   // see camera.js; derived afresh for a new graph
    ui: { leavesOpen: false },
  };
}

export function reduce(state, action) {
  switch (action.type) {
    case 'program':
      return action.program === state.program ? state : { ...state, program: action.program, note: null };
    case 'presets':
      return { ...state, presets: action.presets };
    case 'run-start':
      return { ...state, run: emptyRun('running', action.source), step: action.step ?? 0,
               playing: Boolean(action.playing), note: action.note ?? null, camera: null,
               passesFrom: action.passesFrom ?? 0 };
    case 'event': {
      const run = fold(state.run, action.kind, action.data);
      // A run with nothing to step through (a rejected program, an error before any pop)
      // is not playing: the play button shows play, disabled.
      const still = run.status === 'done' && timeline(run).count <= 1;
      return { ...state, run, playing: still ? false : state.playing };
    }
    case 'run-failed':
      return { ...state, playing: false,
               run: { ...state.run, status: 'failed',
                      error: { kind: 'unreachable', type: 'NetworkError', message: action.message,
                               line: null, col: null } } };
    case 'step': {
      const next = { ...state, step: clampStep(state.run, action.step) };
      return { ...next, camera: followed(next) };
    }
    case 'box':
      return resized(state, action.box);
    case 'camera':
      return { ...state, camera: moved(state, action) };
    case 'ui':
      return { ...state, ui: { ...state.ui, ...action.ui } };
    case 'playing':
      return { ...state, playing: action.playing };
    case 'settings':
      return { ...state, settings: { ...state.settings, ...action.settings } };
    default:
      return state;
  }
}

/** One server event folded into the run: pass, graph, dependencies, step, results (what a
 * grad pass returned), console (a print or a warning, as it happens), done. */
export function fold(run, kind, data) {
  const passes = run.passes;
  const last = passes.length - 1;
  const withLast = (change) => passes.map((p, i) => (i === last ? { ...p, ...change } : p));
  switch (kind) {
    case 'pass':
      return { ...run, passes: [...passes, { ...data, graph: null, dependencies: {}, steps: [] }] };
    case 'graph':
      return { ...run, passes: withLast({ graph: data }) };
    case 'dependencies':
      return { ...run, passes: withLast({ dependencies: data.dependencies }) };
    case 'step':
      return { ...run, passes: withLast({ steps: [...passes[last].steps, data] }) };
    case 'steps':                  // steps that came together (app.js): one copy, not one each
      return { ...run, passes: withLast({ steps: [...passes[last].steps, ...data] }) };
    case 'results':
      return { ...run, passes: withLast({ returned: data.returned }) };
    case 'console':
      return { ...run, console: [...run.console, data] };
    case 'optimizer':
      return { ...run, optimizer_steps: [...run.optimizer_steps, data] };
    case 'phase':                   // the call path, as each pass's phases become known
      return { ...run, callpath: [...(run.callpath ?? []), ...data.phases] };
    case 'done':
      return { ...run, status: 'done', grads: data.grads, error: data.error, program: data.program ?? null, seed: data.seed ?? null,
               console: run.console.length ? run.console : data.console ?? [], outside: data.outside ?? [],
               optimizer_steps: data.optimizer_steps ?? run.optimizer_steps,
               profile: data.profile ?? [], callpath: data.callpath ?? run.callpath ?? [] };
    default:
      return run;
  }
}

// -- the timeline: step 0 is before the first pop; then one frame per pop, and before each
// later backward() call's first pop one frame for its start (a new graph, counts again).
// A summarized pass (past the lab's max_full_passes: no graph, no gradients) is one frame --
// A kept pass longer than the lab's max_full_steps keeps only the pops of its later steps
// (Note [Steps kept in full]): after its last full step, one frame (`tail`) lists them.

/** How many of a pass's steps, from the first, the trace keeps in full. */
export function fullSteps(pass) {
  if (pass.summarized) return 0;
  return Math.min(pass.steps.length, pass.steps_kept ?? pass.steps.length);
}

/** Whether a kept pass only lists its later pops. */
export function listsPops(pass) {
  return !pass.summarized && pass.steps.length > fullSteps(pass);
}

const timelines = new WeakMap();

export function timeline(run) {
  let t = timelines.get(run);
  if (t) return t;
  const places = [];
  let pops = 0;
  run.passes.forEach((pass, p) => {
    places.push({ p, j: -1 });
    const full = fullSteps(pass);
    for (let j = 0; j < full; j++) places.push({ p, j });
    if (listsPops(pass)) places.push({ p, j: full - 1, tail: true });
    pops += pass.steps.length;
    // Each optimizer.step() that consumed this pass's gradients: one frame after its pops.
    (run.optimizer_steps ?? []).forEach((o, optimizer) => {
      if (o.after_pass === p && pass.graph && !o.summarized) places.push({ p, j: pass.steps.length - 1, optimizer });
    });
  });
  if (!places.length) places.push({ p: 0, j: -1 });
  const end = run.status === 'done' && pops > 0 && endDiffers(run);
  if (end) places.push({ p: run.passes.length - 1, j: run.passes.at(-1).steps.length - 1, end: true });
  t = { places, pops, end, count: places.length };
  timelines.set(run, t);
  return t;
}

/** Whether the program changed something after its last pop (`w.grad = None`, an error in a
 * later backward() call): then the timeline ends with one more frame showing it. */
function endDiffers(run) {
  if (run.passes.some(listsPops)) return true;
  const lastStep = run.passes.at(-1).steps.at(-1);
  if (run.error && !(lastStep && lastStep.error)) return true;
  const written = lastWrites(run.passes, Infinity);
  return Object.entries(run.grads).some(([leaf, value]) =>
    leaf in written && JSON.stringify(written[leaf].grad_after) !== JSON.stringify(value));
}

/** A step within the timeline; while the trace still streams, a later step may wait. */
export function clampStep(run, step) {
  const n = timeline(run).count - 1;
  if (Number.isNaN(step) || step < 0) return 0;
  if (step === Infinity) return run.status === 'done' ? n : Infinity;
  return run.status === 'done' ? Math.min(Math.trunc(step), n) : Math.trunc(step);
}

export function shownStep(state) {
  return Math.max(0, Math.min(state.step, timeline(state.run).count - 1));
}

/** The last AccumulateGrad step for each leaf among the first `upto` pops overall. */
function lastWrites(passes, upto) {
  const out = {};
  let k = 0;
  for (const pass of passes) {
    for (const step of pass.steps) {
      k += 1;
      if (k > upto) return out;
      if (step.leaf !== null && !step.error && 'grad_after' in step) out[step.leaf] = step;
    }
  }
  return out;
}

// -- one frame: what the page shows at step k ----------------------------------------------

const frames = new WeakMap();
let streamed = null;        // the last frame built while a trace streamed (see buildFrame)

export function frameAt(run, k) {
  let byStep = frames.get(run);
  if (!byStep) { byStep = new Map(); frames.set(run, byStep); }
  if (!byStep.has(k)) byStep.set(k, buildFrame(run, k));
  return byStep.get(k);
}

function buildFrame(run, k) {
  const t = timeline(run);
  const place = t.places[Math.max(0, Math.min(k, t.count - 1))];
  const pass = run.passes[place.p] ?? null;
  // While a trace streams, every few steps make a new run, and so a new frame at the shown
  // step, which was built afresh: for the 30,001 nodes of bench/programs.py's recurrence,
  // a fifth of the page's time. What a frame shows of a pass comes from the steps up to
  // its place, which never change once they came: the last frame streamed at the same
  // place of the same graph is this one, with the new counts and leaves.
  const last = streamed;
  streamed = null;
  const plainStep = !place.end && !place.tail && place.optimizer === undefined;
  if (run.status === 'running' && last && plainStep && pass?.graph && last.graph === pass.graph
      && last.pass.dependencies === pass.dependencies && last.place.p === place.p
      && last.place.j === place.j) {
    streamed = { ...last, k, count: t.count, pops: t.pops, pass,
                 leaves: leafRows(run, t, place, k, pass.graph) };
    return streamed;
  }
  const frame = buildWhole(run, k, t, place, pass);
  if (run.status === 'running') streamed = frame;
  return frame;
}

function buildWhole(run, k, t, place, pass) {
  const frame = { k, count: t.count, pops: t.pops, end: Boolean(place.end), passIndex: place.p, place,
                  pass, graph: pass?.graph ?? null, j: place.j, step: null, prevQueue: [],
                  queue: [], nodes: new Map(), edges: new Map(), leaves: [], byId: new Map(),
                  optimizer: place.optimizer === undefined ? null : run.optimizer_steps[place.optimizer] };
  frame.tail = Boolean(place.tail);
  const after = place.end || frame.optimizer !== null || frame.tail;   // the pass's pops are all behind
  if (!pass || !pass.graph) return frame;
  const graph = pass.graph;
  graph.nodes.forEach((n) => frame.byId.set(n.id, n));
  const deps = { ...pass.dependencies };
  const nodes = frame.nodes;
  for (const n of graph.nodes) {
    nodes.set(n.id, { status: 'waiting', deps: deps[n.id] ?? null, received: [], grad: null,
                      freed: new Set(n.saved.filter((s) => s.released).map((s) => s.name)),
                      queuePos: null, fresh: false, justFreed: new Set() });
  }
  const j = Math.min(place.j, fullSteps(pass) - 1);   // the steps kept in full
  frame.j = j;
  for (let s = 0; s <= j; s++) {
    const step = pass.steps[s];
    const current = s === j && !after;
    for (const [id, count] of Object.entries(step.dependencies)) deps[id] = count;
    const node = nodes.get(step.node);
    node.status = step.error ? 'error' : current ? 'running' : 'done';
    node.grad = ranWith(step) ?? step.grad_text;   // after any hook that replaced it
    for (const sent of step.sent) {
      nodes.get(sent.to)?.received.push({ text: sent.text, from: step.node, edge: sent.edge });
      frame.edges.set(`${step.node}:${sent.edge}`, { text: sent.text, value: sent.value, current });
    }
    if (current || step.error) continue;
    step.released.forEach((name) => node.freed.add(name));
  }
  if (j >= 0 && !after) {
    frame.step = pass.steps[j];
    const node = nodes.get(frame.step.node);
    frame.step.released.forEach((name) => node.freed.add(name));
    node.justFreed = new Set(frame.step.released);
    frame.step.ready.forEach((id) => { if (nodes.has(id)) nodes.get(id).fresh = true; });
  }
  frame.prevQueue = j <= 0 ? [graph.root] : pass.steps[j - 1].queue;
  frame.queue = after ? [] : j < 0 ? [graph.root] : pass.steps[j].queue;
  frame.queue.forEach((id, pos) => {
    const n = nodes.get(id);
    if (n) { n.queuePos = pos; if (n.status === 'waiting') n.status = 'ready'; }
  });
  for (const [id, n] of nodes) n.deps = deps[id] ?? null;
  frame.leaves = leafRows(run, t, place, k, graph);
  return frame;
}

/** Each leaf's `.grad` as it stands at step k, from the server's own before/after texts
 * (and their JSON values, `gradData`). */
function leafRows(run, t, place, k, graph) {
  const rows = [];
  const seen = new Set();
  const globalStart = t.places.findIndex((q) => q.p === place.p && q.j === 0);
  for (const n of graph.nodes) {
    if (n.leaf === null || seen.has(n.leaf)) continue;
    seen.add(n.leaf);
    rows.push({ name: n.leaf, value: n.value, data: n.data, node: n.id, ...leafGrad(run, place, k, globalStart, n.leaf) });
  }
  const order = Object.keys(run.grads);          // the program's order: leaves as created
  for (const name of order) {
    if (!seen.has(name)) rows.push({ name, value: null, data: null, node: null, ...leafGrad(run, place, k, -1, name) });
  }
  const rank = (row) => { const i = order.indexOf(row.name); return i < 0 ? order.length : i; };
  return rows.map((row, i) => [rank(row), i, row]).sort((a, b) => a[0] - b[0] || a[1] - b[1]).map((r) => r[2]);
}

function leafGrad(run, place, k, globalStart, leaf) {
  if (place.end) {
    const final = run.grads[leaf];
    const written = lastWrites(run.passes, Infinity)[leaf];
    if (written && JSON.stringify(written.grad_after) === JSON.stringify(final)) {
      return { grad: written.grad_after_text, gradData: written.grad_after, write: null };
    }
    return { grad: final === null || final === undefined ? null : plain(final), gradData: final ?? null, write: null };
  }
  const pass = run.passes[place.p];
  const offset = globalStart < 0 ? 0 : globalStart;
  let before = null;
  let found = null;
  const full = fullSteps(pass);
  pass.steps.forEach((step, j) => {
    if (step.leaf !== leaf || step.error || j >= full) return;
    if (offset + j <= k) found = { step, current: j === place.j && place.optimizer === undefined };
    else if (before === null) before = { step };
  });
  if (found) {
    const { step, current } = found;
    const write = current ? (step.grad_before === null ? 'first' : 'add') : null;
    return { grad: step.grad_after_text, gradData: step.grad_after, write, before: step.grad_before_text,
             added: step.grad_text };
  }
  if (before) return { grad: before.step.grad_before_text, gradData: before.step.grad_before, write: null };
  const earlier = lastWrites(run.passes.slice(0, place.p), Infinity)[leaf];
  return { grad: earlier ? earlier.grad_after_text : null, gradData: earlier ? earlier.grad_after : null, write: null };
}

/** A final value the trace gives only as JSON (after the last pop): shown as is. */
function plain(value) {
  return typeof value === 'number' ? String(value) : JSON.stringify(value);
}

// -- the graph's camera ---------------------------------------------------------------------

/** The node the view keeps in sight at this frame: the one running, else the root. */
function focusOf(frame) {
  if (!frame.graph) return null;
  return frame.byId.get(frame.step ? frame.step.node : frame.graph.root) ?? null;
}

/** The camera for the shown frame: the stored one while it belongs to this graph, else the
 * page's fit for it. Null until there is a graph and a measured box. */
export function cameraOf(state) {
  const frame = frameAt(state.run, shownStep(state));
  if (!frame.graph || !state.box) return null;
  if (state.camera && state.camera.graph === frame.graph) return state.camera;
  return cam.fit(frame.graph, state.box, focusOf(frame));
}

function followed(state) {
  const camera = cameraOf(state);
  if (!camera) return state.camera;
  return cam.follow(camera, state.box, focusOf(frameAt(state.run, shownStep(state))));
}

function resized(state, box) {
  if (state.box && state.box.w === box.w && state.box.h === box.h) return state;
  const next = { ...state, box };
  const camera = state.camera && cameraOf({ ...state, box });
  if (!camera) return { ...next, camera: null };
  if (!camera.auto) return { ...next, camera: cam.clamp(camera, box) };
  return { ...next, camera: null };           // the page's own view: fitted afresh
}

/** A zoom, pan, fit or jump asked for by the user: {op: 'zoom', factor, at?}, {op: 'pan',
 * dx, dy}, {op: 'centre', x, y} (drawing px) or {op: 'fit'}. */
function moved(state, action) {
  const camera = cameraOf(state);
  if (!camera) return state.camera;
  const box = state.box;
  switch (action.op) {
    case 'zoom': return cam.zoomAt(camera, box, action.factor, ...(action.at ?? []));
    case 'pan': return cam.panBy(camera, box, action.dx, action.dy);
    case 'centre': return cam.centreOn(camera, box, action.x, action.y);
    case 'fit': return cam.fit(camera.graph, box, focusOf(frameAt(state.run, shownStep(state))));
    default: return camera;
  }
}
