// The local derivative of one node: its function around its input with the tangent whose
// slope the node multiplies by (one-input functions), or its formula with the numbers
// filled in (add, sub, mul, div, pow, maximum), or the sum of products each input element's
// gradient is (mm, mv, dot, addmm, sum, mean, softmax, log_softmax). Every number and every sample comes from
// the server (POST /api/derivative, the engine's forward and backward); this view only
// draws them. It follows the running node unless a node is picked.

import * as api from '../api.js';
import { frameAt, fullSteps, shownStep } from '../store.js';

const SVG = 'http://www.w3.org/2000/svg';
const W = 260;
const H = 150;
const PAD = 10;
const MAX_OPTIONS = 256;          // elements listed in the picker; past it, a number field

let kinds = null;                 // node name → 'unary' | 'elementwise' | 'matrix'
let repaint = () => {};
// Note [the panel while stepping]: every answer is a trace of the whole program on the
// server (25–120 ms of CPU for a 300-node graph) and used to repaint the whole page, once
// per step. Now an answer is asked for only once the wanted node has stayed for
// SETTLE_MS (at once when the student is not stepping fast), is kept in `answers`, and
// redraws this panel alone. Stepping bench/page.py's 304-node graph by key every 100 ms
// for 40 steps: 40 requests and about 73 page paints before, 2 and 40 after; 47 → 58
// frames/s, the page's script 8.0 → 5.0 ms per step (medians of four interleaved runs).
const SETTLE_MS = 250;
const MAX_ANSWERS = 256;
const answers = new Map();        // request key → { answer } (null: none for that node), oldest first
const views = new WeakMap();
const passSteps = new WeakMap();  // pass → { steps it explains, the node picker's options }
let shown = null;                 // the last (root, state) rendered: an answer redraws it

/** This view's stylesheet, loaded before the panel shows. */
const ready = new Promise((resolve) => {
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = new URL('../../css/derivative.css', import.meta.url).href;
  link.addEventListener('load', resolve);
  link.addEventListener('error', resolve);
  document.head.appendChild(link);
});

/** Wire to the page: `onChange` asks for a page redraw once the node kinds arrive (the
 * panel shows from then on); answers and picks redraw this panel alone. */
export async function mount({ onChange }) {
  repaint = onChange;
  await ready;
  return api.getDerivativeNodes().then((k) => {
    kinds = new Map();
    for (const [kind, names] of Object.entries(k)) names.forEach((n) => kinds.set(n, kind));
    repaint();
  });
}

/** Redraw this panel from the state it last drew, not the page. */
function redraw() {
  if (shown) render(shown.root, shown.state);
}

function el(name, attrs = {}, parent = null, text = null) {
  const node = document.createElement(name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== null) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

function sv(name, attrs = {}, parent = null) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (parent) parent.appendChild(node);
  return node;
}

/** A number as the panel prints it: five significant digits; null is not finite. */
export function fmt(v) {
  if (v === null || v === undefined) return 'not finite';
  return String(Number(v.toPrecision(5)));
}

function num(v, cls, parent) {
  return el('data', { class: cls, value: v === null ? 'nan' : String(v) }, parent, fmt(v));
}

function build(root) {
  const body = root.querySelector('.derivative-body');
  const pick = el('div', { class: 'derivative-pick' }, body);
  const nodeLabel = el('label', {}, pick, 'Node ');
  const node = el('select', { id: 'derivative-node' }, nodeLabel);
  const elementLabel = el('label', { class: 'derivative-element' }, pick, 'Element ');
  const element = el('select', { id: 'derivative-element' }, elementLabel);
  const out = el('div', { class: 'derivative-out', 'aria-live': 'polite' }, body);
  const view = { node, element, elementLabel, out, run: null, pinned: null, index: 0, key: '',
                 options: null, wanted: '', changed: -Infinity, timer: null, said: '' };
  node.addEventListener('change', () => { view.pinned = node.value === '' ? null : Number(node.value); view.index = 0; redraw(); });
  element.addEventListener('change', () => { view.index = Number(element.value); redraw(); });
  return view;
}

