// The quiz page: reads the set from the URL (?seed=&count=&kind=, or ?kind=&seed= for one
// question, &order=dependencies), shows each question as a card, sends answers to the
// server to be marked, reveals model answers, and keeps the student's marks in this
// browser. Printing: without answers, or with every model answer revealed first.

import * as api from './api.js';
import { card, showMark, showModel } from './card.js';
import { el } from './parts.js';
import * as scores from './scores.js';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const kindsWanted = params.getAll('kind').flatMap((k) => k.split(',')).filter(Boolean);
const one = params.has('kind') && !params.has('count') && kindsWanted.length === 1 ? kindsWanted[0] : null;
// A set's seed, or one question's: a set's j-th question of a kind is variant seed*64 + j
// (app/questions MAX_SEED, MAX_VARIANT_SEED), so the card's seed opens on its own too.
const MAX_SEED = 2147483647;
const MAX_VARIANT_SEED = MAX_SEED * 64 + 63;
const setup = {
  seed: clampInt(params.get('seed'), 0, one ? MAX_VARIANT_SEED : MAX_SEED, Math.floor(Math.random() * 100000)),
  count: clampInt(params.get('count'), 1, 50, 7),
  kinds: kindsWanted,
  one,
  orderMode: params.get('order') === 'dependencies' ? 'dependencies' : 'exact',
};
let marks = scores.load();
let titles = {};
let questions = [];

function clampInt(text, lo, hi, fallback) {
  const n = Number.parseInt(text ?? '', 10);
  return Number.isFinite(n) && n >= lo && n <= hi ? n : fallback;
}

function say(text) { $('status').textContent = text; }

const handlers = {
  async check(q, answers) {
    try {
      const grade = await api.check(q, answers, setup.orderMode);
      showModel(document.getElementById(`q-${q.id}`), grade.model, grade);
      marks = scores.record(marks, q, { score: grade.score });
      afterMark(`${q.title}: ${Math.round(grade.score * 100)}% by the engine's answer.`);
    } catch (err) { say(`Could not check: ${err.message}`); }
  },
  async reveal(q) {
    try {
      showModel(document.getElementById(`q-${q.id}`), await api.reveal(q));
      marks = scores.record(marks, q, {});
      afterMark('Model answer shown: now mark yourself.');
    } catch (err) { say(`Could not load the model answer: ${err.message}`); }
  },
  mark(q, value) {
    marks = scores.record(marks, q, { self: value });
    showMark(document.getElementById(`q-${q.id}`), value);
    afterMark(`Marked “${value === 'got' ? 'got it' : value}”.`);
  },
};

function afterMark(message) {
  scores.save(marks);
  renderScores();
  say(message);
}

function renderScores() {
  const rows = scores.summary(marks, titles);
  const body = $('scores').tBodies[0];
  const pct = (x) => (x === null ? '–' : `${Math.round(x * 100)}%`);
  body.replaceChildren(...(rows.length ? rows.map((r) => el('tr', { 'data-kind': r.kind },
    el('th', { scope: 'row', text: r.title }), el('td', { text: String(r.answered) }),
    el('td', { text: pct(r.mean) }), el('td', { text: String(r.got) }),
    el('td', { text: String(r.partly) }), el('td', { text: String(r.missed) })))
    : [el('tr', {}, el('td', { colspan: '6', text: 'Nothing marked yet.' }))]));
}

function setUrl(s) {
  const p = new URLSearchParams(api.setQuery(s));
  if (s.orderMode === 'dependencies') p.set('order', 'dependencies');
  return `/quiz?${p.toString()}`;
}

function renderForm(kindList) {
  $('seed').value = String(setup.seed);
  $('count').value = String(setup.one ? 1 : setup.count);
  $('order-mode').checked = setup.orderMode === 'dependencies';
  const box = $('kinds');
  box.replaceChildren(el('legend', { text: 'Kinds' }), ...kindList.map((k) => {
    const input = el('input', { type: 'checkbox', name: 'kind', value: k.id });
    input.checked = k.available && (!setup.kinds.length || setup.kinds.includes(k.id) || setup.kinds.includes(String(k.number)));
    input.disabled = !k.available;
    const label = el('label', { class: 'check', title: k.reason ?? '' }, input, ` ${k.number}. ${k.title}`);
    if (!k.available) label.append(el('span', { class: 'unavailable', text: ` (not yet: ${k.reason})` }));
    return label;
  }));
  const share = new URL(setUrl({ ...setup, kinds: setup.one ? [setup.one] : setup.kinds }), location.href).href;
  $('share-link').href = share;
  $('share-link').textContent = share;
  const q = api.setQuery({ seed: setup.seed, count: setup.one ? 1 : setup.count, kinds: setup.one ? [setup.one] : setup.kinds });
  for (const f of ['moodle-xml', 'gift', 'qti', 'json']) $(`dl-${f}`).href = `/api/questions/export?format=${f}&${q}`;
  $('set-summary').textContent = ` seed ${setup.seed} · ${questions.length} question${questions.length === 1 ? '' : 's'}`;
}

function wireForm() {
  $('set-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const kinds = [...document.querySelectorAll('#kinds input:checked')].map((i) => i.value);
    location.href = setUrl({ seed: clampInt($('seed').value, 0, 2147483647, 0),
                             count: clampInt($('count').value, 1, 50, 7), kinds,
                             orderMode: $('order-mode').checked ? 'dependencies' : 'exact' });
  });
  $('new-seed').addEventListener('click', () => { $('seed').value = String(Math.floor(Math.random() * 100000)); });
  $('clear-scores').addEventListener('click', () => { marks = {}; afterMark('Your marks are forgotten.'); });
  $('print-questions').addEventListener('click', () => { document.body.classList.remove('print-answers'); window.print(); });
  $('print-answers').addEventListener('click', printAnswers);
}

async function printAnswers() {
  say('Loading every model answer…');
  try {
    for (const q of questions) {
      const root = document.getElementById(`q-${q.id}`);
      if (!root.classList.contains('revealed')) showModel(root, await api.reveal(q));
    }
  } catch (err) { say(`Could not load the answers: ${err.message}`); return; }
  document.body.classList.add('print-answers');
  say('Printing with the answers.');
  window.print();
}

async function start() {
  wireForm();
  renderScores();
  try {
    const [kindList, set] = await Promise.all([api.kinds(), api.load(setup)]);
    titles = Object.fromEntries(kindList.map((k) => [k.id, k.title]));
    questions = set.questions;
    $('questions').replaceChildren(...questions.map((q, i) => card(q, i + 1, handlers)));
    for (const q of questions) if (marks[q.id]?.self) showMark(document.getElementById(`q-${q.id}`), marks[q.id].self);
    renderForm(kindList);
    renderScores();
    document.body.dataset.state = 'ready';
    say(`${questions.length} question${questions.length === 1 ? '' : 's'} from seed ${setup.seed}.`);
  } catch (err) {
    document.body.dataset.state = 'failed';
    say(`Could not load the questions: ${err.message}`);
  }
}

start();
