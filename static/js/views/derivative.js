// The local derivative of one node: its function around its input with the tangent whose
// slope the node multiplies by (one-input functions), or its formula with the numbers
// filled in (add, sub, mul, div, pow, maximum), or the sum of products each input element's
// gradient is (mm, mv, dot, addmm, sum, mean, softmax, log_softmax). Every number and every sample comes from
// the server (POST /api/derivative, the engine's forward and backward); this view only
// draws them. It follows the running node unless a node is picked.

import * as api from '../api.js';
import { frameAt, shownStep } from '../store.js';

const SVG = 'http://www.w3.org/2000/svg';
const W = 260;
const H = 150;
const PAD = 10;
const MAX_OPTIONS = 256;          // elements listed in the picker; past it, a number field

let kinds = null;                 // node name → 'unary' | 'elementwise' | 'matrix'
let repaint = () => {};
const answers = new Map();        // request key → { answer } | { pending } | { failed }
const views = new WeakMap();

/** This view's stylesheet, loaded before the panel shows. */
const ready = new Promise((resolve) => {
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = new URL('../../css/derivative.css', import.meta.url).href;
  link.addEventListener('load', resolve);
  link.addEventListener('error', resolve);
  document.head.appendChild(link);
});

/** Wire to the page: `onChange` asks for a redraw when an answer arrives. */
export async function mount({ onChange }) {
  repaint = onChange;
  await ready;
  return api.getDerivativeNodes().then((k) => {
    kinds = new Map();
    for (const [kind, names] of Object.entries(k)) names.forEach((n) => kinds.set(n, kind));
    repaint();
  });
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
  const view = { node, element, elementLabel, out, run: null, pinned: null, index: 0, key: '', options: '' };
  node.addEventListener('change', () => { view.pinned = node.value === '' ? null : Number(node.value); view.index = 0; repaint(); });
  element.addEventListener('change', () => { view.index = Number(element.value); repaint(); });
  return view;
}

export function render(root, state) {
  const frame = frameAt(state.run, shownStep(state));
  const show = Boolean(kinds && frame.graph && state.run.status === 'done');
  root.hidden = !show;
  if (!show) return;
  let view = views.get(root);
  if (!view) { view = build(root); views.set(root, view); }
  if (view.run !== state.run) Object.assign(view, { run: state.run, pinned: null, index: 0 });
  const steps = frame.pass.steps.filter((s) => kinds.has(s.name));
  pickNodes(view, frame, steps);
  const running = frame.step && kinds.has(frame.step.name) ? frame.step.node : null;
  const id = view.pinned ?? running;
  const step = steps.find((s) => s.node === id);
  if (!step) { say(view, 'Step to a node of a function, or pick one above: its local derivative shows here.'); return; }
  const shape = frame.byId.get(id).shape;
  const perInput = ['matrix', 'jacobian'].includes(kinds.get(step.name));   // elements of the inputs
  pickElement(view, perInput ? null : shape, step);
  const request = { source: state.run.source, seed: state.run.seed ?? null, pass: frame.pass.index,
                    node: id, element: view.index };
  const key = JSON.stringify(request);
  if (!answers.has(key)) fetchAnswer(key, request);
  const got = answers.get(key);
  if (view.key === key && !got.pending) return;
  view.key = got.pending ? '' : key;
  if (got.pending) say(view, 'Asking the engine…');
  else if (got.failed || !got.answer) say(view, 'The engine gives no local derivative for this node.');
  else draw(view, got.answer, frame);
}

function fetchAnswer(key, request) {
  answers.set(key, { pending: true });
  api.getDerivative(request).then((answer) => answers.set(key, { answer }),
    () => answers.set(key, { failed: true })).then(() => repaint());
}

function say(view, text) {
  view.out.replaceChildren(el('p', { class: 'sub' }, null, text));
  view.key = '';
}

function label(n) {
  return `${n.name}${n.variable ? ` (${n.variable})` : ''}`;
}

function pickNodes(view, frame, steps) {
  const options = [['', 'the running node'], ...steps.map((s) => [String(s.node), label(frame.byId.get(s.node))])];
  const sig = JSON.stringify(options);
  if (view.options !== sig) {
    view.options = sig;
    view.node.replaceChildren(...options.map(([v, t]) => el('option', { value: v }, null, t)));
  }
  view.node.value = view.pinned === null ? '' : String(view.pinned);
}

function indexText(k, shape) {
  const at = [];
  for (let d = shape.length - 1; d >= 0; d -= 1) { at.unshift(k % shape[d]); k = Math.floor(k / shape[d]); }
  return `[${at.join(', ')}]`;
}

function pickElement(view, shape, step) {
  const count = shape ? shape.reduce((a, b) => a * b, 1) : Math.max(...step.sent.map((s) => [s.value].flat(3).length));
  view.elementLabel.hidden = count <= 1;
  view.index = Math.min(view.index, count - 1);
  const sig = `${count}:${shape}`;
  if (view.element.dataset.sig !== sig) {
    view.element.dataset.sig = sig;
    const n = Math.min(count, MAX_OPTIONS);
    view.element.replaceChildren(...Array.from({ length: n }, (_, k) =>
      el('option', { value: k }, null, shape ? indexText(k, shape) : `#${k}`)));
  }
  view.element.value = String(view.index);
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