export function render(root, state) {
  const frame = frameAt(state.run, shownStep(state));
  const show = Boolean(kinds && frame.graph && state.run.status === 'done');
  if (root.hidden !== !show) root.hidden = !show;
  shown = { root, state };
  let view = views.get(root);
  if (!show) { if (view) want(view, ''); return; }      // an answer on its way is not shown
  if (!view) { view = build(root); views.set(root, view); }
  if (view.run !== state.run) Object.assign(view, { run: state.run, pinned: null, index: 0 });
  const { steps, options } = explained(frame);
  pickNodes(view, options);
  const running = frame.step && kinds.has(frame.step.name) ? frame.step.node : null;
  const id = view.pinned ?? running;
  const step = id === null ? undefined : steps.get(id);
  if (!step) { want(view, ''); say(view, 'Step to a node of a function, or pick one above: its local derivative shows here.'); return; }
  const shape = frame.byId.get(id).shape;
  const perInput = ['matrix', 'jacobian'].includes(kinds.get(step.name));   // elements of the inputs
  pickElement(view, perInput ? null : shape, step);
  const request = { source: state.run.source, seed: state.run.seed ?? null, pass: frame.pass.index,
                    node: id, element: view.index };
  const key = JSON.stringify(request);
  want(view, key, request);
  if (view.key === key) return;                       // it shows this answer already
  const got = answers.get(key);
  if (!got) say(view, 'Asking the engine…');
  else if (!got.answer) { say(view, 'The engine gives no local derivative for this node.'); view.key = key; }
  else { draw(view, got.answer, frame); view.key = key; }
}

/** The steps of `frame`'s pass that this view explains, by node id, and the node picker's
 * options: the same for every frame of a pass, so made once per pass. */
function explained(frame) {
  let got = passSteps.get(frame.pass);
  if (!got) {
    const steps = new Map(frame.pass.steps.slice(0, fullSteps(frame.pass))
      .filter((s) => kinds.has(s.name)).map((s) => [s.node, s]));
    const options = [['', 'the running node'], ...[...steps.keys()].map((n) => [String(n), label(frame.byId.get(n))])];
    got = { steps, options };
    passSteps.set(frame.pass, got);
  }
  return got;
}

/** The answer this panel wants now (key '' for none). One not yet kept is fetched at once
 * when the previous want had stood for SETTLE_MS, else once this one has: stepping fast
 * asks only for where the student stops. */
function want(view, key, request = null) {
  if (view.wanted === key) return;
  view.wanted = key;
  clearTimeout(view.timer);
  view.timer = null;
  const now = performance.now();
  const settled = now - view.changed >= SETTLE_MS;
  view.changed = now;
  if (!key || answers.has(key)) return;
  if (settled) fetchAnswer(view, key, request);
  else view.timer = setTimeout(() => fetchAnswer(view, key, request), SETTLE_MS);
}

function fetchAnswer(view, key, request) {
  view.timer = null;
  if (view.wanted !== key || answers.has(key) || pending.has(key)) return;
  pending.add(key);
  api.getDerivative(request).then((answer) => remember(key, { answer }), (err) => {
    // A refusal (busy, too many requests, no server) is not the engine's answer: it is
    // shown, and asked again when the node is wanted again.
    if (view.wanted === key) { say(view, `The server did not answer (${err.message || err}): step to this node again to ask once more.`); view.key = key; }
  }).finally(() => {
    pending.delete(key);
    if (view.wanted === key && answers.has(key)) { view.key = ''; redraw(); }
  });
}

const pending = new Set();        // request keys on their way

function remember(key, value) {
  answers.set(key, value);
  if (answers.size > MAX_ANSWERS) answers.delete(answers.keys().next().value);
}

function say(view, text) {
  view.key = '';
  if (view.said === text) return;           // stepping past nodes it does not explain
  view.said = text;
  view.out.replaceChildren(el('p', { class: 'sub' }, null, text));
}

function label(n) {
  return `${n.name}${n.variable ? ` (${n.variable})` : ''}`;
}

function pickNodes(view, options) {
  if (view.options !== options) {
    view.options = options;
    view.node.replaceChildren(...options.map(([v, t]) => el('option', { value: v }, null, t)));
  }
  const value = view.pinned === null ? '' : String(view.pinned);
  if (view.node.value !== value) view.node.value = value;
}

function indexText(k, shape) {
  const at = [];
  for (let d = shape.length - 1; d >= 0; d -= 1) { at.unshift(k % shape[d]); k = Math.floor(k / shape[d]); }
  return `[${at.join(', ')}]`;
}

function pickElement(view, shape, step) {
  const count = shape ? shape.reduce((a, b) => a * b, 1) : Math.max(...step.sent.map((s) => [s.value].flat(3).length));
  if (view.elementLabel.hidden !== (count <= 1)) view.elementLabel.hidden = count <= 1;
  view.index = Math.min(view.index, count - 1);
  const sig = `${count}:${shape}`;
  if (view.element.dataset.sig !== sig) {
    view.element.dataset.sig = sig;
    const n = Math.min(count, MAX_OPTIONS);
    view.element.replaceChildren(...Array.from({ length: n }, (_, k) =>
      el('option', { value: k }, null, shape ? indexText(k, shape) : `#${k}`)));
  }
  if (view.element.value !== String(view.index)) view.element.value = String(view.index);
}

