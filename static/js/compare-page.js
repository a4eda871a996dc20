// /compare: two programs (or one twice, two passes) traced by the server, side by side,
// their differences marked and said in words (compare.js computes them).

import * as api from './api.js';
import { diff, explain, nodeKey } from './compare.js';

const $ = (id) => document.getElementById(id);
const traces = { a: null, b: null };

function el(name, attrs = {}, text = null) {
  const node = document.createElement(name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== null) node.textContent = text;
  return node;
}

function passOptions(side) {
  const pick = $(`pass-${side}`);
  const passes = traces[side]?.passes ?? [];
  pick.replaceChildren(...passes.map((p, i) => el('option', { value: i }, `pass ${i + 1} of ${passes.length} · ${p.kind}() at line ${p.line}`)));
  pick.disabled = passes.length < 2;
}

function column(side, pass, marks) {
  const list = $(`pops-${side}`);
  list.replaceChildren(...pass.steps.map((s) => {
    const key = nodeKey(s);
    const item = el('li', { 'data-key': key, class: marks.get(key) ?? '' });
    item.append(el('code', {}, key), ` · grad ${JSON.stringify(s.grad)}`);
    return item;
  }));
}

function show() {
  const out = $('differences');
  const error = traces.a?.error ?? traces.b?.error;
  const pa = traces.a?.passes[Number($('pass-a').value || 0)];
  const pb = traces.b?.passes[Number($('pass-b').value || 0)];
  if (!pa || !pb || pa.summarized || pb.summarized) {
    out.replaceChildren(el('li', {}, error ? `A program did not run to a pass: ${error.message}` : 'Each side needs a pass with its steps.'));
    return;
  }
  const d = diff(pa, pb, traces.a.grads, traces.b.grads);
  const marks = (side) => {
    const m = new Map();
    for (const k of d.moved) m.set(k, 'moved');
    for (const g of d.gradients) m.set(g.node, `${m.get(g.node) ?? ''} grad-differs`.trim());
    for (const k of side === 'a' ? d.removed : d.added) m.set(k, side === 'a' ? 'removed' : 'added');
    return m;
  };
  column('a', pa, marks('a'));
  column('b', pb, marks('b'));
  out.replaceChildren(...explain(d).map((s) => el('li', {}, s)));
  document.body.dataset.compared = 'yes';
}

async function compare() {
  document.body.dataset.compared = 'no';
  $('status').textContent = 'Tracing…';
  [traces.a, traces.b] = await Promise.all([api.getTrace($('source-a').value), api.getTrace($('source-b').value)]);
  passOptions('a');
  passOptions('b');
  if ($('source-a').value === $('source-b').value && traces.b.passes.length > 1) $('pass-b').value = '1';
  $('status').textContent = '';
  show();
}

$('compare').addEventListener('click', compare);
$('pass-a').addEventListener('change', show);
$('pass-b').addEventListener('change', show);
compare();
