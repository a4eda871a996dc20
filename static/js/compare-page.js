// /compare: two programs (or one twice, two passes) traced by the server, side by side,
// their differences marked and said in words (compare.js computes them). The state lives in
// the URL's hash, #a=<left program>&b=<right program>&pa=<left pass>&pb=<right pass>
// (programs as base64url of UTF-8, as the lab's #p=), so a comparison can be linked and
// reloaded.

import * as api from './api.js';
import { diff, explain, nodeKey } from './compare.js';
import { decodeProgram, encodeProgram } from './url.js';

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

/** What the hash asks for; a malformed part is ignored, never trusted. */
function fromHash() {
  const params = new URLSearchParams(window.location.hash.replace(/^#/, ''));
  const out = {};
  for (const side of ['a', 'b']) {
    try {
      if (params.has(side)) out[side] = decodeProgram(params.get(side));
    } catch {
      // a broken link: this side keeps its program
    }
    const pass = Number.parseInt(params.get(`p${side}`) ?? '', 10);
    if (Number.isFinite(pass) && pass >= 0) out[`p${side}`] = pass;
  }
  return out;
}

function toHash() {
  const params = new URLSearchParams();
  params.set('a', encodeProgram($('source-a').value));
  params.set('b', encodeProgram($('source-b').value));
  params.set('pa', $('pass-a').value || '0');
  params.set('pb', $('pass-b').value || '0');
  return `#${params.toString()}`;
}

let written = '';            // the hash this page wrote last: its own hashchange is no news

function remember() {
  written = toHash();
  if (window.location.hash !== written) window.history.replaceState(null, '', written);
}

function pickPass(side, index) {
  if (index !== undefined && index < (traces[side]?.passes.length ?? 0)) $(`pass-${side}`).value = String(index);
}

async function compare(asked = {}) {
  document.body.dataset.compared = 'no';
  $('status').textContent = 'Tracing…';
  [traces.a, traces.b] = await Promise.all([api.getTrace($('source-a').value), api.getTrace($('source-b').value)]);
  passOptions('a');
  passOptions('b');
  if ($('source-a').value === $('source-b').value && traces.b.passes.length > 1) $('pass-b').value = '1';
  pickPass('a', asked.pa);
  pickPass('b', asked.pb);
  $('status').textContent = '';
  show();
  remember();
}

function fromLink() {
  const asked = fromHash();
  if (asked.a !== undefined) $('source-a').value = asked.a;
  if (asked.b !== undefined) $('source-b').value = asked.b;
  return compare(asked);
}

$('compare').addEventListener('click', () => compare());
for (const side of ['a', 'b']) $(`pass-${side}`).addEventListener('change', () => { show(); remember(); });
window.addEventListener('hashchange', () => { if (window.location.hash !== written) fromLink(); });
fromLink();