function draw(view, d, frame) {
  const out = [];
  const head = el('p', { class: 'derivative-what' });
  head.textContent = `${d.name} · ${d.function}${Object.keys(d.params).length ? ` (${Object.entries(d.params).map(([k, v]) => `${k}=${v}`).join(', ')})` : ''}`;
  out.push(head);
  if (d.plot) out.push(plot(d));
  for (const term of d.inputs) out.push(equation(d, term, frame));
  if (d.note) out.push(el('p', { class: 'sub' }, null, d.note));
  view.out.replaceChildren(...out);
  view.said = '';
}

function target(frame, to) {
  const n = to === null ? null : frame.byId.get(to);
  if (!n) return 'no node (no gradient needed)';
  return n.leaf ? `AccumulateGrad (${n.leaf})` : label(n);
}

function equation(d, term, frame) {
  const p = el('p', { class: 'derivative-eq', 'data-edge': term.edge });
  el('span', { class: 'formula' }, p, `${term.formula}: `);
  if (term.to === null && term.outgoing === null) {
    p.append(`not computed → ${target(frame, null)}`);
    return p;
  }
  if (term.terms && term.terms.length === 0) {
    num(0, 'factor', p);                 // no output element depends on this input element
  } else if (term.terms) {
    term.terms.forEach(([a, b], i) => {
      if (i) p.append(' + ');
      num(a, 'factor', p); p.append(' × '); num(b, 'factor', p);
    });
  } else {
    num(d.incoming, 'incoming', p); p.append(' × '); num(term.local, 'local', p);
  }
  p.append(' = ');
  num(term.outgoing, 'outgoing', p);
  p.append(` → ${target(frame, term.to)}`);
  if (!d.plot && term.value !== null) { p.append(' · input '); num(term.value, 'value', p); }
  return p;
}

function plot(d) {
  const { samples, tangent, x, y, slope } = d.plot;
  const xs = [samples[0][0], samples.at(-1)[0]];
  const ys = samples.map((s) => s[1]).filter((v) => v !== null).sort((a, b) => a - b);
  let lo = Math.min(ys[Math.floor(ys.length * 0.05)], y);
  let hi = Math.max(ys[Math.ceil(ys.length * 0.95) - 1], y);
  if (hi - lo < 1e-9) { lo -= 1; hi += 1; }
  const margin = (hi - lo) * 0.1;
  lo -= margin; hi += margin;
  const sx = (v) => PAD + ((v - xs[0]) / (xs[1] - xs[0])) * (W - 2 * PAD);
  const sy = (v) => H - PAD - ((v - lo) / (hi - lo)) * (H - 2 * PAD);
  const svg = sv('svg', { class: 'derivative-plot', viewBox: `0 0 ${W} ${H}`, role: 'img',
                          'aria-label': `${d.function} around x = ${fmt(x)}: value ${fmt(y)}, slope ${fmt(slope)}` });
  const clip = sv('clipPath', { id: 'derivative-clip' }, svg);
  sv('rect', { x: PAD, y: PAD, width: W - 2 * PAD, height: H - 2 * PAD }, clip);
  const g = sv('g', { 'clip-path': 'url(#derivative-clip)' }, svg);
  if (lo < 0 && hi > 0) sv('line', { class: 'axis', x1: PAD, x2: W - PAD, y1: sy(0), y2: sy(0) }, g);
  if (xs[0] < 0 && xs[1] > 0) sv('line', { class: 'axis', x1: sx(0), x2: sx(0), y1: PAD, y2: H - PAD }, g);
  let path = '';
  let pen = false;
  for (const [a, b] of samples) {
    if (b === null) { pen = false; continue; }
    path += `${pen ? 'L' : 'M'}${sx(a).toFixed(2)} ${sy(b).toFixed(2)}`;
    pen = true;
  }
  sv('path', { class: 'curve', d: path, 'data-samples': samples.filter((s) => s[1] !== null).length }, g);
  const [[x0, y0], [x1, y1]] = tangent;
  sv('line', { class: 'tangent', x1: sx(x0), y1: sy(y0), x2: sx(x1), y2: sy(y1), 'data-slope': slope }, g);
  sv('circle', { class: 'point', cx: sx(x), cy: sy(y), r: 3.5 }, g);
  const wrap = el('figure', { class: 'derivative-figure' });
  wrap.append(svg);
  const cap = el('figcaption', {}, wrap);
  cap.append(`${d.function}′(x) at x = `); num(x, 'x', cap);
  cap.append(' is the tangent’s slope '); num(slope, 'slope', cap);
  cap.append(' (f(x) = '); num(y, 'y', cap); cap.append(')');
  return wrap;
}
