// One question's answer inputs, one per part type, and the model answer beside them.
// `build(part, qid)` returns {root, read()}; read() gives the answer in the shape the
// server marks (a number's text, item ids in order, option ids, stem id → option id).

import { withCode } from '../views/code.js';

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') node.className = v;
    else if (k === 'text') node.textContent = v;
    else node.setAttribute(k, v);
  }
  node.append(...children);
  return node;
}

export { el };

export function build(part, qid) {
  const id = `${qid}-${part.id}`.replace(/[^\w-]/g, '_');
  if (part.type === 'numeric') return numeric(part, id);
  if (part.type === 'order') return order(part, id);
  if (part.type === 'choice') return choice(part, id);
  return match(part, id);
}

function numeric(part, id) {
  const input = el('input', { id, type: 'text', inputmode: 'decimal', autocomplete: 'off', spellcheck: 'false', class: 'num' });
  const label = el('label', { for: id, class: 'part-prompt' }, ...withCode(part.prompt));
  return { root: el('div', { class: 'part-body' }, label, input), read: () => input.value.trim() || null };
}

function order(part, id) {
  const list = el('ol', { class: 'order-list', id, 'aria-label': 'Your order, first pop at the top' });
  const move = (li, delta) => {
    const items = [...list.children];
    const to = items.indexOf(li) + delta;
    if (to < 0 || to >= items.length) return;
    if (delta < 0) list.insertBefore(li, items[to]); else list.insertBefore(li, items[to].nextSibling);
    li.querySelector(delta < 0 ? '.up' : '.down')?.focus();
  };
  for (const item of part.items) {
    const up = el('button', { type: 'button', class: 'up icon-like', 'aria-label': `Move ${item.text} up`, text: '↑' });
    const down = el('button', { type: 'button', class: 'down icon-like', 'aria-label': `Move ${item.text} down`, text: '↓' });
    const li = el('li', { class: 'order-item', 'data-id': item.id }, el('span', { class: 'order-text', text: item.text }), up, down);
    up.addEventListener('click', () => move(li, -1));
    down.addEventListener('click', () => move(li, 1));
    list.append(li);
  }
  const prompt = el('p', { class: 'part-prompt' }, ...withCode(part.prompt),
                    el('span', { class: 'hint', text: ' Move each node with ↑ ↓; the top pops first.' }));
  return { root: el('div', { class: 'part-body' }, prompt, list), read: () => [...list.children].map((li) => li.dataset.id) };
}

function choice(part, id) {
  const box = el('fieldset', { class: 'choices', id });
  box.append(el('legend', { class: 'part-prompt' }, ...withCode(part.prompt),
                el('span', { class: 'hint', text: part.multiple ? ' Choose every one that applies.' : ' Choose one.' })));
  for (const option of part.options) {
    const input = el('input', { type: part.multiple ? 'checkbox' : 'radio', name: id, value: option.id });
    box.append(el('label', { class: 'choice' }, input, el('span', {}, ...withCode(option.text))));
  }
  const read = () => {
    const chosen = [...box.querySelectorAll('input:checked')].map((i) => i.value);
    return part.multiple ? chosen : chosen[0] ?? null;
  };
  return { root: el('div', { class: 'part-body' }, box), read };
}

function match(part, id) {
  const table = el('div', { class: 'matching', role: 'group', 'aria-labelledby': `${id}-p` });
  const selects = [];
  part.stems.forEach((stem, i) => {
    const select = el('select', { id: `${id}-${i}`, 'data-stem': stem.id });
    select.append(el('option', { value: '', text: '— choose —' }));
    for (const o of part.options) select.append(el('option', { value: o.id, text: o.text }));
    selects.push(select);
    table.append(el('label', { for: select.id, class: 'stem', text: stem.text }), select);
  });
  const read = () => Object.fromEntries(selects.filter((s) => s.value).map((s) => [s.dataset.stem, s.value]));
  return { root: el('div', { class: 'part-body' }, el('p', { class: 'part-prompt', id: `${id}-p` }, ...withCode(part.prompt)), table), read };
}

/** The model answer of one part, as text lines. */
export function answerLines(part) {
  if (part.type === 'numeric') return [`${Number(part.answer.toPrecision(8))} (accepted within ${Number(part.tolerance.toPrecision(2))})`];
  if (part.type === 'order') {
    const texts = Object.fromEntries(part.items.map((i) => [i.id, i.text]));
    return part.answer.map((a, k) => `${k + 1}. ${texts[a]}`);
  }
  if (part.type === 'choice') {
    const texts = Object.fromEntries(part.options.map((o) => [o.id, o.text]));
    return part.answer.length ? part.answer.map((a) => texts[a]) : ['none of them'];
  }
  const stems = Object.fromEntries(part.stems.map((s) => [s.id, s.text]));
  const options = Object.fromEntries(part.options.map((o) => [o.id, o.text]));
  return Object.entries(part.answer).map(([s, o]) => `${stems[s]} → ${options[o]}`);
}
