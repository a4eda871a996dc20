// optimizer.step() after a backward call: each parameter's value before and after, the
// .grad it consumed, the optimizer's state, and its update rule written out with the
// numbers of one element (the first, or the cell under the pointer or the focus). Every
// number is the trace's: the engine's before, grad, after, state and hyperparameters, and
// the state the same parameter had after the previous step. The page computes none.

import { drawable, figure, flatten, indexText, num, shapeText } from './heatmap.js';

const blocks = new WeakMap();       // optimizer step -> its panel content

function html(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Show the frame's optimizer step in `section`, or hide it. */
export function renderOptimizer(section, frame, run) {
  const o = frame.optimizer;
  section.hidden = !o;
  if (!o) return;
  let content = blocks.get(o);
  if (!content) { content = build(o, run); blocks.set(o, content); }
  const body = section.querySelector('.optimizer-body');
  if (body.firstChild !== content) body.replaceChildren(content);
}

function build(o, run) {
  const box = html('div', 'optimizer-step');
  const where = [`${o.kind}`, `line ${o.line}`];
  if (o.iteration.length) where.push(`iteration ${o.iteration.join('.')}`);
  if (o.after_pass !== null) where.push(`after backward call ${o.after_pass + 1}`);
  box.append(html('p', 'optimizer-where', where.join(' · ')));
  box.append(html('p', 'optimizer-hyper', hyperText(o)));
  const rule = html('div', 'optimizer-rule');
  rule.append(html('p', 'rule-title', 'The update, for each element:'));
  for (const line of ruleLines(o)) rule.append(html('code', 'rule-line', line));
  box.append(rule);
  if (!o.params.length) box.append(html('p', 'sub', 'No parameter had a .grad: nothing moved.'));
  for (const p of o.params) box.append(paramBlock(o, p, previousState(run, o, p.name)));
  return box;
}

function hyperText(o) {
  const h = o.hyper;
  const parts = Object.entries(h).filter(([, v]) => v !== null && v !== undefined && v !== false)
    .map(([k, v]) => `${k} ${Array.isArray(v) ? `(${v.join(', ')})` : v}`);
  return parts.join(', ');
}

/** The same parameter's state after the optimizer's previous step, if there was one. */
function previousState(run, o, name) {
  for (let i = o.index - 1; i >= 0; i--) {
    const earlier = run.optimizer_steps[i];
    if (earlier?.kind !== o.kind) continue;
    const q = earlier.params.find((p) => p.name === name);
    if (q) return q.state;
  }
  return null;
}

// -- the rule, symbolically: PyTorch's single-tensor SGD and Adam ---------------------------------

function ruleLines(o) {
  const h = o.hyper;
  if (o.kind === 'SGD') {
    const lines = [];
    if (h.maximize) lines.push('g ← −g   (maximize)');
    if (h.weight_decay) lines.push('g ← g + λ·w   (weight_decay λ)');
    if (h.momentum) {
      lines.push('b ← g   at the first step; then b ← μ·b + (1 − τ)·g');
      lines.push(h.nesterov ? 'w ← w − lr·(g + μ·b)   (nesterov)' : 'w ← w − lr·b');
    } else {
      lines.push('w ← w − lr·g');
    }
    return lines;
  }
  return [
    ...(h.maximize ? ['g ← −g   (maximize)'] : []),
    ...(h.weight_decay ? ['g ← g + λ·w   (weight_decay λ)'] : []),
    'm ← β₁·m + (1 − β₁)·g        (exp_avg, 0 before step 1)',
    'v ← β₂·v + (1 − β₂)·g²       (exp_avg_sq)',
    ...(h.amsgrad ? ['v̂ ← max(v̂, v)               (max_exp_avg_sq)'] : []),
    `w ← w − lr/(1 − β₁ᵗ) · m / (√${h.amsgrad ? 'v̂' : 'v'} / √(1 − β₂ᵗ) + ε)`,
  ];
}

// -- one parameter ------------------------------------------------------------------------------

function paramBlock(o, p, prev) {
  const block = html('section', 'optimizer-param');
  const shape = flatten(p.before).shape;
  const head = html('h3', 'optimizer-param-name');
  head.append(html('code', '', p.name ?? 'a parameter'), ' ', html('span', 'tensor-shape', shapeText(shape)));
  block.append(head);
  const shown = [['before', p.before], ['.grad consumed', p.grad], ['after', p.after]];
  for (const [key, value] of Object.entries(p.state)) {
    if (Array.isArray(value) || (typeof value === 'number' && !['step', 'bias_correction1', 'bias_correction2'].includes(key))) {
      shown.push([key, value]);
    }
  }
  const row = html('div', 'optimizer-values');
  for (const [label, value] of shown) {
    if (drawable(value)) row.append(figure(value, { label, compact: true }));
    else row.append(scalar(label, value));
  }
  block.append(row);
  const numbers = html('div', 'rule-numbers');
  numbers.setAttribute('aria-live', 'polite');
  block.append(numbers);
  const show = (k) => {
    const lines = numberLines(o, p, prev, k);
    const title = html('p', 'rule-title', shape.length ? `At ${indexText(shape, k)}:` : 'With its numbers:');
    numbers.replaceChildren(title, ...lines.map((line) => html('code', 'rule-line', line)));
  };
  block.addEventListener('tensor-cell', (event) => show(event.detail.k));
  show(0);
  return block;
}

function scalar(label, value) {
  const box = html('div', 'optimizer-scalar');
  const one = Array.isArray(value) ? flatten(value).values[0] : value;
  box.append(html('span', 'tensor-label', label), html('span', 'scalar-value',
    one === null || one === undefined ? 'not sent (over 1000 values)' : num(one)));
  return box;
}

/** Element k of a value as the trace sent it (a number, "nan", or null past 1000 values). */
function at(value, k) {
  if (value === null || value === undefined) return null;
  if (!Array.isArray(value)) return value;
  return flatten(value).values[k] ?? null;
}

/** A number inside a formula: negative ones in parentheses. */
function op(v) {
  if (v === null) return '?';
  const s = num(v);
  return s.startsWith('-') ? `(${s})` : s;
}

function numberLines(o, p, prev, k) {
  const h = o.hyper;
  const w = at(p.before, k), g0 = at(p.grad, k), after = at(p.after, k);
  // g as the step uses it: negated to maximize, plus λ·w with weight decay.
  if (w === null || g0 === null) return ['The values are not in the trace (over 1000 of them): see the printed text.'];
  let g = h.maximize ? `(−${op(g0)})` : op(g0);
  if (h.weight_decay) g = `(${g} + ${op(h.weight_decay)} × ${op(w)})`;
  if (o.kind === 'SGD') {
    if (!h.momentum) return [`w = ${op(w)} − ${op(h.lr)} × ${g} = ${num(after)}`];
    const b = at(p.state.momentum_buffer, k);
    const bPrev = prev ? at(prev.momentum_buffer, k) : null;
    const lines = [bPrev === null ? `b = ${g} = ${num(b)}   (the first step: b starts as g)`
      : `b = ${op(h.momentum)} × ${op(bPrev)} + (1 − ${op(h.dampening)}) × ${g} = ${num(b)}`];
    lines.push(h.nesterov ? `w = ${op(w)} − ${op(h.lr)} × (${g} + ${op(h.momentum)} × ${op(b)}) = ${num(after)}`
      : `w = ${op(w)} − ${op(h.lr)} × ${op(b)} = ${num(after)}`);
    return lines;
  }
  const [b1, b2] = h.betas ?? [null, null];
  const s = p.state;
  const m = at(s.exp_avg, k), v = at(s.exp_avg_sq, k);
  const mPrev = prev ? at(prev.exp_avg, k) : 0, vPrev = prev ? at(prev.exp_avg_sq, k) : 0;
  const lines = [
    `m = ${op(b1)} × ${op(mPrev)} + (1 − ${op(b1)}) × ${g} = ${num(m)}`,
    `v = ${op(b2)} × ${op(vPrev)} + (1 − ${op(b2)}) × ${g}² = ${num(v)}`,
  ];
  let second = v;
  if (h.amsgrad) {
    const hat = at(s.max_exp_avg_sq, k);
    const hatPrev = prev ? at(prev.max_exp_avg_sq, k) : 0;
    lines.push(`v̂ = max(${op(hatPrev)}, ${op(v)}) = ${num(hat)}`);
    second = hat;
  }
  lines.push(`step t = ${num(s.step)}: 1 − β₁ᵗ = ${op(s.bias_correction1)}, 1 − β₂ᵗ = ${num(s.bias_correction2)}`);
  lines.push(`w = ${op(w)} − ${op(h.lr)} / ${op(s.bias_correction1)} × ${op(m)} / (√${op(second)} / √${op(s.bias_correction2)} + ${op(h.eps)}) = ${num(after)}`);
  return lines;
}
